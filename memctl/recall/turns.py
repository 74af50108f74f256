"""Which turns recall offers, in what order: what people said first, tool output as evidence.

A coding session is mostly tool traffic: test runs, coverage dumps, file listings. They carry
the words of almost any question about the work ("tests", "coverage", a module's name) and
crowd out what the user and the assistant said about it. So a turn that is tool output (a
`tool` turn, or a user turn the harness filled with a command's output: `<bash-stdout>`,
`<local-command-stdout>`) is evidence, not conversation: it ranks below every turn people
said and is left out, unless the question asks for output (an error, a count, a version),
and then the latest run of comparable relevance comes first, since a later run supersedes
an earlier. (Tool output is also where injected directions hide: shown only when asked
for, and then quoted as data like any turn.)

An assistant turn that only called a tool says nothing, yet the call is often the answer
("how do we run the type checker?" -> `uv run ty check`): such a turn is shown as its calls.
"""

from __future__ import annotations

import re
from collections.abc import Callable

# What a harness writes into a user turn when it runs a command for the user (Claude Code's
# `!` commands and slash commands); `<bash-input>` is what the user typed and stays theirs.
_HARNESS_OUTPUT = re.compile(
    r"\s*<(bash-stdout|bash-stderr|local-command-stdout|local-command-stderr|command-name|"
    r"command-message)>",
    re.IGNORECASE,
)
# A question that asks for what a run printed: which error, how many, what version, did it
# pass, which tests fail. "How did we fix the ty errors?" asks for the fix, not for the
# errors: a question that opens with how or why asks for an explanation, which people give.
_OUTPUT_WORDS = (
    r"errors?|exceptions?|tracebacks?|stack ?traces?|warnings?|output|printed|prints?|logs?|"
    r"versions?|exit (?:code|status)|count|coverage|results?|"
    r"pass|passes|passing|passed|fail|fails|failing|failed"
)
_ASKS_OUTPUT = re.compile(
    rf"\s*(?:(?:what|which)\b[^?]*\b(?:{_OUTPUT_WORDS})\b|how many\b|"
    r"(?:did|does|do|is|are|was|were)\b[^?]*\b(?:pass|passing|passed|fail|failing|failed)\b)",
    re.IGNORECASE,
)
# "Why do the name tests fail?", "Why couldn't it read ~/.claude?": the explanation people
# give first, then the failure the run printed (its assertion, its error, the harness's
# refusal) as evidence after it, if there is room.
_ASKS_WHY_FAILED = re.compile(
    r"\s*why\b[^?]*\b(?:fail|fails|failing|failed|errors?|crash(?:es|ed)?|breaks?|broke|"
    r"(?:could|did|does|do|would|was|were|is)(?:n'?t| not)|can'?t|cannot|won'?t|unable)\b",
    re.IGNORECASE,
)
OUTPUT_NEAR = 0.5  # output turns scoring at least this share of the best one count as one run


_SHELL_INPUT = re.compile(r"\s*<bash-input>", re.IGNORECASE)


def is_shell_input(text: str) -> bool:
    """A user turn that is a command the person ran in the harness's shell (`!cmd`)."""
    return _SHELL_INPUT.match(text) is not None


def is_output(role: str | None, text: str) -> bool:
    """Tool output: a tool turn, or a user turn the harness filled with a command's output."""
    if role == "tool":
        return True
    return role == "user" and _HARNESS_OUTPUT.match(text) is not None


def asks_output(query: str) -> bool:
    return _ASKS_OUTPUT.match(query) is not None


def asks_why_failed(query: str) -> bool:
    return _ASKS_WHY_FAILED.match(query) is not None


def latest_first(items: list[tuple[str, float, str | None]]) -> dict[str, float]:
    """New scores for output turns when the question asks for output: of the runs scoring
    within OUTPUT_NEAR of the best, the latest takes the best score (the best one, if
    another, comes right after it); the rest keep their own.

    `items` are (ref, score, timestamp); the turn's number in its session orders runs of
    one session when timestamps are missing or equal.
    """
    if not items:
        return {}
    best = max(s for _, s, _ in items)
    near = [(ref, s, ts) for ref, s, ts in items if s >= OUTPUT_NEAR * best]

    def when(item: tuple[str, float, str | None]) -> tuple[str, int]:
        ref, _, ts = item
        n = ref.rpartition("#t")[2]
        return (ts or "", int(n) if n.isdigit() else 0)

    latest = max(near, key=when)
    out = {latest[0]: best}
    for ref, s, _ in near:
        if s == best and ref != latest[0]:
            out[ref] = best * (1 - 1e-3)
    return out


# ---- later beats earlier ------------------------------------------------------------------

# How a turn that objects to what was just said opens ("No, it's the 21st", "Actually, I
# meant Tuesday", "Wait, that's wrong"), and how a speaker takes back their own words once
# told ("You're right, ...", "Sorry, ...").
_OBJECTS = re.compile(
    r"\W*(?:no\b|nope\b|actually\b|wait\b|correction\b|not quite\b|wrong\b|"
    r"that'?s (?:not|wrong|incorrect)\b|that is (?:not|wrong|incorrect)\b|i meant\b|"
    r"you'?re (?:wrong|mistaken)\b|you are (?:wrong|mistaken)\b)",
    re.IGNORECASE,
)
_CONCEDES = re.compile(
    r"\W*(?:you'?re (?:\w+ )?(?:right|correct)\b|you are (?:\w+ )?(?:right|correct)\b|sorry\b|"
    r"apologies\b|"
    r"my (?:mistake|bad|apologies)\b|good catch\b)",
    re.IGNORECASE,
)
CORRECTION_REACH = 3  # a correction looks back this many turns for what it corrects
CORRECTION_CANDIDATES = 12  # the best turns looked at for a later correction
W_CORRECTED = 0.9  # a corrected turn ranks at this share of its correction's score
# An agent's lead-in: one short line that ends in a colon ("Let me check where the
# function is defined:"), its call coming in the next turn. It says what it is about to
# do, not what it found, and carries the question's words ("where", "defined") without its
# answer; the call that follows names what was looked up or run.
LEAD_IN_CHARS = 200
W_LEAD_IN = 0.5  # a lead-in ranks at this share of its own score


def is_lead_in(text: str) -> bool:
    said = text.strip()
    return 0 < len(said) <= LEAD_IN_CHARS and said.endswith(":") and "\n" not in said


# a turn on a branch the user rewound (memctl.core.branches): still what was said, and shown
# as such, but the branch they went on with comes first when both speak to the question
W_REWOUND = 0.8


def corrected_by(
    turn: tuple[str | None, str],
    later: list[tuple[str, str | None, str]],
    terms: Callable[[str], frozenset[str]],
) -> str | None:
    """The ref of the turn that corrects `turn` ((role, text)), among the `later` turns of
    its session ((ref, role, text), in order after it).

    A turn objects to the first turn of another speaker before it ("You're working on April
    20th." "No, the 21st."), or to any turn it shares a content word with (`terms` gives a
    text's content words). A turn that concedes ("You're right, the 21st.") corrects its own
    speaker's earlier turn, never the objection it answers. Tool output neither corrects
    nor is corrected here: a later run beats an earlier one by `latest_first`.
    """
    role, text = turn
    if is_output(role, text):
        return None
    mine: frozenset[str] | None = None  # its words, once a later turn objects
    first_other = True
    for lref, lrole, ltext in later:
        if is_output(lrole, ltext):
            continue
        if _OBJECTS.match(ltext):
            if first_other and lrole != role:
                return lref
            if mine is None:
                mine = terms(text)
            if mine & terms(ltext):
                return lref
        if lrole == role and _CONCEDES.match(ltext):
            return lref
        if lrole != role:
            first_other = False
    return None
