"""Layering rules from STYLE.md, enforced by reading the imports of every module."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "memctl"

# Each outside library has exactly one home (a module or a package folder).
HOMES = {
    "tantivy": ("index.py",),
    "git": ("history.py",),
    "litellm": ("curate/llm.py",),
    "watchdog": ("watch.py",),
    "mcp": ("mcp.py",),
    "typer": ("cli/",),
}
FRONT_ENDS = ("cli/", "hooks/", "mcp.py", "watch.py", "__main__.py")


def _modules() -> list[tuple[str, ast.Module]]:
    return [
        (p.relative_to(PKG).as_posix(), ast.parse(p.read_text(encoding="utf-8")))
        for p in sorted(PKG.rglob("*.py"))
    ]


def _imports(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


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
            if name.split(".")[0] in ("typer", "rich") or name.startswith("memctl.cli"):
                offenders.append(f"{rel} imports {name}")
    assert offenders == []


def test_library_never_prints() -> None:
    offenders = []
    for rel, tree in _modules():
        if rel.startswith(FRONT_ENDS) or rel == "__main__.py":
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
        if rel in ("store.py",) or rel.startswith(FRONT_ENDS):
            continue
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in writers
            ):
                offenders.append(f"{rel}:{node.lineno} calls .{node.func.attr}()")
    assert offenders == []


def _dependency_graph() -> dict[str, set[str]]:
    """module -> library modules it imports, lazy imports included, TYPE_CHECKING ones not.

    `from memctl import tokens` depends on memctl.tokens, not on the package facade.
    """
    names = {}
    for p in sorted(PKG.rglob("*.py")):
        parts = ("memctl", *p.relative_to(PKG).with_suffix("").parts)
        names[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    graph: dict[str, set[str]] = {}
    for mod, path in names.items():
        deps: set[str] = set()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        typing_only = {
            id(n)
            for node in ast.walk(tree)
            if isinstance(node, ast.If) and getattr(node.test, "id", "") == "TYPE_CHECKING"
            for n in ast.walk(node)
        }
        for node in ast.walk(tree):
            if id(node) in typing_only:
                continue
            if isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name in names)
            elif isinstance(node, ast.ImportFrom) and node.module in names and node.level == 0:
                subs = {f"{node.module}.{a.name}" for a in node.names} & set(names)
                deps |= subs
                if len(subs) < len(node.names):
                    deps.add(node.module)
        graph[mod] = deps - {mod}
    return graph


def test_library_modules_import_each_other_in_one_direction() -> None:
    # Lazy imports count too: a reader follows a call from the facade downwards and never
    # meets the facade again (memctl.cli, a front end of its own, is not part of the library).
    graph = {m: d for m, d in _dependency_graph().items() if not m.startswith("memctl.cli")}
    cycles: list[list[str]] = []

    def walk(node: str, path: list[str], seen: set[str]) -> None:
        for dep in sorted(graph.get(node, ())):
            if dep in path:
                cycles.append([*path[path.index(dep) :], dep])
            elif dep not in seen:
                seen.add(dep)
                walk(dep, [*path, dep], seen)

    for start in sorted(graph):
        walk(start, [start], {start})
    assert not cycles, cycles[:5]
