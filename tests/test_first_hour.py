"""The first hour of a new user: commands that agree with each other and with
what they did. Each test here failed on the main of 2026-12-01."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
from util import ROOT, init_vault, memctl, ok

from memctl import Vault


def _jsonl(path: Path, *messages: tuple[str, str]) -> Path:
    path.write_text("".join(json.dumps({"role": r, "content": c}) + "\n" for r, c in messages),
                    encoding="utf-8")
    return path


def test_search_snippets_keep_what_is_glued_to_their_edges(tmp_path: Path) -> None:
    """tantivy ends a fragment at its last token: `[REDACTED:stripe-key]` lost its `]`."""
    vault, _ = Vault.init(tmp_path / "v", env={})
    src = _jsonl(tmp_path / "t.jsonl",
                 ("user", "We rotated the payments key today (it was "
                          "sk_live_4eC39HqLyjWDarjtT1zdp7dc)"),
                 ("assistant", "Good. Store the new key in Vault, not in the repo!"))
    vault.ingest([src], user="dana", scope="team")
    hits = vault.search("payments").hits
    assert hits and hits[0].snippet.endswith("[REDACTED:stripe-key])")
    assert [hits[0].snippet[a:b] for a, b in hits[0].highlights] == ["payments"]
    hit = vault.search("repo").hits[0]
    assert hit.snippet.endswith("the repo!")
    assert [hit.snippet[a:b] for a, b in hit.highlights] == ["repo"]


def _sample_vault(tmp_path: Path) -> Path:
    """sample-vault/ with its own history, as `init` adopts it (see test_init_adopts_...)."""
    v = tmp_path / "acme-vault"
    shutil.copytree(ROOT / "sample-vault", v)
    git_in(v, "init", "-q")
    git_in(v, "add", "-A")
    git_in(v, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "sample")
    return v


def git_in(v: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(v), *args], capture_output=True, text=True,
                          check=True).stdout


@dataclass
class Curated:
    vault: Path
    sample: str  # the commit that holds sample-vault/ as it ships
    dry: str  # `curate --dry-run` output, before the real run
    out: str  # `curate` output


@pytest.fixture(scope="module")
def curated(tmp_path_factory: pytest.TempPathFactory) -> Curated:
    """The README's demo: sample-vault/, two new sessions, one curation."""
    v = _sample_vault(tmp_path_factory.mktemp("demo"))
    sample = git_in(v, "rev-parse", "HEAD").strip()
    src = ROOT / "tests" / "data" / "sample-transcripts"
    ok("--vault", v, "ingest", src / "priya" / "2026-10-29-berlin-forecast-review.jsonl",
       "--user", "priya", "--scope", "user:priya")
    ok("--vault", v, "ingest", src / "dana" / "2026-11-03-cdn-and-phase2-egress-review.jsonl",
       "--user", "dana", "--scope", "team")
    dry = ok("--vault", v, "curate", "--dry-run").out
    return Curated(v, sample, dry, ok("--vault", v, "curate").out)


def test_curate_prints_the_counts_its_commit_and_diff_record(curated: Curated) -> None:
    """The demo printed '14 added, 1 resolved' and committed 'curate: 13 added'."""
    v = curated.vault
    printed = curated.out.splitlines()[1].strip()
    diff = ok("--vault", v, "diff", "HEAD~1..HEAD", "--json").json()["counts"]
    said = ", ".join(f"{k} {a}" for a, k in diff.items())
    assert printed == said
    assert f"  {said} (dry run)" in curated.dry
    subject = git_in(v, "log", "-1", "--format=%s").strip()
    assert subject.startswith(f"curate: {said} from ")
    body = git_in(v, "log", "-1", "--format=%b")
    assert f"Memctl-Claims-Added: {diff.get('added', 0)}" in body


def test_drift_right_after_curation_finds_nothing(curated: Curated) -> None:
    """Two claims from one turn are two claims, not one claim reworded: drift flagged the
    second (the curator's own "Decided on …" line among them) a minute after curation."""
    res = ok("--vault", curated.vault, "drift", "--json").json()
    assert [i for i in res["items"] if i["kind"] == "wording"] == []
    text = ok("--vault", curated.vault, "drift").out
    assert text.strip().splitlines()[-1].startswith("drift: 0 findings in ")


def test_drift_counts_agree_with_their_nouns(tmp_path: Path) -> None:
    from memctl.faces.cli.render import n

    assert (n(1, "finding"), n(2, "finding"), n(1, "note")) == ("1 finding", "2 findings", "1 note")
    src = (ROOT / "memctl" / "faces" / "cli" / "gitcmds.py").read_text(encoding="utf-8")
    assert "findings in" not in src  # every count there goes through n()


def test_blame_after_undo_credits_who_wrote_the_claim(curated: Curated, tmp_path: Path) -> None:
    v = tmp_path / "v"
    shutil.copytree(curated.vault, v, symlinks=True)
    ok("--vault", v, "undo")  # the curation that moved Lisbon to History
    lines = ok("--vault", v, "blame", "profile/priya.md", "--json").json()["lines"]
    restored = [x for x in lines if "Priya lives in" in x["text"] and "Lisbon" in x["text"]]
    assert all("superseded" not in x["text"] for x in restored)
    assert restored and all(x["command"] != "undo" for x in restored), restored
    assert {x["commit"] for x in restored} == {curated.sample}


def test_rollback_of_a_note_that_never_was_is_an_error(curated: Curated) -> None:
    before = git_in(curated.vault, "rev-parse", "HEAD")
    r = memctl("--vault", curated.vault, "rollback", "knowledge/nonexistent", "--to", "HEAD")
    assert r.code == 2 and "no note knowledge/nonexistent.md" in r.err
    assert git_in(curated.vault, "rev-parse", "HEAD") == before


def test_rollback_dry_run_lists_what_the_real_run_removes(
    curated: Curated, tmp_path: Path
) -> None:
    v = tmp_path / "v"
    shutil.copytree(curated.vault, v, symlinks=True)
    args = ("--vault", v, "rollback", "profile/priya.md", "--to", curated.sample)
    dry = ok(*args, "--dry-run", "--json").json()
    real = ok(*args, "--json").json()
    assert real["claims_removed"], "the curation added claims to profile/priya.md"
    assert dry["claims_removed"] == real["claims_removed"]
    assert dry["commit"] is None and real["commit"]


def test_review_says_how_to_accept_and_diff_shows_an_accepted_claim_once(tmp_path: Path) -> None:
    v = tmp_path / "v"
    init_vault(v)
    ok("--vault", v, "ingest", "-", "--format", "jsonl", "--user", "dana", input=(
        '{"role": "user", "content": "From now on, always run the database migrations '
        'inside a transaction."}\n'))
    ok("--vault", v, "curate")
    listed = ok("--vault", v, "review").out.rstrip("\n").splitlines()
    pid = ok("--vault", v, "review", "--json").json()["pending"][0]["id"]
    # the last line is the command that accepts, ready to paste
    assert listed[-1].startswith(f"to accept: memctl review --accept {pid}")
    ok("--vault", v, "review", "--accept", pid)
    changes = [(c["action"], c["plain"])
               for notes in ok("--vault", v, "diff", "HEAD~1..HEAD", "--json").json()[
                   "stores"].values()
               for note in notes for c in note["changes"]]
    claim = "From now on, always run the database migrations inside a transaction."
    assert changes == [("added", claim)]


def test_a_learning_machine_proposal_says_it_waits_for_review(tmp_path: Path) -> None:
    from memctl import LearningMachine

    Vault.init(tmp_path / "v", env={})
    with LearningMachine(tmp_path / "v", user="dana") as lm:
        res = lm.remember("The team prefers small pull requests.", own=True, scope="team")
    assert res.action == "proposed" and res.commit
    assert res.notice and "memctl review --accept" in res.notice
    pid = res.notice.split("--accept ", 1)[1].split("`", 1)[0]
    r = ok("--vault", tmp_path / "v", "review", "--accept", pid)
    assert f"accepted {pid}" in r.out


def test_doctor_right_after_init_or_clone_is_ok(tmp_path: Path) -> None:
    """A search index not built yet is not out of step with the files; doctor said
    'FAIL search index: search index missing; built it from the files', building nothing."""
    v = tmp_path / "v"
    ok("init", v)
    r = memctl("--vault", v, "doctor")
    assert r.code == 0 and "FAIL" not in r.out, r.out
    git_in(tmp_path, "clone", "-q", str(v), str(tmp_path / "c"))
    ok("init", tmp_path / "c")
    r = memctl("--vault", tmp_path / "c", "doctor")
    assert r.code == 0 and "FAIL" not in r.out, r.out


def test_undo_dry_run_lists_the_claims_the_real_undo_removes_and_restores(
    curated: Curated, tmp_path: Path
) -> None:
    """`undo --dry-run` listed the commit's files but no claim; the real undo took some out
    and put the superseded Lisbon claim back."""
    v = tmp_path / "v"
    shutil.copytree(curated.vault, v, symlinks=True)
    dry = ok("--vault", v, "undo", "--dry-run", "--json").json()
    shown = ok("--vault", v, "undo", "--dry-run").out
    assert git_in(v, "status", "--porcelain") == ""
    assert len(git_in(v, "worktree", "list").splitlines()) == 1  # the preview's tree is gone
    real = ok("--vault", v, "undo", "--json").json()
    assert real["claims_removed"], "the curation added claims that undo takes out"
    assert any("Lisbon" in c for c in real["claims_restored"]), real["claims_restored"]
    assert dry["claims_removed"] == real["claims_removed"]
    assert dry["claims_restored"] == real["claims_restored"]
    assert dry["commit"] is None and real["commit"]
    for c in real["claims_removed"]:
        assert f"claim removed (curation will not learn it again): {c}" in shown
    for c in real["claims_restored"]:
        assert f"claim restored: {c}" in shown
    # the same classifier as `memctl diff`, and the commit records the same counts
    counts = ok("--vault", v, "diff", "HEAD~1..HEAD", "--json").json()["counts"]
    assert counts.get("added", 0) + counts.get("edited", 0) == len(real["claims_restored"])
    assert counts.get("removed", 0) == len(real["claims_removed"])
    body = git_in(v, "log", "-1", "--format=%b")
    assert f"Memctl-Claims-Removed: {len(real['claims_removed'])}" in body
    assert f"Memctl-Claims-Restored: {len(real['claims_restored'])}" in body
