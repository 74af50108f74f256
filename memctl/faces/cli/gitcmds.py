"""`memctl forget`, `undo`, `rollback`, `gc`, `blame`, `drift`, `sync`: git as conscience."""

from __future__ import annotations

from typing import Annotated

import typer

from memctl.faces.cli.common import open_vault
from memctl.faces.cli.options import JsonFlag
from memctl.faces.cli.render import emit_json, n, out
from memctl.faces.cli.root import app
from memctl.requests import ForgetRequest


@app.command()
def forget(
    ref: Annotated[
        str | None,
        typer.Argument(
            help="A turn (raw/...md#t3, SESSION#t3), a session, a note, a claim (NOTE#L12 or "
            "its words), or an entity (entity:NAME)."
        ),
    ] = None,
    user: Annotated[
        str | None, typer.Option("--user", help="Forget everything of this memctl user.")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the cascade; write nothing.")
    ] = False,
    purge: Annotated[
        bool,
        typer.Option("--purge", help="Also erase it from every commit (git-filter-repo)."),
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """Remove what REF names and everything learned only from it; one commit."""
    if (ref is None) == (user is None):
        from memctl.errors import InputError

        raise InputError("give exactly one of REF or --user USER")
    res = open_vault().handle(ForgetRequest(ref=ref, user=user, dry_run=dry_run, purge=purge))
    if json_out:
        emit_json("forget", res.to_json())
        return
    out(f"forget {res.ref} ({res.kind})")
    for p in res.sessions_deleted:
        out(f"  delete session  {p}")
    for p in res.turns_forgotten:
        out(f"  forget turn     {p}  (its words become [forgotten]; turn numbers stay)")
    for a, b in res.sessions_renamed.items():
        out(f"  rename session  {a} -> {b}  (its title came from a forgotten turn)")
    for c in res.claims_removed:
        out(f"  remove claim    {c['note']}: {c['text']}")
    for c in res.citations_removed:
        out(f"  drop citation   {c['note']}: {c['text']}  (loses {c['ref']})")
    for p in res.notes_deleted:
        out(f"  delete note     {p}  (no claims left)")
    for p in res.notes_changed:
        out(f"  rewrite note    {p}")
    if res.index_files:
        out(f"  regenerate      {', '.join(res.index_files)}")
    if res.empty:
        out("nothing to forget")
    elif res.dry_run:
        out("dry run: nothing was written")
    elif res.commit:
        out(f"commit {res.commit[:10]}")
    if res.purged:
        out("purge: " + res.purge_notes[0])
        for line in res.purge_notes[1:]:
            out(line)


@app.command()
def undo(
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would be undone; write nothing.")
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """Revert the last memctl command (not undone yet) as a new commit; repeat to go further."""
    res = open_vault().undo(dry_run=dry_run)
    if json_out:
        emit_json("undo", res.to_json())
        return
    out(f"undo {res.undone[:10] if res.undone else ''} {res.subject}")
    for f in res.files:
        out(f"  {f}")
    for c in res.claims_removed:
        out(f"  claim removed (curation will not learn it again): {c}")
    for c in res.claims_restored:
        out(f"  claim restored: {c}")
    if dry_run:
        out("dry run: nothing was written")
    elif res.commit:
        out(f"commit {res.commit[:10]}")


@app.command()
def rollback(
    note: Annotated[str, typer.Argument(help="A note path or id.")],
    to: Annotated[str, typer.Option("--to", help="The revision to restore it from.")],
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would change; write nothing.")
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """Restore one note as it was at REV, as a new commit (history is not rewritten)."""
    res = open_vault().rollback(note, to, dry_run=dry_run)
    if json_out:
        emit_json("rollback", res.to_json())
        return
    out(res.subject)
    for c in res.claims_removed:
        out(f"  claim removed (curation will not learn it again): {c}")
    for c in res.claims_restored:
        out(f"  claim restored: {c}")
    if dry_run:
        out("dry run: nothing was written")
    elif res.commit:
        out(f"commit {res.commit[:10]}")
    else:
        out("nothing to do: the note already reads like that")


@app.command()
def sync(
    remote: Annotated[str | None, typer.Argument(help="Remote name (default: upstream).")] = None,
    accept_config: Annotated[
        bool,
        typer.Option("--accept-config", help="Take the protected settings a pull changed "
                     "(redaction, curator, model, api_base, hooks, retention, store "
                     "templates)."),
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """Pull (rebase), re-index what changed, push: share a vault. Never force-pushes."""
    res = open_vault().sync(remote, accept_config=accept_config)
    if json_out:
        emit_json("sync", res.to_json())
        return
    for line in res.config_accepted:
        out(f"  accepted config: {line}")
    out(f"sync {res.remote}/{res.branch}")
    for line in res.reported:
        out(f"  note: {line}")
    if res.config_waiting:
        out("  config: a pull changed settings that protect your data (or the templates and "
            "instructions named); they are NOT in force until you accept them:")
        for line in res.config_waiting:
            out(f"    {line}")
        out("  review them (.memctl/config.toml, the files named), then `memctl sync "
            "--accept-config` (or pin a setting in .memctl/config.local.toml)")
    out(f"  pulled {res.pulled} commits, replayed {res.replayed} local commits on top")
    for p in res.proposals:
        out(f"  conflict: {p} (the same claim changed two ways; `memctl review`)")
    for p in res.sessions_kept_apart:
        out(f"  kept apart: {p} (a session whose turns differ between clones)")
    if res.index_files:
        out(f"  regenerated {', '.join(res.index_files)}")
    out(f"  re-indexed {res.reindexed} files")
    out(f"  pushed {res.pushed} commits" if res.pushed else "  nothing to push")
    out(f"head {res.head[:10]}")


@app.command()
def gc(
    apply: Annotated[
        bool, typer.Option("--apply", help="Do it (the default is a dry run).")
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """Apply retention policies from config ([retention], stores' ttl); dry run by default."""
    res = open_vault().gc(apply=apply)
    if json_out:
        emit_json("gc", res.to_json())
        return
    for p in res.expired_sessions:
        out(f"  past retention  {p}")
    for p in res.expired_notes:
        out(f"  past its TTL    {p}")
    for p in res.kept_pinned:
        out(f"  kept (pinned)   {p}")
    c = res.cascade
    if c:
        out(f"  cascade: {len(c['claims_removed'])} claims removed, "
            f"{len(c['citations_removed'])} citations dropped, "
            f"{len(c['notes_deleted'])} notes deleted")  # fmt: skip
    if not res.expired_sessions and not res.expired_notes:
        out("gc: nothing is past its retention")
    elif res.dry_run:
        out("dry run: nothing was written (memctl gc --apply does it)")
    elif res.commit:
        out(f"commit {res.commit[:10]}")


@app.command()
def blame(
    note: Annotated[str, typer.Argument(help="A note path or id.")],
    json_out: JsonFlag = False,
) -> None:
    """Each claim with the commit, command, curator, model and author that last wrote it."""
    from dataclasses import asdict

    lines = open_vault().blame(note)
    if json_out:
        emit_json("blame", {"note": note, "lines": [asdict(x) for x in lines]})
        return
    for x in lines:
        who = "human" if x.human else f"{x.curator}/{x.model}"
        out(f"L{x.line:<4} {x.commit[:10]} {x.date} {x.command:<8} {who:<16} {x.author}")
        out(f"      {x.text}")


@app.command()
def drift(
    note: Annotated[str | None, typer.Argument(help="One note (default: every note).")] = None,
    json_out: JsonFlag = False,
) -> None:
    """Claims whose wording moved from their quotes, claims that lost sources, churned notes."""
    res = open_vault().drift(note)
    if json_out:
        emit_json("drift", res.to_json())
        return
    for i in res.items:
        out(f"{i.kind:<9} {i.note}: {i.detail}")
        if i.claim:
            out(f"          - {i.claim}")
    out(f"drift: {n(len(res.items), 'finding')} in {n(res.notes, 'note')}")
