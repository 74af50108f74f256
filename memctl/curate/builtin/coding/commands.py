"""How the code base is tested, linted, type-checked, built, run and deployed: the commands
the session ran that succeeded. A run that failed (non-zero exit, "1 failed") is no way to
run the tests: the agent may have got the command wrong; nor is one that only listed or
described (`pytest --collect-only`, `ruff rule E501`, `--version`). Each line copies one whole
command of the shell line (`shell.parts`). One tool is one line whatever runner ran it
(`uv run pytest`, `pytest`): its broadest run, the later on a tie, and a later session's
supersedes the note's line for that tool. A run narrowed to files gives way to a broader
one; kept alone, it says which files it runs. Of kinds other than tests, the tool the
session ended with is kept. Kinds and patterns are data (`tables/coding_commands.txt`,
`coding_listing.txt`, `coding_runners.txt`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from memctl.core.lazyre import lazy
from memctl.curate.builtin.coding.shell import first_line, parts, plain, tool
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


# Flags that pick a part of the suite (a marker, a name pattern, the last failures).
_SELECT = lazy(
    r"^-(?:k|m|t|run|-lf|-last-failed|-testNamePattern|-filter|-grep|-only|-project)$|"
    r"^--(?:filter|grep|testNamePattern|project)="
)


def breadth(command: str) -> int:
    """How much of the code base a run covers, negated: each path, test id or selection
    narrows it (`pytest` 0, `pytest -m browser` -1, `pytest tests/a.py::t -x` -2)."""
    narrow = 0
    for w in plain(command).split()[1:]:  # `python -m pytest`: `-m` is the runner's
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


Run = tuple[int, str, bool, str | None, int | None]  # turn, command, ok, output, its turn


def runs(session: Coding) -> list[Run]:
    """Every shell command of the session's new turns, in turn order: the agent's Bash calls
    and the person's own `!cmd` (whose output, when the harness kept it, says whether it
    worked; a person's run with no output kept counts as one that worked)."""
    out: list[Run] = [
        (c.turn, c.command, succeeded(c.ran(), c.error, c.result), c.result, c.result_turn)
        for c in session.calls
        if c.name == "Bash" and c.command and c.turn >= session.start
    ]
    out += [(s.turn, s.command, s.output is None or succeeded(True, False, s.output), s.output,
             s.output_turn) for s in session.shells if s.turn >= session.start]  # fmt: skip
    return sorted(out, key=lambda r: r[0])


def read(session: Coding, known: list[str] | None = None) -> list[Command]:
    """Commands worth a project note line; `known` are the note's lines already there, so a
    tenth session that runs the tests adds nothing unless it runs them a new way, and a
    successful run of a known tool (by any runner) supersedes that tool's line unless the
    note's is broader."""
    notes: dict[str, dict[tuple[str, ...], str]] = {}  # kind -> tool and selection -> line
    for line in known or ():
        got = note_command(line)
        if got:
            notes.setdefault(got[0], {})[_key(got[1])] = line
    cands: dict[str, list[tuple[int, str]]] = {}  # kind -> (turn, command) that succeeded
    uses: dict[tuple[str, ...], list[tuple[int, str]]] = {}  # way of running -> (turn, run)
    for turn, command, ok, result, _ in runs(session):
        found = [(kind_of(p), p) for p in parts(first_line(command))]
        kind, first = next(((k, p) for k, p in found if k), (None, ""))
        if kind is None or not first or "::" in first:
            continue  # one test by its node id says how that test was debugged, not how to test
        uses.setdefault(_key(first), []).append((turn, first))
        if ok and not listing(first, result):
            cands.setdefault(kind, []).append((turn, first))
    out: list[Command] = []
    for kind, runs_of_kind in cands.items():
        have = notes.get(kind, {})
        for turn, first in _chosen(kind, runs_of_kind, have):
            text = line_for(kind, first)
            old = have.get(_key(first))
            # the same line again: proposed all the same, so the note's line gains this
            # session's run as evidence (merge reinforces it) and recall can cite it
            if old is not None and breadth(_cmd(old)) > breadth(first):
                continue  # the note already knows a broader way to run this tool
            if old is None and len(have) >= PER_NOTE:
                continue
            # the first run of the same way of running it in the session (`uv run pytest
            # --cov=app` ran `uv run pytest`), beside the run that shows it works; quoted as
            # the line's command, which must be there word for word
            used = min((t for t, ran in uses.get(_key(first), ())
                        if t != turn and first in ran and _files(ran) == _files(first)),
                       default=None)  # fmt: skip
            out.append(Command(kind, text, turn, first, None if old == text else old, used))
    return sorted(out, key=lambda c: c.turn)


def _chosen(
    kind: str, runs: list[tuple[int, str]], have: dict[tuple[str, ...], str]
) -> list[tuple[int, str]]:
    """The session's runs of one kind worth a line, at most `PER_KIND`.

    A run narrowed to files is dropped when the session or the note knows one that is not.
    Of one tool's runs (whatever runner ran it) the broadest is kept, the later on a tie.
    Two test tools are two suites (a monorepo's `pytest` and `vitest`), the broadest kept;
    of other kinds the tool the session ended with is kept, and another only if it still
    ran after that one came into use (both run at the end), not one it replaced.
    """
    if any(not _files(c) for _, c in runs) or any(not _files(_cmd(v)) for v in have.values()):
        runs = [(t, c) for t, c in runs if not _files(c)]
    tools: dict[tuple[str, ...], list[tuple[int, str]]] = {}
    for turn, cmd in runs:
        tools.setdefault(_key(cmd), []).append((turn, cmd))
    best = [max(rs, key=lambda r: (breadth(r[1]), r[0])) for rs in tools.values()]
    if kind == "test":
        best.sort(key=lambda r: (-breadth(r[1]), -r[0]))
        return best[:PER_KIND]
    spans = {k: (rs[0][0], rs[-1][0]) for k, rs in tools.items()}  # first and last success
    last = max(spans, key=lambda k: spans[k][1])
    kept = [r for r in best if spans[_key(r[1])][1] >= spans[last][0]]
    return sorted(kept, key=lambda r: -spans[_key(r[1])][1])[:PER_KIND]


def _key(command: str) -> tuple[str, ...]:
    """What makes two runs one way of running: the tool and the part of the suite picked."""
    return (tool(command), *_selection(command))


def _selection(command: str) -> list[str]:
    """The flags (with their values) that pick part of the suite: `-m browser`, `--lf`; a
    quoted value is one (`-m "not (tui or browser)"`)."""
    import shlex

    try:
        words = shlex.split(plain(command))[1:]
    except ValueError:
        words = plain(command).split()[1:]
    out = []
    for i, w in enumerate(words):
        if _SELECT.match(w):
            out.append(w)
            if not w.startswith("--") or "=" not in w:
                takes = w not in ("--lf", "--last-failed", "--only")
                if takes and i + 1 < len(words):
                    out.append(words[i + 1])
    return out


_FILE_ARG = lazy(r"::|[^./]\.\w{1,5}$")


# An option whose value is a file it reads, not a file it runs: `--config vite.config.ts`.
_TAKES_FILE = lazy(r"^-(?:c|-[\w-]*(?:config|file)[\w-]*)$")


def _files(command: str) -> list[str]:
    """The files or test ids a run is narrowed to (`tests/test_x.py`, `a.spec.ts`)."""
    words = plain(command).split()[1:]
    return [w for i, w in enumerate(words)
            if not w.startswith("-") and "=" not in w and _FILE_ARG.search(w)
            and not (i and _TAKES_FILE.match(words[i - 1]))]  # fmt: skip


def line_for(kind: str, command: str) -> str:
    """The note's line: how this kind of thing runs, or, for a run narrowed to files or a
    selection, which part it runs, so it never reads as the way to run them all."""
    scope = _scope(command)
    if not scope:
        return f"{PHRASE[kind]} `{command}`."
    phrase = PHRASE[kind][0].lower() + PHRASE[kind][1:]
    return f"For {scope} only, {phrase} `{command}`."


_PICKS = {"-m": "tests marked `{}`", "-k": "tests matching `{}`", "--lf": "the last failed tests",
          "--last-failed": "the last failed tests", "--project": "the project `{}`"}  # fmt: skip


def _scope(command: str) -> str:
    said = [f"`{f}`" for f in _files(command)]
    sel = _selection(command)
    i = 0
    while i < len(sel):
        flag, _, value = sel[i].partition("=")
        takes = "{}" in _PICKS.get(flag, "{}") and not value
        if takes and i + 1 < len(sel):
            value = sel[i + 1]
            i += 1
        said.append(_PICKS.get(flag, "tests matching `{}`").format(value.strip("'\"")))
        i += 1
    return ", ".join(said)


_LINE = lazy(r"^(?:For (?P<scope>.+) only, )?(?P<phrase>.+?) `(?P<cmd>[^`]+)`\.?$")


def note_command(line: str) -> tuple[str, str] | None:
    """(kind, command) of a Commands line this module wrote, else None."""
    m = _LINE.match(line)
    if not m:
        return None
    phrase = m.group("phrase")
    phrase = phrase[0].upper() + phrase[1:]
    kind = next((k for k, v in PHRASE.items() if v == phrase), None)
    return (kind, m.group("cmd")) if kind else None


@cache
def _listing_words() -> tuple[frozenset[str], tuple[str, ...]]:
    entries = lines("coding_listing")
    return frozenset(e for e in entries if e.startswith("-")), tuple(
        e for e in entries if not e.startswith("-")
    )


# What a run's output looks like when it listed tests instead of running them: tests
# collected, no outcome; or the tool's usage text.
_COLLECTED = lazy(
    r"\bcollected \d+ items?\b|\b\d+(?:/\d+)? tests? collected\b|^\s*<(?:Module|Package|Function"
    r"|Class|Dir)\b", re.M
)
_OUTCOME = lazy(r"\b\d+ (?:passed|failed|errors?|skipped|xfailed|xpassed)\b")


def listing(command: str, result: str | None = None) -> bool:
    """The run listed or described (tests, markers, settings, help, version) instead of
    running: by a flag or subcommand that does that (`tables/coding_listing.txt`), or by its
    output (the tool's usage; tests collected and none run)."""
    flags, subcommands = _listing_words()
    if any(w.split("=", 1)[0] in flags for w in command.split()[1:]):
        return True
    bare = plain(command)
    if any(bare == s or bare.startswith(s + " ") for s in subcommands):
        return True
    out = (result or "")[-3000:]
    if re.match(r"(?i)\s*usage:", result or ""):
        return True
    return bool(_COLLECTED.search(out)) and not _OUTCOME.search(out)


def _cmd(line: str) -> str:
    got = note_command(line)
    if got:
        return got[1]
    m = re.search(r"`([^`]+)`", line)
    return m.group(1) if m else line
