"""Options nobody can read are errors (one line, exit 2), never a silently empty answer."""

from __future__ import annotations

from pathlib import Path

import pytest
from util import memctl, new_vault, snapshot


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["search", "x", "--status", "bogus"], "unknown status 'bogus'"),
        (["search", "x", "--since", "garbage"], "cannot read the date 'garbage'"),
        (["diff", "--since", "garbage"], "cannot read the date 'garbage'"),
        (["log", "-n", "0"], "-n"),
        (["recall", "x", "--budget", "-5"], "--budget"),
        (["curate", "--store", "nosuch"], "no store 'nosuch'"),
        (["show", "nope.md"], "no note or session 'nope.md'"),
    ],
)
def test_unreadable_options_fail_cleanly(tmp_path: Path, args: list[str], needle: str) -> None:
    v = new_vault(tmp_path)
    before = snapshot(v)
    r = memctl("--vault", v, *args)
    assert r.code == 2, (r.code, r.out, r.err)
    assert needle in r.err
    assert snapshot(v) == before


def test_diff_accepts_the_search_date_vocabulary(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    for since in ("7d", "2w", "12h", "today", "2026-01-01"):
        r = memctl("--vault", v, "diff", "--since", since)
        assert r.code == 0, (since, r.err)
