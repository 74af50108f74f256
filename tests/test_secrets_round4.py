"""Fourth round of secret kinds: private keys in the shapes tools print them (a PuTTY
.ppk, a JWK's "d", `openssl rsa -text`), a .env handed over in base64, PostHog `phx_`,
the 84-character Azure DevOps PAT and LaunchDarkly `sdk-` keys all reached disk and git;
a GitHub Actions cache key was masked as a generic secret. Each kind goes in as a user
message, as a tool's output in a Claude Code session and in a ChatGPT export, with fresh
values (other lengths, other sentences) beside the corpus's own. Each failed on main.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from ccsession import Session
from secret_corpus import _ROUND4, NON_SECRETS, SECRETS, generate, pieces
from test_safety_redact_everywhere import leaks
from util import init_vault, ok

ROUND4 = [row for row in SECRETS if row[0] in _ROUND4]
HELD_OUT = [row for seed in (11, 4242) for row in generate(seed) if row[0] in _ROUND4]
CACHE_KEYS = [s for s in NON_SECRETS if re.search(r"cache.*key|key: .*cache", s, re.I)
              and re.search(r"[0-9a-f]{40}", s)]


def _chatgpt(lines: list[str]) -> str:
    convs = []
    for i, line in enumerate(lines):
        msg = {
            "id": f"u-{i}", "author": {"role": "user", "name": None, "metadata": {}},
            "create_time": 1714557600.0 + i,
            "content": {"content_type": "text", "parts": [line]}, "metadata": {},
        }  # fmt: skip
        convs.append({
            "title": f"setup {i}", "create_time": 1714557600.0 + i,
            "update_time": 1714557600.0 + i, "conversation_id": f"conv-{i}",
            "current_node": f"u-{i}",
            "mapping": {
                "root": {"id": "root", "message": None, "parent": None, "children": [f"u-{i}"]},
                f"u-{i}": {"id": f"u-{i}", "message": msg, "parent": "root", "children": []},
            },
        })  # fmt: skip
    return json.dumps(convs)


def _write(src: Path, where: str, lines: list[str]) -> Path:
    src.mkdir(parents=True, exist_ok=True)
    if where == "chatgpt":
        path = src / "conversations.json"
        path.write_text(_chatgpt(lines))
        return path
    for i, line in enumerate(lines):
        s = Session(sid=f"9b2c4d6e-1f3a-4b5c-8d7e-{i:012d}")
        if where == "user":
            s.user(line).say("Noted.")
        else:  # the secret arrives as what a command printed
            s.user("show me the deploy setup").bash("cat deploy/notes.txt", line)
        (src / f"{s.sid}.jsonl").write_text("\n".join(json.dumps(r) for r in s.rows) + "\n")
    return src


@pytest.mark.parametrize("where", ["user", "tool", "chatgpt"])
@pytest.mark.parametrize("rows", [ROUND4, HELD_OUT], ids=["corpus", "held-out"])
def test_round_four_kinds_never_reach_disk_or_git(tmp_path: Path, where: str, rows) -> None:
    v = init_vault(tmp_path / "v")
    ok("--vault", v, "ingest", _write(tmp_path / "src", where, [line for _, _, line in rows]))
    found = leaks(v, [p for _, s, _ in rows for p in pieces(s)])
    kinds = sorted({k for k, s, _ in rows if any(p in found for p in pieces(s))})
    assert not found, f"kinds {kinds} leaked"


def test_every_round_four_kind_has_held_out_values_and_sentences() -> None:
    assert {k for k, _, _ in ROUND4} == set(_ROUND4)
    assert len(ROUND4) >= 2 * len(_ROUND4)
    assert not {s for _, s, _ in ROUND4} & {s for _, s, _ in HELD_OUT}


def test_a_github_actions_cache_key_is_kept_as_written(tmp_path: Path) -> None:
    assert len(CACHE_KEYS) >= 4
    v = init_vault(tmp_path / "v")
    ok("--vault", v, "ingest", _write(tmp_path / "src", "tool", CACHE_KEYS))
    raw = "".join(p.read_text() for p in (v / "raw").rglob("*.md"))
    assert "REDACTED" not in raw
    for line in CACHE_KEYS:
        digest = re.findall(r"[0-9a-f]{40,}", line)[0]
        assert digest in raw
