"""Fourth round of integrity faults, the rest: a corrupt line in a live session, a full
disk, attachments. Each test failed on main before its fix.
"""

from __future__ import annotations

import json
from pathlib import Path

from ccsession import Session
from util import memctl, new_vault

# ---- a corrupt line in a Claude Code session ---------------------------------------------


def _stop(vault: Path, transcript: Path, sid: str) -> None:
    payload = json.dumps({"transcript_path": str(transcript), "session_id": sid})
    r = memctl("--vault", vault, "hook", "stop", "--worker", input=payload)
    assert r.code == 0 and r.out == "", r.err


def _raw(vault: Path) -> str:
    return "".join(p.read_text() for p in sorted((vault / "raw").rglob("*/*.md")))


def test_a_corrupt_line_costs_that_line_only_and_the_next_session_start_names_it(
    tmp_path: Path,
) -> None:
    vault = new_vault(tmp_path)
    s = Session(sid="5e6f7a8b-1c2d-4e3f-9a0b-c1d2e3f4a5b6")
    s.user("We ship the billing service on Thursdays only.").say("Noted, Thursdays.")
    lines = [json.dumps(r) for r in s.rows]
    lines.append('{"type": "user", "message": {"role": "user", "content": "half a li')
    s.rows.clear()
    s.user("The staging database moved to eu-west-3 last week.").say("Understood.")
    lines += [json.dumps(r) for r in s.rows]
    transcript = tmp_path / f"{s.sid}.jsonl"
    transcript.write_text("\n".join(lines) + "\n")

    _stop(vault, transcript, s.sid)
    raw = _raw(vault)
    assert "Thursdays only" in raw and "eu-west-3" in raw  # before and after the bad line

    r = memctl("--vault", vault, "hook", "session-start", input=json.dumps({"session_id": "x"}))
    assert r.code == 0, r.err
    msg = json.loads(r.out)["systemMessage"]
    assert "\n" not in msg and f"{transcript.name}:3" in msg, msg

    # the session goes on: later turns are saved too, and the old line is not told again
    s.rows.clear()
    s.user("Rotate the deploy keys every ninety days.").say("Will do.")
    with transcript.open("a") as fh:
        fh.write("\n".join(json.dumps(r) for r in s.rows) + "\n")
    _stop(vault, transcript, s.sid)
    assert "ninety days" in _raw(vault)
    r = memctl("--vault", vault, "hook", "session-start", input=json.dumps({"session_id": "y"}))
    assert "systemMessage" not in (json.loads(r.out) if r.out.strip() else {})


def test_ingest_by_hand_still_refuses_the_corrupt_line(tmp_path: Path) -> None:
    """Only the Stop hook, which must not lose a live session, skips a bad line; an ingest
    a person runs names it and writes nothing."""
    vault = new_vault(tmp_path)
    s = Session().user("We ship on Thursdays.")
    transcript = tmp_path / f"{s.sid}.jsonl"
    transcript.write_text(json.dumps(s.rows[0]) + "\n{broken\n")
    r = memctl("--vault", vault, "ingest", transcript)
    assert r.code == 2 and f"{transcript.name}:2" in r.err
    assert [p.name for p in (vault / "raw").rglob("*.md")] == ["INDEX.md"]
