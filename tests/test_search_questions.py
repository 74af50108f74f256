"""How search reads a question: a quoted title among other words, and the reply to a question.

Real files, a real git commit and the real index (tests/test_recall.py `build_vault`).
"""

from __future__ import annotations

import pytest
from searchutil import turn_refs
from test_recall import build_vault

from memctl.index import search
from memctl.vault import Vault

T = "2026-10-0{}T10:00:00Z"
SESSIONS = [
    (
        "s-books",
        "mel",
        "team",
        [
            ("Caroline", "user", 'I loved "Becoming Nicole" by Amy Ellis Nutt.', T.format(1)),
            ("Melanie", "user", "Wow! What did you take away from it?", T.format(1)),
            ("Caroline", "user", "Self-acceptance, and how to find support.", T.format(1)),
        ],
    ),
    (
        "s-shoes",
        "mel",
        "team",
        [
            (
                "Melanie",
                "user",
                "We got a second cat, Bailey! She sleeps all day on the sofa and the dog has"
                " no idea what to make of her yet.",
                T.format(2),
            ),
            ("Caroline", "user", "Cute! Are those new shoes for walking or running?", T.format(2)),
            (
                "Melanie",
                "user",
                "The second one: every morning around the lake before the kids wake up, about"
                " five miles now, and it clears my head for the whole day.",
                T.format(2),
            ),
        ],
    ),
    (
        "s-walk",
        "mel",
        "team",
        [
            ("Caroline", "user", "I prefer walking to anything, my knees thank me.", T.format(3)),
            ("Melanie", "user", "Good running shoes make all the difference.", T.format(3)),
        ],
    ),
]


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Vault, dict[str, str]]:
    return build_vault(tmp_path_factory.mktemp("questions") / "v", SESSIONS, [])


def test_a_quoted_title_in_a_question_ranks_first_and_requires_nothing(
    vault: tuple[Vault, dict[str, str]],
) -> None:
    # the answer ("Self-acceptance ...") never repeats the title the question quotes
    v, paths = vault
    books = paths["s-books"]
    got = turn_refs(v, 'What did Caroline take away from the book "Becoming Nicole"?')
    assert got[0] == f"{books}#t1"  # the turn with the phrase comes first
    assert f"{books}#t3" in got[:3]
    # quotes alone still mean "this phrase, in this order"
    assert turn_refs(v, '"Becoming Nicole"') == [f"{books}#t1"]
    assert turn_refs(v, '"Nicole Becoming"') == []
    assert turn_refs(v, 'what about "Nicole Becoming"?') == []  # stopwords are no other words


def test_the_reply_to_a_question_ranks_with_the_question(
    vault: tuple[Vault, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # "The second one: every morning ..." answers "walking or running?" without its words
    v, paths = vault
    answer = f"{paths['s-shoes']}#t3"
    q = "Are the new shoes for walking or running?"
    assert turn_refs(v, q, 2) == [f"{paths['s-shoes']}#t2", answer]
    monkeypatch.setattr(search, "W_ANSWER", 0.0)
    assert answer not in turn_refs(v, q, 2)
    assert answer in turn_refs(v, q, 3)  # found all the same, through its window
