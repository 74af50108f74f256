"""INDEX files never conflict: revert, cherry-pick and clone on real repositories.

The merge drivers come from `.gitattributes` plus the repository's local config, which
`memctl init` writes, in a new vault and in a fresh clone alike.
"""

from __future__ import annotations

import json
from pathlib import Path

from gitutil import run_git
from util import init_vault, ok

from memctl import Vault
from memctl.curate.indexfiles import stale
from memctl.gitops.mergedrivers import merge_index

S1 = [
    {"role": "user", "content": "I'm a platform engineer at Acme. We're trying to cut our "
     "egress costs this quarter.", "timestamp": "2026-09-01T09:00:00Z"},
    {"role": "assistant", "content": "Got it.", "timestamp": "2026-09-01T09:00:05Z"},
    {"role": "user", "content": "We decided to use Grafana Cloud instead of Datadog for "
     "metrics.", "timestamp": "2026-09-01T09:01:00Z"},
]
S3 = [
    {"role": "user", "content": "I'm a freelance data scientist and I live in Lisbon.",
     "timestamp": "2026-09-03T10:00:00Z"},
    {"role": "assistant", "content": "Nice.", "timestamp": "2026-09-03T10:00:05Z"},
    {"role": "user", "content": "I prefer pandas over polars for quick analysis work.",
     "timestamp": "2026-09-03T10:01:00Z"},
]


def jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def two_curations(tmp_path: Path) -> Path:
    v = tmp_path / "v"
    init_vault(v)
    ok("--vault", v, "ingest", jsonl(tmp_path / "s1.jsonl", S1), "--user", "dana",
       "--scope", "team")
    ok("--vault", v, "curate")
    ok("--vault", v, "ingest", jsonl(tmp_path / "s3.jsonl", S3), "--user", "priya")
    ok("--vault", v, "curate")
    return v


def curate_commits(v: Path) -> list[str]:
    return run_git(v, "log", "--format=%H", "--grep=^Memctl-Command: curate$").split()


def test_plain_git_revert_of_an_older_curate_applies_cleanly_and_stays_reverted(tmp_path):
    v = two_curations(tmp_path)
    older = curate_commits(v)[-1]
    gone = run_git(v, "show", "--name-only", "--diff-filter=A", "--format=", older).split()
    assert "knowledge/acme.md" in gone
    # both curate commits rewrote INDEX.md and profile/INDEX.md: this conflicted before
    for rel in ("INDEX.md", "profile/INDEX.md"):
        assert rel in run_git(v, "show", "--name-only", "--format=", older)
        assert rel in run_git(v, "show", "--name-only", "--format=", "HEAD")
    run_git(v, "revert", "--no-edit", older)  # raises if git reports a conflict
    assert run_git(v, "status", "--porcelain") == ""
    assert not any((v / p).exists() for p in gone)
    assert stale(Vault.open(v)) == []  # every INDEX reads as if regenerated
    assert "(acme.md)" not in (v / "knowledge/INDEX.md").read_text()
    assert "(priya.md)" in (v / "profile/INDEX.md").read_text()
    assert "(dana.md)" not in (v / "profile/INDEX.md").read_text()
    ok("--vault", v, "curate")
    assert not any((v / p).exists() for p in gone)  # the next curate does not bring it back
    ok("--vault", v, "verify")
    assert "<<<<<<<" not in run_git(v, "grep", "-n", "-e", "<<<<<<<", "HEAD", check=False)


def test_cherry_pick_of_a_curate_commit_onto_another_branch_applies_cleanly(tmp_path):
    v = two_curations(tmp_path)
    older, newer = curate_commits(v)[-1], curate_commits(v)[0]
    run_git(v, "checkout", "-q", "-b", "other", f"{older}~1")  # before any curation
    run_git(v, "cherry-pick", f"{newer}~1", newer)  # priya's ingest and her curation
    assert run_git(v, "status", "--porcelain") == ""
    assert stale(Vault.open(v)) == []
    ok("--vault", v, "verify")


def test_a_fresh_clone_becomes_a_working_vault_with_memctl_init(tmp_path):
    v = two_curations(tmp_path)
    clone = tmp_path / "clone"
    run_git(tmp_path, "clone", "-q", str(v), str(clone))
    assert "memctl" not in run_git(clone, "config", "--local", "--list")
    r = ok("init", clone)
    assert "already a vault" in r.out
    drivers = run_git(clone, "config", "--local", "--get-regexp", r"^merge\.memctl-")
    for name in ("note", "index", "raw", "state"):
        assert f"merge.memctl-{name}.driver " in drivers
    assert (clone / ".memctl/index").is_dir()  # index built by init, not by the first search
    hits = ok("--vault", clone, "search", "pandas", "--json").json()
    assert hits["data"]["hits"] if "data" in hits else hits["hits"]
    assert run_git(clone, "status", "--porcelain") == ""
    # and git there resolves INDEX files with the driver too
    older = curate_commits(clone)[-1]
    run_git(clone, "revert", "--no-edit", older)
    assert stale(Vault.open(clone)) == []


def test_index_lines_merge_three_ways():
    base = "# k\n\nIntro.\n\n- [A](a.md) · 2026-09-01 · a\n- [B](b.md) · 2026-09-01 · b\n"
    ours = "# k\n\nIntro.\n\n- [C](c.md) · 2026-09-03 · c\n- [A](a.md) · 2026-09-02 · a2\n" \
           "- [B](b.md) · 2026-09-01 · b\n"
    theirs = "# k\n\nIntro.\n\n- [A](a.md) · 2026-09-01 · a\n"  # b.md gone
    assert merge_index(base, ours, theirs) == (
        "# k\n\nIntro.\n\n- [C](c.md) · 2026-09-03 · c\n- [A](a.md) · 2026-09-02 · a2\n"
    )
    root_o = "## Stores\n\n- [k/](k/INDEX.md) · 2 notes · x\n"
    root_a = "## Stores\n\n- [k/](k/INDEX.md) · 5 notes · x\n"
    root_b = "## Stores\n\n- [k/](k/INDEX.md) · 1 note · x\n"
    assert merge_index(root_o, root_a, root_b) == "## Stores\n\n- [k/](k/INDEX.md) · 4 notes · x\n"
    empty = "# k\n\nIntro.\n\n- no notes yet\n"
    assert merge_index(base, empty, base) == empty


def test_doctor_reports_a_store_index_that_links_a_deleted_note_and_repairs_it(tmp_path):
    from util import memctl

    v = two_curations(tmp_path)
    run_git(v, "rm", "-q", "knowledge/acme.md")
    run_git(v, "commit", "-qm", "a person deletes a note with plain git")
    assert "(acme.md)" in (v / "knowledge/INDEX.md").read_text()
    r = memctl("--vault", v, "doctor")
    assert r.code != 0 and "knowledge/INDEX.md is out of date" in r.out + r.err
    ok("--vault", v, "doctor", "--repair")
    assert "(acme.md)" not in (v / "knowledge/INDEX.md").read_text()
    assert stale(Vault.open(v)) == []
    ok("--vault", v, "doctor")


def test_doctor_reports_a_clone_without_merge_drivers(tmp_path):
    from util import memctl

    v = two_curations(tmp_path)
    clone = tmp_path / "clone"
    run_git(tmp_path, "clone", "-q", str(v), str(clone))
    r = memctl("--vault", clone, "doctor")
    assert r.code != 0 and "not registered in this clone" in r.out + r.err
    ok("--vault", clone, "doctor", "--repair")
    assert "merge.memctl-note.driver" in run_git(clone, "config", "--local", "--list")
