"""What the files a session wrote say the project is: the dependencies a manifest it wrote
names, the platform a deploy file configures, the settings an `.env.example` lists, and the
install command a README it wrote gives.

A file the agent wrote and the person kept is the plainest statement of a project fact there
is; the agent's prose about it is not needed. Each line cites the write (the file's path and
the verbatim line that shows it) and is `observed`. Names are data
(`tables/coding_packages.txt`, `tables/coding_deploy.txt`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from memctl.core.lazyre import lazy
from memctl.curate.builtin.coding.commands import kind_of
from memctl.curate.builtin.coding.structure import Call
from memctl.curate.builtin.lexicon import lines

_EDITS = ("Edit", "MultiEdit", "Write", "NotebookEdit", "str_replace_based_edit_tool")
# `"vite": "^5.2.0"` in package.json; `"fastapi>=0.110"` in pyproject.toml's dependencies
_NPM_DEP = lazy(r'"(?P<n>@?[\w.-]+(?:/[\w.-]+)?)"\s*:\s*"[\^~<>=*]*(?:\d|latest|workspace)[^"]*"')
_PY_DEP = lazy(r'"(?P<n>[A-Za-z][\w.-]*)(?:\[[\w,]+\])?\s*(?:[<>=!~]=?[^"]*)?"')
_PY_TOOL = lazy(r"^\[tool\.(?P<n>[\w-]+)", re.M)
_ENV_KEY = lazy(r"^(?P<k>[A-Z][A-Z0-9_]{2,})=", re.M)
_FENCE = lazy(r"```[\w-]*\n(?P<body>.*?)```", re.S)
_ENV_EXAMPLE = lazy(r"^\.env\.(?:example|sample|template|dist)$")
MAX_KEYS = 6
# a GitHub Actions workflow: where its jobs run, and the versions its matrix tests
_WORKFLOW = lazy(r"(?:^|/)\.github/workflows/[^/]+\.ya?ml$")
_RUNS_ON = lazy(r"^[ \t]*runs-on:[ \t]*(?P<v>[\w.-]+)[ \t]*$", re.M)
_MATRIX = lazy(
    r"^[ \t]*(?P<k>python|node)-version:[ \t]*\[(?P<v>[^\]\n]+)\][ \t]*$", re.M
)
_LANG = {"python": "Python", "node": "Node.js"}
_ON_BLOCK = lazy(r"^['\"]?on['\"]?:", re.M)
MAX_WORKFLOW = 100_000  # characters


@dataclass
class Fact:
    """kind (stack | environment | command), an element or text, and its citations."""

    kind: str
    text: str
    cites: tuple[tuple[int, str], ...]


@cache
def _table(name: str) -> dict[str, str]:
    out = {}
    for line in lines(name):
        key, _, value = line.partition("\t")
        out[key.strip()] = value.strip()
    return out


def written(c: Call) -> str:
    """The text a successful write or edit put into its file."""
    if c.name not in _EDITS or not c.path or c.result is None or c.error:
        return ""
    if c.name == "MultiEdit":
        edits = c.input.get("edits")
        parts = [str(e.get("new_string") or "") for e in edits if isinstance(e, dict)] if (
            isinstance(edits, list)
        ) else []  # fmt: skip
        return "\n".join(parts)
    text = c.input.get("content") or c.input.get("new_string") or c.input.get("new_str") or ""
    return text if isinstance(text, str) else ""


def _name(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def stack(calls: list[Call]) -> dict[str, tuple[int, str]]:
    """Stack elements the manifests the session wrote name -> (turn, the verbatim line)."""
    packages = _table("coding_packages")
    found: dict[str, tuple[int, str]] = {}
    for c in calls:
        text = written(c)
        name = _name(c.path)
        if not text:
            continue
        if name == "package.json":
            hits = [(m.group("n").lower(), m.group(0)) for m in _NPM_DEP.finditer(text)]
        elif name == "pyproject.toml":
            hits = [(m.group("n").lower(), m.group(0)) for m in _PY_TOOL.finditer(text)]
            hits += [(m.group("n").lower(), m.group(0)) for m in _PY_DEP.finditer(text)]
        else:
            continue
        for pkg, quote in hits:
            element = packages.get(pkg)
            if element and len(quote) >= 8:
                found.setdefault(element, (c.turn, quote))
    return found


def facts(calls: list[Call], rel: dict[str, str]) -> list[Fact]:
    """Deploy targets, listed settings and documented install commands; `rel` maps a call's
    path to the path as the project sees it."""
    deploy = _table("coding_deploy")
    out: list[Fact] = []
    said: set[str] = set()
    workflows: dict[str, list[Call]] = {}  # each workflow's writes, in order
    for c in calls:
        text = written(c)
        if not text:
            continue
        name = _name(c.path)
        where = rel.get(c.path, name)
        if _WORKFLOW.search(where):
            workflows.setdefault(where, []).append(c)
        elif name in deploy and f"deploy:{name}" not in said:
            said.add(f"deploy:{name}")
            out.append(Fact("environment", f"Deploys to {deploy[name]} (`{where}`).",
                            ((c.turn, c.path),)))  # fmt: skip
        elif _ENV_EXAMPLE.match(name) and "env" not in said:
            keys = list(dict.fromkeys(m.group("k") for m in _ENV_KEY.finditer(text)))
            if keys:
                said.add("env")
                shown = ", ".join(keys[:MAX_KEYS]) + (" and more" if len(keys) > MAX_KEYS else "")
                out.append(Fact("environment", f"Settings come from the environment: {shown} "
                                f"(listed in `{where}`).",
                                ((c.turn, c.path), (c.turn, f"{keys[0]}=")),))  # fmt: skip
        elif name.lower().startswith("readme") and "install" not in said:
            for block in _FENCE.finditer(text):
                line = next((ln.strip() for ln in block.group("body").splitlines()
                             if kind_of(ln.strip().lstrip("$ ")) == "install"), None)  # fmt: skip
                if line:
                    cmd = line.lstrip("$ ").strip()
                    said.add("install")
                    out.append(Fact("command", f"Dependencies install with `{cmd}` (as `{where}` "
                                    "says).", ((c.turn, cmd), (c.turn, c.path))))  # fmt: skip
                    break
    for where, writes in list(workflows.items())[:1]:
        out += _workflow(writes, where)
    return out


def left(writes: list[Call]) -> str:
    """A file's text as the session left it: its last whole write, then each edit after it
    applied in order (an edit whose old text is not there is a write this cannot follow:
    what it wrote is all that is known of the file then)."""
    text = ""
    for c in writes:
        if c.name == "Write" or ("content" in c.input and c.name != "MultiEdit"):
            text = written(c)
            continue
        edits = c.input.get("edits") if c.name == "MultiEdit" else [c.input]
        for e in edits if isinstance(edits, list) else []:
            if not isinstance(e, dict):
                continue
            old = e.get("old_string") or e.get("old_str") or ""
            new = e.get("new_string") or e.get("new_str") or ""
            if not isinstance(old, str) or not isinstance(new, str):
                continue
            if old and old in text:
                text = text.replace(old, new) if e.get("replace_all") else (
                    text.replace(old, new, 1))  # fmt: skip
            else:
                text = new
    return text


def _workflow(writes: list[Call], where: str) -> list[Fact]:
    """Where a GitHub Actions workflow runs ("CI (`.github/workflows/ci.yml`) runs on
    `ubuntu-latest` with Python 3.12 and 3.13.") and on what ("... runs on every push and
    on pull requests to main."), from the file as the session left it; each line quoted
    from the last write that put it there."""
    text = left(writes)
    last = writes[-1]

    def cite(line: str) -> tuple[int, str]:
        by = next((c for c in reversed(writes) if line in written(c)), last)
        return by.turn, line

    out: list[Fact] = []
    runs = _RUNS_ON.search(text)
    if runs is not None:
        cites = [(last.turn, last.path), cite(runs.group(0).strip())]
        said = f"CI (`{where}`) runs on `{runs.group('v')}`"
        m = _MATRIX.search(text)
        if m is not None:
            versions = [v.strip().strip("'\"") for v in m.group("v").split(",") if v.strip()]
            if versions and all(re.fullmatch(r"[\w.]+", v) for v in versions):
                said += f" with {_LANG[m.group('k')]} {_listed(versions)}"
                cites.append(cite(m.group(0).strip()))
        out.append(Fact("environment", f"{said}.", tuple(cites)))
    on = _triggers(text)
    if on is not None:
        said, line = on
        out.append(Fact("environment", f"CI (`{where}`) runs on {said}.",
                        ((last.turn, last.path), cite(line))))  # fmt: skip
    return out


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" and {items[-1]}"


_EVENTS = {"push": ("every push", "pushes to"), "pull_request": ("every pull request",
           "pull requests to"), "schedule": ("a schedule", ""),
           "workflow_dispatch": ("a manual run", "")}  # fmt: skip


def _triggers(text: str) -> tuple[str, str] | None:
    """What starts the workflow, in words, and a line of its `on:` block (at least
    MIN_QUOTE_CHARS long) to quote; None when the file does not parse or says nothing
    this can put in words."""
    import yaml

    if len(text) > MAX_WORKFLOW:
        return None  # no workflow is this long; a paste that size is not parsed on a save
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError:
        return None
    if not isinstance(doc, dict):
        return None
    on = doc.get("on", doc.get(True))  # YAML 1.1 reads a bare `on` key as true
    if isinstance(on, str):
        on = {on: None}
    elif isinstance(on, list):
        on = {str(e): None for e in on}
    if not isinstance(on, dict):
        return None
    parts = []
    for event, (every, to) in _EVENTS.items():
        if event not in on:
            continue
        cfg = on[event]
        branches = cfg.get("branches") if isinstance(cfg, dict) else None
        names = [str(b) for b in branches] if isinstance(branches, list) else []
        parts.append(f"{to} {_listed(names)}" if names and to else every)
    if not parts:
        return None
    at = _ON_BLOCK.search(text)
    block = text[at.start() :] if at is not None else ""
    lines = [ln.strip() for ln in block.splitlines()[:12] if len(ln.strip()) >= 8]
    line = next((ln for ln in lines if any(e in ln for e in _EVENTS)), None)
    if line is None:
        return None
    return " and on ".join(parts), line
