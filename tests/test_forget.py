"""Forget and purge on real vaults: the cascade through provenance, and history rewritten.

"Gone" is checked where a person would look and where git keeps things: every file of
the work tree, the search index, every object in the repository (reachable or not), every
commit message of every branch.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from gitutil import run_git
from util import init_vault, memctl, ok, snapshot

from memctl import Vault
from memctl.curate.indexfiles import stale
from memctl.curate.removals import Removals

SECRET = "I prefer to keep the spare key under the blue flowerpot"
DANA = [
    {"role": "user", "content": "I'm a platform engineer at Acme. We're trying to cut our "
     "egress costs this quarter.", "timestamp": "2026-09-01T09:00:00Z"},
    {"role": "assistant", "content": "Got it.", "timestamp": "2026-09-01T09:00:05Z"},
    {"role": "user", "content": f"{SECRET}, by the way.", "timestamp": "2026-09-01T09:01:00Z"},
    {"role": "assistant", "content": "Noted.", "timestamp": "2026-09-01T09:01:05Z"},
    {"role": "user", "content": "We decided to use Grafana Cloud instead of Datadog for "
     "metrics.", "timestamp": "2026-09-01T09:02:00Z"},
]
DANA2 = [
    {"role": "user", "content": "Quick follow-up on last week. We're trying to cut our egress "
     "costs this quarter.", "timestamp": "2026-09-08T09:00:00Z"},
    {"role": "assistant", "content": "Right.", "timestamp": "2026-09-08T09:00:05Z"},
]
PRIYA = [
    {"role": "user", "content": "I'm a freelance data scientist and I live in Lisbon.",
     "timestamp": "2026-09-03T10:00:00Z"},
    {"role": "assistant", "content": "Nice.", "timestamp": "2026-09-03T10:00:05Z"},
]


def jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def forget_vault_built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once through the CLI (six commands); each test forgets in a copy of its own."""
    tmp_path = tmp_path_factory.mktemp("forget")
    v = tmp_path / "v"
    init_vault(v)
    ok("--vault", v, "ingest", jsonl(tmp_path / "dana.jsonl", DANA), "--user", "dana",
       "--scope", "team", "--session", "dana-1")
    ok("--vault", v, "ingest", jsonl(tmp_path / "priya.jsonl", PRIYA), "--user", "priya",
       "--session", "priya-1")
    ok("--vault", v, "curate")
    ok("--vault", v, "ingest", jsonl(tmp_path / "dana2.jsonl", DANA2), "--user", "dana",
       "--scope", "team", "--session", "dana-2")
    ok("--vault", v, "curate")
    return v


@pytest.fixture
def vault(forget_vault_built: Path, tmp_path: Path) -> Path:
    v = tmp_path / "v"
    shutil.copytree(forget_vault_built, v, symlinks=True)
    return v


def everything_git_holds(v: Path) -> str:
    """Every object in the repository, reachable or not, plus every commit message."""
    objs = subprocess.run(["git", "-C", str(v), "cat-file", "--batch-all-objects", "--batch"],
                          capture_output=True, check=True).stdout.decode("utf-8", "replace")
    return objs + run_git(v, "log", "--all", "--format=%B")


def work_tree_text(v: Path) -> str:
    out = []
    for p in v.rglob("*"):
        if p.is_file() and ".git" not in p.relative_to(v).parts:
            out.append(p.read_bytes().decode("utf-8", "replace"))
    return "\n".join(out)


def claims(v: Path) -> list[str]:
    out = []
    for p in sorted(v.rglob("*.md")):
        rel = p.relative_to(v).as_posix()
        if not rel.startswith(("raw/", ".")) and p.name != "INDEX.md":
            out += [f"{rel}: {x}" for x in p.read_text().splitlines() if x.startswith("- ")]
    return out


def cite_both(v: Path) -> str:
    """A person folds the two sessions' egress claims into one line citing both."""
    note = v / "knowledge" / "acme.md"
    lines = note.read_text().splitlines()
    egress = [i for i, x in enumerate(lines) if x.startswith("- ") and "egress costs" in x]
    assert len(egress) == 2, lines
    labels = [x.rsplit(" ", 1)[1] for x in (lines[i] for i in egress)]
    lines[egress[0]] = "- Acme is trying to cut its egress costs this quarter. " + "".join(labels)
    del lines[egress[1]]
    note.write_text("\n".join(lines) + "\n")
    run_git(v, "commit", "-qam", "one claim, two sources")
    # the next memctl command brings INDEX files in step with this outside commit (issue
    # 23 item 8); let it happen here, so the commands under test start from a settled vault
    ok("--vault", v, "status")
    return lines[egress[0]]


def test_forgetting_a_session_cascades_through_provenance(vault: Path):
    merged = cite_both(vault)
    assert merged.count("[^") == 2
    snap = snapshot(vault)
    dry = ok("--vault", vault, "forget", "dana-2", "--dry-run")
    assert "dry run: nothing was written" in dry.out
    assert "delete session" in dry.out and "drop citation" in dry.out
    assert snapshot(vault) == snap
    r = ok("--vault", vault, "forget", "dana-2", "--json").json()
    res = r.get("data", r)
    assert len(res["sessions_deleted"]) == 1
    assert res["citations_removed"], "a claim with another source only loses a citation"
    after = claims(vault)
    kept = [c for c in after if "egress costs" in c and "knowledge/" in c]
    assert len(kept) == 1 and kept[0].count("[^") == 1  # still cited by dana-1, and only
    assert not any("dana-2" in c or "follow-up" in c.lower() for c in after)
    assert "08" not in "".join(p.name for p in (vault / "raw/2026/09").iterdir())
    assert stale(Vault.open(vault)) == []
    ok("--vault", vault, "verify")
    assert run_git(vault, "status", "--porcelain") == ""
    log = run_git(vault, "log", "-1", "--format=%s%n%b")
    assert log.startswith("forget: session; removed 1 session")
    assert "- session deleted: raw/2026/09/08/" in log and "Memctl-Command: forget" in log
    # the session's own note is gone with it; the index no longer finds its words
    hits = ok("--vault", vault, "search", "follow-up", "--json").json()
    assert not (hits.get("data", hits)["hits"])


def test_forgetting_a_turn_keeps_turn_numbers_and_other_claims(vault: Path):
    ok("--vault", vault, "forget", "dana-1#t3")
    raw = next((vault / "raw/2026/09/01").iterdir()).read_text()
    assert SECRET not in raw and "[forgotten]" in raw
    assert "## t5 " in raw  # later turns keep their numbers, so their citations hold
    assert any("Grafana Cloud" in c for c in claims(vault))  # t5's decision stays
    ok("--vault", vault, "verify")


def test_forget_purge_leaves_the_content_in_no_file_index_or_commit(vault: Path):
    # the secret also lives on another branch, and in a curate commit there
    run_git(vault, "branch", "old-work")
    assert SECRET in everything_git_holds(vault)
    assert any("flowerpot" in c for c in claims(vault))
    r = ok("--vault", vault, "forget", "dana-1#t3", "--purge")
    assert "git push --force --all" in r.out  # told, never done
    assert "purge:" in r.out
    held = everything_git_holds(vault)
    for needle in (SECRET, "flowerpot", "spare key"):
        assert needle not in held
        assert needle not in work_tree_text(vault)
        hits = ok("--vault", vault, "search", needle, "--json").json()
        assert not hits.get("data", hits)["hits"]
    assert set(run_git(vault, "branch", "--format=%(refname:short)").split()) == {
        "main", "old-work"}
    assert run_git(vault, "status", "--porcelain") == ""
    ok("--vault", vault, "verify")
    # the rest of memory survived the rewrite
    assert any("Grafana Cloud" in c for c in claims(vault))
    assert any("Lisbon" in c for c in claims(vault))


def test_purge_refuses_on_a_dirty_tree_and_changes_nothing(vault: Path):
    (vault / "knowledge" / "scratch.md").write_text("half-written\n")
    snap = snapshot(vault)
    r = memctl("--vault", vault, "forget", "dana-1#t3", "--purge")
    assert r.code == 3 and "clean working tree" in r.err
    assert snapshot(vault) == snap


def test_forget_a_user_and_a_claim(vault: Path):
    ok("--vault", vault, "forget", "--user", "priya")
    assert not any("Lisbon" in c for c in claims(vault))
    assert not list((vault / "raw/2026/09/03").glob("*.md"))
    ok("--vault", vault, "verify")
    target = next(c for c in claims(vault) if "Grafana Cloud" in c and "decisions/" in c)
    note = target.split(":")[0]
    line = (vault / note).read_text().splitlines().index(target.split(": ", 1)[1]) + 1
    ok("--vault", vault, "forget", f"{note}#L{line}")
    rec = list(Removals.load(vault).records.values())
    assert [r.by for r in rec] == ["forget"] and rec[0].text is None  # no words kept
    # turns read again (watermark rolled back by hand) do not bring it back
    (vault / ".memctl/state/curation.json").write_text('{"version": 1, "stores": {}}\n')
    ok("--vault", vault, "curate")
    assert target not in claims(vault)
    ok("--vault", vault, "verify")


def test_unknown_reference_is_one_line_error(vault: Path):
    r = memctl("--vault", vault, "forget", "no-such-thing-anywhere")
    assert r.code == 2 and r.err.count("\n") == 1 and "nothing called" in r.err
