"""What a checker reported: the diagnostics a session set out to fix, or ran into first.

"Fix the type errors" starts from what the checker printed (the person's `!uv run ty check`,
a pasted `pyright` run, the agent's first `mypy`): which rule, what it said, in which file.
That is the session's problem as a careful note-taker keeps it, and what the agent's closing
words ("fixed all 5 diagnostics") leave out.

Read by the checkers' own line shapes, never by words:
- rustc-style (ty, ruff's full format, rustc, clippy): `error[rule]: message` (first in a
  harness's `<bash-stdout>` too) and, on the next line, `--> path:line:col`;
- pyright: `path:line:col - error: message`;
- mypy: `path:line: error: message  [rule]`;
- tsc: `path(line,col): error TS2322: message`.
The first output that holds any is read: its distinct (rule, message) pairs in order, as many
as fit one claim, each cited to its line; the file they are in when one file holds them.
"""

from __future__ import annotations

import re

from memctl.core.lazyre import lazy
from memctl.curate.builtin.coding.changes import relative
from memctl.curate.builtin.coding.failures import MAX_READ, Failing, outputs
from memctl.curate.builtin.coding.structure import Coding

_RUSTC = lazy(
    r"^(?:<[\w-]+>)?(?P<line>(?P<sev>error|warning)\[(?P<rule>[\w-]+)\]: (?P<msg>[^\n]+?))[ \t]*\n"
    r"[ \t]*-->[ \t]*(?P<path>[^\s:]+):(?P<at>\d+)",
    re.M,
)
_PYRIGHT = lazy(
    r"(?P<line>(?P<path>[^\s:|]+):(?P<at>\d+):\d+ - (?P<sev>error|warning): (?P<msg>[^\n]+?)"
    r"(?: \((?P<rule>report\w+)\))?)\s*$",
    re.M,
)
_MYPY = lazy(
    r"^(?P<line>(?P<path>[^\s:]+\.pyi?):(?P<at>\d+): (?P<sev>error): (?P<msg>[^\n]+?)"
    r"(?:\s+\[(?P<rule>[\w-]+)\])?)\s*$",
    re.M,
)
_TSC = lazy(
    r"^(?P<line>(?P<path>[^\s(]+\.[cm]?tsx?)\((?P<at>\d+),\d+\): (?P<sev>error) (?P<rule>TS\d+): "
    r"(?P<msg>[^\n]+?))\s*$",
    re.M,
)
MAX_CLAIM = 200  # as `findings.MAX_CLAIM`: the claim is built to fit, never cut
MAX_MESSAGE = 120


def first(session: Coding) -> Failing | None:
    for turn, text, run in outputs(session):
        got = _read(text[-MAX_READ:], session.cwd)
        if got is not None:
            return Failing(got[0], turn, got[1], run)
    return None


def _read(text: str, cwd: str | None) -> tuple[str, list[str]] | None:
    # each diagnostic once: a runner that prints a check twice (two CI jobs) says it twice
    found: dict[tuple[str, str, str, str], str] = {}  # (path, line, rule, message) -> quoted
    for pat in (_RUSTC, _PYRIGHT, _MYPY, _TSC):
        for m in pat.finditer(text):
            key = (relative(m.group("path"), cwd), m.group("at"), m.group("rule") or "",
                   m.group("msg").strip())  # fmt: skip
            found.setdefault(key, m.group("line"))
        if found:
            break
    by_rule: dict[str, dict[str, str]] = {}  # rule -> message -> the line quoted
    found = {k: v for k, v in found.items() if "`" not in k[0]}  # named in a code span
    for (_, _, rule, msg), line in found.items():
        if len(msg) <= MAX_MESSAGE and msg.count("`") % 2 == 0:  # no code span left open
            by_rule.setdefault(rule, {}).setdefault(msg, line)
    if not by_rule:
        return None
    files = list(dict.fromkeys(p for p, _, _, _ in found))
    where = f"`{files[0]}`" if len(files) == 1 else f"{len(files)} files"
    n = len(found)
    head = f"{n} diagnostic{'s' if n > 1 else ''} in {where}: "
    # each rule once, its messages after it, as many as fit one claim; the first message of
    # every rule before the second of any
    order = [(rule, msg) for depth in range(max(len(v) for v in by_rule.values()))
             for rule, msgs in by_rule.items() for msg in list(msgs)[depth:depth + 1]]  # fmt: skip
    taken: dict[str, list[str]] = {}
    quotes: list[str] = []
    for rule, msg in order:
        trial = {**taken, rule: [*taken.get(rule, []), msg]}
        if len(head + _said(trial)) + 1 > MAX_CLAIM:
            continue
        taken, quotes = trial, [*quotes, by_rule[rule][msg]]
    if not taken:
        return None
    return head + _said(taken) + ".", quotes


def _said(taken: dict[str, list[str]]) -> str:
    # the rule in a code span opens each group: "`rule`: message; message; `other`: ..."
    return "; ".join(f"`{rule}`: {'; '.join(msgs)}" if rule else "; ".join(msgs)
                     for rule, msgs in taken.items())  # fmt: skip
