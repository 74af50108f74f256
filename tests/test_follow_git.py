"""Derived files follow git: after a git operation done outside memctl
(revert, checkout, reset, pull, merge) the next memctl command regenerates the INDEX files
and brings the search index in step with the files; doctor is clean afterwards."""

from __future__ import annotations

from pathlib import Path

from gitutil import run_git
from test_forget import DANA, DANA2, PRIYA, jsonl
from util import init_vault, memctl, ok

from memctl import Vault
from memctl.curate.indexfiles import stale


def _vault(tmp_path: Path) -> Path:
    v = tmp_path / "v"
    init_vault(v)
    ok("--vault", v, "ingest", jsonl(tmp_path / "dana.jsonl", DANA), "--user", "dana",
       "--scope", "team", "--session", "dana-1")
    ok("--vault", v, "curate")
    ok("--vault", v, "ingest", jsonl(tmp_path / "priya.jsonl", PRIYA), "--user", "priya",
       "--session", "priya-1")
    ok("--vault", v, "curate")
    return v


def _doctor_clean(v: Path) -> None:
    r = memctl("--vault", v, "doctor")
    assert r.code == 0, r.out + r.err
    assert "indexed but gone" not in r.out + r.err
    assert stale(Vault.open(v)) == []


def _curate_shas(v: Path) -> list[str]:
    out = run_git(v, "log", "--format=%H %s").splitlines()
    return [x.split()[0] for x in out if " curate:" in x]


def test_after_a_plain_git_revert_the_next_command_brings_derived_files_in_step(
        tmp_path: Path) -> None:
    v = _vault(tmp_path)
    older = _curate_shas(v)[-1]  # dana's curate, an older commit
    run_git(v, "revert", "--no-edit", older)
    ok("--vault", v, "status")
    _doctor_clean(v)
    assert run_git(v, "status", "--porcelain") == ""
    hits = ok("--vault", v, "search", "Grafana Cloud", "--notes", "--json").json()
    assert not hits.get("data", hits)["hits"]


def test_after_reset_and_checkout_the_next_command_follows(tmp_path: Path) -> None:
    v = _vault(tmp_path)
    top = run_git(v, "rev-parse", "HEAD").strip()
    ok("--vault", v, "ingest", jsonl(tmp_path / "dana2.jsonl", DANA2), "--user", "dana",
       "--scope", "team", "--session", "dana-2")
    ok("--vault", v, "curate")
    run_git(v, "reset", "-q", "--hard", top)
    ok("--vault", v, "status")
    _doctor_clean(v)
    hits = ok("--vault", v, "search", "Quick follow-up on last week", "--json").json()
    assert not hits.get("data", hits)["hits"]
    run_git(v, "checkout", "-q", "HEAD~2")
    ok("--vault", v, "status")
    _doctor_clean(v)
    run_git(v, "checkout", "-q", "-")
    ok("--vault", v, "status")
    _doctor_clean(v)


def test_after_merging_a_branch_the_next_command_follows(tmp_path: Path) -> None:
    v = _vault(tmp_path)
    run_git(v, "checkout", "-q", "-b", "side")
    ok("--vault", v, "ingest", jsonl(tmp_path / "dana2.jsonl", DANA2), "--user", "dana",
       "--scope", "team", "--session", "dana-2")
    ok("--vault", v, "curate")
    run_git(v, "checkout", "-q", "main")
    ok("--vault", v, "status")
    run_git(v, "merge", "-q", "--no-edit", "side")
    ok("--vault", v, "status")
    _doctor_clean(v)
    hits = ok("--vault", v, "search", "Quick follow-up on last week", "--json").json()
    assert hits.get("data", hits)["hits"]


def test_a_note_removed_by_a_plain_git_commit_leaves_no_stale_index_line(tmp_path: Path) -> None:
    v = _vault(tmp_path)
    note = next(p for p in sorted((v / "decisions").glob("*.md")) if p.name != "INDEX.md")
    title = note.read_text().split("\n# ", 1)[1].splitlines()[0]
    assert title in (v / "decisions" / "INDEX.md").read_text()
    run_git(v, "rm", "-q", note.relative_to(v).as_posix())
    run_git(v, "commit", "-qm", "drop a decision by hand")
    r = ok("--vault", v, "status")
    assert "followed a git change" in r.err, r.err
    assert title not in (v / "decisions" / "INDEX.md").read_text()
    assert run_git(v, "log", "-1", "--format=%s").startswith("index: INDEX files regenerated")
    assert run_git(v, "status", "--porcelain") == ""
    _doctor_clean(v)
    # the next command finds everything in step: no second commit
    head = run_git(v, "rev-parse", "HEAD").strip()
    ok("--vault", v, "status")
    assert run_git(v, "rev-parse", "HEAD").strip() == head
