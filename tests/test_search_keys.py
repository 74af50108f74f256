"""Claim lines as search keys, and turns said by the person a question names.

A claim restates in the third person, with names, what a turn said in the first person;
a question worded like the claim must reach the turn through it. The vault is built with
real files, a real git commit and the real index (tests/test_recall.py `build_vault`).
"""

from __future__ import annotations

import pytest
from test_recall import NoteSpec, build_vault

from memctl.faces.mcp import Tools
from memctl.index import search
from memctl.vault import Vault

T = "2026-10-0{}T10:00:00Z"
SESSIONS = [
    (
        "s-pottery",
        "mel",
        "team",
        [
            ("Caroline", "user", "Are you still thinking about that class downtown?", T.format(1)),
            ("Melanie", "user", "Yes! I signed up last week, first one is Friday.", T.format(1)),
            ("Caroline", "user", "Amazing, tell me how it goes.", T.format(1)),
        ],
    ),
    (
        "s-secret",
        "mel",
        "user:mel",
        [("Melanie", "user", "My therapist suggested it, honestly.", T.format(2))],
    ),
    (
        "s-music",
        "mel",
        "team",
        [
            ("Caroline", "user", "I sang at the mic. What music do you play? Guitar?", T.format(4)),
            ("Melanie", "user", "Clarinet, since I was young: music is how I relax.", T.format(4)),
        ],
    ),
    (
        "s-hiking",
        "mel",
        "team",
        [
            ("Caroline", "user", "Hiking, mountains: I love hiking in the mountains.", T.format(3)),
            ("Melanie", "user", "Same, I love hiking, it is so calm up there.", T.format(3)),
        ],
    ),
]
NOTES = [
    # a shared note quoting a private turn: a hand edit curation never makes
    NoteSpec(
        "knowledge/leak.md",
        "knowledge",
        "Leak",
        "team",
        claims=[
            (
                "Facts",
                "Melanie's kiln plan came from her therapist.",
                [("s-secret", 1, "My therapist suggested it")],
                False,
            )
        ],
    ),
    NoteSpec(
        "knowledge/melanie.md",
        "knowledge",
        "Melanie",
        "team",
        claims=[
            (
                "Facts",
                "Melanie signed up for a pottery class in October 2026.",
                [("s-pottery", 2, "I signed up last week")],
                False,
            )
        ],
    ),
    NoteSpec(
        "profile/mel.md",
        "profile",
        "Profile: mel",
        "user:mel",
        claims=[
            (
                "Facts",
                "Melanie's ceramics course was her therapist's idea.",
                [("s-secret", 1, "My therapist suggested it")],
                False,
            )
        ],
    ),
]


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Vault, dict[str, str]]:
    return build_vault(tmp_path_factory.mktemp("keys") / "v", SESSIONS, NOTES)


def _turns(vault: Vault, q: str, **kw: object) -> list[search.Hit]:
    return list(vault.search(q, kind="turn", limit=5, **kw).hits)


def test_a_question_worded_like_a_claim_finds_the_turn_it_cites(
    vault: tuple[Vault, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    v, paths = vault
    ref = f"{paths['s-pottery']}#t2"
    hits = _turns(v, "pottery")
    assert hits and hits[0].ref == ref  # "pottery" is only in the claim, never in a turn
    assert hits[0].via == ("knowledge/melanie.md",)
    assert hits[0].text == "Yes! I signed up last week, first one is Friday."
    monkeypatch.setattr(search, "W_CLAIM", 0.0)
    assert ref not in [h.ref for h in _turns(v, "pottery")]


def test_claim_keys_respect_scope_and_filters(vault: tuple[Vault, dict[str, str]]) -> None:
    v, paths = vault
    secret = f"{paths['s-secret']}#t1"
    # a private claim lifts nothing for someone who may not see it
    assert secret not in [h.ref for h in _turns(v, "ceramics course", scope=["team", "global"])]
    assert secret in [h.ref for h in _turns(v, "ceramics course", scope=["team", "user:mel"])]
    # a lifted turn still has to pass the search's own filters
    assert _turns(v, "pottery", speaker="Caroline") == []


def test_claim_lines_are_keys_never_hits(vault: tuple[Vault, dict[str, str]]) -> None:
    v, _ = vault
    every = v.search("pottery class", limit=20).hits
    assert {h.kind for h in every} <= {"turn", "note"} and every
    lines = v.search("pottery class", kind="claim", limit=5).hits
    assert [(h.kind, h.ref, h.section) for h in lines] == [
        ("claim", "knowledge/melanie.md", "Facts")
    ]
    assert lines[0].cites and lines[0].quotes == ("I signed up last week",)
    assert v.search("pottery", kind="claim", section="goals").hits == []


def test_a_named_speaker_s_own_turn_comes_first(
    vault: tuple[Vault, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    v, paths = vault
    mine = f"{paths['s-hiking']}#t2"
    assert _turns(v, "Why does Melanie love hiking in the mountains?")[0].ref == mine
    monkeypatch.setattr(search, "W_SPEAKER", 0.0)
    assert _turns(v, "Why does Melanie love hiking in the mountains?")[0].ref != mine


def test_mcp_search_for_claim_lines_keeps_private_quotes_private(
    vault: tuple[Vault, dict[str, str]],
) -> None:
    v, _ = vault
    assert Tools(v, "mel").search("kiln plan", kind="claim")["hits"]
    assert Tools(v, "caroline").search("kiln plan", kind="claim")["hits"] == []


def test_recall_explain_names_the_claim_key(vault: tuple[Vault, dict[str, str]]) -> None:
    from memctl.recall.prompt import _turn_why

    hit = _turns(vault[0], "pottery")[0]
    why = "matches the query; claim key: a claim in knowledge/melanie.md cites it"
    assert _turn_why(hit) == why


def test_a_possessive_names_the_speaker_too(
    vault: tuple[Vault, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # "Melanie's" is the same person as "Melanie": her own turn is lifted (the index keys
    # speakers by their plain name, so the possessive once named nobody)
    v, paths = vault
    mine = f"{paths['s-hiking']}#t2"
    for q in ("Why is hiking Melanie's love in the mountains?", "Why is hiking Melanie’s love?"):
        assert _turns(v, q)[0].ref == mine, q
    monkeypatch.setattr(search, "W_SPEAKER", 0.0)
    assert _turns(v, "Why is hiking Melanie's love in the mountains?")[0].ref != mine


def test_a_turn_that_asks_ranks_below_the_turn_that_answers(
    vault: tuple[Vault, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    # the question carries every word of "what music do they play?"; the answer says it
    v, paths = vault
    asked, answer = f"{paths['s-music']}#t1", f"{paths['s-music']}#t2"
    assert [h.ref for h in _turns(v, "what music do they play")][:2] == [answer, asked]
    monkeypatch.setattr(search, "W_ASK", 1.0)
    assert _turns(v, "what music do they play")[0].ref == asked


def test_asks_is_the_share_of_sentences_that_ask() -> None:
    from memctl.index.schema import asks

    assert asks("Cool! What type of music do you play?") == 50
    assert asks("You play any instruments?") == 100
    assert asks("I play clarinet. It relaxes me!") == 0
    assert asks("") == 0 and asks("   ") == 0
