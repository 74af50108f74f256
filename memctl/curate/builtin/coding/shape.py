"""The shape of the code base a session works in: where its code lives, what it is built with
and which environments it runs in, read from what the agent's tools touched.

- Layout: the folders the agent created or edited files in, and what they hold (tests, or the
  language of their files), one line per session naming the folders the note does not know;
  a single folder is no layout.
- Stack: the languages of the files it changed, the manifests it read or changed
  (`pyproject.toml`, `package.json`), and the tools its commands ran (uv, pytest, pnpm, vite);
  one line per project, updated when a session shows something new.
- Environments: a virtualenv or conda environment activated, a Node version picked, an
  environment a deploy names, the `.env` files read.

Each line cites the tool calls that show it (quoting the path or command, which memctl checks
against the call's arguments) and is `observed`: what the session shows, not what anyone said.
It holds nothing its quotes do not: a Layout line cites every file it names, and a Stack line
whose words are in none of its quotes (`Python` read from `totals.py`) names the files it was
read from, so the check every claim passes (`core.provenance.supports`) holds for it too.
Word lists are data (`tables/coding_stack.txt`, `coding_languages.txt`, `coding_manifests.txt`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from memctl.core.lazyre import lazy
from memctl.core.provenance import supports
from memctl.curate.builtin.coding import written
from memctl.curate.builtin.coding.changes import relative
from memctl.curate.builtin.coding.commands import kind_of, succeeded
from memctl.curate.builtin.coding.structure import Call, Coding
from memctl.curate.builtin.lexicon import lines

_EDITS = ("Edit", "MultiEdit", "Write", "NotebookEdit", "str_replace_based_edit_tool")
_LOOKS = ("Read", *_EDITS)
_TEST_DIRS = frozenset(("test", "tests", "__tests__", "spec", "specs", "e2e", "testing"))
_TEST_FILE = lazy(r"^(?:test_.*|.*_test\.\w+|.*\.(?:test|spec)\.\w+|conftest\.py)$")
# What a folder of these holds is no code: it is said as what it is.
_NOT_CODE = {"Markdown": "docs", "YAML": "configuration", "TOML": "configuration",
             "JSON": "data and configuration", "HTML": "HTML pages", "CSS": "styles"}  # fmt: skip
_NO_STACK = frozenset(("Markdown", "YAML", "TOML", "JSON", "HTML", "CSS", "Sass", "shell"))
MAX_FOLDERS = 4
MAX_STACK = 8
MAX_CITES = 4
MAX_ENVIRONMENTS = 3


@dataclass
class Shape:
    """One line about the project: kind (layout | stack | environment | command), text,
    citations."""

    kind: str
    text: str
    cites: tuple[tuple[int, str], ...]
    replaces: str | None = None


@cache
def _pairs(name: str) -> tuple[tuple[str, str], ...]:
    out = []
    for line in lines(name):
        key, _, value = line.partition("\t")
        out.append((key.strip(), value.strip()))
    return tuple(out)


@cache
def _tools() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((name, lazy(pat)) for name, pat in _pairs("coding_stack"))


@cache
def _languages() -> dict[str, str]:
    return dict(_pairs("coding_languages"))


@cache
def _manifests() -> dict[str, str]:
    return dict(_pairs("coding_manifests"))


def _name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def _language(path: str) -> str | None:
    name = _name(path)
    dot = name.rfind(".")
    return _languages().get(name[dot:]) if dot > 0 else None


def _changed(c: Call) -> bool:
    return c.name in _EDITS and bool(c.path) and c.result is not None and not c.error


def read(session: Coding, known: dict[str, list[str]] | None = None) -> list[Shape]:
    """Layout, stack and environment lines; `known` maps a section to the note's lines."""
    known = known or {}
    calls = [c for c in session.calls if c.turn >= session.start]
    out = _layout(calls, session, known.get("Layout", []))
    stack = _stack(calls, session, known.get("Stack", []))
    if stack is not None:
        out.append(stack)
    inside = [c for c in calls if c.path and _inside(c, session) is not None]
    rel = {c.path: _inside(c, session) or c.path for c in inside}
    wrote = written.facts(inside, rel)
    envs = _environments(calls, known.get("Environments", []))
    if any(f.text.startswith("Settings come from") for f in wrote):
        envs = [e for e in envs if not e.text.startswith("Settings are read from")]
    out += envs
    said = " ".join(known.get("Environments", []) + known.get("Commands", []))
    installed = any(
        kind_of(c.command) == "install" and succeeded(c.ran(), c.error, c.result)
        for c in calls
        if c.name == "Bash" and c.command
    )
    for f in wrote:
        if f.text in said or (f.kind == "command" and (installed or "install with" in said)):
            continue  # the note knows it, or a run the session made shows it better
        out.append(Shape(f.kind, f.text, f.cites))
    return out


def _inside(c: Call, session: Coding) -> str | None:
    """The call's file as the project sees it, or None when it lies outside the project."""
    rel = relative(c.path, session.cwd)
    if rel == c.path or rel.startswith(("/", "~", "..")):
        return None
    return rel


def _layout(calls: list[Call], session: Coding, known: list[str]) -> list[Shape]:
    folders: dict[str, list[tuple[int, str, str]]] = {}
    for c in calls:
        rel = _inside(c, session) if _changed(c) else None
        if rel is None or "/" not in rel:
            continue  # a file at the root says nothing of where the code lives
        folder, name = rel.rsplit("/", 1)
        files = folders.setdefault(folder, [])
        if name not in [n for _, _, n in files]:
            files.append((c.turn, c.path, name))
    said = " ".join(known)
    parts, cites = [], []
    for folder, files in folders.items():
        if f"`{folder}/`" in said or len(parts) >= MAX_FOLDERS:
            continue
        names = ", ".join(f"`{n}`" for _, _, n in files[:2])
        parts.append(f"`{folder}/` holds {_holds(folder, [n for _, _, n in files])} ({names})")
        cites += [(turn, path) for turn, path, _ in files[:2]]  # each file it names
    if len(parts) < 2:
        return []  # one folder is no layout: "`test/` holds the tests" tells nobody anything
    return [Shape("layout", "Code layout: " + "; ".join(parts) + ".", tuple(cites))]


def _holds(folder: str, names: list[str]) -> str:
    last = folder.rsplit("/", 1)[-1].lower()
    if last in _TEST_DIRS or all(_TEST_FILE.match(n) for n in names):
        return "the tests"
    if folder.startswith(".github/workflows"):
        return "the CI workflows"
    langs = [lang for lang in (_language(n) for n in names) if lang]
    if not langs:
        return "files"
    lang = max(dict.fromkeys(langs), key=langs.count)
    return _NOT_CODE.get(lang, f"{lang} code")


_STACK_LINE = lazy(r"^Stack: (?P<items>.+?)\.?$")


def _stack(calls: list[Call], session: Coding, known: list[str]) -> Shape | None:
    found: dict[str, tuple[int, str]] = {}  # element -> its first citation
    for c in calls:
        rel = _inside(c, session) if c.path and c.name in _LOOKS else None
        if rel is not None and c.name in _LOOKS and c.result is not None and not c.error:
            what = _manifests().get(_name(rel))
            if what:
                found.setdefault(what, (c.turn, c.path))
            lang = _language(rel) if _changed(c) else None
            if lang and lang not in _NO_STACK:
                found.setdefault(lang.split(" (")[0], (c.turn, c.path))
    inside = [c for c in calls if c.path and _inside(c, session) is not None]
    for element, cite in written.stack(inside).items():  # what its manifests now depend on
        if not any(k.casefold() == element.casefold() for k in found):
            found[element] = cite
    # a tool is cited by a run that succeeded when there is one: a failed run shows the tool,
    # but it is no command to copy
    runs = [c for c in calls if c.name == "Bash" and c.command and c.ran()]
    runs.sort(key=lambda c: not succeeded(c.ran(), c.error, c.result))
    for c in runs:
        first = c.command.strip().split("\n")[0]
        for tool, pat in _tools():
            if pat.search(first) and not any(k.casefold() == tool.casefold() for k in found):
                found.setdefault(tool, (c.turn, first.strip()))  # "go" the tool is Go
    old = next((m for m in (_STACK_LINE.match(k) for k in known) if m), None)
    items = _SHOWN_BY.sub("", old.group("items")) if old else ""
    have = [w.strip() for w in re.split(r"[;,] ", items)] if old else []
    new = [e for e in found if e not in have]
    if not new or len(have) + len(new) < 2:
        return None
    elements = [*have, *new][:MAX_STACK]
    cited = [e for e in new if e in elements][:MAX_CITES]
    cites = tuple(dict.fromkeys(found[e] for e in cited))
    if not cites:
        return None
    text = f"Stack: {', '.join(elements)}."
    if not supports(text, [q for _, q in cites]):
        # `Python` read from `totals.py`, `Node.js` from `package.json`: no word of the
        # line is in its quotes, so it names the files it was read from, as the quotes do
        shown = {e: f"{e} (`{_name(found[e][1])}`)" for e in cited if "/" in found[e][1]}
        text = f"Stack: {', '.join(shown.get(e, e) for e in elements)}."
    return Shape("stack", text, cites, old.group(0) if old else None)


# What a stack element was read from, as the line names it: "Python (`totals.py`)".
_SHOWN_BY = lazy(r" \(`[^`]+`\)")


_VENV = lazy(r"(?:^|[\s;&|(])(?:source|\.) (?P<v>[\w.~/-]*?)/?bin/activate\b")
_VENV_BIN = lazy(r"(?:^|[\s;&|(])(?P<v>[\w.~-]*venv[\w.-]*)/bin/\w+")
_CONDA = lazy(r"\b(?:conda|mamba|micromamba) activate (?P<v>[\w.-]+)")
_NODE = lazy(
    r"\b(?:nvm use|nvm install|fnm use|volta (?:run|install) --node) (?P<v>v?\d[\w.]*)"
)
_ENV_NAME = lazy(
    r"(?:--env(?:ironment)?|--stage|--target-env)[ =](?P<v>[\w-]+)|"
    r"\b(?P<k>NODE_ENV|APP_ENV|RAILS_ENV|FLASK_ENV|MIX_ENV|ENVIRONMENT|DEPLOY_ENV)=(?P<w>[\w-]+)"
)
_DOTENV = lazy(r"(?<![\w/.-])(?P<v>\.env(?:\.[\w-]+)?)(?![\w/-])")


def _environments(calls: list[Call], known: list[str]) -> list[Shape]:
    out: list[Shape] = []
    seen: set[str] = set(known)

    def add(text: str, turn: int, quote: str) -> None:
        if text not in seen and len(out) < MAX_ENVIRONMENTS:
            seen.add(text)
            out.append(Shape("environment", text, ((turn, quote),)))

    for c in calls:
        if c.name == "Bash" and c.command and c.ran():
            first = c.command.strip().split("\n")[0]
            m = _VENV.search(first) or _VENV_BIN.search(first)
            if m and m.group("v"):
                quote = m.group(0).strip(" ;&|(")
                add(f"Commands run in the virtualenv `{m.group('v')}` (`{quote}`).", c.turn, quote)
            m = _CONDA.search(first)
            if m:
                add(f"Commands run in the conda environment `{m.group('v')}`.", c.turn, m.group(0))
            m = _NODE.search(first)
            if m:
                add(f"Node.js {m.group('v')} is used (`{m.group(0)}`).", c.turn, m.group(0))
            m = _ENV_NAME.search(first)
            if m:
                name = m.group("v") or m.group("w")
                add(f"`{first.strip()}` names the `{name}` environment.", c.turn, first.strip())
            for d in _DOTENV.finditer(first):
                add(f"Settings are read from `{d.group('v')}`.", c.turn, first.strip())
        elif c.name in _LOOKS and c.path and not c.error:
            name = _name(c.path)
            if _DOTENV.fullmatch(name):
                add(f"Settings are read from `{name}`.", c.turn, c.path)
    return out
