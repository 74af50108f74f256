"""A hook never blocks the agent, so its failures must be seen somewhere else: `memctl status`
says how many hook runs failed, and `memctl hooks log` shows them."""

from __future__ import annotations

from pathlib import Path

from util import memctl, new_vault, ok


def test_hook_failures_show_in_status_and_the_hook_log(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    assert "hooks " not in ok("--vault", v, "status").out
    r = memctl("--vault", v, "hook", "user-prompt-submit", input="this is not json")
    assert r.code == 0 and r.out == ""  # the prompt goes on, with no memory
    status = ok("--vault", v, "status").out
    assert "hooks   1 failed run in .memctl/cache/hooks.log; last: " in status
    assert "user-prompt-submit failed: " in status
    js = ok("--vault", v, "status", "--json").json()
    assert len(js["hook_failures"]) == 1 and "failed: " in js["hook_failures"][0]
    log = ok("--vault", v, "hooks", "log", "--failures").out.splitlines()
    assert len(log) == 1 and "user-prompt-submit failed:" in log[0]
    ok("--vault", v, "hook", "session-start", input="{}")
    assert len(ok("--vault", v, "hooks", "log").out.splitlines()) >= 1


def test_an_empty_hook_log_says_so(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    r = ok("--vault", v, "hooks", "log")
    assert r.out == "" and "no hook runs in" in r.err
