"""A shell line read for the commands in it, so a project note copies whole ones.

An agent's Bash call is often a compound line: `(cd web && npm test)`, `pytest -q 2>&1 | tail`,
`ruff check $(git ls-files '*.py')`. A note line copies one simple command from it, and it
must be one a reader can paste: brackets and quotes balanced, no dangling pipe or redirection.
So the line is split where the shell splits it (at top level, never inside quotes, `$(...)` or
backticks), a subshell group is opened up, and what is left must balance or it is not taken.

The same tool run through a runner (`uv run ruff`, `python -m pytest`, `npx tsc`) is one tool:
`plain` strips the runner, and `tool` names the tool (with its subcommand when the first word
only dispatches: `npm test`, `cargo build`). Runners and dispatchers are data
(`tables/coding_runners.txt`).
"""

from __future__ import annotations

import re
from functools import cache

from memctl.core.lazyre import lazy
from memctl.curate.builtin.lexicon import lines

_OPEN = {"(": ")", "{": "}", "[": "]"}
_SEPARATORS = ("&&", "||", ";", "|", "&", "\n")
# A redirection at a command's end: output to a file or another stream is no part of the way
# to run it (`2>&1`, `> /dev/null`, `&>log.txt`, `< input`).
_REDIRECT = lazy(r"(?:\s+(?:\d*|&)(?:>>?|<)&?\s*[^\s;&|()<>]+)+\s*$")


def first_line(command: str) -> str:
    """The command's first line, with backslash continuations joined (`pytest \\` + `-q`)."""
    return re.sub(r"\\\r?\n\s*", " ", command.strip()).split("\n", 1)[0].strip()


def _scan(text: str) -> tuple[list[bool], bool]:
    """Which characters the shell reads as syntax (outside quotes, not escaped), and whether
    a quote is left open at the end: one reading for the balance check and the split."""
    bare = [False] * len(text)
    quote = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            if ch == "\\" and quote != "'":
                i += 1
            elif ch == quote:
                quote = ""
        elif ch == "\\":
            i += 1
        elif ch in "'\"`":
            quote = ch
        else:
            bare[i] = True
        i += 1
    return bare, bool(quote)


def balanced(text: str) -> bool:
    """Quotes closed, brackets matched, and no operator left dangling at the end."""
    bare, open_quote = _scan(text)
    stack: list[str] = []
    for i, ch in enumerate(text):
        if not bare[i]:
            continue
        if ch in _OPEN:
            stack.append(_OPEN[ch])
        elif ch in ")}]" and (not stack or stack.pop() != ch):
            return False
    return not open_quote and not stack and not text.rstrip().endswith(("|", "&", ";", "\\"))


def parts(line: str) -> list[str]:
    """The simple commands of a shell line in order, each whole: split at top-level `&&`,
    `||`, `;`, `|`, `&`; a `( ... )` or `{ ...; }` group opened up; a trailing redirection
    dropped; a piece that does not balance (a line cut mid-quote) left out."""
    out: list[str] = []
    for piece in _split(line):
        piece = piece.strip()
        inner = _group(piece)
        if inner is not None:
            out += parts(inner)
            continue
        piece = _REDIRECT.sub("", piece).strip()
        if piece and balanced(piece):
            out.append(piece)
    return out


def _split(line: str) -> list[str]:
    bare, _ = _scan(line)
    pieces, start, depth, i = [], 0, 0, 0
    while i < len(line):
        ch = line[i]
        if not bare[i]:
            pass
        elif ch in "({":
            depth += 1
        elif ch in ")}":
            depth -= 1
        elif depth == 0 and line.startswith(_SEPARATORS, i) and not _redirect_amp(line, i):
            op = next(s for s in _SEPARATORS if line.startswith(s, i))
            pieces.append(line[start:i])
            i += len(op)
            start = i
            continue
        i += 1
    pieces.append(line[start:])
    return pieces


def _redirect_amp(line: str, i: int) -> bool:
    """The `&` of `2>&1` or `&>file` redirects; it separates nothing."""
    return line[i] == "&" and not line.startswith("&&", i) and (
        (i > 0 and line[i - 1] in "<>") or line.startswith("&>", i)
    )


def _group(piece: str) -> str | None:
    """The inside of a subshell `( ... )` or group `{ ...; }` that is the whole piece."""
    if len(piece) < 2 or piece[0] not in "({" or piece[-1] != _OPEN[piece[0]]:
        return None
    inner = piece[1:-1]
    return inner if balanced(inner) else None


@cache
def _runners() -> tuple[tuple[re.Pattern[str], ...], frozenset[str]]:
    runners, dispatch = [], set()
    for line in lines("coding_runners"):
        what, _, value = line.partition("\t")
        if what.strip() == "runner":
            runners.append(lazy(r"^(?:" + value.strip() + r")\s+(?:-\S+\s+)*"))
        elif what.strip() == "dispatch":
            dispatch.add(value.strip())
    return tuple(runners), frozenset(dispatch)


_ENV = lazy(r"^(?:[A-Za-z_]\w*=\S*\s+)+")


def plain(command: str) -> str:
    """The command without its runner or environment prefix, the tool by its name:
    `uv run ruff format` -> `ruff format`, `python -m pytest -q` -> `pytest -q`,
    `.venv/bin/pytest` -> `pytest`, `CI=1 npx tsc` -> `tsc`."""
    cmd = command.strip()
    runners, _ = _runners()
    while True:
        before = cmd
        cmd = _ENV.sub("", cmd)
        for pat in runners:
            cmd = pat.sub("", cmd, count=1)
        if cmd == before:
            break
    head, _, rest = cmd.partition(" ")
    if "/" in head and not head.endswith("/"):
        head = head.rsplit("/", 1)[-1]  # `.venv/bin/pytest`, `./node_modules/.bin/jest`
    return f"{head} {rest}".strip()


def tool(command: str) -> str:
    """The tool a command runs, whatever runs it: `uv run pytest -q tests/` -> `pytest`,
    `npm run test:unit` -> `npm run test:unit`, `cargo test --all` -> `cargo test`."""
    words = plain(command).split()
    if not words:
        return ""
    _, dispatch = _runners()
    n = 1
    while n < len(words) and words[n - 1] in dispatch and not words[n].startswith("-"):
        n += 1  # `npm` dispatches to `run`, which dispatches to the script
    return " ".join(words[:n])
