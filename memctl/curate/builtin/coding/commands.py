"""How the code base is tested, linted, type-checked, built, run and deployed: the commands
the session ran that did their job (a test run that reports failures still shows how tests
run; "command not found" does not). Kinds and patterns are data (`tables/coding_commands.txt`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

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
_SKIP = re.compile(r"^\s*(?:cd |echo |cat |ls |grep |find |git |which |sleep |rm |mkdir )")


@dataclass
class Command:
    kind: str
    text: str
    turn: int
    quote: str


@cache
def _kinds() -> tuple[tuple[str, re.Pattern[str]], ...]:
    out = []
    for line in lines("coding_commands"):
        kind, _, pat = line.partition("\t")
        out.append((kind.strip(), re.compile(pat.strip(), re.I)))
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


def read(session: Coding, known: list[str] | None = None) -> list[Command]:
    """Commands worth a project note line; `known` are the note's lines already there, so a
    tenth session that runs the tests adds nothing unless it runs them a new way."""
    out: list[Command] = []
    families: dict[str, set[str]] = {}
    added: dict[str, int] = {}
    for line in known or ():
        m = re.match(r"^(?P<phrase>.+?) `(?P<cmd>[^`]+)`\.?$", line)
        kind = next((k for k, v in PHRASE.items() if m and m.group("phrase") == v), None)
        if m and kind:
            families.setdefault(kind, set()).add(_family(m.group("cmd")))
    runs = [(c.turn, c.command, c.ran()) for c in session.calls if c.name == "Bash" and c.command]
    runs += [(s.turn, s.command, True) for s in session.shells]
    for turn, command, ok in sorted(runs):
        if turn < session.start or not ok:
            continue
        line = command.strip().split("\n")[0].strip()
        found = [(kind_of(p), p) for p in re.split(r"\s*(?:&&|;|\|\|)\s*", line)]
        kind, first = next(((k, p.strip()) for k, p in found if k), (None, ""))
        if kind is None or not first or "::" in first:
            continue  # one test by its node id says how that test was debugged, not how to test
        fam = families.setdefault(kind, set())
        new = added.setdefault(kind, 0)
        if _family(first) in fam or new >= PER_KIND or len(fam) >= PER_NOTE:
            continue
        fam.add(_family(first))
        added[kind] = new + 1
        out.append(Command(kind, f"{PHRASE[kind]} `{first}`.", turn, first))
    return out
