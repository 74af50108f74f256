"""How the session left its tests: a last test run that failed is said, with its counts.

The next session in a code base starts from where this one stopped; if its last test run
failed (and no later one passed), that is the first thing the next agent needs to know and
the one thing the agent's closing words tend to leave out. The run is the last one of a
test command (`commands.kind_of`), the agent's or the person's own `!cmd` in the harness's
shell, and its output must say it failed in counts ("5 failed, 6 passed"); a run whose
output is unknown or says nothing countable is not read into.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memctl.core.lazyre import lazy
from memctl.curate.builtin.coding.commands import kind_of, runs
from memctl.curate.builtin.coding.shell import first_line, parts
from memctl.curate.builtin.coding.structure import Coding

# "5 failed, 6 passed in 0.41s" (pytest), "2 failed, 8 passed, 10 total" (jest),
# "2 failed | 8 passed (10)" (vitest), "3 passed; 1 failed; 0 ignored" (cargo)
_COUNTS = lazy(
    r"\b\d+ (?:failed|passed|errors?|skipped)\b(?:\s*[,;|]\s*\d+ \w+)*(?: in [\d.]+m?s)?"
)


@dataclass
class Failed:
    """The session's last test run, which failed: text, and the run's and its output's cite."""

    text: str
    run: tuple[int, str]
    output: tuple[int, str]


def last_failed(session: Coding) -> Failed | None:
    tests = []
    for turn, command, ok, out, out_turn in runs(session):
        first = next((p for p in parts(first_line(command)) if kind_of(p) == "test"), None)
        if first is not None:
            tests.append((turn, first, ok, out, out_turn))
    if not tests:
        return None
    turn, first, ok, out, out_turn = tests[-1]
    if ok or not out or out_turn is None:
        return None
    counts = [m.group(0) for m in _COUNTS.finditer(out[-4000:])]
    said = next((c for c in reversed(counts) if re.search(r"\b[1-9]\d* (?:failed|errors?)", c)),
                None)  # fmt: skip
    if said is None:
        return None
    return Failed(f"The session's last test run, `{first}`, failed: {said}.", (turn, first),
                  (out_turn, said))  # fmt: skip
