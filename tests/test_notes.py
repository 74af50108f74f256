"""The note format is a contract with humans, Obsidian, git diff and the search index:
rendering must be deterministic and parsing must give back exactly what was written."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from memctl.core.notes import (
    KEY_ORDER,
    REF_RE,
    Claim,
    Lifetime,
    base_label,
    claim_key,
    escape_quote,
    new_note,
    parse_note,
    render_note,
    unescape_quote,
)

REF = "raw/2026/09/03/hi-119b95.md#t1"

HAND_EDITED = """\
---
id: profile/priya
schema: 1
store: profile
title: 'Profile: priya'
scope: user:priya
status: active
created: 2026-09-03
updated: 2026-10-29
derived_by:
- builtin
favourite: true
---

# Profile: priya

Written by memctl; Priya added this paragraph.

## Identity

- Priya is a freelance data scientist. [^119b95-t1]
- Priya speaks Portuguese and German.
- Priya guesses the forecast is fine. #inferred [^119b95-t1-9b0e]

| a table | a human kept |
|---|---|

## History

- 2026-09-03 → 2026-10-29 · superseded · Priya lives in Lisbon. [^119b95-t1-a7d1]
- some line a human moved here

[^119b95-t1]: raw/2026/09/03/hi-119b95.md#t1 "I'm a freelance data scientist."
[^119b95-t1-9b0e]: raw/2026/09/03/hi-119b95.md#t1 "I said \\"fine\\", with a \\\\ backslash"
[^119b95-t1-a7d1]: raw/2026/09/03/hi-119b95.md#t1 "I live in Lisbon."
[^aside]: A human's own footnote, kept as written.
"""


def test_render_of_parse_is_identity_for_a_hand_edited_note() -> None:
    assert render_note(parse_note(HAND_EDITED, "profile/priya.md")) == HAND_EDITED


def test_parse_understands_claims_history_inferred_and_human_lines() -> None:
    note = parse_note(HAND_EDITED, "profile/priya.md")
    ident = note.section("Identity")
    assert ident is not None
    claims = ident.claims
    assert claims[0] == Claim("Priya is a freelance data scientist.", ("119b95-t1",))
    assert claims[1].human and claims[1].text == "Priya speaks Portuguese and German."
    assert claims[2].inferred and claims[2].text == "Priya guesses the forecast is fine."
    [old, moved] = note.history_claims()
    assert old.lifetime == Lifetime("superseded", "2026-09-03", "2026-10-29")
    assert moved.human and moved.lifetime is None
    assert note.footnotes["119b95-t1-9b0e"].quote == 'I said "fine", with a \\ backslash'
    assert note.footnotes["aside"].ref is None
    # The search index finds citations with this regex; footnotes must keep refs plain.
    assert REF in REF_RE.findall(HAND_EDITED)


def test_frontmatter_keys_come_in_the_fixed_order_and_empty_optionals_are_omitted() -> None:
    note = new_note("entities/alex-chen.md", "entities", "Alex Chen", "user:priya", "2026-09-03")
    note.meta["tags"] = ["person"]
    note.meta["aliases"] = ["Alex"]
    note.meta["zzz_extra"] = "kept last"
    note.meta["supersedes"] = None
    text = render_note(note)
    keys = re.findall(r"^(\w+):", text.split("---")[1], re.M)
    assert keys == [k for k in KEY_ORDER if k in keys] + ["zzz_extra"]
    assert "supersedes" not in keys and "valid_from" not in keys
    assert "created: 2026-09-03\n" in text  # a YAML date, as Obsidian expects


def test_labels_are_derived_from_the_turn_and_never_renumbered() -> None:
    note = new_note("knowledge/acme.md", "knowledge", "Acme", "team", "2026-09-01")
    first = note.cite(REF, "I'm a freelance data scientist.")
    second = note.cite(REF, "I live in Lisbon.")
    assert first == base_label(REF) == "119b95-t1"
    assert second.startswith("119b95-t1-") and second != first
    # Citing the same words again reuses the label; adding others leaves old ones alone.
    assert note.cite(REF, "I live in Lisbon.") == second
    note.cite("raw/2026/09/10/x-def585.md#t7", "Actually, I meant $14k a month, not $40k.")
    assert set(note.footnotes) == {first, second, "def585-t7"}


def test_footnotes_are_sorted_by_session_and_turn_number() -> None:
    note = new_note("knowledge/acme.md", "knowledge", "Acme", "team", "2026-09-01")
    labels = [
        note.cite(f"raw/2026/09/01/s-aaaaaa.md#t{n}", f"quote number {n}") for n in (10, 2, 1)
    ]
    sec = note.ensure_section("Facts")
    sec.items += [Claim(f"claim {lab}", (lab,)) for lab in labels]
    text = render_note(note)
    order = re.findall(r"^\[\^(aaaaaa-t\d+)\]:", text, re.M)
    assert order == ["aaaaaa-t1", "aaaaaa-t2", "aaaaaa-t10"]


def test_sections_are_created_in_template_order_with_history_last() -> None:
    note = new_note("profile/dana.md", "profile", "Profile: dana", "user:dana", "2026-09-01")
    order = ("Identity", "Preferences", "How they work", "History")
    note.ensure_section("History", order)
    note.ensure_section("How they work", order)
    note.ensure_section("Identity", order)
    note.ensure_section("Preferences", order)
    assert [s.name for s in note.sections] == [
        "Identity",
        "Preferences",
        "How they work",
        "History",
    ]


def test_claim_key_ignores_links_case_and_punctuation() -> None:
    assert claim_key("[[entities/acme|Acme]]'s bill is $14k.") == claim_key("acme's bill is $14k")
    assert claim_key("Alex is Acme's CTO.") != claim_key("Alex is Acme's CEO.")


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_quote_escaping_round_trips(q: str) -> None:
    escaped = escape_quote(q)
    assert "\n" not in escaped and "\r" not in escaped
    assert unescape_quote(escaped) == q


line_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=60
).map(lambda t: " ".join(t.split()))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(line_text, st.booleans()), min_size=1, max_size=5),
    st.lists(st.text(max_size=40), min_size=1, max_size=5),
)
def test_any_claims_and_quotes_survive_a_round_trip(claims: list, quotes: list) -> None:
    note = new_note("knowledge/x.md", "knowledge", "X", "team", "2026-01-01")
    sec = note.ensure_section("Facts")
    for i, (text, inferred) in enumerate(claims):
        if not text or text.startswith(("#", "[^")) or text.endswith("#inferred"):
            continue
        label = note.cite(f"raw/2026/01/01/s-abcdef.md#t{i + 1}", quotes[i % len(quotes)])
        sec.items.append(Claim(text, (label,), inferred))
    text = render_note(note)
    again = parse_note(text, "knowledge/x.md")
    assert render_note(again) == text
    assert [c for _, c in again.all_claims()] == [c for _, c in note.all_claims()]
    assert again.footnotes == note.footnotes


_MARKERS_RUN = re.compile(r"- (.*?)((?:\[\^[^\]\s]+\])+)[ \t]*$")


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(["[^a]", "[^b1]", "[^", "]", "[", "^", " ", "\t", "x", "é", ".", "[^x y]"]),
        max_size=14,
    )
)
def test_the_markers_that_end_a_claim_are_where_the_regex_finds_them(parts: list[str]) -> None:
    """notes._refs_start reads only back to the line's last whitespace: it finds the run of
    footnote markers the (quadratic) regex it replaced finds, on any mix of markers, stray
    brackets and blanks."""
    from memctl.core.notes import _refs_start

    line = "- " + "".join(parts)
    m = _MARKERS_RUN.match(line)
    assert _refs_start(line) == (m.start(2) if m else 0), line
