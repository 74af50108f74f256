"""What a session read on the web: the pages it fetched, and the ones that failed.

A research session's findings are only as good as where they came from, and a later session
asks exactly that ("which sources was the doc based on?"); the agent's report rarely lists
them all, and never the fetch that failed (a 404 explains why a source is missing). The
WebFetch calls say it: each `url`, and whether its result was an error with a status code.
One line per session: the pages read (shown as host and path, cut at a `/`), then those that
failed with their status, each cited to its call's URL. Searches are not listed: a query is
what the agent looked for, not a source.
"""

from __future__ import annotations

import re

from memctl.core.lazyre import lazy
from memctl.curate.builtin.coding.structure import Coding

_FETCH = frozenset(("WebFetch",))
_URL = lazy(r"https?://[^\s`<>\"\[\]]+")
_STATUS = lazy(r"\bstatus(?: code)?:? (?P<code>[1-5]\d\d)\b", re.I)
MAX_READ = 4
MAX_FAILED = 2
MAX_SHOWN = 56
MAX_CLAIM = 200  # as `findings.MAX_CLAIM`: a longer line would be cut, and lose its tail


def read(session: Coding) -> tuple[str, list[tuple[int, str]]] | None:
    """(the line, the (turn, URL) of each call it names), or None when nothing was fetched."""
    read_: dict[str, tuple[int, str]] = {}
    failed: dict[str, tuple[int, str, str]] = {}
    for c in session.calls:
        url = c.input.get("url")
        if c.name not in _FETCH or c.turn < session.start or not isinstance(url, str):
            continue
        if not _URL.fullmatch(url) or c.result is None:
            continue  # not a URL as a page has one: shown in a code span, it would break it
        shown = _shown(url)
        if c.error:
            m = _STATUS.search(c.result[:300])
            if m is not None:  # a refused call (no permission) never fetched anything
                failed.setdefault(shown, (c.turn, url, m.group("code")))
        else:
            read_.setdefault(shown, (c.turn, url))
    for shown in read_:
        failed.pop(shown, None)  # fetched again, and read
    if not read_ and not failed:
        return None
    # as many as fit one claim, each named whole, the rest of the pages read counted
    good = list(read_)
    bad = [s for s in failed][:MAX_FAILED]
    for n_bad in range(len(bad), -1, -1):  # a failure says why a source is missing: kept first
        for n_read in range(min(len(good), MAX_READ), -1, -1):
            text = _line(good, n_read, bad[:n_bad], failed)
            if len(text) <= MAX_CLAIM and (n_read or n_bad):
                cites = [read_[s] for s in good[:n_read]]
                cites += [failed[s][:2] for s in bad[:n_bad]]
                return text, cites
    return None


def _line(good: list[str], n: int, bad: list[str], failed: dict[str, tuple[int, str, str]]) -> str:
    parts = []
    if n:
        more = len(good) - n
        parts.append("Read on the web: " + ", ".join(f"`{s}`" for s in good[:n])
                     + (f" and {more} more" if more else ""))  # fmt: skip
    if bad:
        said = ", ".join(f"`{s}` ({failed[s][2]})" for s in bad)
        parts.append(f"{said} failed" if n else f"Fetching {said} failed")
    return "; ".join(parts) + "."


def _shown(url: str) -> str:
    """`https://www.example.com/docs/a/b/` -> `example.com/docs/a/b`, cut at a `/`."""
    s = re.sub(r"^https?://(?:www\.)?", "", url).split("#", 1)[0].split("?", 1)[0].rstrip("/")
    while len(s) > MAX_SHOWN and "/" in s:
        s = s.rsplit("/", 1)[0]
    return s
