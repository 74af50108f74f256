"""A Stop hook that fails to save the session says so where the user sees it: the
detached worker has no terminal, so the next hook Claude Code runs carries the failure
as its `systemMessage`, once."""

from __future__ import annotations

import json
from pathlib import Path

from ccsession import Session
from fakellm import FakeLLM
from gitutil import run_git
from test_curate_llm import llm_env
from test_sync_hostile import _team_templates, push, team  # noqa: F401  (team's fixture)
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


# ---- what else a person must hear of: curation that kept nothing or refused, a held pull ---


def _system_messages(vault: Path, n: int = 2) -> list[str]:
    """The systemMessage of each of `n` prompt hooks in a row ("" when there is none)."""
    said = []
    for _ in range(n):
        r = memctl("--vault", vault, "hook", "user-prompt-submit",
                   input=json.dumps({"prompt": "what did we decide about billing?"}))
        assert r.code == 0, r.err
        said.append(json.loads(r.out).get("systemMessage", "") if r.out.strip() else "")
    return said


def _stop_worker(vault: Path, transcript: Path, env: dict | None = None) -> None:
    payload = json.dumps({"transcript_path": str(transcript), "session_id": "s-1"})
    r = memctl("--vault", vault, "hook", "stop", "--worker", input=payload, env=env)
    assert r.code == 0 and r.out == "", r.err


def test_a_saved_session_whose_curation_kept_nothing_is_shown_once(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    src = Session(sid="s-1").turn("user", "hi").turn("assistant", "Hello!").write_to(
        tmp_path / "s-1.jsonl")
    _stop_worker(vault, src)
    first, second = _system_messages(vault)
    assert "kept no claim" in first and "s-1.jsonl" in first
    assert second == ""


def test_a_save_where_only_the_agent_spoke_and_nothing_was_kept_is_not_an_alert(
        tmp_path: Path) -> None:
    # The agent's bookkeeping after a person's last word ("Recording the decision.", a
    # tool call and its result) is saved by the next Stop; nothing in it is for memory, and
    # every such save told the person "kept no claim" at their next prompt: an alert that
    # fires when nothing is wrong teaches people to skip alerts.
    vault = new_vault(tmp_path)
    src = (Session(sid="s-1").turn("assistant", "Recording the decision.")
           .turn("assistant", "Both decisions are recorded.").write_to(tmp_path / "s-1.jsonl"))
    _stop_worker(vault, src)
    assert _system_messages(vault) == ["", ""]
    log = (vault / ".memctl" / "cache" / "hooks.log").read_text(encoding="utf-8")
    assert "s-1.jsonl: ingested 2 turns" in log  # saved all the same


def test_a_saved_session_whose_claims_were_refused_is_shown_once(
        tmp_path: Path, fake_llm: FakeLLM) -> None:
    vault = new_vault(tmp_path)
    cfg = vault / ".memctl" / "config.toml"
    cfg.write_text(cfg.read_text().replace('curator = "builtin"',
                                           'curator = "llm"\nmodel = "openai/gpt-4o-mini"'))
    run_git(vault, "commit", "-qam", "the llm curator")
    src = Session(sid="s-1").turn("user", "I prefer Rust over Go for the ledger service.") \
        .turn("assistant", "Rust it is.").write_to(tmp_path / "s-1.jsonl")
    # a quote the person never said: the claim is refused, nothing else is kept
    fake_llm.enqueue({"json": {"claims": [{
        "store": "profile", "note": "Profile: dana", "section": "Preferences",
        "text": "Dana prefers Rust over Go and Zig.",
        "citations": [{"turn": 1, "quote": "I prefer Rust over Go and Zig."}]}]}})
    _stop_worker(vault, src, env=llm_env(fake_llm))
    first, second = _system_messages(vault)
    assert "refused 1 claim" in first and "s-1.jsonl" in first, first
    assert second == ""


def test_settings_held_from_a_plain_git_pull_are_shown_by_the_next_hook_once(
        tmp_path: Path) -> None:
    _remote, dana, evil = team(tmp_path, curate=False)
    branch = run_git(dana, "rev-parse", "--abbrev-ref", "HEAD").strip()
    cfg = evil / ".memctl" / "config.toml"
    cfg.write_text(cfg.read_text().replace("redact = true", "redact = false"))
    push(evil, "tune config")
    run_git(dana, "pull", "-q", "--no-rebase", "origin", branch)  # by hand, not memctl sync
    first, second = _system_messages(dana)
    assert "NOT in force" in first and "--accept-config" in first, first
    assert "NOT in force" not in second
