"""The builtin curator's text steps on any text a person might type: no traceback, and every
sentence it reads is a verbatim piece of the turn (quotes must verify)."""

from __future__ import annotations

from datetime import date

from hypothesis import given, settings
from hypothesis import strategies as st

from memctl.curate.builtin.classification import conversational_fact, fact_weight, is_chatter
from memctl.curate.builtin.resolution import (
    addressee_voice,
    anchor,
    group_voice,
    speaker_voice,
)
from memctl.curate.builtin.sentences import core_of, prose_sentences

WORDS = st.sampled_from(
    "I I'm my me we our you your Yesterday last week next Friday ago two years a few "
    "St. Dr. went love prefer always Hi, thanks! ? ... — - Berlin Acme moved to the "
    "<!-- x --> ``` \n * 1. café 🥐 \t".split(" ")
)
TEXT = st.one_of(st.text(max_size=300), st.lists(WORDS, max_size=60).map(" ".join))


@settings(max_examples=300, deadline=None)
@given(TEXT)
def test_sentences_are_verbatim_pieces_of_the_turn(text: str) -> None:
    for s in prose_sentences(text):
        assert s and s in text
        core = core_of(s)
        assert core in s
        kind = conversational_fact(core)
        if kind:
            fact_weight(core, kind)
        is_chatter(core)


@settings(max_examples=300, deadline=None)
@given(TEXT, st.dates(min_value=date(1990, 1, 1), max_value=date(2090, 12, 31)))
def test_rewriting_a_sentence_never_raises(text: str, said: date) -> None:
    out = speaker_voice(addressee_voice(group_voice(anchor(text, said), "Noor and others"), "Tobi"),
                        "Noor")  # fmt: skip
    assert isinstance(out, str)


def test_no_is_a_discourse_marker_only_when_punctuated() -> None:
    # "No doubt it's been tough" once became the claim "Doubt it's been tough."
    assert core_of("No doubt it's been tough, but I'm impressed.").startswith("No doubt")
    assert core_of("No, I meant 300 a day, not 3000.") == "I meant 300 a day, not 3000."
