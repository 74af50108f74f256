"""The package's shape, enforced by reading the imports of every module.

Layers, bottom up (docs/architecture.md draws them):
  shared   errors.py, version.py, results.py, requests.py: types every layer may use
  core/    the floor's files, git, config, journal; core/floor.py is the object features get
  index/   the search index over core's files (with core, "the floor")
  ingest/ curate/ recall/ gitops/   features: each imports the floor, never the front door
  vault.py (and the package __init__) the front door: one method per user action
  faces/   cli, hooks, MCP, watcher, LearningMachine: they call the front door
Every import counts: module level, inside functions and under TYPE_CHECKING, because a
reader following a name meets it either way.
"""

from __future__ import annotations

import ast
import functools
import re
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "memctl"
MAX_LINES = 800

# Each outside library has exactly one home (a module or a package folder).
HOMES = {
    "tantivy": ("index/",),
    "git": ("core/history.py",),
    "litellm": ("curate/llm.py",),
    "watchdog": ("faces/watch.py",),
    "mcp": ("faces/mcp.py",),
    "typer": ("faces/cli/",),
    "werkzeug": ("faces/viewer/",),
    "jinja2": ("faces/viewer/",),
}
FRONT_ENDS = ("faces/", "__main__.py")

# layer -> the layers its modules may import (every import, typing ones included)
MAY_IMPORT = {
    "shared": {"shared"},
    "core": {"shared", "core"},
    "index": {"shared", "core", "index"},
    "ingest": {"shared", "core", "index", "ingest"},
    # curation reads recall's scope rules and word analysis; recall never imports curation
    "curate": {"shared", "core", "index", "recall", "curate"},
    "recall": {"shared", "core", "index", "recall"},
    "gitops": {"shared", "core", "index", "recall", "curate", "gitops"},
    "front": {"shared", "core", "index", "ingest", "curate", "recall", "gitops", "front"},
    "faces": {"shared", "front", "faces"},
    # the package's public names (Vault, LearningMachine, LearningStore), loaded on first use
    "package": {"shared", "front", "faces", "curate"},
}
# The floor is core and index together: the object that holds them keeps the index in step
# with every write.
FLOOR_JOINS = {"memctl.core.floor"}
# A face names the result types it renders; it never calls below the front door.
FACES_MAY_NAME = {"shared", "front", "faces", "core", "index", "ingest", "curate", "recall",
                  "gitops"}


def layer(module: str) -> str:
    parts = module.split(".")
    if module == "memctl":
        return "package"
    if module == "memctl.vault":
        return "front"
    if module in ("memctl.errors", "memctl.version", "memctl.results", "memctl.requests"):
        return "shared"
    if module == "memctl.__main__":
        return "faces"
    return parts[1]


@functools.cache
def _modules() -> list[tuple[str, ast.Module]]:
    return [
        (p.relative_to(PKG).as_posix(), ast.parse(p.read_text(encoding="utf-8")))
        for p in sorted(PKG.rglob("*.py"))
    ]


@functools.cache
def _module_names() -> dict[str, Path]:
    names = {}
    for p in sorted(PKG.rglob("*.py")):
        parts = ("memctl", *p.relative_to(PKG).with_suffix("").parts)
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    return names


def _imports(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def _typing_only(tree: ast.Module) -> set[int]:
    return {
        id(n)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
        for n in ast.walk(node)
    }


def _edges(names: dict[str, Path]) -> list[tuple[str, str, bool, int]]:
    """(importer, imported, typing only, line) for every memctl import, lazy ones included.

    `from memctl.core import tokens` is an edge to memctl.core.tokens, not to the package.
    """
    trees = {("memctl/" + rel): tree for rel, tree in _modules()}
    out = []
    for mod, path in names.items():
        tree = trees[path.relative_to(PKG.parent).as_posix()]
        typing = _typing_only(tree)
        for node in ast.walk(tree):
            deps: set[str] = set()
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name in names)
            elif isinstance(node, ast.ImportFrom) and node.module in names and node.level == 0:
                subs = {f"{node.module}.{a.name}" for a in node.names} & set(names)
                deps |= subs
                if len(subs) < len(node.names):
                    deps.add(node.module)
            for dep in deps - {mod}:
                out.append((mod, dep, id(node) in typing, node.lineno))
    return out


def test_outside_libraries_have_one_home() -> None:
    offenders = []
    for rel, tree in _modules():
        for name in _imports(tree):
            top = name.split(".")[0]
            if top in HOMES and not rel.startswith(HOMES[top]):
                offenders.append(f"{rel} imports {name}")
    assert offenders == []


def test_library_never_imports_the_cli_or_rich() -> None:
    offenders = []
    for rel, tree in _modules():
        if rel.startswith(FRONT_ENDS):
            continue
        for name in _imports(tree):
            if name.split(".")[0] in ("typer", "rich") or name.startswith("memctl.faces.cli"):
                offenders.append(f"{rel} imports {name}")
    assert offenders == []


def test_library_never_prints() -> None:
    offenders = []
    for rel, tree in _modules():
        if rel.startswith(FRONT_ENDS):
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("print", "input", "exit")
            ):
                offenders.append(f"{rel}:{node.lineno} calls {node.func.id}()")
    assert offenders == []


def test_vault_files_are_written_only_by_the_store() -> None:
    writers = ("write_text", "write_bytes")
    offenders = []
    for rel, tree in _modules():
        if rel == "core/store.py" or rel.startswith(FRONT_ENDS):
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in writers
            ):
                offenders.append(f"{rel}:{node.lineno} calls .{node.func.attr}()")
    assert offenders == []


def layer_violations() -> list[str]:
    names = _module_names()
    bad = []
    for mod, dep, typing, line in _edges(names):
        src, dst = layer(mod), layer(dep)
        allowed = set(MAY_IMPORT[src])
        if src == "core" and mod in FLOOR_JOINS:
            allowed.add("index")
        if src == "faces" and typing:
            allowed = FACES_MAY_NAME
        if dst not in allowed:
            rel = names[mod].relative_to(PKG).as_posix()
            bad.append(f"{rel}:{line} ({src}) imports {dep} ({dst})")
    return sorted(bad)


def test_each_layer_imports_only_the_layers_below_it() -> None:
    assert layer_violations() == []


def import_circles() -> list[list[str]]:
    """Strongly connected groups of modules over every import (typing ones too)."""
    names = _module_names()
    graph: dict[str, set[str]] = {m: set() for m in names}
    for mod, dep, _typing, _line in _edges(names):
        graph[mod].add(dep)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 10_000))
    try:
        for v in sorted(graph):
            if v not in index:
                visit(v)
    finally:
        sys.setrecursionlimit(old)
    return found


def test_no_module_imports_itself_through_others() -> None:
    assert import_circles() == []


def private_reaches() -> list[str]:
    """Uses of another module's private names: `from m import _x`, or `obj._x` on anything
    but self, cls or a name the module itself defines."""
    bad = []
    for rel, tree in _modules():
        own = {
            n.name
            for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
        }
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith(
                "memctl"
            ):
                bad += [
                    f"{rel}:{node.lineno} imports {node.module}.{a.name}"
                    for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
            elif (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and isinstance(node.value, ast.Name)
                and node.value.id not in ("self", "cls", "os", "sys")
                and node.value.id not in own
            ):
                bad.append(f"{rel}:{node.lineno} reaches {node.value.id}.{node.attr}")
    return sorted(bad)


def test_no_module_reaches_into_another_modules_private_names() -> None:
    assert private_reaches() == []


def test_no_module_is_over_the_size_a_reader_holds() -> None:
    long = {
        p.relative_to(PKG).as_posix(): n
        for p in PKG.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert long == {}


def test_every_folder_says_what_goes_in_it() -> None:
    bare = [
        d.relative_to(PKG).as_posix()
        for d in PKG.rglob("*")
        if d.is_dir()
        and (d / "__init__.py").exists()
        and not ast.get_docstring(ast.parse((d / "__init__.py").read_text(encoding="utf-8")))
    ]
    missing = [
        d.relative_to(PKG).as_posix()
        for d in PKG.rglob("*")
        if d.is_dir() and any(d.glob("*.py")) and not (d / "__init__.py").exists()
    ]
    assert bare == [] and missing == []


def test_the_top_of_the_package_is_the_front_door_and_the_folders() -> None:
    top = sorted(p.name for p in PKG.iterdir() if p.suffix == ".py")
    assert top == [
        "__init__.py", "__main__.py", "errors.py", "requests.py", "results.py", "vault.py",
        "version.py",
    ]


def test_one_transaction_helper_owns_rollback_trailers_and_commit() -> None:
    """Outside core/, a command changes the vault only through `Floor.change`: nobody
    builds a Transaction, rolls one back, commits through git directly or writes the
    `Memctl-Version`/`Memctl-Command` trailers by hand (copies of those steps drift)."""
    offenders = []
    for rel, tree in _modules():
        if rel.startswith("core/"):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                f = node.func
                name = f.id if isinstance(f, ast.Name) else getattr(f, "attr", "")
                owner = f.value if isinstance(f, ast.Attribute) else None
                if name == "Transaction":
                    offenders.append(f"{rel}:{node.lineno} builds a Transaction")
                elif name == "rollback" and isinstance(owner, ast.Name) and owner.id == "tx":
                    offenders.append(f"{rel}:{node.lineno} calls tx.rollback()")
                elif (name == "commit" and isinstance(owner, ast.Attribute)
                      and owner.attr == "history"):
                    offenders.append(f"{rel}:{node.lineno} commits through history")
            elif (isinstance(node, ast.Dict)
                  and any(isinstance(k, ast.Constant) and k.value == "Memctl-Command"
                          for k in node.keys)):
                offenders.append(f"{rel}:{node.lineno} writes Memctl-* trailers by hand")
    assert offenders == []


# ---- one request per action, and every face takes its fields --------------------------------
# For each face and action: which of the face's parameters carries which request field
# (when the names differ), which parameters are the face's own (presentation), and which
# fields the face fills itself, with the reason. Every field must be taken or filled, and
# every parameter must carry a field or be the face's own: a field added to a request and
# forgotten in a face, or a face parameter that reaches no request, fails here.
CLOCK = "the clock: only the library (and tests) set the date"
FACES = {
    "vault": {},  # the library face: exactly the request's fields, same names
    "cli": {
        "ingest": ({"paths": "sources", "no_redact": "redact"}, {"json_out"},
                   {"stdin": "standard input, for `-`", "progress": "a bar on a terminal",
                    "skip_bad_lines": "the Stop hook's: a person's ingest refuses a bad file"}),
        "search": ({"turns": "kind", "notes": "kind"}, {"json_out"},
                   {"sync": "always fresh", "now": CLOCK, "section": "the JSON carries it",
                    "cite": "recall's own filter", "link": "recall's own filter",
                    "snippets": "always shown"}),
        "curate": ({}, {"verbose", "json_out"}, {"today": CLOCK}),
        "remember": ({}, {"json_out"}, {"today": CLOCK}),
        "forget": ({}, {"json_out"}, {}),
        "recall": ({"none": "enabled"}, {"json_out", "explain"},
                   {"now": CLOCK, "session": "the hooks pass it, not a person"}),
    },
    "mcp": {
        "search": ({}, set(), {
            "user": "the server's", "scope": "the server user's scopes",
            "speaker": "not offered", "status": "active only", "since": "not offered",
            "until": "not offered", "sync": "always fresh", "now": CLOCK,
            "section": "not offered", "cite": "not offered", "link": "not offered",
            "snippets": "always shown", "project": "the server's working directory"}),
        "recall": ({}, set(), {
            "user": "the server's", "fmt": "markdown", "history": "current claims only",
            "enabled": "a model that calls recall wants it", "now": CLOCK,
            "project": "the server's working directory", "session": "not known to MCP"}),
        "remember": ({}, set(), {"user": "the server's", "today": CLOCK}),
    },
    "learning": {
        "recall": ({}, set(), {"user": "the machine's"}),
        "remember": ({}, set(), {"user": "the machine's"}),
    },
}


def _face_functions(face: str) -> dict[str, object]:
    import importlib

    from memctl.faces import learning, mcp
    from memctl.vault import Vault

    if face == "vault":
        return {a: getattr(Vault, a) for a in ("ingest", "search", "curate", "remember",
                                               "forget", "recall")}
    if face == "cli":
        where = {"ingest": "ingest", "search": "search", "curate": "curate",
                 "remember": "remember", "forget": "gitcmds", "recall": "recall"}
        return {a: getattr(importlib.import_module(f"memctl.faces.cli.{m}"), a)
                for a, m in where.items()}
    if face == "mcp":
        return {a: getattr(mcp, a) for a in FACES["mcp"]}
    return {a: getattr(learning.LearningMachine, a) for a in FACES["learning"]}


def test_each_face_takes_exactly_the_fields_of_the_request_it_builds() -> None:
    import inspect
    from dataclasses import fields

    from memctl.requests import REQUESTS

    by_action = {r.action: {f.name for f in fields(r)} for r in REQUESTS}
    assert set(by_action) >= {"remember", "forget", "ingest", "curate", "recall", "search"}
    problems = []
    for face in FACES:
        for action, fn in _face_functions(face).items():
            renamed, own, fills = FACES[face].get(action, ({}, set(), {}))
            params = [p for p in inspect.signature(fn).parameters if p not in ("self", "tools")]
            taken = {renamed.get(p, p) for p in params if p not in own}
            want = by_action[action]
            if extra := taken - want:
                problems.append(f"{face} {action}: {sorted(extra)} reach no request field")
            if missing := want - taken - set(fills):
                problems.append(f"{face} {action}: takes no {sorted(missing)}")
            if stale := set(fills) & taken:
                problems.append(f"{face} {action}: says it fills {sorted(stale)}, yet takes it")
    assert problems == []


def test_one_citation_verifier_for_every_writer() -> None:
    """Curation and remember each had their own quote checks once, and they disagreed:
    outside core/provenance.py, a citation is judged only by `verify_citation`."""
    offenders = []
    for rel, tree in _modules():
        if rel == "core/provenance.py":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module == "memctl.core.provenance":
                offenders += [f"{rel}:{node.lineno} imports {a.name}" for a in node.names
                              if a.name in ("verify_quote", "check")]
    assert offenders == []


def test_no_module_imports_a_name_it_does_not_use() -> None:
    """ruff's F401 over every tree we ship or run (an import kept for its side effect says
    so with `# noqa: F401` and a reason, as faces/cli/commands.py does)."""
    import subprocess

    root = PKG.parent
    r = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--select", "F401", "--no-cache",
         "--output-format", "concise", "memctl", "tests", "bench", "examples", "scripts"],
        cwd=root, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert r.returncode == 0, r.stdout + r.stderr


# Used by name from outside the code this test reads: a protocol's method called by the
# standard library (io's readinto, http.server's log_request).
CALLED_FROM_OUTSIDE = {"readinto", "log_request"}


def test_nothing_is_defined_that_nothing_uses() -> None:
    """A function, class or method that no code, test, bench, example or script names is
    dead: it costs every reader time and drifts unseen. Decorated ones are registered (a CLI
    command), and "module:Name" strings count as uses (entry points, the curator registry)."""
    used: set[str] = set()
    for folder in ("memctl", "tests", "bench", "examples", "scripts"):
        for p in (PKG.parent / folder).rglob("*.py"):
            for n in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
                if isinstance(n, ast.Name):
                    used.add(n.id)
                elif isinstance(n, ast.Attribute):
                    used.add(n.attr)
                elif isinstance(n, ast.alias):
                    used.add(n.name.rsplit(".", 1)[-1])
                elif isinstance(n, ast.Constant) and isinstance(n.value, str):
                    used.update(re.findall(r"^[\w.]+:(\w+)$", n.value))
    dead = []
    for rel, tree in _modules():
        for node in tree.body:
            members = node.body if isinstance(node, ast.ClassDef) else []
            for d in [node, *members]:
                if (isinstance(d, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
                        and not d.name.startswith("__") and not d.decorator_list
                        and d.name not in used | CALLED_FROM_OUTSIDE):
                    dead.append(f"{rel}:{d.lineno} {d.name}")
    assert dead == []


# Classes that still share a name with another module's; each is a rename to do, and the
# list only shrinks (two `Claim`s, one a note's line and one a ranked candidate, were one).
SHARED_CLASS_NAMES = {"Extractor", "Hit", "Reader", "Source"}


def test_no_two_modules_define_a_class_of_the_same_name() -> None:
    where: dict[str, list[str]] = {}
    for rel, tree in _modules():
        for node in tree.body:
            if isinstance(node, ast.ClassDef):
                where.setdefault(node.name, []).append(rel)
    shared = {name: rels for name, rels in where.items() if len(rels) > 1}
    assert set(shared) <= SHARED_CLASS_NAMES, shared


_ISSUE = re.compile(r"\b[Ii]ssues? #?\d+")


def test_no_comment_cites_an_issue_number() -> None:
    """A comment says why in words a reader has without the tracker: "(issue N)" tells them
    nothing and goes stale. Comments and docstrings of every Python file we ship or run,
    and the comments of memctl's data files."""
    import io
    import tokenize

    found = []
    for folder in ("memctl", "tests", "bench", "examples", "scripts"):
        for p in sorted((PKG.parent / folder).rglob("*")):
            rel = p.relative_to(PKG.parent).as_posix()
            if p.suffix == ".py":
                text = p.read_text(encoding="utf-8")
                if not _ISSUE.search(text):
                    continue  # every comment and docstring is a piece of the text
                docs = [n.body[0].value for n in ast.walk(ast.parse(text))
                        if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef)
                        and n.body and isinstance(n.body[0], ast.Expr)
                        and isinstance(n.body[0].value, ast.Constant)]  # fmt: skip
                found += [f"{rel}:{d.lineno} docstring" for d in docs
                          if isinstance(d.value, str) and _ISSUE.search(d.value)]
                found += [f"{rel}:{t.start[0]} comment"
                          for t in tokenize.generate_tokens(io.StringIO(text).readline)
                          if t.type == tokenize.COMMENT and _ISSUE.search(t.string)]
            elif p.suffix == ".toml" and folder == "memctl":
                found += [f"{rel}:{n} comment" for n, line in
                          enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                          if line.lstrip().startswith("#") and _ISSUE.search(line)]
    assert found == []
