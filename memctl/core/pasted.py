"""Pasted output in a person's message: logs, stack traces, test runs, console errors.

People paste what broke ("seeing this on staging:\\n\\nTraceback ..."). Such lines are evidence,
never words: no claim's text, no session's title and no file name may be made of them. The
line patterns are data (`tables/log_lines.txt`), read by ingest (titles and file names) and by
the curator (what counts as prose) alike, so both draw the line in the same place.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources

from memctl.core.lazyre import lazy


@cache
def _log_line() -> re.Pattern[str]:
    text = resources.files(__package__).joinpath("tables", "log_lines.txt").read_text("utf-8")
    pats = [ln.rstrip() for ln in text.splitlines() if ln.strip() and not ln.startswith("#")]
    return lazy("|".join(f"(?:{p})" for p in pats))


def is_log_line(line: str) -> bool:
    """A line of a log, stack trace or test output (pasted or printed), not prose."""
    return bool(_log_line().search(line))


def without_logs(text: str) -> str:
    """`text` with each pasted block blanked out: a log line and the non-blank lines that
    follow it (a trace runs on until a blank line). What is left are whole lines of `text`."""
    if "\n" not in text and not is_log_line(text):
        return text
    kept: list[str] = []
    in_log = False
    for line in text.split("\n"):
        if is_log_line(line):
            in_log = True
            continue
        if in_log and line.strip():
            continue
        in_log = False
        kept.append(line)
    return "\n".join(kept)
