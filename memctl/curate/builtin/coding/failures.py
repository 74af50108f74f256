"""Which tests failed: the failures a session set out to fix, or ran into first.

A session that fixes tests starts from a list of failures: pasted by the person ("two of
them break:" and pytest's summary lines), or printed by the agent's first run. Which tests,
in which file, with what assertion is what the gold of a careful note-taker records as the
session's problem, and what a later session asks ("which tests broke after the mock
rewrite?"); the agent's closing words keep the fix and drop the failure.

Read by the runner's own line shapes, not by words: pytest's short summary
(`FAILED path::Class::test[param] - Error: message`), Go's `--- FAIL: TestName`, cargo's
`test name ... FAILED`. The first output in the session that lists failures is the one
said, once; the tests are named as the output names them (parameters aside), the message
only when every failure that gives one gives the same, and each named test's line is cited.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memctl.core.lazyre import lazy
from memctl.curate.builtin.coding.commands import runs
from memctl.curate.builtin.coding.structure import Coding

_PYTEST = lazy(
    r"^(?:FAILED|ERROR) (?P<file>[^\s:]+)::(?P<id>[^\s]+)(?: - (?P<msg>.+?))?\s*$", re.M
)
_GO = lazy(r"^\s*--- FAIL: (?P<id>[\w/.-]+)", re.M)
_CARGO = lazy(r"^test (?P<id>[\w:]+) \.\.\. FAILED\s*$", re.M)
_PARAM = lazy(r"\[.*\]$")
MAX_NAMED = 3
MAX_MESSAGE = 100
MAX_READ = 200_000  # characters of one output read, from its end


@dataclass
class Failing:
    """What one output reports failing (tests, or a checker's diagnostics): the claim's
    text, the turn, the lines it quotes."""

    text: str
    turn: int
    quotes: list[str]
    # the run that printed them (its turn and command), when a run did: a line read from
    # its output is what that command showed, and cites it too
    run: tuple[int, str] | None = None


def first(session: Coding) -> Failing | None:
    """The first output of the session's new turns that lists failing tests, read."""
    for turn, text, run in outputs(session):
        got = _read(text[-MAX_READ:])  # a runner's summary closes its output
        if got is not None:
            return Failing(got[0], turn, got[1], run)
    return None


def outputs(session: Coding) -> list[tuple[int, str, tuple[int, str] | None]]:
    """What the session's runs printed (with the run's turn and command) and what the
    person typed or pasted, in turn order; a harness turn (a compaction's recap, a `!cmd`'s
    output, which `runs` reads as the run's) is not the person's to have brought."""
    sources: list[tuple[int, str, tuple[int, str] | None]] = [
        (t, out, (turn, command))
        for turn, command, _, out, t in runs(session)
        if out and t is not None
    ]
    sources += [
        (turn, text, None)
        for turn, text in session.prompts
        if turn >= session.start and turn not in session.noise
    ]
    return sorted(sources, key=lambda s: s[0])


def _read(text: str) -> tuple[str, list[str]] | None:
    tests: dict[str, tuple[str, str | None, str]] = {}  # name -> (file, message, line)
    for m in _PYTEST.finditer(text):
        name = _PARAM.sub("", m.group("id").split("::")[-1])
        tests.setdefault(name, (m.group("file"), m.group("msg"), m.group(0).strip()))
    if not tests:
        for pat in (_GO, _CARGO):
            for m in pat.finditer(text):
                tests.setdefault(m.group("id"), ("", None, m.group(0).strip()))
    if not tests:
        return None
    names = list(tests)
    named = names[:MAX_NAMED]
    files = list(dict.fromkeys(f for f, _, _ in tests.values()))
    listed = _and([f"`{n}`" for n in named])
    where = f" in `{files[0]}`" if len(files) == 1 and files[0] else ""
    if len(names) > MAX_NAMED:
        text = f"{len(names)} tests{where} failed, among them {listed}"
    else:
        text = f"In `{files[0]}`, {listed} failed" if where else f"{listed} failed"
    said = {msg for _, msg, _ in tests.values() if msg}
    if len(said) == 1:
        msg = said.pop()
        if len(msg) <= MAX_MESSAGE and "`" not in msg:
            text += f": `{msg}`"
    return text + ".", [tests[n][2] for n in named]


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
