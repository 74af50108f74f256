"""`memctl search` and `memctl reindex`: finding where something was said or learned."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from memctl.faces.cli.common import open_vault
from memctl.faces.cli.options import JsonFlag
from memctl.faces.cli.render import emit_json, n
from memctl.faces.cli.root import app
from memctl.requests import SearchRequest

if TYPE_CHECKING:
    from memctl.index.search import Hit, SearchResult

_MULTI = "Repeat or comma-separate for several."


@app.command()
def search(
    query: Annotated[
        list[str] | None,
        typer.Argument(
            help='Words to look for; "quoted words" must appear as a phrase, unless other'
            " words are given too: then the turns that have the phrase rank first.",
        ),
    ] = None,
    store: Annotated[
        list[str] | None,
        typer.Option("--store", metavar="STORE", help=f"Only notes of this store. {_MULTI}"),
    ] = None,
    user: Annotated[
        list[str] | None,
        typer.Option("--user", metavar="USER", help=f"Only this user's turns and notes. {_MULTI}"),
    ] = None,
    scope: Annotated[
        list[str] | None,
        typer.Option("--scope", metavar="SCOPE", help=f"user:NAME, team or global. {_MULTI}"),
    ] = None,
    speaker: Annotated[
        list[str] | None,
        typer.Option("--speaker", metavar="NAME", help=f"Only turns by this speaker. {_MULTI}"),
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(
            "--since", metavar="WHEN", help="From this date, or this long ago: 2026-09-01, 10m, 7d."
        ),
    ] = None,
    until: Annotated[
        str | None,
        typer.Option("--until", metavar="WHEN", help="Up to this date (a bare date includes it)."),
    ] = None,
    status: Annotated[
        list[str] | None,
        typer.Option(
            "--status",
            metavar="STATUS",
            help="Note status: active (default), proposed, superseded, retracted, or all.",
        ),
    ] = None,
    turns: Annotated[bool, typer.Option("--turns", help="Only raw turns.")] = False,
    notes: Annotated[bool, typer.Option("--notes", help="Only notes.")] = False,
    limit: Annotated[int, typer.Option("--limit", "-n", metavar="N", help="How many hits.")] = 10,
    project: Annotated[
        str | None,
        typer.Option(
            "--project", metavar="PROJECT",
            help="Only this project's notes and the turns of its sessions: a directory, or a "
            "project note's name.",
        ),
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    """Ranked search over every turn and note (BM25, phrases in quotes, filters)."""
    kind = None if turns == notes else ("turn" if turns else "note")
    res = open_vault().handle(SearchRequest(
        query=" ".join(query or []),
        kind=kind,
        store=store,
        user=user,
        scope=scope,
        speaker=speaker,
        status=status or "active",
        since=since,
        until=until,
        limit=limit,
        project=project,
    ))
    for notice in res.notices:
        sys.stderr.write(f"memctl: {notice}\n")
    if json_out:
        emit_json("search", res.to_json())
    elif not res.hits:
        # on stderr, so a pipe still gets nothing but hits
        what = f"for {' '.join(query)!r}" if query else "for these filters"
        sys.stderr.write(f"memctl: no matches {what}\n")
    elif sys.stdout.isatty():
        _rich(res)
    else:
        _plain(res)


def _when(h: Hit) -> str:
    ts = h.timestamp or ""
    return ts[:16].replace("T", " ")


def _who(h: Hit) -> str:
    if h.kind == "turn":
        return h.speaker or ""
    extra = f" ({h.status})" if h.status and h.status != "active" else ""
    return f"{h.store or 'note'}{extra}"


def _plain(res: SearchResult) -> None:
    """One hit per line, tab-separated: ref, date, speaker or store, snippet."""
    out = sys.stdout.write
    for h in res.hits:
        out(f"{h.ref}\t{_when(h)}\t{_who(h)}\t{h.snippet}\n")


def _rich(res: SearchResult) -> None:
    from rich.console import Console
    from rich.text import Text

    console = Console(highlight=False, soft_wrap=False)
    for i, h in enumerate(res.hits, 1):
        head = Text()
        head.append(f"{i:>2}. ", style="dim")
        head.append(h.ref, style="bold cyan")
        meta = " · ".join(x for x in (_when(h), _who(h), h.title if h.kind == "note" else "") if x)
        if meta:
            head.append(f"  {meta}", style="dim")
        console.print(head)
        body = Text("    " + h.snippet)
        for start, end in h.highlights:
            body.stylize("bold yellow", start + 4, end + 4)
        console.print(body)


@app.command()
def reindex(
    json_out: JsonFlag = False,
) -> None:
    """Rebuild the search index from the files (it is never needed for correctness)."""
    res = open_vault().reindex()
    if json_out:
        emit_json("reindex", res.to_json())
        return
    for s in res.skipped:
        sys.stderr.write(f"memctl: not searchable: {s}\n")
    sys.stdout.write(
        f"reindexed {n(res.files, 'file')}: {n(res.turns, 'turn')}, {n(res.notes, 'note')} "
        f"in {res.seconds:.2f}s ({res.index_bytes / 1e6:.1f} MB)\n"
    )
