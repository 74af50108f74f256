"""undo after the commands it used to get wrong.

A curate that learned nothing, and a `forget --purge`, are undone the right way or refused
in one line; never a failed git commit, never `[forgotten]` claims written back.
"""

from __future__ import annotations

from pathlib import Path

from gitutil import run_git
from test_forget import DANA, PRIYA, claims, jsonl
from util import init_vault, memctl, ok

from memctl import Vault
from memctl.curate.indexfiles import stale


def _vault(tmp_path: Path) -> Path:
    v = tmp_path / "v"
    init_vault(v)
    ok("--vault", v, "ingest", jsonl(tmp_path / "dana.jsonl", DANA), "--user", "dana",
       "--scope", "team", "--session", "dana-1")
    ok("--vault", v, "curate")
    return v


def test_undo_after_a_curate_that_learned_nothing_walks_past_it(tmp_path: Path) -> None:
    v = _vault(tmp_path)
    learned = claims(v)
    assert learned
    # a session the builtin curator learns nothing from: the curate only moves its watermark
    ok("--vault", v, "ingest", jsonl(tmp_path / "hi.jsonl", [
        {"role": "user", "content": "hello", "timestamp": "2026-09-02T09:00:00Z"},
        {"role": "assistant", "content": "hi", "timestamp": "2026-09-02T09:00:01Z"}]),
       "--user", "dana", "--session", "hi-1")
    before = run_git(v, "rev-parse", "HEAD").strip()
    ok("--vault", v, "curate")
    noop = run_git(v, "rev-parse", "HEAD").strip()
    r = memctl("--vault", v, "undo")
    assert r.code == 0, r.err
    assert "git commit failed" not in r.err
    # a second undo reaches the command before: the ingest of hi-1 (or refuses it in one line)
    r2 = memctl("--vault", v, "undo")
    assert r2.code in (0, 3) and len(r2.err.strip().splitlines()) <= 1, r2.err
    if noop != before:
        log = run_git(v, "log", "--format=%s", "-3")
        assert "undo: curate" in log
    assert claims(v) == learned
    assert run_git(v, "status", "--porcelain") == ""
    ok("--vault", v, "verify")


def test_undo_of_a_plain_forget_gives_the_turn_back(tmp_path: Path) -> None:
    v = _vault(tmp_path)
    learned = claims(v)
    ok("--vault", v, "forget", "dana-1#t3")
    assert claims(v) != learned
    ok("--vault", v, "undo")
    assert claims(v) == learned
    ok("--vault", v, "verify")


def test_undo_after_a_purge_writes_no_forgotten_claims_nor_hand_edits(tmp_path: Path) -> None:
    v = _vault(tmp_path)
    ok("--vault", v, "ingest", jsonl(tmp_path / "priya.jsonl", PRIYA), "--user", "priya",
       "--session", "priya-1")
    ok("--vault", v, "curate")
    ok("--vault", v, "forget", "dana-1#t3", "--purge")
    head = run_git(v, "rev-parse", "HEAD").strip()
    r = memctl("--vault", v, "undo")
    # refused: one line, nothing changed (a revert would give back `[forgotten]`, not words)
    assert r.code == 3 and "purged" in r.err, r.err
    assert len(r.err.strip().splitlines()) == 1, r.err
    assert run_git(v, "rev-parse", "HEAD").strip() == head
    text = "\n".join(claims(v))
    assert "[forgotten]" not in text
    for p in v.rglob("*.md"):
        if ".git" not in p.parts:
            assert "[forgotten]" not in p.read_text() or p.is_relative_to(v / "raw"), p
    log = run_git(v, "log", "--format=%s")
    assert "edited by hand" not in log
    assert "[forgotten]" not in (v / ".memctl" / "state" / "curation.json").read_text() \
        if (v / ".memctl" / "state" / "curation.json").exists() else True
    assert run_git(v, "status", "--porcelain") == ""
    ok("--vault", v, "verify")
    assert stale(Vault.open(v)) == []
