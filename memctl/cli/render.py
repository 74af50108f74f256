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


def emit_json(command: str, payload: dict[str, Any]) -> None:
    """Versioned JSON envelope on stdout, one object, newline-terminated."""
    sys.stdout.write(json.dumps(envelope(command, payload), ensure_ascii=False, indent=2) + "\n")


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
