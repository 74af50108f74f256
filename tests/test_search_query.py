"""Query text handling and ranking pieces, plus a property test: no string breaks search."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from searchutil import DANA, ok, transcript

from memctl import InputError
from memctl.index import reader, schema, search, writer
from memctl.index.search import parse_query, parse_when, rank

NOW = datetime(2026, 9, 10, 12, 0, tzinfo=UTC)


def test_stopwords_are_dropped_from_questions() -> None:
    q = parse_query("What did Dana say about the egress costs?")
    assert q.terms == ("dana", "say", "egress", "cost")


def test_a_query_of_only_stopwords_keeps_them() -> None:
    assert parse_query("who was it").terms == ("who", "was", "it")


def test_possessive_s_is_not_a_term() -> None:
    assert parse_query("Caroline's identity").terms == ("carolin", "ident")


def test_quotes_make_phrases_and_unbalanced_quotes_do_not() -> None:
    q = parse_query('"gateway endpoints" for "S3 buckets" and "nat')
    assert q.phrases == (("gateway", "endpoint"), ("s3", "bucket"))
    assert "nat" in q.terms and "gateway" not in q.terms
    assert parse_query('"').phrases == ()
    assert parse_query("“curly quotes”").phrases == (("cur", "quot"),)


def test_ids_and_whole_queries_become_exact_terms() -> None:
    q = parse_query("ticket OPS-4711 (d3:12)")
    assert "ops-4711" in q.exact and "d3:12" in q.exact
    assert "ticket" not in q.exact  # a plain word is matched through its stem
    assert "nat savings" in parse_query("NAT savings").exact


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("7d", datetime(2026, 9, 3, 12, 0, tzinfo=UTC)),
        ("3w", datetime(2026, 8, 20, 12, 0, tzinfo=UTC)),
        ("12h", datetime(2026, 9, 10, 0, 0, tzinfo=UTC)),
        ("2026-09-01", datetime(2026, 9, 1, tzinfo=UTC)),
        ("2026-09-01T14:30", datetime(2026, 9, 1, 14, 30, tzinfo=UTC)),
        ("2026-09-01T14:30+02:00", datetime(2026, 9, 1, 12, 30, tzinfo=UTC)),
        ("today", datetime(2026, 9, 10, tzinfo=UTC)),
        ("yesterday", datetime(2026, 9, 9, tzinfo=UTC)),
    ],
)
def test_since_values(text: str, expected: datetime) -> None:
    assert parse_when(text, NOW) == int(expected.timestamp())


def test_until_a_bare_date_includes_that_day() -> None:
    assert parse_when("2026-09-01", NOW, end=True) == int(
        datetime(2026, 9, 2, tzinfo=UTC).timestamp()
    )


@pytest.mark.parametrize("bad", ["last week", "7 days ago", "2026-13-01", "d7", "-3d"])
def test_unreadable_dates_say_what_is_accepted(bad: str) -> None:
    with pytest.raises(InputError, match="7d"):
        parse_when(bad, NOW)


def test_session_blend_lifts_turns_of_the_best_session() -> None:
    c = reader.Candidate
    ranked = rank([c(10.0, 1, "a"), c(6.0, 1, "b"), c(6.5, 2, "c"), c(1.0, 1, "d")])
    assert [x.addr for _, x in ranked] == ["a", "b", "c", "d"]
    assert ranked[1][0] == pytest.approx(6.0 + 0.3 * (10.0 + 6.0))  # beats 6.5 + 0.3 * 6.5


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("prop")
    v = tmp / "v"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HOME", str(tmp))
        ok("init", v)
        transcript(tmp / "d.jsonl", "dana", DANA, 1, ids="d")
        ok("--vault", v, "ingest", tmp / "d.jsonl", "--user", "dana")
    return v


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.text(max_size=80) | st.from_regex(r'[\w"\'():\[\]{}*~^+\-!?\\/ ]{0,40}', fullmatch=True))
def test_no_string_breaks_search(vault: Path, text: str) -> None:
    from memctl import Vault

    res = Vault.open(vault).search(text, limit=5, sync=False)
    assert res.query == text
    assert all(h.kind == "turn" and h.ref.startswith("raw/") for h in res.hits)
    assert len(res.hits) <= 5


def test_a_failing_index_update_still_answers(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memctl import Vault

    def full_disk(_vault: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(writer, "sync", full_disk)
    res = Vault.open(vault).search("egress")
    assert res.hits and res.notices == [
        "search index not updated (disk full or file size limit: No space left on device); "
        "results may be stale"
    ]


def test_an_index_that_cannot_be_built_is_one_error(vault: Path, monkeypatch) -> None:
    from memctl import MemctlError, Vault

    def broken(_vault: object) -> None:
        raise schema.IndexBroken("gone")

    def read_only(_vault: object) -> str:
        raise PermissionError(13, "Permission denied", str(vault / ".memctl/index"))

    monkeypatch.setattr(search, "Reader", broken)
    monkeypatch.setattr(writer, "repair", read_only)
    with pytest.raises(MemctlError, match="cannot build the search index: Permission denied"):
        Vault.open(vault).search("egress", sync=False)
