"""`memctl remember`: one claim into memory from the agent running a session (agentic mode)."""

from __future__ import annotations

from typing import Annotated

import typer

from memctl.faces.cli.common import open_vault
from memctl.faces.cli.options import JsonFlag
from memctl.faces.cli.render import emit_json, out
from memctl.faces.cli.root import app
from memctl.requests import RememberRequest


@app.command()
def remember(
    claim: Annotated[str, typer.Argument(help="The fact, one sentence, in the third person.")],
    quote: Annotated[
        str | None,
        typer.Option("--quote", help="The person's words that say it, copied exactly."),
    ] = None,
    source: Annotated[
        str | None,
        typer.Option(
            "--source",
            help="Where it was said: a turn (64628a#t3), a session id (memctl finds the "
            "person's message that holds --quote), or a note it builds on.",
        ),
    ] = None,
    store: Annotated[str, typer.Option("--store", help="The store to write to.")] = "knowledge",
    note: Annotated[
        str | None, typer.Option("--note", help="Note title (default: your remembered facts).")
    ] = None,
    section: Annotated[
        str | None, typer.Option("--section", help="Section of the note (default: Facts).")
    ] = None,
    scope: Annotated[
        str, typer.Option("--scope", help="user (private, the default), team or global.")
    ] = "user",
    own: Annotated[
        bool, typer.Option("--own", help="The agent's own conclusion: no source, marked #agent.")
    ] = False,
    replaces: Annotated[
        str | None,
        typer.Option("--replaces", help="A claim of the same note this one supersedes."),
    ] = None,
    user: Annotated[
        str | None, typer.Option(
            "--user", "--as", help="For this memctl user (default: the vault's user).",
            metavar="USER",
        )
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    """Keep one claim, its quote verified against the raw turn; one commit by the agent."""
    vault = open_vault()
    res = vault.handle(RememberRequest(
        user=(user or vault.default_user()).strip(),
        claim=claim,
        source=source,
        quote=quote,
        store=store,
        note=note,
        section=section,
        scope=scope,
        own=own,
        replaces=replaces,
    ))
    if json_out:
        emit_json("remember", res.to_json())
        return
    cites = ", ".join(c["ref"] for c in res.citations) or "no citation"
    out(f"remember: {res.action} · {res.path} · {res.basis} · {cites}")
    out(f"  {res.text}")
    if res.notice:
        out(f"  note: {res.notice}")
    if res.commit:
        out(f"commit {res.commit[:10]}")
