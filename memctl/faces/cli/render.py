"""Rendering at the edge: rich when a person is watching, plain text when piped, JSON on request."""

from __future__ import annotations

import json
import sys
from typing import Any

from memctl.results import envelope


def is_tty() -> bool:
    return sys.stdout.isatty()


def console(stderr: bool = False) -> Any:
    """A rich Console; colour only on a terminal so pipes get plain, stable text."""
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def emit_json(command: str, payload: dict[str, Any], line: bool = False) -> None:
    """The versioned JSON envelope on stdout (docs/json.md): one object, newline-terminated;
    `line` keeps it on one line, for commands that stream one object per event."""
    doc = envelope(command, payload)
    text = json.dumps(doc, ensure_ascii=False, indent=None if line else 2)
    sys.stdout.write(text + "\n")


def n(count: int, word: str, many: str | None = None) -> str:
    """`1 session`, `2 sessions`: a count with its noun agreeing."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


def out(text: str = "") -> None:
    sys.stdout.write(text + "\n")


def table(title: str | None, columns: list[str], rows: list[list[str]]) -> None:
    """A rich table on a terminal, tab-separated plain rows when piped."""
    if not is_tty():
        for r in rows:
            out("\t".join(r))
        return
    from rich.table import Table

    t = Table(title=title, show_lines=False)
    for c in columns:
        t.add_column(c)
    for r in rows:
        t.add_row(*r)
    console().print(t)
