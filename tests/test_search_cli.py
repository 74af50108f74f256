"""`memctl search` through the CLI: the JSON contract, every filter, phrases, ids, output."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from searchutil import NOW, cli, make_vault, ok, proc, turn_ref

TURN_KEYS = {"ref", "kind", "score", "snippet", "id", "session", "speaker", "role", "timestamp"}
NOTE_KEYS = {"ref", "kind", "score", "snippet", "store", "title", "status", "cites"}


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(tmp_path_factory.mktemp("home")))
        mp.delenv("MEMCTL_VAULT", raising=False)
        yield make_vault(tmp_path_factory.mktemp("search"))


def search(vault: Path, *args: str) -> list[dict]:
    return ok("--vault", vault, "search", "--json", *args).json()["hits"]


def refs(vault: Path, *args: str) -> list[str]:
    return [h["ref"] for h in search(vault, *args)]


# ---- the JSON contract --------------------------------------------------------------------


def test_json_contract_is_pinned(vault: Path) -> None:
    doc = ok("--vault", vault, "search", "--json", "egress", "cloudfront", "-n", "50").json()
    assert set(doc) == {"memctl_result_version", "command", "query", "hits"}
    assert doc["memctl_result_version"] == 1 and doc["command"] == "search"
    assert doc["query"] == "egress cloudfront"
    kinds = {h["kind"] for h in doc["hits"]}
    assert kinds == {"turn", "note"}
    for h in doc["hits"]:
        assert set(h) == (TURN_KEYS if h["kind"] == "turn" else NOTE_KEYS), h
        assert isinstance(h["score"], float) and h["score"] > 0
        assert isinstance(h["snippet"], str) and h["snippet"]
    scores = [h["score"] for h in doc["hits"]]
    assert scores == sorted(scores, reverse=True)


def test_turn_hits_carry_the_message_identity(vault: Path) -> None:
    hit = search(vault, "OPS-4711")[0]
    assert hit["ref"] == turn_ref(vault, "dana-egress", 5)
    assert hit["id"] == "d5"  # the message's own id from the input
    assert hit["session"] == "dana-egress"
    assert hit["speaker"] == "Dana"
    assert hit["role"] == "user"
    assert hit["timestamp"].endswith("Z")
    assert "OPS-4711" in hit["snippet"]


def test_note_hits_carry_store_title_status_and_cites(vault: Path) -> None:
    hit = next(h for h in search(vault, "gateway", "endpoints", "--notes"))
    assert hit == {
        **hit,
        "ref": "knowledge/egress-levers.md",
        "kind": "note",
        "store": "knowledge",
        "title": "Egress cost levers",
        "status": "active",
        "cites": [turn_ref(vault, "dana-egress", 2)],
    }
    assert "[^a1]" not in hit["snippet"]


def test_human_note_without_frontmatter_is_found(vault: Path) -> None:
    hit = search(vault, "zeppelin")[0]
    assert hit["ref"] == "misc/offsite.md"
    assert (hit["store"], hit["title"], hit["status"]) == ("misc", "Team offsite", "active")


# ---- filters ------------------------------------------------------------------------------


def test_status_defaults_to_active_notes_only(vault: Path) -> None:
    assert refs(vault, "downloads", "--notes") == ["decisions/cdn-choice-2.md"]
    assert refs(vault, "fastly", "--status", "superseded") == ["decisions/cdn-choice.md"]
    both = refs(vault, "downloads", "--notes", "--status", "all")
    assert set(both) == {"decisions/cdn-choice.md", "decisions/cdn-choice-2.md"}
    assert refs(vault, "pelican", "--notes") == ["misc/offsite.md"]
    proposed = refs(vault, "pelican", "--status", "proposed,active", "--notes")
    assert set(proposed) == {"misc/offsite.md", "instructions/pelican.md"}


def test_turns_and_notes_flags(vault: Path) -> None:
    hits = search(vault, "cloudfront", "-n", "50")
    assert {h["kind"] for h in hits} == {"turn", "note"}
    assert {h["kind"] for h in search(vault, "cloudfront", "--turns")} == {"turn"}
    assert {h["kind"] for h in search(vault, "cloudfront", "--notes")} == {"note"}
    assert len(search(vault, "cloudfront", "--turns", "--notes", "-n", "50")) == len(hits)


def test_store_filter(vault: Path) -> None:
    assert refs(vault, "cloudfront", "--store", "decisions") == ["decisions/cdn-choice-2.md"]
    assert refs(vault, "cloudfront", "--store", "knowledge") == []
    many = refs(vault, "--store", "knowledge", "--store", "decisions")
    assert set(many) == {"knowledge/egress-levers.md", "decisions/cdn-choice-2.md"}


def test_user_scope_and_speaker_filters(vault: Path) -> None:
    assert {h["session"] for h in search(vault, "--user", "dana", "-n", "50")} == {"dana-egress"}
    assert {h["session"] for h in search(vault, "--turns", "--scope", "team")} == {"marco-exporter"}
    team_notes = refs(vault, "--notes", "--scope", "team", "-n", "50")
    assert "knowledge/egress-levers.md" in team_notes
    speakers = {h["speaker"] for h in search(vault, "--speaker", "dana", "-n", "50")}
    assert speakers == {"Dana"}  # case-insensitive
    mixed = search(vault, "--speaker", "Marco,Priya", "-n", "50")
    assert {h["speaker"] for h in mixed} == {"Marco", "Priya"}
    assert search(vault, "egress", "--speaker", "marco") == []


def test_since_and_until_with_dates_and_relative_spans(vault: Path) -> None:
    recent = search(vault, "--turns", "--since", "7d", "-n", "50")
    assert {h["session"] for h in recent} == {"marco-exporter"}
    three_weeks = search(vault, "--turns", "--since", "3w", "-n", "50")
    assert {h["session"] for h in three_weeks} == {"marco-exporter", "priya-forecast"}
    d30 = (NOW - timedelta(days=30)).date().isoformat()
    old = search(vault, "--turns", "--until", d30, "-n", "50")
    assert {h["session"] for h in old} == {"dana-egress"}  # a bare --until day is included
    assert search(vault, "--turns", "--since", d30, "--until", d30, "-n", "50")
    fresh = refs(vault, "--notes", "--since", "7d", "-n", "50")  # active notes updated 4d ago
    assert set(fresh) == {"knowledge/egress-levers.md", "decisions/cdn-choice-2.md"}


def test_limit_and_newest_first_without_words(vault: Path) -> None:
    hits = search(vault, "--turns", "-n", "3")
    assert len(hits) == 3
    assert [h["session"] for h in hits] == ["marco-exporter"] * 3  # the newest session
    stamps = [h["timestamp"] for h in hits]
    assert stamps == sorted(stamps, reverse=True)
    assert len(search(vault, "the", "-n", "1")) == 1


def test_bad_filter_values_are_input_errors(vault: Path) -> None:
    r = cli("--vault", vault, "search", "x", "--since", "last tuesday")
    assert r.code == 2 and r.err.count("\n") == 1 and "7d" in r.err
    r = cli("--vault", vault, "search", "x", "--limit", "0")
    assert r.code == 2


# ---- query handling -----------------------------------------------------------------------


def test_quoted_phrases_must_match_in_order(vault: Path) -> None:
    assert refs(vault, '"gateway endpoints"', "--turns") == [turn_ref(vault, "dana-egress", 2)]
    assert refs(vault, '"endpoints gateway"') == []
    loose = refs(vault, "gateway endpoints", "--turns")
    assert turn_ref(vault, "dana-egress", 2) in loose


def test_stopwords_do_not_drown_a_question(vault: Path) -> None:
    hits = search(vault, "what did we say about the crashloop of the exporter?")
    assert hits[0]["ref"] == turn_ref(vault, "marco-exporter", 1)


def test_ids_names_and_aliases_match_exactly(vault: Path) -> None:
    assert refs(vault, "m3")[0] == turn_ref(vault, "marco-exporter", 3)  # a message id
    assert refs(vault, "ops-4711")[0] == turn_ref(vault, "dana-egress", 5)
    assert refs(vault, "NAT savings", "--notes")[0] == "knowledge/egress-levers.md"
    assert refs(vault, "aws", "--notes") == ["knowledge/egress-levers.md"]  # a tag


def test_context_of_the_previous_turn_finds_the_answer(vault: Path) -> None:
    # "Which buckets should move first?" is answered by the next turn, which never says
    # "buckets move first": the window of previous turns lets the answer rank high.
    got = refs(vault, "which buckets move first", "--turns", "-n", "3")
    assert turn_ref(vault, "dana-egress", 4) in got


HOSTILE = [
    '"unbalanced quote',
    'two "unbalanced "quotes',
    '""',
    '"',
    "field:value",
    "title:egress",
    "a:b:c::",
    "(((",
    ")",
    "[1 TO 5]",
    "{x}",
    "egress AND OR NOT",
    "+required -excluded",
    "*",
    "egr*",
    "egress~2",
    "egress^10",
    "\\",
    "/regex.*/",
    "<script>alert(1)</script>",
    "😀 🚀 emoji",
    "ünïcödé straße",
    "日本語のテキスト",
    "ab" * 500,
    "' OR 1=1 --",
    "$(rm -rf /)",
    "\t\n  ",
    "%s %d {0}",
    "NaN",
    "-",
    "--",
    "-n",
]


def test_hostile_queries_never_crash(vault: Path) -> None:
    for q in HOSTILE:
        r = cli("--vault", vault, "search", "--json", "--", q)
        assert r.code == 0, (q, r.err)
        assert r.json()["query"] == q
        plain = cli("--vault", vault, "search", "--", q)
        assert plain.code == 0, (q, plain.err)


def test_hostile_queries_in_a_real_process(vault: Path) -> None:
    for q in ('"unbalanced', "a:b (( [x", "😀 -- \\"):
        r = proc("--vault", vault, "search", "--json", "--", q)
        assert r.code == 0, (q, r.err)
        assert r.json()["query"] == q


# ---- human output -------------------------------------------------------------------------


def test_plain_output_when_piped(vault: Path) -> None:
    out = ok("--vault", vault, "search", "crashloop", "-n", "2").out
    lines = out.splitlines()
    assert len(lines) == 2
    ref, when, who, snippet = lines[0].split("\t")
    assert ref == turn_ref(vault, "marco-exporter", 1)
    assert when[:4].isdigit() and who == "Marco" and "crashloop" in snippet
    assert "\x1b[" not in out
    note = ok("--vault", vault, "search", "fastly", "--status", "all", "--notes").out
    assert "\tdecisions (superseded)\t" in note


def test_rich_output_on_a_terminal(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import contextlib
    import io

    from memctl.faces.cli import main

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("NO_COLOR", raising=False)
    term = Terminal()
    with contextlib.redirect_stdout(term), pytest.raises(SystemExit) as done:
        main(["--vault", str(vault), "search", "crashloop", "exporter", "-n", "2"])
    assert done.value.code in (0, None)
    text = term.getvalue()
    assert "\x1b[" in text  # styled: bold ref, highlighted matches
    plain = re.sub(r"\x1b\[[0-9;]*m", "", text)
    assert turn_ref(vault, "marco-exporter", 1) in plain and "crashloop" in plain
    assert plain.lstrip().startswith("1. ")


def test_library_returns_typed_hits(vault: Path) -> None:
    from memctl import Vault
    from memctl.index.search import Hit, SearchResult

    res = Vault.open(vault).search("crashloop", speaker="marco", limit=1)
    assert isinstance(res, SearchResult) and len(res.hits) == 1
    hit = res.hits[0]
    assert isinstance(hit, Hit) and hit.kind == "turn" and hit.user == "marco"
    assert hit.text.startswith("The cost exporter pod")
    start, end = hit.highlights[0]
    assert hit.snippet[start:end].lower() == "crashloop"



def test_library_skips_snippets_when_asked_and_ranks_the_same(vault: Path) -> None:
    from memctl import Vault

    v = Vault.open(vault)
    full = v.search("crashloop exporter", limit=10)
    bare = v.search("crashloop exporter", limit=10, snippets=False)
    assert full.hits and any(h.snippet for h in full.hits)
    assert [(h.ref, h.score, h.text) for h in bare.hits] == [
        (h.ref, h.score, h.text) for h in full.hits
    ]
    assert all(h.snippet == "" and h.highlights == () for h in bare.hits)

def test_search_does_not_load_the_llm_stack(vault: Path) -> None:
    code = (
        "import sys\nfrom memctl.faces.cli import main\n"
        f"try:\n    main(['--vault', {str(vault)!r}, 'search', 'egress'])\n"
        "except SystemExit:\n    pass\n"
        "print('HEAVY', [m for m in ('litellm', 'openai', 'watchdog') if m in sys.modules])\n"
    )
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "HEAVY []" in out.stdout
