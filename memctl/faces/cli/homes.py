"""Which module registers each command, so that a command line imports only its own.

Importing every command module costs each run of memctl a few milliseconds it does not
need; `memctl --help`, a mistyped command and the docs still load them all (commands.py,
whose order is the order of `--help`). test_cli_help checks this table against what the
modules register, so a new command cannot be forgotten here.
"""

from __future__ import annotations

HOMES = {
    "init": "ingest", "ingest": "ingest", "export": "ingest",
    "log": "read", "show": "read", "status": "read",
    "search": "search", "reindex": "search",
    "watch": "watch",
    "view": "view",
    "curate": "curate", "review": "curate", "diff": "curate", "verify": "curate",
    "remember": "remember",
    "recall": "recall", "context": "recall", "mcp": "recall", "hooks": "recall", "hook": "recall",
    "doctor": "doctor", "serve": "serve",
    "forget": "gitcmds", "undo": "gitcmds", "rollback": "gitcmds", "sync": "gitcmds",
    "gc": "gitcmds", "blame": "gitcmds", "drift": "gitcmds",
}  # fmt: skip


def load(name: str | None) -> None:
    """Register the command `name` on the app, or every command when `name` is None or
    unknown (`--help`, no command, a typo click should name)."""
    import importlib

    home = HOMES.get(name or "")
    importlib.import_module(f"memctl.faces.cli.{home}" if home else "memctl.faces.cli.commands")
