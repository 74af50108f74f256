"""memctl undo and rollback on real vaults: new commits, never rewritten history."""

from __future__ import annotations

import json
from pathlib import Path

from gitutil import run_git
from test_merge_drivers import S1, S3, jsonl
from util import init_vault, memctl, ok

from memctl import Vault
from memctl.curate.indexfiles import stale


def lines(v: Path) -> list[str]:
    out = []
    for p in sorted(v.rglob("*.md")):
        rel = p.relative_to(v).as_posix()
        if not rel.startswith(("raw/", ".")) and p.name != "INDEX.md":
            out += [f"{rel}: {x}" for x in p.read_text().splitlines() if x.startswith("- ")]
    return out


def test_undo_walks_back_one_command_at_a_time_as_new_commits(tmp_path):
    v = tmp_path / "v"
    init_vault(v)
    ok("--vault", v, "ingest", jsonl(tmp_path / "s1.jsonl", S1), "--user", "dana",
       "--scope", "team")
    ok("--vault", v, "curate")
    first = lines(v)
    ok("--vault", v, "ingest", jsonl(tmp_path / "s3.jsonl", S3), "--user", "priya")
    ok("--vault", v, "curate")
    assert any("Lisbon" in x for x in lines(v))
    commits = run_git(v, "rev-list", "HEAD").split()
    r = ok("--vault", v, "undo")
    assert "undo" in r.out and "curate: " in r.out
    assert lines(v) == first  # priya's claims gone, dana's untouched
    assert run_git(v, "rev-list", "HEAD").split()[1:] == commits  # a new commit on top
    log = run_git(v, "log", "-1", "--format=%s%n%b")
    assert log.startswith("undo: curate:") and "Memctl-Undoes: " + commits[0] in log
    assert stale(Vault.open(v)) == []
    ok("--vault", v, "verify")
    # the turns stay curated: the next curate reads nothing and learns nothing back
    again = ok("--vault", v, "curate")
    assert "nothing to curate" in again.out and lines(v) == first
    # a second undo takes out the ingest before it (nothing cites priya's session now)
    ok("--vault", v, "undo")
    assert not list((v / "raw/2026/09/03").glob("*.md")) if (v / "raw/2026/09/03").exists() \
        else True
    # an ingest whose turns were curated into notes is not undone (forget does that)
    ok("--vault", v, "undo")  # dana's curate
    assert lines(v) == []
    assert run_git(v, "status", "--porcelain") == ""
    ok("--vault", v, "verify")


def test_undo_of_an_ingest_that_notes_cite_is_refused(tmp_path):
    v = tmp_path / "v"
    init_vault(v)
    ok("--vault", v, "ingest", jsonl(tmp_path / "s1.jsonl", S1), "--user", "dana",
       "--scope", "team")
    ok("--vault", v, "curate")
    ok("--vault", v, "undo")  # the curate
    # hand-cite the session again, then try to undo its ingest
    note = v / "knowledge" / "hand.md"
    raw = next(v.glob("raw/2026/09/01/*.md")).relative_to(v).as_posix()
    note.write_text("---\nid: knowledge/hand\nschema: 1\nstore: knowledge\ntitle: Hand\n"
                    "scope: team\nstatus: active\ncreated: 2026-09-01\nupdated: 2026-09-01\n"
                    f"---\n\n# Hand\n\n## Notes\n\n- Acme cuts egress. [^x]\n\n"
                    f'[^x]: {raw}#t1 "cut our egress costs"\n')
    run_git(v, "add", "-A")
    run_git(v, "commit", "-qm", "hand note")
    ok("--vault", v, "status")  # INDEX files follow the hand commit
    head = run_git(v, "rev-parse", "HEAD")
    r = memctl("--vault", v, "undo")  # the curate is undone already: next is the ingest
    assert r.code == 3 and "memctl forget" in r.err
    assert run_git(v, "status", "--porcelain") == ""
    assert run_git(v, "rev-parse", "HEAD") == head  # nothing was committed


def test_rollback_restores_one_note_and_remembers_what_it_took_out(tmp_path):
    v = tmp_path / "v"
    init_vault(v)
    rows = [dict(S3[0])]
    ok("--vault", v, "ingest", jsonl(tmp_path / "a.jsonl", rows), "--user", "priya",
       "--session", "p")
    ok("--vault", v, "curate")
    rev = run_git(v, "rev-parse", "HEAD").strip()
    before = (v / "profile/priya.md").read_text()
    rows.append({"role": "user", "content": "I prefer pandas over polars for quick analysis "
                 "work.", "timestamp": "2026-09-03T10:05:00Z"})
    ok("--vault", v, "ingest", jsonl(tmp_path / "a.jsonl", rows), "--user", "priya",
       "--session", "p")
    ok("--vault", v, "curate")
    assert "pandas" in (v / "profile/priya.md").read_text()
    r = ok("--vault", v, "rollback", "profile/priya", "--to", rev)
    assert "pandas" in r.out  # the claim it takes out is named
    assert (v / "profile/priya.md").read_text() == before
    log = run_git(v, "log", "-1", "--format=%s%n%b")
    assert log.startswith("rollback: profile/priya.md to ") and "Memctl-Command: rollback" in log
    rec = json.loads((v / ".memctl/state/removed.jsonl").read_text().splitlines()[0])
    assert rec["by"] == "rollback" and "pandas" in rec["text"]
    (v / ".memctl/state/curation.json").write_text('{"version": 1, "stores": {}}\n')
    ok("--vault", v, "curate")
    assert "pandas" not in (v / "profile/priya.md").read_text()
    ok("--vault", v, "verify")
    bad = memctl("--vault", v, "rollback", "profile/priya", "--to", "nosuchrev")
    assert bad.code == 2 and "no revision" in bad.err
