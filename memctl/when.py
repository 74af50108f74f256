"""One vocabulary for points in time on the command line: `7d`, `3w`, `12h`, `1y`, `today`,
`yesterday`, or an ISO date/time. Search filters and `memctl diff --since` both use it, so a
date that works in one works in the other, and a date nobody can read is an error, not a
silently empty answer.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, timedelta

from memctl.errors import InputError

_RELATIVE = re.compile(r"^\s*(\d+)\s*(h|d|w|y)\s*$", re.IGNORECASE)
_UNITS = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}


def parse_when(value: str | date | datetime | None, now: datetime, end: bool = False) -> int | None:
    """`7d`, `3w`, `12h`, `1y`, `today`, `yesterday`, or an ISO date/time -> epoch seconds.

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
    m = _RELATIVE.match(text)
    if m:
        n, unit = int(m.group(1)), m.group(2).lower()
        delta = timedelta(days=365 * n) if unit == "y" else _UNITS[unit] * n
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
            f"cannot read the date {value!r}: use 2026-09-01, 2026-09-01T14:30, 7d, 3w, 12h, "
            "1y, today or yesterday"
        ) from None
    return parse_when(dt, now, end)
