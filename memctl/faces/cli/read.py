"""`memctl log`, `memctl show`, `memctl status`: reading the vault back."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from memctl.faces.cli.common import open_vault
from memctl.faces.cli.options import JsonFlag
from memctl.faces.cli.render import emit_json, n, out, table
from memctl.faces.cli.root import app


@app.command()
def log(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many commits.")] = 20,
    json_out: JsonFlag = False,
) -> None:
    """Memory commits, newest first."""
    commits = open_vault().log(limit)
    if json_out:
        emit_json("log", {"commits": [asdict(c) for c in commits]})
        return
    rows = [[c.sha[:10], c.date[:16].replace("T", " "), c.author, c.subject] for c in commits]
    table("memory log", ["commit", "date", "author", "subject"], rows)


@app.command()
def show(
    ref: Annotated[str, typer.Argument(
            help="A note (path or id), a session (id, prefix, or the 64628a digest recall "
            "prints), or one turn: 64628a#t3 as recall cites it, or raw/...md#t3."
        )],
    json_out: JsonFlag = False,
) -> None:
    """Print a note, a whole session, or one turn."""
    res = open_vault().show(ref)
    if json_out:
        emit_json("show", res.to_json())
        return
    if res.kind == "turn":
        m = res.meta
        out(
            f"{res.ref} · {m.get('name') or m.get('role')} · {m.get('timestamp') or ''}".rstrip(
                " ·"
            )
        )
        out()
    out(res.text.rstrip("\n"))


@app.command()
def status(
    json_out: JsonFlag = False,
) -> None:
    """Counts per store and per user, and what is not committed yet."""
    from memctl.faces.hooks.handlers import LOG_REL, log_lines

    res = open_vault().status()
    failed = log_lines(Path(res.root), failures=True)
    if json_out:
        emit_json("status", {**res.to_json(), "hook_failures": failed[-20:]})
        return
    out(f"vault   {res.root}")
    out(f"head    {res.head[:10] if res.head else '(no commits)'}")
    out(f"raw     {n(res.sessions, 'session')}, {n(res.turns, 'turn')}")
    for u, c in res.users.items():
        out(f"  user {u}: {n(c['sessions'], 'session')}, {n(c['turns'], 'turn')}")
    out("stores  " + ", ".join(f"{k} {v}" for k, v in res.stores.items()))
    if failed:
        # a hook must never block the agent, so its failures wait here to be seen
        out(f"hooks   {n(len(failed), 'failed run')} in {LOG_REL}; last: {failed[-1]}")
        out("        (memctl hooks log --failures shows them)")
    if res.uncommitted:
        out(f"uncommitted ({len(res.uncommitted)}):")
        for line in res.uncommitted[:50]:
            out(f"  {line}")
    else:
        out("clean   everything is committed")
