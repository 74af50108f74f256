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
