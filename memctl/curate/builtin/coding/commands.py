"""How the code base is tested, linted, type-checked, built, run and deployed: the commands
the session ran that succeeded. A run that failed (non-zero exit, "1 failed") is no way to
run the tests: the agent may have got the command wrong. Of several successful runs of one
kind, the broadest (fewest paths, test ids and selections) is kept, the later on a tie; a
later session's success supersedes the note's line for the same tool. Kinds and patterns are
data (`tables/coding_commands.txt`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from memctl.core.lazyre import lazy
from memctl.curate.builtin.coding.structure import Coding
from memctl.curate.builtin.lexicon import lines

PHRASE = {
    "test": "Tests run with",
    "lint": "Linting runs with",
    "format": "Formatting runs with",
    "typecheck": "Type checking runs with",
    "build": "The build runs with",
    "run": "The app runs with",
    "install": "Dependencies install with",
    "deploy": "Deploys run with",
    "ci": "CI runs locally with",
}
PER_KIND = 2  # two ways to run the tests are worth knowing; the tenth is noise
PER_NOTE = 4  # and a project note keeps at most this many of one kind
_SKIP = lazy(r"^\s*(?:cd |echo |cat |ls |grep |find |git |which |sleep |rm |mkdir )")


@dataclass
class Command:
    kind: str
    text: str
    turn: int
    quote: str
    replaces: str | None = None  # the note's line this one supersedes
    first_use: int | None = None  # an earlier turn that ran the same command (it may have failed)


@cache
def _kinds() -> tuple[tuple[str, re.Pattern[str]], ...]:
    out = []
    for line in lines("coding_commands"):
        kind, _, pat = line.partition("\t")
        out.append((kind.strip(), lazy(pat.strip(), re.I)))
    return tuple(out)


def kind_of(command: str) -> str | None:
    """test | lint | format | typecheck | build | run | install | deploy | ci, or None."""
    first = command.strip().split("\n")[0]
    if _SKIP.match(first) or len(first) > 200:
        return None
    for kind, pat in _kinds():
        if pat.search(first):
            return kind
    return None


def _family(command: str) -> str:
    """The command without paths, test ids and flags' values: two runs of one suite agree."""
    words = [w for w in command.split() if "/" not in w and "::" not in w and "." not in w]
    return " ".join(words[:4])


def _tool(command: str) -> str:
    """The words before the first argument: `uv run pytest -q tests/` -> `uv run pytest`."""
    words = []
    for w in command.split():
        if w.startswith("-") or "/" in w or "." in w or "::" in w or "=" in w:
            break
        words.append(w)
    return " ".join(words[:3])


# Flags that pick a part of the suite (a marker, a name pattern, the last failures).
_SELECT = lazy(
    r"^-(?:k|m|t|run|-lf|-last-failed|-testNamePattern|-filter|-grep|-only|-project)$|"
    r"^--(?:filter|grep|testNamePattern|project)="
)


def breadth(command: str) -> int:
    """How much of the code base a run covers, negated: each path, test id or selection
    narrows it (`pytest` 0, `pytest -m browser` -1, `pytest tests/a.py::t -x` -2)."""
    narrow = 0
    for w in command.split()[1:]:
        if "/" in w or "::" in w or re.search(r"\.\w{1,4}$", w) or _SELECT.match(w):
            narrow += 1
    return -narrow


# What a run's output says when it failed, for harnesses that do not flag the exit code.
_FAILED_RUN = lazy(
    r"\b[1-9]\d* (?:failed|failing|errors?)\b|\bFAILED\b|exit(?: code|code)[ :=]*'?[1-9]|"
    r"npm ERR!|ELIFECYCLE|Command failed|Build failed|\berror TS\d+|Job failed|Traceback \(most",
)


def succeeded(ok: bool, error: bool, result: str | None) -> bool:
    """The command ran, exited 0 and its output reports no failure."""
    if not ok or error:
        return False
    return not _FAILED_RUN.search((result or "")[-3000:])


def read(session: Coding, known: list[str] | None = None) -> list[Command]:
    """Commands worth a project note line; `known` are the note's lines already there, so a
    tenth session that runs the tests adds nothing unless it runs them a new way, and a
    broader successful run of a known tool supersedes that tool's line."""
    lines: dict[str, dict[str, str]] = {}  # kind -> family -> the note's line
    for line in known or ():
        m = re.match(r"^(?P<phrase>.+?) `(?P<cmd>[^`]+)`\.?$", line)
        kind = next((k for k, v in PHRASE.items() if m and m.group("phrase") == v), None)
        if m and kind:
            lines.setdefault(kind, {})[_family(m.group("cmd"))] = line
    runs = [
        (c.turn, c.command, succeeded(c.ran(), c.error, c.result))
        for c in session.calls
        if c.name == "Bash" and c.command
    ]
    runs += [(s.turn, s.command, True) for s in session.shells]
    best: dict[str, list[tuple[int, int, str]]] = {}  # kind -> (breadth, turn, command)
    uses: dict[str, list[tuple[int, str]]] = {}
    for turn, command, ok in sorted(runs):
        if turn < session.start:
            continue
        line = command.strip().split("\n")[0].strip()
        found = [(kind_of(p), p) for p in re.split(r"\s*(?:&&|;|\|\|)\s*", line)]
        kind, first = next(((k, p.strip()) for k, p in found if k), (None, ""))
        if kind is None or not first or "::" in first:
            continue  # one test by its node id says how that test was debugged, not how to test
        uses.setdefault(first, []).append((turn, first))
        if ok:
            best.setdefault(kind, []).append((breadth(first), turn, first))
    out: list[Command] = []
    for kind, cands in best.items():
        have = lines.get(kind, {})
        taken: set[str] = set()
        # broadest first; on a tie the later run (what the session ended up using)
        for width, turn, first in sorted(cands, key=lambda c: (-c[0], -c[1])):
            fam = _family(first)
            if fam in taken or len(taken) >= PER_KIND:
                continue
            taken.add(fam)
            text = f"{PHRASE[kind]} `{first}`."
            old = have.get(fam) or next(
                (v for f, v in have.items() if _tool(_cmd(v)) == _tool(first)), None
            )
            if old == text:
                continue
            if old is not None and breadth(_cmd(old)) > width:
                continue  # the note already knows a broader way to run this tool
            if old is None and len(have) >= PER_NOTE:
                continue
            # the same command's first use in the session, beside the run that shows it works
            used = min((t for t, c in uses.get(first, ()) if t != turn), default=None)
            out.append(Command(kind, text, turn, first, old, used))
    return sorted(out, key=lambda c: c.turn)


def _cmd(line: str) -> str:
    m = re.search(r"`([^`]+)`", line)
    return m.group(1) if m else line
