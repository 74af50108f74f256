"""What the agent changed: commits (message, hash and the files the session changed for
them), merges, files created, and edits with the sentence that said what the edit does."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from functools import cache

from memctl.core.lazyre import lazy
from memctl.curate.builtin.coding.onepoint import content as _content
from memctl.curate.builtin.coding.structure import Call, Coding
from memctl.curate.builtin.coding.written import written
from memctl.curate.builtin.lexicon import table

_EDITS = ("Edit", "MultiEdit", "Write", "NotebookEdit", "str_replace_based_edit_tool")
_COMMIT_OUT = lazy(
    r"^\[(?P<branch>[^\s\]]+)(?: \(root-commit\))? (?P<hash>[0-9a-f]{7,40})\]"
    r"(?: (?P<subject>[^\n]*\S))?",
    re.M,
)
_HEREDOC = lazy(r"<<\s*['\"]?(?P<tag>\w+)['\"]?\s*\n(?P<body>.*?)\n\s*(?P=tag)\b", re.S)
_INTENT = lazy(
    r"(?:^|[.!:]\s+)(?:(?:now|first|next|then|so)[, ]+)?"
    r"(?:i(?:'ll| will| need to| should| can)|let me|let's|we need to)\s+(?:also\s+)?"
    r"(?P<what>(?P<verb>\w+)\b[^.!?:\n]*)",
    re.I,
)


# "fix this", "update both", "fix the first test": what the edit does is said elsewhere.
_VAGUE = lazy(
    r"(?:this|that|it|these|those|both|them|the (?:first|second|third|last|next|rest|remaining|"
    r"other|same|code quality|issues?|errors?|problems?))\b",
    re.I,
)


@dataclass
class Change:
    """One change the agent made: kind (commit | merge | created | edited | moved), text, cite."""

    kind: str
    text: str
    turn: int
    quote: str
    also: tuple[tuple[int, str], ...] = ()


@cache
def _change_verbs() -> frozenset[str]:
    return table("change_verbs")


def relative(path: str, cwd: str | None) -> str:
    """A path as the project sees it: inside the working directory, relative to it."""
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def read(session: Coding) -> list[Change]:
    out: list[Change] = []
    edited: dict[str, int] = {}
    touched: dict[str, tuple[int, str]] = {}  # files changed since the last commit
    for c in session.calls:
        if c.turn < session.start:
            continue
        if c.name == "Bash" and c.command:
            got = _git(c)
            if got and got[0].kind == "commit" and re.search(r"\s--amend\b", c.command):
                # the amended commit replaces the last one: its hash is gone from the branch
                last = next((ch for ch in reversed(out) if ch.kind == "commit"), None)
                if last is not None:
                    out.remove(last)
            for ch in got:
                if ch.kind == "commit" and touched:
                    _with_files(ch, touched, session)
                    touched = {}
            out += got
        elif c.name in _EDITS and c.path and c.result is not None and not c.error:
            touched.setdefault(c.path, (c.turn, c.path))
            out += _edit(c, session, edited)
    return _end_state(out, session)


# `rm a b`, `git rm -r a`: files the session deleted (a shell's own words, not a list).
_RM = lazy(r"(?:^|[;&|]\s*|\bgit )rm\b(?P<args>[^;&|\n]*)")


def _end_state(out: list[Change], session: Coding) -> list[Change]:
    """What the session left behind: an edit whose new text a later edit replaced was a step
    walked back (edits that add to a file stay); a file created and then deleted was never
    an outcome."""
    gone: set[str] = set()
    for c in session.calls:
        if c.name == "Bash" and c.command and c.ran() and not c.error:
            for m in _RM.finditer(c.command):
                gone.update(relative(a, session.cwd) for a in _split(m.group("args"))
                            if not a.startswith("-"))  # fmt: skip
    # an edit whose text a later edit of the same file replaced was walked back
    undone: set[int] = set()
    wrote: dict[str, list[tuple[int, str]]] = {}
    for c in session.calls:
        if c.name not in _EDITS or not c.path or c.result is None or c.error:
            continue
        for old in (o.strip() for o in c.replaced()):
            for turn, new in wrote.get(c.path, ()):
                if len(new) >= 10 and len(old) >= 10 and (new in old or old in new):
                    undone.add(turn)
        new = written(c).strip()
        wrote.setdefault(c.path, []).append((c.turn, new))
    # a file a commit of this session holds is named, and its write cited, by the commit's
    # line: a "Created `x`." beside it says the same point twice, and so does a "Changed
    # `x` to ..." whose purpose the commit's message mostly says in its own words already
    committed: dict[str, str] = {}
    for ch in out:
        if ch.kind == "commit":
            committed.update((q, committed.get(q, "") + " " + ch.text) for _, q in ch.also)
    keep = []
    for ch in out:
        path = relative(ch.quote, session.cwd)
        if ch.kind in ("created", "edited") and path in gone:
            continue
        if ch.kind == "created" and ch.quote in committed:
            continue
        if ch.kind == "edited" and ch.quote in committed and _says_again(ch, committed[ch.quote]):
            continue
        if ch.kind == "edited" and ch.turn in undone:
            continue
        keep.append(ch)
    return _created_together(keep, session)


def _says_again(edit: Change, commit: str) -> bool:
    """Are most content words of the edit's purpose in the commit's line?"""
    what = _content(edit.text.split("` to ", 1)[-1])
    return bool(what) and 2 * len(what & _content(commit)) >= len(what)


def _created_together(out: list[Change], session: Coding) -> list[Change]:
    """The files a session created, as one line: ten "Created `x`." lines say less than one
    that names them all (each cited to the write that made it)."""
    made = [ch for ch in out if ch.kind == "created"]
    if len(made) < 2:
        return out
    shown = made[:MAX_FILES]
    names = [f"`{relative(ch.quote, session.cwd)}`" for ch in shown]
    more = f" and {len(made) - MAX_FILES} more" if len(made) > MAX_FILES else ""
    listed = ", ".join(names[:-1]) + (f", {names[-1]}" if more else f" and {names[-1]}")
    one = Change("created", f"Created {listed}{more}.", shown[0].turn, shown[0].quote,
                 tuple((ch.turn, ch.quote) for ch in shown[1:]))  # fmt: skip
    first = out.index(made[0])
    return [*out[:first], one, *(ch for ch in out[first:] if ch.kind != "created")]


MAX_FILES = 4  # a commit's line names this many files, then says how many more


def _with_files(ch: Change, touched: dict[str, tuple[int, str]], session: Coding) -> None:
    """ "Committed 9e41b7c on main: fix login (`src/auth/session.ts`)": the files this session
    changed before the commit, each cited to the call that changed it (as the tool recorded it)."""
    paths = [relative(p, session.cwd) for p in touched]
    shown = ", ".join(f"`{p}`" for p in paths[:MAX_FILES])
    more = f" and {len(paths) - MAX_FILES} more" if len(paths) > MAX_FILES else ""
    ch.text = f"{ch.text.rstrip('.')} ({shown}{more})."
    ch.also = (*ch.also, *list(touched.values())[:MAX_FILES])


# git's own options before the subcommand: `git -C <worktree> merge ...`, `git -c k=v mv ...`
_GIT_OPTS = r"(?:\s+-[Cc]\s+(?:\"[^\"]*\"|'[^']*'|\S+)|\s+--[\w-]+(?:=\S+)?)*"


def _git(c: Call) -> list[Change]:
    cmd = c.command
    if re.search(r"\bgit\b[^|;&\n]*\bcommit\b", cmd) and c.result and not c.error:
        out = _COMMIT_OUT.search(c.result)
        msg = _commit_message(cmd)
        if not out:
            return []
        also: tuple[tuple[int, str], ...] = ()
        ran = re.search(r"\bgit\b[^|;&\n]*\bcommit\b[^|;&\n]*", cmd)
        if msg and msg.strip():
            first = quote = msg.strip().splitlines()[0].strip()
        elif out.group("subject") and c.result_turn and ran:
            # `--amend --no-edit`, `-F file`, an editor: the message is git's to print, and
            # the commit it made (an amend's new hash) is what the branch holds now; cited
            # to the call that made it and to the line git printed
            first, quote = out.group("subject"), ran.group(0).strip()
            also = ((c.result_turn, out.group(0)),)
        else:
            return []
        text = f"Committed {out.group('hash')[:10]} on {out.group('branch')}: {first}"
        return [Change("commit", _end(text), c.turn, quote, also)]
    m = re.search(rf"\bgit{_GIT_OPTS} merge\b(?P<args>[^|;&\n]*)", cmd)
    if m and c.result is not None and not c.error:
        msg = _commit_message(cmd)
        args = [a for a in _split(m.group("args")) if not re.match(r"^(?:-|\d*[<>])", a)]
        args = [a for a in args if a.strip() != (msg or "").strip()]  # the message is no ref
        if not args:
            return []
        quote = m.group(0).strip()
        text = f"Merged {', '.join(args)}" + (f": {msg.strip().splitlines()[0]}" if msg else "")
        return [Change("merge", _end(text), c.turn, quote)]
    m = re.search(rf"\bgit{_GIT_OPTS} mv (?P<a>\S+) (?P<b>\S+)", cmd)
    if m and not c.error:
        return [Change("moved", f"Moved {m.group('a')} to {m.group('b')}.", c.turn, m.group(0))]
    return []


def _split(text: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError:
        return text.split()


def _commit_message(cmd: str) -> str | None:
    h = _HEREDOC.search(cmd)
    if h:
        return h.group("body")
    m = re.search(r"(?:-[a-zA-Z]*m|--message)[ =](?P<q>[\"'])(?P<msg>.+?)(?<!\\)(?P=q)", cmd, re.S)
    return m.group("msg") if m else None


def _edit(c: Call, session: Coding, edited: dict[str, int]) -> list[Change]:
    path = relative(c.path, session.cwd)
    created = c.name == "Write" and "created" in (c.result or "").lower()
    intent = _intent(c.said_before[1]) if c.said_before else None
    if created:
        if path in edited:
            return []
        edited[path] = 2
        return [Change("created", f"Created `{path}`.", c.turn, c.path)]
    if not intent or edited.get(path, 0) >= 2 or c.said_before is None:
        return []
    edited[path] = edited.get(path, 0) + 1
    what, _ = intent
    # Cited to the edit itself: the sentence before it is the agent's narration.
    return [Change("edited", _end(f"Changed `{path}` to {what}"), c.turn, c.path)]


def _intent(text: str) -> tuple[str, str] | None:
    """ "I need to add the sidechain CSS class after the command message check." -> its `what`."""
    for m in _INTENT.finditer(text):
        if m.group("verb").lower() in _change_verbs():
            what = m.group("what").strip()
            what = re.sub(r"\s+(?:in|to|of) (?:the )?[\w./-]+\.\w+(?: file)?$", "", what)
            what = re.sub(r"\s+(?:by|with)\s+(?:editing|updating)\b.*$", "", what)
            if len(what.split()) >= 3 and not _VAGUE.match(what.split(" ", 1)[1]):
                return _its(what), m.group("what").strip()
    return None


_AGENT_SELF = (
    (lazy(r"(?<![\w.@/-])my own(?![\w.@/-])"), "its own"),
    (lazy(r"(?<![\w.@/-])my(?![\w.@/-])"), "its"),
    (lazy(r"(?<![\w.@/-])me(?![\w.@/-])"), "it"),
    (lazy(r"(?<![\w.@/-])our(?![\w.@/-])"), "the"),
)


def _its(text: str) -> str:
    """The agent's "my own doc" is its own doc: an edit's purpose read out of its mouth."""
    for pat, rep in _AGENT_SELF:
        text = pat.sub(rep, text)
    return text


def _end(text: str) -> str:
    text = text.rstrip(" ,;:")
    return text if text.endswith((".", "!", ")")) else text + "."


# A name in code: `snake_case`, `camelCase`, `CamelCase`, `dotted.name`, `call()`; long enough
# (MIN_QUOTE_CHARS) that finding it in an edit's new text is no coincidence.
_IDENT = lazy(r"(?<![\w.])[A-Za-z_]\w*(?:_\w+|[a-z][A-Z]\w*|\.[A-Za-z_]\w*)+(?![\w])")
_LONG_LINE = 160


@dataclass(frozen=True)
class Shown:
    """The edit that did what a sentence reports: its turn, a verbatim quote, its file."""

    turn: int
    quote: str
    path: str


def shown_by_edit(session: Coding, text: str, before: int) -> Shown | None:
    """The edit (before turn `before`) that shows what a report's sentence says was done.

    "Added aggregation that tracks `total_input_tokens`" is the agent's word for it; the edit
    that first wrote `total_input_tokens` (into text that did not hold it) is what it did, and
    later edits that write the name only use it. Cited beside the report, the line can be
    checked against the change itself. The edit that introduced the most names the sentence
    gives wins, the first on a tie; its quote is the new line that holds the longest one (the
    name alone when that line is long). With no such name, a file the sentence names that the
    session edited is cited by its path, at its last edit (where the file was left).
    """
    names = {m.group(0) for m in _IDENT.finditer(text) if len(m.group(0)) >= 8}
    files = {w.lower() for w in re.findall(r"[\w.-]+\.\w{1,5}\b", text)}
    first: dict[str, Shown] = {}  # name -> the edit that first wrote it, quoting its line
    named: Shown | None = None
    for c in session.calls:
        if c.turn >= before or c.name not in _EDITS or not c.path or c.error or c.result is None:
            continue
        new, old = "\n".join(c.wrote()), "\n".join(c.replaced())
        for n in names - first.keys():
            if n in new and n not in old:
                line = next(ln.strip() for ln in new.splitlines() if n in ln)
                first[n] = Shown(c.turn, line if len(line) <= _LONG_LINE else n, c.path)
        if c.path.rsplit("/", 1)[-1].lower() in files:
            named = Shown(c.turn, c.path, c.path)
    if not first:
        return named
    count: dict[int, int] = {}
    for got in first.values():
        count[got.turn] = count.get(got.turn, 0) + 1
    turn = min(count, key=lambda t: (-count[t], t))
    name = max((n for n, got in first.items() if got.turn == turn), key=lambda n: (len(n), n))
    return first[name]
