"""What in a coding session's human turns is the harness's, or pasted output, and not prose.

Claude Code writes slash commands, their output, IDE events, reminders and interruption
notices into the human's turn; people paste logs, stack traces and test output. None of it is
what the person said, so none of it may become a claim's text or a session's title. Tag names
and line patterns are data (`tables/harness_*.txt`, and `core/tables/log_lines.txt` shared
with ingest through `core.pasted`).
"""

from __future__ import annotations

import re
from functools import cache

from memctl.core.lazyre import lazy
from memctl.core.pasted import is_log_line, without_pastes
from memctl.curate.builtin.lexicon import lines, table
from memctl.curate.builtin.sentences import prose_sentences


@cache
def _tag_block() -> re.Pattern[str]:
    names = "|".join(re.escape(t) for t in sorted(table("harness_tags"), key=len, reverse=True))
    # A whole element (even unclosed to the end of the turn), or a stray opening/closing tag.
    return lazy(
        rf"<(?P<t>{names})(?:\s[^>]*)?>.*?(?:</(?P=t)>|\Z)|</?(?:{names})(?:\s[^>]*)?>", re.S | re.I
    )


@cache
def _harness_line() -> re.Pattern[str]:
    return lazy("|".join(f"(?:{p})" for p in lines("harness_lines")), re.I)


@cache
def _harness_any_line() -> re.Pattern[str]:
    """The same patterns, each tried at the start of every line of a text in one search."""
    alts = "|".join(f"(?:{p.removeprefix('^')})" for p in lines("harness_lines"))
    return lazy(rf"^[ \t]*(?:{alts})", re.I | re.M)


@cache
def _harness_turn() -> re.Pattern[str]:
    return lazy("|".join(f"(?:{p})" for p in lines("harness_turns")), re.I)


def is_harness_turn(text: str) -> bool:
    """A whole "human" turn the harness wrote (a compaction summary, an expanded skill)."""
    return bool(_harness_turn().search(text.lstrip()[:400]))


def has_markup(text: str) -> bool:
    """Does the text carry harness markup or a harness notice anywhere?"""
    return bool(_tag_block().search(text) or _harness_any_line().search(text))


def shell_input(text: str) -> str | None:
    """The command a person ran in the harness's shell (`<bash-input>cmd</bash-input>`)."""
    m = re.search(r"<bash-input>(?P<cmd>.*?)</bash-input>", text, re.S)
    return m.group("cmd").strip() if m else None


def prose(text: str) -> list[str]:
    """The sentences a person typed in a turn: no markup, notices, pasted logs or code.

    Each sentence is an exact substring of `text`, so it can be quoted verbatim: markup is
    blanked out to line breaks, which only ever splits a line.
    """
    return [s for s in prose_sentences(clean(text)) if s in text and not _looks_pasted(s)]


def clean(text: str) -> str:
    """The turn with markup, harness notices and pasted logs blanked out; what is left are
    whole lines (or parts of lines) of the original, so anything quoted from it verifies."""
    if is_harness_turn(text):
        return ""
    blanked = _tag_block().sub("\n", text)
    kept: list[str] = []
    in_log = False
    for line in blanked.split("\n"):
        bare = line.strip()
        notice = _harness_line().search(bare)
        if notice:
            rest = bare[notice.end() :]
            if notice.group().endswith("]") and rest.strip():
                kept.append(rest)  # "[Request interrupted by user]ok, just make it X"
            continue
        if is_log_line(line):
            in_log = True  # a trace runs on until a blank line
            continue
        if in_log and bare:
            continue
        in_log = False
        kept.append(line)
    return without_pastes("\n".join(kept))  # help text, docs, pages: read, not written


def _looks_pasted(sentence: str) -> bool:
    """Output, not words: mostly symbols and digits, or a path/identifier with no prose."""
    letters = sum(c.isalpha() for c in sentence)
    if letters < 0.5 * len(sentence.replace(" ", "")):
        return True
    words = sentence.split()
    plain = [w for w in words if re.fullmatch(r"[A-Za-z][a-z'’]*[,.;:!?]?", w)]
    return len(words) >= 3 and len(plain) < 0.3 * len(words)
