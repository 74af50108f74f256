"""A question that asks when is answered by the exchange that dates the event.

"When did Melanie start her pottery class?" is answered by "I signed up for a pottery class
last week", not by a later turn that says more about pottery but no time: the turns whose
window (the turn and the two before it) has a time word ("yesterday", "last week", "in
June") are lifted for such a question. Real files, a real git commit and the real index.
"""

from __future__ import annotations

import pytest
from searchutil import turn_refs
from test_recall import build_vault

from memctl.index import reader, schema, search
from memctl.vault import Vault

T = "2026-10-0{}T10:00:00Z"
SESSIONS = [
    (
        "s-signup",
        "mel",
        "team",
        [
            ("Melanie", "user", "I signed up for a pottery class last week!", T.format(1)),
            ("Caroline", "user", "Wow! How did that come about?", T.format(1)),
            ("Melanie", "user", "A friend took me along, and I was hooked.", T.format(1)),
        ],
    ),
    (
        "s-later",
        "mel",
        "team",
        [
            (
                "Melanie",
                "user",
                "The pottery class is great, the pottery class is fun.",
                T.format(3),
            ),
            ("Caroline", "user", "Sounds lovely. Do you keep what you make?", T.format(3)),
        ],
    ),
]
WHEN_Q = "When did Melanie start her pottery class?"


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Vault, dict[str, str]]:
    return build_vault(tmp_path_factory.mktemp("when") / "v", SESSIONS, [])


def test_a_when_question_ranks_the_turn_that_dates_the_event_first(
    vault: tuple[Vault, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    v, paths = vault
    dated, wordier = f"{paths['s-signup']}#t1", f"{paths['s-later']}#t1"
    assert turn_refs(v, WHEN_Q, 2) == [dated, wordier]
    monkeypatch.setattr(search, "W_DATED", 0.0)
    assert turn_refs(v, WHEN_Q, 2) == [wordier, dated]  # more of the question's words, no time


def test_only_a_question_that_asks_when_is_lifted(
    vault: tuple[Vault, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    v, _ = vault
    asks_when = [
        WHEN_Q,
        "when was the pottery class",
        "How long has Melanie done pottery?",
        "In what year did Melanie start pottery?",
        "How many weeks has Melanie done pottery?",
    ]
    other = [
        "What does Melanie love about the pottery class?",
        "pottery class",
        "Where is the pottery class when it rains?",
    ]
    assert all(search.parse_query(q).when for q in asks_when)
    assert not any(search.parse_query(q).when for q in other)
    before = [turn_refs(v, q) for q in other]
    assert all(before)
    monkeypatch.setattr(search, "W_DATED", 0.0)
    assert [turn_refs(v, q) for q in other] == before


def test_a_turn_is_dated_by_its_own_words_or_the_two_turns_before_it(
    vault: tuple[Vault, dict[str, str]],
) -> None:
    assert schema.dated("We went in June, two weeks after the move.")
    assert schema.dated("Yesterday!") and schema.dated("every Sunday")
    assert schema.dated("2 years ago")
    # "may" and "march" are verbs as often as months; words inside other words never count
    assert not schema.dated("I may march with them, who knows.")
    assert not schema.dated("Yearning for a weekender bag")
    v, paths = vault
    rd = reader.Reader(v)
    words = [t for w in ("pottery", "friend") for t in schema.analyze(w)]
    docs = rd.candidates(reader.Plan(tuple((schema.BODY, t, 1.0) for t in words), ()), 10)
    flags = dict(
        zip(
            [str(rd.stored(c.addr)["ref"]) for c in docs],
            rd.dated([c.addr for c in docs]),
            strict=True,
        )
    )
    signup, later = paths["s-signup"], paths["s-later"]
    assert flags[f"{signup}#t1"] == 1  # "last week"
    assert flags[f"{signup}#t3"] == 1  # two turns after "last week": the same exchange
    assert flags[f"{later}#t1"] == 0
