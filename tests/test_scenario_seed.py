"""The seed scenario, replayed through the public CLI exactly as a team would run it.

User A (Dana, Acme) says the team is trying to cut egress costs; in a later session user B
(Marco) asks "Datadog or Grafana?". `memctl recall` for Marco must bring the egress note
with its citation to Dana's turn, and none of Dana's private profile. A new employee asking
about the cloud migration gets Alex, AWS to GCP, Phase 2 compute-heavy and the pricing
change, each cited to the turn that said it.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from util import DATA, init_vault, ok

from memctl.core.notes import parse_note

SRC = DATA / "sample-transcripts"


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    v = tmp_path_factory.mktemp("seed") / "vault"
    init_vault(v)
    rows = (SRC / "sessions.tsv").read_text().splitlines()[1:]
    for row in rows:
        path, user, scope = row.split("\t")
        ok("--vault", v, "ingest", SRC / path, "--user", user, "--scope", scope)
    ok("--vault", v, "curate")
    return v


def _turn_ref(vault: Path, message_id: str) -> str:
    hits = ok("--vault", vault, "search", message_id, "--turns", "--json").json()["hits"]
    ref = next(h["ref"] for h in hits if h["id"] == message_id)
    return str(ref)


def _recall(vault: Path, query: str, user: str) -> dict[str, Any]:
    return ok("--vault", vault, "recall", query, "--user", user, "--json").json()


def _turn_text(vault: Path, ref: str) -> str:
    return str(ok("--vault", vault, "show", ref, "--json").json()["text"])


def _assert_cited(vault: Path, memory: dict[str, Any]) -> None:
    """Cited to real turns: ref, date and basis, and the quote is verbatim in that turn."""
    assert memory["basis"] in ("stated", "inferred"), memory
    assert memory["citations"], memory
    for c in memory["citations"]:
        assert re.fullmatch(r"raw/.+\.md#t\d+", c["ref"]) and c["date"], c
        assert " ".join(c["quote"].split()) in " ".join(_turn_text(vault, c["ref"]).split())


def test_marco_asking_datadog_or_grafana_gets_danas_egress_note(vault: Path) -> None:
    dana_turn = _turn_ref(vault, "dana-s1-m1")
    res = _recall(vault, "Datadog or Grafana?", "marco")
    assert res["user"] == "marco" and 0 < res["tokens"] <= res["budget"] == 1500
    egress = [
        m
        for m in res["memories"]
        if m["kind"] == "claim"
        and re.search(r"cut (its|our) egress costs", m["text"])
        and any(c["ref"] == dana_turn for c in m["citations"])
    ]
    assert egress, json.dumps(res["memories"], indent=1)[:3000]
    note = egress[0]
    assert note["scope"] == "team" and note["citations"][0]["speaker"] == "Dana"
    assert note["citations"][0]["date"] == "2026-09-01"
    _assert_cited(vault, note)
    # the team's decision on the very question comes along, cited to Marco's own turn
    assert any("Grafana Cloud" in m["text"] for m in res["memories"] if m["kind"] == "claim")


def test_marco_gets_none_of_danas_private_profile(vault: Path) -> None:
    private: list[str] = []
    for p in (vault / "profile").glob("*.md"):
        if p.name == "INDEX.md":
            continue
        note = parse_note(p.read_text(encoding="utf-8"), f"profile/{p.name}")
        if note.scope == "user:dana":
            private += [c.text for _, c in note.all_claims()]
    assert private, "curation should have written Dana's private profile"
    for query in ("Datadog or Grafana?", "What does Dana prefer, Terraform or Pulumi?", "Dana"):
        res = _recall(vault, query, "marco")
        for m in res["memories"]:
            assert m["scope"] in ("team", "global", "user:marco"), m
            assert m["text"] not in private, m
            assert m.get("store") != "profile" or m["scope"] != "user:dana", m


def test_a_new_employee_asking_about_the_migration_gets_the_cited_facts(vault: Path) -> None:
    res = _recall(vault, "What should I know about the cloud migration?", "newhire")
    claims = [m for m in res["memories"] if m["kind"] == "claim"]
    wanted = {
        "Alex": r"\bAlex( Morgan)? is (Acme's CTO|leading the migration)",
        "AWS to GCP": r"AWS to GCP",
        "Phase 2 compute-heavy": r"Phase 2\b.*compute-heavy",
        "pricing change": r"GCP pricing (changes|kicks in)",
    }
    for label, pattern in wanted.items():
        found = [m for m in claims if re.search(pattern, m["text"])]
        assert found, (label, [m["text"] for m in claims])
        _assert_cited(vault, found[0])
    # nothing private reaches someone with no sessions of their own
    assert all(m["scope"] in ("team", "global") for m in res["memories"])
    assert not any("Crumbwise" in m["text"] or "bakery" in m["text"] for m in res["memories"])


# ---- a vault an agent can walk with file tools alone ------------------------------------------

_STORE_LINE = re.compile(
    r"^- \[(?P<title>.+?)\]\((?P<file>[^)]+\.md)\) · (?P<date>\S+) · (?P<gist>.+)$"
)


def test_an_agent_with_only_file_tools_finds_a_note_in_two_reads(vault: Path) -> None:
    # read 1: the root INDEX.md names every store and where its index is
    root = (vault / "INDEX.md").read_text(encoding="utf-8")
    link = re.search(r"\[knowledge/\]\((knowledge/INDEX\.md)\)", root)
    assert link, root
    # read 2: the store's INDEX.md gives each note's title and one-line gist, newest first
    index = (vault / link.group(1)).read_text(encoding="utf-8")
    rows = [m for line in index.splitlines() if (m := _STORE_LINE.match(line))]
    assert rows, index
    dates = [m["date"] for m in rows]
    assert dates == sorted(dates, reverse=True)
    egress = next(m for m in rows if "egress" in m["gist"])
    note = vault / "knowledge" / egress["file"]
    assert "cut its egress costs" in note.read_text(encoding="utf-8")


def test_every_memctl_write_keeps_the_indexes_current(vault: Path, tmp_path: Path) -> None:
    import shutil

    from memctl.faces.mcp import Tools
    from memctl.vault import Vault

    copy = tmp_path / "copy"
    shutil.copytree(vault, copy, symlinks=True)
    v = Vault.open(copy)
    before = (copy / "INDEX.md").read_text(encoding="utf-8")
    res = Tools(v, "marco").remember(
        "Marco wants the cost math in every decision doc.", own=True, note="Marco's working notes"
    )
    index = (copy / "knowledge" / "INDEX.md").read_text(encoding="utf-8")
    rows = [m for line in index.splitlines() if (m := _STORE_LINE.match(line))]
    row = next(m for m in rows if m["title"] == "Marco's working notes")
    assert res.path.endswith(row["file"]) and row["date"] == max(m["date"] for m in rows)
    assert "Marco wants the cost math in every decision doc." in row["gist"]
    root = (copy / "INDEX.md").read_text(encoding="utf-8")
    count = re.compile(r"\[knowledge/\]\(knowledge/INDEX\.md\) · (\d+) notes")
    assert int(count.search(root)[1]) == int(count.search(before)[1]) + 1  # type: ignore[index]
