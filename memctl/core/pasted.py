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
from memctl.core.model import Message


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


# A line that is reference text by its shape: an option of a tool's --help ("  --dry-run
# Print ..."), a section label ("Options:"), an indented line that is no list item, a heading,
# a table row, a bare link, a shell prompt. People type sentences; tools and pages print these.
_SHAPED = lazy(
    r"^(?:\s*-{1,2}[A-Za-z0-9][\w-]*(?:[ =,\[]|$)|\s*usage:|"
    r"(?: {2,}|\t)(?![-*+•]\s|\d+[.)]\s)\S|\s*#{1,6}\s|\s*\|.*\|\s*$|\s*<?https?://\S+>?\s*$|"
    r"\s*\$ \S)",
    re.I,
)
# "Options:", "Positional arguments:": a section label of help output or a page. The turn's
# first line is the person's ("It broke:"), never a label.
_LABEL = lazy(r"^[ \t]*[A-Z][a-z]+(?: [a-z]+){0,2}:\s*$")
_ITEM = lazy(r"^\s*(?:[-*+•]|\d+[.)])\s")
_STRONG = lazy(r"^\s*(?:usage:\s*\S|-{1,2}[A-Za-z0-9][\w-]*\s{2,}\S)", re.I)
_FIRST_PERSON = lazy(r"(?<![\w'’])(?:I|I['’](?:m|ve|d|ll)|me|my|we|we['’](?:re|ve|d|ll)|us|our)"
                     r"(?![\w'’])", re.I)  # fmt: skip
LONG_PASTE = 400  # a paragraph this long with no "I" or "we" in it is read, not written


def without_pastes(text: str) -> str:
    """`text` with pasted reference text blanked out, line for line: help output, docs and
    web pages a person pastes into a prompt are evidence of what they are asking about, never
    their own statements. Told apart by structure, not by words:

    - a paragraph most of whose lines (two or more) are shaped as reference text (`_SHAPED`),
      or a usage line alone;
    - what follows a line that introduces it ("And this is from their docs:");
    - a long paragraph after the person's own words that never says "I" or "we".

    Once a paste starts it runs to the end of the turn, except a last short line of the
    person's own (the ask after the paste). Whole lines are kept, so quotes still verify.
    """
    text = without_logs(text)
    if "\n" not in text:
        return text
    lines = text.split("\n")
    paras: list[tuple[int, int]] = []  # [start, end) line ranges of paragraphs
    start = None
    for i, line in enumerate([*lines, ""]):
        if line.strip() and start is None:
            start = i
        elif not line.strip() and start is not None:
            paras.append((start, i))
            start = None
    if len(paras) < 2:
        return text
    cut = None
    for k, (a, b) in enumerate(paras):
        body = [ln for ln in lines[a:b] if ln.strip()]
        shaped = sum(
            bool(_SHAPED.match(ln) or (a + j > 0 and _LABEL.match(ln)))
            for j, ln in enumerate(lines[a:b])
            if ln.strip()
        )
        chars = sum(len(ln) for ln in body)
        after_intro = (  # "for the config:" and then a block of text
            k > 0
            and lines[paras[k - 1][1] - 1].rstrip().endswith(":")
            and chars >= 200
            and sum(bool(_ITEM.match(ln)) for ln in body) * 2 < len(body)  # not their own list
        )
        long_read = k > 0 and chars >= LONG_PASTE and not _FIRST_PERSON.search(" ".join(body))
        strong = len(body) == 1 and bool(_STRONG.match(body[0]))  # "Usage: tool [OPTIONS]"
        if (shaped >= 2 and shaped * 2 >= len(body)) or strong or after_intro or long_read:
            cut = k
            break
    if cut is None:
        return text
    last_a, last_b = paras[-1]
    tail = [ln for ln in lines[last_a:last_b] if ln.strip()]
    own_tail = (
        len(paras) - 1 > cut
        and len(tail) == 1
        and len(tail[0]) <= 200
        and not _SHAPED.match(tail[0])
    )
    end = last_a if own_tail else len(lines)
    a0 = paras[cut][0]
    return "\n".join(ln if not a0 <= i < end else "" for i, ln in enumerate(lines))


def pasted_by(m: Message, quote: str) -> bool:
    """Is `quote` (verbatim in the person's message `m`) part of what they pasted into it,
    not their own words? Told by `without_pastes`, the line ingest and the curator draw."""
    return bool(quote.strip()) and quote in m.content and quote not in without_pastes(m.content)
