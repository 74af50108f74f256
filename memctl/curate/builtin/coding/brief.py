"""What a sub-agent was asked to do: the task its brief sets, in the brief's own words.

A sub-agent's transcript opens with the prompt the agent that spawned it wrote: no person's
words (nothing in it is a preference or an instruction of the user's), but the session's
goal all the same, and the only place that says what the sub-agent's work was for. A brief
is often laid out as a document, with a section for the task among sections of context,
constraints and what to report; the task is the first sentence of that section, else the
brief's first sentence that is not the role it hands out ("You are alice, ..."). It is kept
verbatim (markup aside): rewriting another agent's instructions in the third person is not
a rewrite the offline curator can check.
"""

from __future__ import annotations

import re

from memctl.core.lazyre import lazy
from memctl.curate.builtin.coding.markup import prose
from memctl.curate.builtin.coding.structure import Coding

# a Markdown heading that names the task: "## Your Task (Round 1 of 2)", "## Round 2 task"
_TASK_HEADING = lazy(r"^#{1,6}\s.*\btasks?\b.*$", re.I | re.M)
_HEADING = lazy(r"^#{1,6}\s", re.M)
_ROLE = lazy(r"^(?:you are|you're|you will be)\b", re.I)
_LIST_MARK = lazy(r"^\s*(?:[-*+]|\d{1,2}[.)])\s+")
_EMPHASIS = lazy(r"\*{1,2}(?=\S)(.+?)(?<=\S)\*{1,2}")


def task(s: Coding) -> tuple[str, int, str] | None:
    """(claim text, turn, verbatim quote) of the task the brief sets, or None."""
    got = sentence(s)
    if got is None:
        return None
    said, turn, quote = got
    return f"Task from the parent session: {said}", turn, quote


def title(s: Coding) -> str | None:
    """The task as a session title: its first ten words, as `raw.title_from` cuts the
    person's first words for a session of their own."""
    got = sentence(s)
    if got is None:
        return None
    words = got[0].rstrip(".").split()
    return " ".join(words[:10]) + ("…" if len(words) > 10 else "")


def sentence(s: Coding) -> tuple[str, int, str] | None:
    """(the task's sentence, markup aside; turn; verbatim quote), or None."""
    b = s.brief
    if b is None or not b.text.strip():
        return None
    text = b.text
    section = text
    m = _TASK_HEADING.search(text)
    if m is not None:
        rest = text[m.end() :]
        nxt = _HEADING.search(rest)
        section = rest[: nxt.start()] if nxt else rest
    for sentence in prose(section):
        bare = _LIST_MARK.sub("", sentence).strip()
        if not bare or _ROLE.match(bare) or bare not in text:
            continue
        said = " ".join(_EMPHASIS.sub(r"\1", bare).split()).rstrip(":").strip()
        if len(said.split()) < 3:
            continue
        return said, b.turn, bare
    return None
