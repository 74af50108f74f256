"""Raw is written once, verbatim, redacted once.

Redaction runs over every string of a message (content, meta: tool inputs and results,
thinking) before the file is rendered; nothing passes over the rendered text again, so a
string that is harmless as itself but secret-shaped once JSON-escaped ("key differences:\\n\\n1.")
stays as it was, and the content hash covers exactly what is stored.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from util import DATA, memctl, new_vault, ok


def _shared_data() -> Path | None:
    """shared/data sits beside the repository (or beside the worktrees' folder)."""
    here = Path(__file__).resolve()
    for up in here.parents:
        cand = up / "shared" / "data" / "claude-code" / "sessions"
        if cand.is_dir():
            return cand
    return None


def _claude(path: Path, thinking: str, text: str) -> Path:
    sid = "5b0f6b1e-1111-4222-8333-444455556666"
    lines = [
        {"type": "user", "sessionId": sid, "uuid": "u1", "parentUuid": None,
         "timestamp": "2026-01-02T10:00:00Z",
         "message": {"role": "user", "content": "How do merge and rebase differ?"}},
        {"type": "assistant", "sessionId": sid, "uuid": "u2", "parentUuid": "u1",
         "timestamp": "2026-01-02T10:00:05Z",
         "message": {"role": "assistant", "content": [
             {"type": "thinking", "thinking": thinking},
             {"type": "text", "text": text}]}},
        {"type": "user", "sessionId": sid, "uuid": "u3", "parentUuid": "u2",
         "timestamp": "2026-01-02T10:01:00Z",
         "message": {"role": "user", "content": "Thanks, and squash?"}},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def _raw_files(vault: Path) -> list[Path]:
    return [p for p in sorted((vault / "raw").rglob("*.md")) if p.name != "INDEX.md"]


def test_thinking_block_is_stored_as_written_and_verify_holds(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    thinking = "The key differences:\n\n1. merge keeps history\n2. rebase rewrites it"
    src = _claude(tmp_path / "s.jsonl", thinking, "Merge keeps both histories.")
    ok("--vault", vault, "ingest", src)
    r = memctl("--vault", vault, "verify")
    assert r.code == 0, r.err
    (raw,) = _raw_files(vault)
    text = raw.read_text(encoding="utf-8")
    assert "REDACTED" not in text
    exported = ok("--vault", vault, "export", raw.relative_to(vault).as_posix(),
                  "--format", "jsonl").out
    assert thinking in [json.loads(x).get("thinking") for x in
                        exported.splitlines() if x.strip()]
    # no turn's text starts with the tail of a shifted metadata comment
    for line in ok("--vault", vault, "show", raw.relative_to(vault).as_posix() + "#t3").out \
            .splitlines():
        assert not line.startswith("}} -->")


def test_a_real_secret_in_thinking_is_still_redacted_once(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    key = "sk-proj-" + "Ab3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5oQ7sU9wY1"
    src = _claude(tmp_path / "s.jsonl", f"The user pasted {key} earlier.", "Rotate it.")
    ok("--vault", vault, "ingest", src)
    (raw,) = _raw_files(vault)
    text = raw.read_text(encoding="utf-8")
    assert key not in text and "[REDACTED:" in text
    assert memctl("--vault", vault, "verify").code == 0


def _ingest_and_verify(vault: Path, sources: list[Path]) -> None:
    for src in sources:
        r = memctl("--vault", vault, "ingest", src)
        assert r.code in (0, 2), r.err  # a folder may hold a bad file; good ones go in
    r = memctl("--vault", vault, "verify")
    assert r.code == 0, r.out + r.err
    for raw in _raw_files(vault):
        body = raw.read_text(encoding="utf-8")
        for line in body.splitlines():
            assert not line.startswith("}} -->"), raw


def test_every_fixture_ingests_verbatim_and_verifies(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    good = [p for p in sorted((DATA / "formats").iterdir()) if p.is_file()]
    _ingest_and_verify(vault, [*good, DATA / "sample-transcripts"])
    assert len(_raw_files(vault)) >= 10


def test_every_real_claude_code_session_ingests_verbatim_and_verifies(tmp_path: Path) -> None:
    sessions = _shared_data()
    if sessions is None:
        pytest.skip("shared/data/claude-code is not beside this checkout")
    vault = new_vault(tmp_path)
    _ingest_and_verify(vault, [sessions])
    assert len(_raw_files(vault)) >= 18
