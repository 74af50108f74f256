"""Options where people type them: --vault after the command, durations in minutes and hours,
a clear word when nothing is found, and counts whose nouns agree."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from util import DATA, memctl, new_vault, ok

from memctl.core.when import parse_when
from memctl.errors import InputError

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def test_vault_works_after_the_command_too(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    for args in (["status", "--vault", v, "--json"], ["--vault", v, "status", "--json"],
                 ["hooks", "install", "--dry-run", "--vault", v, "--json"]):
        r = ok(*args, cwd=elsewhere)
        assert r.json()["memctl_result_version"] == 1, args
    assert "--vault PATH" in ok("status", "--help").out


@pytest.mark.parametrize(
    ("text", "ago"),
    [
        ("10m", timedelta(minutes=10)),
        ("90min", timedelta(minutes=90)),
        ("2 hours", timedelta(hours=2)),
        ("1h30m", timedelta(minutes=90)),
        ("12h", timedelta(hours=12)),
        ("7d", timedelta(days=7)),
        ("3 weeks", timedelta(weeks=3)),
        ("1y", timedelta(days=365)),
    ],
)
def test_durations_in_minutes_hours_and_more(text: str, ago: timedelta) -> None:
    assert parse_when(text, NOW) == int((NOW - ago).timestamp())


@pytest.mark.parametrize("text", ["10x", "m10", "1h30", "ten minutes"])
def test_unreadable_durations_are_errors(text: str) -> None:
    with pytest.raises(InputError, match="10m, 12h"):
        parse_when(text, NOW)


def test_since_in_minutes_from_the_cli(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    ok("--vault", v, "ingest", DATA / "sample-transcripts/dana/2026-09-01-egress-costs.jsonl")
    assert ok("--vault", v, "diff", "--since", "10m").out.startswith("What was learned")
    r = memctl("--vault", v, "search", "egress", "--since", "10m")
    assert r.code == 0, r.err  # the turns are from 2026-09: none are that recent
    assert r.out == "" and r.err.strip() == "memctl: no matches for 'egress'"


def test_a_search_with_no_hits_says_so(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    r = memctl("--vault", v, "search", "zebra", "crossing")
    assert r.code == 0 and r.out == ""
    assert r.err.strip().endswith("memctl: no matches for 'zebra crossing'")
    r = memctl("--vault", v, "search", "--speaker", "Nobody")
    assert r.err.strip().endswith("memctl: no matches for these filters")


def test_counts_of_one_are_singular(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    ok("--vault", v, "ingest", "-", "--format", "jsonl",
       input='{"role": "user", "content": "hello"}\n')
    status = ok("--vault", v, "status").out
    assert "raw     1 session, 1 turn\n" in status
    assert "1 sessions" not in status and "1 turns" not in status
    verify = ok("--vault", v, "verify").out
    assert "1 raw session" in verify and "1 raw sessions" not in verify
    assert "(+1 turn)" in ok("--vault", v, "ingest", "-", "--format", "jsonl", "--session", "b",
                             input='{"role": "user", "content": "again"}\n').out
