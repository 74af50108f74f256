"""Retention policies applied by `memctl gc`: dry run by default, forget's cascade with --apply."""

from __future__ import annotations

from pathlib import Path

from gitutil import run_git
from test_forget import DANA, PRIYA, jsonl
from util import init_vault, ok, snapshot


def test_gc_forgets_sessions_past_their_scopes_age_and_keeps_what_is_pinned(tmp_path: Path):
    v = tmp_path / "v"
    init_vault(v)
    ok("--vault", v, "ingest", jsonl(tmp_path / "d.jsonl", DANA), "--user", "dana",
       "--scope", "team", "--session", "dana-1")
    ok("--vault", v, "ingest", jsonl(tmp_path / "p.jsonl", PRIYA), "--user", "priya",
       "--session", "priya-1")
    ok("--vault", v, "curate")
    cfg = v / ".memctl/config.toml"
    cfg.write_text(cfg.read_text() + '\n[retention]\nraw_max_age = "100y"\n'
                   'raw_max_age_by_scope = { "user:*" = "30d" }\npinned = ["decisions/*"]\n')
    run_git(v, "commit", "-qam", "retention policy")
    snap = snapshot(v)
    dry = ok("--vault", v, "gc")
    assert "past retention  raw/2026/09/03/" in dry.out  # priya's, a user scope, 30 days
    assert "raw/2026/09/01/" not in dry.out  # the team's: 100 years
    assert "dry run: nothing was written" in dry.out
    assert snapshot(v) == snap
    r = ok("--vault", v, "gc", "--apply")
    assert "commit" in r.out
    assert not (v / "raw/2026/09/03").exists()
    assert not (v / "profile/priya.md").exists()
    assert (v / "profile/dana.md").exists()
    assert run_git(v, "log", "-1", "--format=%s").startswith("gc: 1 session past retention")
    ok("--vault", v, "verify")
    # a store TTL: session notes not updated for a day go; pinned decisions stay
    cfg.write_text(cfg.read_text() + '\n[stores.sessions]\nttl = "1d"\n'
                   '\n[stores.decisions]\nttl = "1d"\n')
    run_git(v, "commit", "-qam", "ttl")
    for p in [*v.glob("sessions/*.md"), *v.glob("decisions/*.md")]:
        if p.name != "INDEX.md":
            p.write_text(p.read_text().replace("updated: 2026-", "updated: 2020-", 1))
    run_git(v, "commit", "-qam", "old notes")
    r = ok("--vault", v, "gc", "--apply")
    assert "past its TTL    sessions/" in r.out and "kept (pinned)   decisions/" in r.out
    assert not [p for p in v.glob("sessions/*.md") if p.name != "INDEX.md"]
    assert [p for p in v.glob("decisions/*.md") if p.name != "INDEX.md"]
    ok("--vault", v, "verify")
    again = ok("--vault", v, "gc").out
    assert "nothing is past its retention" in again and "past its TTL" not in again
