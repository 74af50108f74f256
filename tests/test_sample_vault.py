"""The sample vault reads as good English: it is the first memory a new user opens.

Its claims are what memctl learned from tests/data/sample-transcripts/, so a curator fault
shows up here as broken grammar: a subject rewritten with its verb lost ("Marco suggested
that the assistant the logs."), an infinitive or modal with no verb ("Priya wants to the
names"), a third-person suffix added twice ("doeses"), a claim cut off mid-word, an entity
named by part of a word ("Ale" from "Alex's product"). Each marker is checked against the
raw sessions' own words, so a word people really said is never flagged.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path

import pytest
from util import ROOT

from memctl.core.notes import parse_note

SAMPLE = ROOT / "sample-vault"
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_LINK = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]")
_SUBJECT = r"(?:the assistant|the team|the user|I|you|we|he|she|they|[A-Z][a-z]+)"
_DETERMINER = r"(?:the|a|an|this|these|those|our|their|its|his|her|my|your|something)"
# a clause whose verb is missing: "that the assistant the logs", "wants to the names",
# "will the logs"
_NO_VERB = [
    re.compile(rf"\bthat {_SUBJECT} {_DETERMINER}\b"),
    re.compile(
        r"\b(?:wants?|wanted|needs?|needed|plans?|planned|tries|tried|decided|asked \w+"
        rf"(?: \w+)?) to {_DETERMINER}\b"
    ),
    re.compile(rf"\b(?:will|would|should|must|could) {_DETERMINER}\b"),
]


@cache
def said_words(root: Path) -> frozenset[str]:
    """Every word of every raw session (lowercased): what people and the agent really said."""
    words: set[str] = set()
    for p in (root / "raw").rglob("*.md"):
        if p.name != "INDEX.md":
            words |= {w.casefold() for w in _WORD.findall(p.read_text(encoding="utf-8"))}
    return frozenset(words)


def shown(text: str) -> str:
    """A claim as a reader sees it: links as their text, a code span as one word."""
    text = _LINK.sub(lambda m: m.group(2) or m.group(1).rsplit("/", 1)[-1], text)
    return re.sub(r"`[^`]*`", "code", text)


def faults(text: str, said: frozenset[str]) -> list[str]:
    """What in one claim reads as broken grammar; empty when it reads well."""
    plain = shown(text)
    found = [f"no verb: {m.group(0)!r}" for rx in _NO_VERB for m in rx.finditer(plain)]
    for w in _WORD.findall(plain):
        low = w.casefold()
        if low in said:
            continue
        for one in ("es", "s"):
            for two in ("es", "s"):
                base = low.removesuffix(two)
                if base != low and base.endswith(one) and base.removesuffix(one) in said \
                        and len(base.removesuffix(one)) >= 2:  # fmt: skip
                    found.append(f"suffix twice: {w!r}")
    body = re.sub(r"(?:\s*\([^()]*\))+\W*$", "", plain).rstrip()  # "(as of ...)", "([[s]])"
    if not re.search(r"[.!?)\"'”`]$", plain.rstrip()):
        found.append("no closing stop: cut off?")
    last = _WORD.findall(body)[-1:] if body else []
    if last and last[0].casefold().split("'")[0] not in said and len(last[0]) > 2:
        found.append(f"last word {last[0]!r} is no word of the sessions: cut off?")
    return sorted(set(found))


def entity_faults(root: Path, said: frozenset[str]) -> list[str]:
    """Entity names (note titles, link texts) that are part of a word, never a word said."""
    out = []
    names: set[tuple[str, str]] = set()
    for p in (root / "entities").glob("*.md"):
        if p.name != "INDEX.md":
            title = parse_note(p.read_text(encoding="utf-8"), f"entities/{p.name}").title
            names.add((f"entities/{p.name}", title or ""))
    for p in root.rglob("*.md"):
        if "raw" not in p.relative_to(root).parts:
            for m in _LINK.finditer(p.read_text(encoding="utf-8")):
                if m.group(1).startswith("entities/") and m.group(2):
                    names.add((p.relative_to(root).as_posix(), m.group(2)))
    for where, name in sorted(names):
        unsaid = [w for w in _WORD.findall(name) if w.casefold().split("'")[0] not in said]
        if unsaid:
            out.append(f"{where}: entity {name!r}: {unsaid} is no word of the sessions")
    return out


def claims(root: Path) -> list[tuple[str, str]]:
    out = []
    for p in sorted(root.rglob("*.md")):
        rel = p.relative_to(root).as_posix()
        if rel.startswith("raw/") or p.name == "INDEX.md":
            continue
        note = parse_note(p.read_text(encoding="utf-8"), rel)
        out += [(rel, c.text) for _, c in note.all_claims()]
    return out


@pytest.mark.parametrize(
    ("claim", "marker"),
    [
        ("Marco suggested that the assistant the logs.", "no verb"),
        ("Priya wants to the names after all.", "no verb"),
        ("Marco will the alarm.", "no verb"),
        ("Dana doeses the runbook first.", "suffix twice"),
        ("Dana moved the replication to a nightly ba", "cut off"),
        ("Dana moved the replication to a nightly batc.", "cut off"),
    ],
)
def test_each_marker_finds_the_fault_it_names(claim: str, marker: str) -> None:
    said = said_words(SAMPLE)
    assert any(marker in f for f in faults(claim, said)), faults(claim, said)


@pytest.mark.parametrize(
    "claim",
    [
        "Marco suggested that the assistant check the logs.",
        "Priya wants to merge the names after all.",
        "Dana does the runbook first (as of 2026-09-15).",
        "[[entities/acme|Acme]] moved the replication to a nightly batch, which cut egress by 30%.",
        "Good catch on SourceIp. ([[sessions/2026-09-01-x-dce361|2026-09-01]])",
    ],
)
def test_a_claim_that_reads_well_has_no_marker(claim: str) -> None:
    assert faults(claim, said_words(SAMPLE)) == []


def test_an_entity_cut_from_a_word_is_found(tmp_path: Path) -> None:
    raw = tmp_path / "raw" / "2026" / "09" / "24"
    raw.mkdir(parents=True)
    (raw / "s.md").write_text("Alex's product is a POS loader.\n")
    (tmp_path / "entities").mkdir()
    (tmp_path / "entities" / "ale.md").write_text("---\ntitle: Ale\n---\n# Ale\n")
    (tmp_path / "knowledge.md").write_text("- [[entities/ale|Ale]] sells a loader.\n")
    found = entity_faults(tmp_path, said_words(tmp_path))
    assert len(found) == 2 and all("'Ale'" in f for f in found), found


def test_every_sample_vault_claim_reads_as_whole_sentences() -> None:
    said = said_words(SAMPLE)
    found = [f"{rel}: {text!r}: {', '.join(why)}"
             for rel, text in claims(SAMPLE) if (why := faults(text, said))]  # fmt: skip
    found += entity_faults(SAMPLE, said)
    assert len(claims(SAMPLE)) > 50
    assert found == [], "\n".join(found)
