"""A Stop hook that fails to save the session says so where the user sees it: the
detached worker has no terminal, so the next hook Claude Code runs carries the failure
as its `systemMessage`, once."""

from __future__ import annotations

import json
from pathlib import Path

from util import memctl, new_vault


def test_a_failed_stop_is_shown_by_the_next_hook_once(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    bad = tmp_path / "session.jsonl"
    bad.write_text('{"type": "user", "sessionId": "s", "message": {"role": "user", '
                   '"content": "hi"}}\n{not json at all}\n{"type": "user"}\n')
    payload = json.dumps({"transcript_path": str(bad), "session_id": "s"})
    r = memctl("--vault", vault, "hook", "stop", "--worker", input=payload)
    assert r.code == 0 and r.out == ""
    doctor = memctl("--vault", vault, "doctor", "--json").json()
    hooks = next(c for c in doctor["checks"] if c["name"] == "hooks")
    assert len(hooks["problems"]) == 1 and "session.jsonl:2" in hooks["problems"][0]
    r = memctl("--vault", vault, "hook", "user-prompt-submit",
               input=json.dumps({"prompt": "what did we decide about billing?"}))
    assert r.code == 0, r.err
    msg = json.loads(r.out)["systemMessage"]
    assert "saving the session failed" in msg and "session.jsonl:2" in msg
    r = memctl("--vault", vault, "hook", "user-prompt-submit",
               input=json.dumps({"prompt": "what did we decide about billing?"}))
    assert "systemMessage" not in (json.loads(r.out) if r.out.strip() else {})
