"""One vocabulary for points in time on the command line: `10m`, `12h`, `7d`, `3w`, `1y`
(also spelled out, `90 minutes`, `2 hours`, and combined, `1h30m`), `today`, `yesterday`, or
an ISO date/time. Search filters and `memctl diff --since` both use it, so a
date that works in one works in the other, and a date nobody can read is an error, not a
silently empty answer.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

from memctl.errors import InputError

_PART = re.compile(r"\s*(\d+)\s*([a-z]+)\s*")
_UNITS = {
    **dict.fromkeys(("m", "min", "mins", "minute", "minutes"), timedelta(minutes=1)),
    **dict.fromkeys(("h", "hr", "hrs", "hour", "hours"), timedelta(hours=1)),
    **dict.fromkeys(("d", "day", "days"), timedelta(days=1)),
    **dict.fromkeys(("w", "week", "weeks"), timedelta(weeks=1)),
    **dict.fromkeys(("y", "year", "years"), timedelta(days=365)),
}
FORMS = "2026-09-01, 2026-09-01T14:30, 10m, 12h, 7d, 3w, 1y, 1h30m, today or yesterday"


def parse_duration(text: str) -> timedelta | None:
    """`10m`, `1h30m`, `2 hours` -> a timedelta; None when `text` is not a duration."""
    parts = list(_PART.finditer(text))
    if not parts or "".join(p.group(0) for p in parts) != text:
        return None
    total = timedelta()
    for p in parts:
        unit = _UNITS.get(p.group(2))
        if unit is None:
            return None
        total += unit * int(p.group(1))
    return total


def parse_when(value: str | date | datetime | None, now: datetime, end: bool = False) -> int | None:
    """A duration back from now, `today`, `yesterday`, or an ISO date/time -> epoch seconds.

    A bare date as an upper bound means the end of that day, so `--until 2026-09-01`
    includes the first of September.
    """
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        dt = value if value.tzinfo else value.replace(tzinfo=UTC)
        return int(dt.timestamp())
    if isinstance(value, date):
        day = datetime(value.year, value.month, value.day, tzinfo=UTC)
        return int((day + timedelta(days=1) if end else day).timestamp())
    text = value.strip().lower()
    if text in ("today", "yesterday"):
        day = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
        if text == "yesterday":
            day -= timedelta(days=1)
        return int((day + timedelta(days=1) if end else day).timestamp())
    try:
        delta = parse_duration(text)
    except OverflowError:
        delta = timedelta.max
    if delta is not None:
        try:
            return int((now - delta).timestamp())
        except OverflowError:
            return int(datetime(1, 1, 1, tzinfo=UTC).timestamp())
    try:
        if len(text) == 10:
            return parse_when(date.fromisoformat(text), now, end)
        dt = datetime.fromisoformat(value.strip())
    except ValueError:
        raise InputError(
            f"cannot read the date {value!r}: use {FORMS}"
        ) from None
    return parse_when(dt, now, end)
