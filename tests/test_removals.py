"""A claim a person removed stays removed: curation never learns it again from the same turns.

Real vaults, real git, the real CLI: the watermark is rolled back by the very revert that
removes the claims, so only the removed-claims record keeps them out.
"""

from __future__ import annotations

import json
from pathlib import Path

from gitutil import run_git
from util import init_vault, ok

from memctl.curate.removals import Removal, Removals, claim_digest

S1 = [
    {"role": "user", "content": "I'm a platform engineer at Acme. We're trying to cut our "
     "egress costs this quarter.", "timestamp": "2026-09-01T09:00:00Z"},
    {"role": "assistant", "content": "Got it.", "timestamp": "2026-09-01T09:00:05Z"},
    {"role": "user", "content": "We decided to use Grafana Cloud instead of Datadog for "
     "metrics.", "timestamp": "2026-09-01T09:01:00Z"},
]


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def curated_vault(tmp_path: Path) -> Path:
    v = tmp_path / "v"
    init_vault(v)
    ok("--vault", v, "ingest", write_jsonl(tmp_path / "s1.jsonl", S1), "--user", "dana",
       "--scope", "team")
    ok("--vault", v, "curate")
    return v


def claim_lines(v: Path) -> list[str]:
    out = []
    for p in sorted(v.rglob("*.md")):
        rel = p.relative_to(v).as_posix()
        if rel.startswith(("raw/", ".")) or p.name == "INDEX.md":
            continue
        out += [f"{rel}: {line}" for line in p.read_text().splitlines() if line.startswith("- ")]
    return out


def test_revert_of_the_latest_curate_stays_reverted_after_the_next_curate(tmp_path):
    v = curated_vault(tmp_path)
    assert any("egress costs" in line for line in claim_lines(v))
    run_git(v, "revert", "--no-edit", "HEAD")
    assert claim_lines(v) == []
    state = json.loads((v / ".memctl/state/curation.json").read_text())
    assert state["stores"] == {}  # the revert rolled the watermark back too
    r = ok("--vault", v, "curate")
    assert "3 turns read" in r.out  # the turns were read again...
    assert claim_lines(v) == []  # ...and nothing the person removed came back
    log = run_git(v, "log", "--format=%s%n%b")
    assert "claims a person removed stay removed" in log
    assert "Memctl-Removed-By: revert" in log
    recs = Removals.load(v).records.values()
    assert {r.by for r in recs} == {"revert"}
    assert all(r.sources and r.text for r in recs)
    ok("--vault", v, "verify")
    assert run_git(v, "status", "--porcelain") == ""
    # and a third run changes nothing at all
    head = run_git(v, "rev-parse", "HEAD")
    ok("--vault", v, "curate")
    assert run_git(v, "rev-parse", "HEAD") == head


def test_a_hand_deleted_claim_is_not_relearned_when_the_turns_are_read_again(tmp_path):
    v = curated_vault(tmp_path)
    note = v / "knowledge" / "acme.md"
    text = note.read_text()
    gone = next(line for line in text.splitlines() if "egress costs" in line)
    note.write_text(text.replace(gone + "\n", ""))
    # the watermark rolled back by hand: every turn is curated again
    (v / ".memctl/state/curation.json").write_text('{"version": 1, "stores": {}}\n')
    dry = ok("--vault", v, "curate", "--dry-run")
    assert "egress costs" not in "\n".join(
        line for line in dry.out.splitlines() if line.startswith("+- ")
    )
    assert not (v / ".memctl/state/removed.jsonl").exists()  # a dry run writes nothing
    ok("--vault", v, "curate")
    assert not any("egress costs" in line for line in claim_lines(v) if "knowledge/" in line)
    # the same words in the session note were not removed, and stay
    assert any("egress costs" in line for line in claim_lines(v) if "sessions/" in line)
    rec = list(Removals.load(v).records.values())
    assert [r.by for r in rec] == ["edit"]
    assert "egress costs" in (rec[0].text or "")
    # the person's edit went into a commit of its own, by the human, before the agent's
    assert "removed: 1 claim" in run_git(v, "log", "--format=%s")


def test_the_same_claim_from_a_new_source_is_new_evidence():
    rec = Removals([Removal(claim_digest("Acme uses Grafana."), ("raw/a.md#t1",), "k", "k/a.md",
                            "edit", "2026-09-01", "Acme uses Grafana.")])
    assert rec.blocks("k", "acme uses grafana", ["raw/a.md#t1"])  # same words, same turn
    assert not rec.blocks("k", "Acme uses Grafana.", ["raw/b.md#t4"])  # another turn said it
    assert not rec.blocks("k", "Acme uses Grafana.", ["raw/a.md#t1", "raw/b.md#t4"])
    assert not rec.blocks("k", "Acme uses Datadog.", ["raw/a.md#t1"])
    assert not rec.blocks("sessions", "Acme uses Grafana.", ["raw/a.md#t1"])
    # the record round-trips through its file format, sorted and without duplicates
    again = Removals(list(rec.records.values()) * 2)
    assert again.render() == rec.render() and rec.render().count("\n") == 1
