"""`memctl export --format F` writes every format `--help` names, and what it writes reads
back in as the same messages (export used to refuse all but jsonl)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from util import DATA, memctl, ok

from memctl import Vault
from memctl.core.raw import parse_session
from memctl.ingest.formats.write import WRITES

FORMATS = DATA / "formats"
SOURCES = {
    "claude_code": FORMATS / "claude_code.jsonl",
    "openai": FORMATS / "openai.json",
    "jsonl": FORMATS / "memctl.jsonl",
    "text": FORMATS / "transcript.md",
}


def _messages(vault: Vault, session: str) -> list[tuple[str, str]]:
    rel = vault.resolve_session(session)
    _, messages = parse_session((vault.root / rel).read_text(encoding="utf-8"), rel)
    return [(m.role, m.content) for m in messages]


PATHS: dict[str, str] = {}  # source format -> its raw path in the module's vault


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Vault:
    v, _ = Vault.init(tmp_path_factory.mktemp("exp") / "v", env={})
    for fmt, src in SOURCES.items():
        res = v.ingest([src], fmt=fmt, user="dana", scope="team", session=f"src-{fmt}",
                       redact=False)
        PATHS[f"src-{fmt}"] = res.sessions[0].path
    return v


@pytest.mark.parametrize("source", sorted(SOURCES))
@pytest.mark.parametrize("fmt", WRITES)
def test_export_reads_back_as_the_same_messages(
    vault: Vault, tmp_path: Path, source: str, fmt: str
) -> None:
    ref = PATHS[f"src-{source}"]
    before = _messages(vault, ref)
    roles = {r for r, _ in before}
    if fmt == "claude_code" and "system" in roles:
        with pytest.raises(Exception, match="cannot hold"):
            list(vault.export(ref, fmt))
        return
    out = tmp_path / f"out.{'md' if fmt == 'text' else 'json' if fmt == 'openai' else 'jsonl'}"
    out.write_text("".join(line + "\n" for line in vault.export(ref, fmt)),
                   encoding="utf-8")
    back, _ = Vault.init(tmp_path / "back", env={})
    res = back.ingest([out], fmt=fmt, user="dana", scope="team", session="again", redact=False)
    after = _messages(back, res.sessions[0].path)
    if fmt == "text":
        # plain text has four speakers and no blank edges: compare what it can carry
        before = [(r if r in ("user", "assistant", "system") else "user", c.strip("\n"))
                  for r, c in before]
        after = [(r, c.strip("\n")) for r, c in after]
    assert after == before


def test_cli_export_names_what_it_writes(vault: Vault) -> None:
    ref = PATHS["src-claude_code"]
    r = ok("--vault", vault.root, "export", ref, "--format", "openai")
    back = json.loads(r.out)
    assert [m["role"] for m in back] == [role for role, _ in _messages(vault, ref)]
    bad = memctl("--vault", vault.root, "export", ref, "--format", "chatgpt")
    assert bad.code == 2 and "use jsonl, openai, claude_code, text" in bad.err
    help_text = ok("export", "--help").out
    for fmt in WRITES:
        assert fmt in help_text
    assert "chatgpt is read, not written" in help_text
