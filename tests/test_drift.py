"""memctl blame and drift read a note's real git history."""

from __future__ import annotations

from pathlib import Path

from gitutil import run_git
from test_forget import cite_both, forget_vault_built, vault  # noqa: F401 - the fixtures
from util import ok


def test_blame_names_the_run_and_the_person(vault: Path):  # noqa: F811
    note = vault / "knowledge" / "acme.md"
    lines = note.read_text().splitlines()
    i = next(k for k, x in enumerate(lines) if x.startswith("- ") and "[^" in x)
    lines.insert(i + 1, "- Acme's CFO signs off on cloud spend.")
    note.write_text("\n".join(lines) + "\n")
    run_git(vault, "commit", "-qam", "a person adds a line")
    r = ok("--vault", vault, "blame", "knowledge/acme", "--json").json()
    rows = r.get("data", r)["lines"]
    agent = [x for x in rows if not x["human"]]
    human = [x for x in rows if x["human"]]
    assert agent and all(x["command"] == "curate" and x["curator"] == "builtin" for x in agent)
    assert all(x["author"].startswith("memctl agent") for x in agent)
    assert [x["text"] for x in human] == ["- Acme's CFO signs off on cloud spend."]
    assert human[0]["author"] == "Dana Reyes <dana@example.com>" and human[0]["command"] == "git"
    assert human[0]["line"] == i + 1 + 1
    plain = ok("--vault", vault, "blame", "knowledge/acme.md").out
    assert f"L{i + 2}" in plain and "builtin/none" in plain


def test_drift_flags_wording_lost_sources_and_churn(vault: Path):  # noqa: F811
    merged = cite_both(vault)  # one claim citing two sessions
    ok("--vault", vault, "forget", "dana-2")  # it loses one of them
    lost = ok("--vault", vault, "drift", "knowledge/acme", "--json").json()
    lost = lost.get("data", lost)["items"]
    assert [i["kind"] for i in lost] == ["sources"] and "raw/2026/09/08/" in lost[0]["detail"]
    note = vault / "knowledge" / "acme.md"
    text = note.read_text()
    line = next(x for x in text.splitlines() if x.startswith("- ") and "egress" in x)
    refs = line[line.index(" [^"):]
    note.write_text(text.replace(line, "- Acme plans a total rewrite of its platform." + refs))
    run_git(vault, "commit", "-qam", "reworded")
    r = ok("--vault", vault, "drift", "knowledge/acme.md", "--json").json()
    items = r.get("data", r)["items"]
    kinds = {i["kind"] for i in items}
    assert "wording" in kinds, items
    assert any(i["kind"] == "wording" and "total rewrite" in i["claim"] for i in items)
    assert merged.count("[^") == 2  # the two-source claim existed
    for k in range(5):
        note.write_text(note.read_text() + f"\nnote {k}\n")
        run_git(vault, "commit", "-qam", f"churn {k}")
    r = ok("--vault", vault, "drift").out
    assert "rewritten knowledge/acme.md: changed by" in r


def test_drift_compares_a_reworded_claim_with_its_own_first_wording(tmp_path: Path):
    """Two claims cite one turn; a person rewords one of them. The other line never
    changed: drift must not report it against the wording its neighbour used to have."""
    from util import new_vault

    v = new_vault(tmp_path)
    note = v / "knowledge" / "acme.md"
    cite = ('[^dce361-t1]: raw/2026/09/01/s-dce361.md#t1 "I\'m trying to cut our egress costs '
            'this quarter and I own the egress work."')
    kept = "- Acme has a savings goal for network spend. [^dce361-t1]"
    first = "- Dana wants to cut egress costs this quarter. [^dce361-t1]"
    note.write_text(f"# Acme\n\n## Facts\n\n{kept}\n{first}\n\n{cite}\n")
    run_git(v, "add", "-A")
    run_git(v, "commit", "-qm", "a person writes two claims")
    note.write_text(note.read_text().replace(first, "- Dana has a budget target. [^dce361-t1]"))
    run_git(v, "commit", "-qam", "a person rewords one")
    r = ok("--vault", v, "drift", "knowledge/acme.md", "--json").json()
    items = [i for i in r.get("data", r)["items"] if i["kind"] == "wording"]
    assert [i["claim"] for i in items] == ["Dana has a budget target."], items
    assert "Dana wants to cut egress costs this quarter." in items[0]["detail"]
