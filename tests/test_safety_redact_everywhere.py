"""Redaction covers every string that reaches disk or git, not only message content.

Found in review: titles (OpenAI `title`, ChatGPT conversation titles, Claude Code
`summary`), a text transcript's preamble and heading, extra top-level keys such as
`api_key`, the raw frontmatter, `raw/INDEX.md`, `INDEX.md` and commit messages kept a
`ghp_` token verbatim, and `remember` (Python and MCP) stored `sk-proj-...` as is, in the
note and in the commit subject. Every token here is one the detectors already know, so
these tests are about where redaction runs, not what it recognises.
"""

from __future__ import annotations

import json
import random
import string
import subprocess
from pathlib import Path

import pytest
from test_recall import NOTES, SESSIONS, build_vault
from util import DATA, init_vault, ok

from memctl.core.store import Transaction
from memctl.curate.remember import remember
from memctl.faces.mcp import Tools

_rng = random.Random(9)


def _ghp() -> str:
    return "ghp_" + "".join(_rng.choice(string.ascii_letters + string.digits) for _ in range(36))


def _skproj() -> str:
    body = "".join(_rng.choice(string.ascii_letters + string.digits) for _ in range(48))
    return f"sk-proj-{body}T3BlbkFJ{body[:20]}"


def leaks(vault: Path, secrets: list[str]) -> dict[str, list[str]]:
    """Where each secret still is: working-tree files (index and caches included), every
    commit message and every patch in history."""
    found: dict[str, list[str]] = {}
    for p in sorted(vault.rglob("*")):
        rel = p.relative_to(vault).as_posix()
        if not p.is_file() or rel.startswith(".git/"):
            continue
        data = p.read_bytes()
        for s in secrets:
            if s.encode() in data:
                found.setdefault(s, []).append(rel)
    history = subprocess.run(
        ["git", "-C", str(vault), "log", "--all", "-p", "--format=%H%n%B"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    for s in secrets:
        if s in history:
            found.setdefault(s, []).append("git history")
    return found


def test_titles_preambles_and_extra_keys_are_redacted_in_every_format(tmp_path: Path) -> None:
    where: dict[str, str] = {}

    def secret(place: str) -> str:
        s = _ghp()
        where[s] = place
        return s

    src = tmp_path / "in"
    src.mkdir()
    openai = json.loads((DATA / "formats" / "openai.json").read_text())
    openai["title"] = f"Weather {secret('openai title')} lookup"
    openai["api_key"] = secret("openai extra key api_key")
    openai["metadata"] = {"note": f"deploy with {secret('openai nested extra')}"}
    (src / "openai.json").write_text(json.dumps(openai))

    convs = json.loads((DATA / "formats" / "chatgpt_conversations.json").read_text())
    convs[0]["title"] = f"Sourdough {secret('chatgpt title')}"
    (src / "conversations.json").write_text(json.dumps(convs))

    lines = (DATA / "formats" / "claude_code.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["summary"] = f"Fix {secret('claude code summary')} in httpkit"
    (src / "claude.jsonl").write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")

    text = (DATA / "formats" / "transcript.md").read_text()
    text = text.replace(
        "# Debugging the cache layer",
        f"# Debugging {secret('text heading')}\n\nContext: token {secret('text preamble')}",
        1,
    )
    (src / "transcript.md").write_text(text)

    rows = [
        json.loads(ln)
        for ln in (DATA / "formats" / "memctl.jsonl").read_text().splitlines()
        if ln.strip()
    ]
    rows[1]["name"] = f"dana {secret('jsonl speaker name')}"
    rows[1]["extra_field"] = secret("jsonl message extra key")
    (src / "session.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")

    v = tmp_path / "v"
    init_vault(v)
    for f in sorted(src.iterdir()):
        ok("--vault", v, "ingest", f)
    ok("--vault", v, "reindex")
    found = leaks(v, list(where))
    assert not found, {where[s]: places for s, places in found.items()}
    raw_index = (v / "raw" / "INDEX.md").read_text()
    assert "REDACTED:github-token" in raw_index  # the titles are listed, masked


def test_remember_redacts_the_claim_the_note_title_and_the_commit(tmp_path: Path) -> None:
    vault, _ = build_vault(tmp_path / "v", SESSIONS, NOTES)
    s1, s2, s3, s4 = _skproj(), _skproj(), _ghp(), _skproj()
    remember(vault, "dana", f"The staging key is {s1} until Friday.", own=True)
    remember(vault, "dana", "Rotate keys monthly.", own=True, note=f"Keys {s2}")
    res = Tools(vault, "dana").remember(f"Deploys use {s3} as the bot token.", own=True)
    assert res.text.count("[REDACTED:") == 1 and s3 not in res.text
    Tools(vault, "dana").remember(f"CI token {s4} is in the vault.", own=True, section="Facts")
    assert not leaks(vault.root, [s1, s2, s3, s4])


def test_every_writer_goes_through_redaction(tmp_path: Path) -> None:
    """The store itself masks what any writer hands it, and git never sees a secret in a
    commit message, whoever builds it."""
    vault, _ = build_vault(tmp_path / "v", SESSIONS, NOTES)
    s1, s2, s3 = _ghp(), _skproj(), _ghp()
    with vault.lock:
        tx = Transaction(vault.root)
        tx.write("knowledge/handmade.md", f"---\ntitle: x {s1}\n---\n# Notes\n\n- {s2}\n")
        vault.history.commit(
            tx.touched, f"test: add {s3}", {"Memctl-Note": s3}, author=vault.config.agent
        )
    assert not leaks(vault.root, [s1, s2, s3])
    assert "[REDACTED:github-token]" in (vault.root / "knowledge/handmade.md").read_text()


@pytest.mark.parametrize("redact", [True])
def test_ingest_still_reports_its_redactions(tmp_path: Path, redact: bool) -> None:
    v = tmp_path / "v"
    init_vault(v)
    s = _ghp()
    rows = [{"role": "user", "content": f"my token is {s}"}]
    f = tmp_path / "a.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    r = ok("--vault", v, "ingest", f)
    assert "1 redacted" in r.out
    assert not leaks(v, [s])
