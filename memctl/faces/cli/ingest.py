"""`memctl init`, `memctl ingest`, `memctl export`: getting transcripts in and back out."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from memctl.faces.cli.common import open_vault
from memctl.faces.cli.options import JsonFlag
from memctl.faces.cli.render import emit_json, is_tty, n, out
from memctl.faces.cli.root import app
from memctl.requests import IngestRequest

# the writers' own words, without importing them: help must not load the formats
WRITE_HELP = (
    "jsonl (default: every key, byte for byte), openai, claude_code or text; "
    "chatgpt is read, not written."
)


@app.command()
def init(
    path: Annotated[
        str | None,
        typer.Argument(help="Folder to make a vault (default: --vault, $MEMCTL_VAULT, else .)."),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Also make a home folder, or one that is mostly not notes, a vault."
        ),
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """Create a vault, or adopt a folder of notes: config, stores, INDEX.md, git, first commit.

    Only markdown notes are adopted; every other file is left alone (listed, never staged),
    tool and dependency folders (node_modules, .venv, .obsidian, .git of another repository)
    are not walked and are git-ignored, as are secrets files (.env, keys). A vault copied without
    its .git is adopted whole. A folder that is mostly not notes is refused unless --force.
    """
    from memctl.faces.cli.common import state
    from memctl.vault import Vault

    env = dict(os.environ)
    target = path or state.vault_path or env.get("MEMCTL_VAULT") or "."
    _, res = Vault.init(target, env=env, force=force)
    if json_out:
        emit_json("init", res.to_json())
        return
    if res.created:
        out(f"created vault {res.root}")
    elif res.commit:
        out(f"made a git repository of the vault files in {res.root}")
    else:
        out(f"already a vault: {res.root} (merge drivers registered, search index ready)")
    # each choice init made, with its reason, one line each
    if res.adopted:
        noun = "existing note" if res.created else "existing file"
        out(f"adopted {n(len(res.adopted), noun)} (markdown notes"
            + (", sessions and memctl's own files" if not res.created else "") + ")")
    for rel, why in res.skipped.items():
        ignored = "" if rel.rstrip("/").rsplit("/", 1)[-1] == ".git" else ", git-ignored"
        out(f"left alone {rel} ({why}; not walked{ignored})")
    for rel in res.ignored:
        out(f"git-ignored {rel} (it may hold secrets; never committed)")
    if res.left_alone:
        k = len(res.left_alone)
        out(f"left alone {n(k, 'file')} that are not notes (not committed):")
        for rel in res.left_alone[:10]:
            out(f"  {rel}")
        if k > 10:
            out(f"  … and {k - 10} more")
    if res.joined:
        out(f"joined the vault on the remote's branch {res.joined}")
    if res.config_waiting:
        out("the cloned config sets what protects your data; NOT in force until you accept it:")
        for line in res.config_waiting:
            out(f"  {line}")
        out("review .memctl/config.toml, then `memctl sync --accept-config`")
    if res.commit:
        out(f"commit {res.commit[:10]}")


@app.command()
def ingest(
    paths: Annotated[list[str], typer.Argument(help="Transcript files or folders; - reads stdin.")],
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format", help="jsonl, openai, claude_code, chatgpt or text (default: detect)."
        ),
    ] = None,
    user: Annotated[str | None, typer.Option(help="Whose sessions these are.")] = None,
    scope: Annotated[str | None, typer.Option(help="user:NAME, team or global.")] = None,
    session: Annotated[str | None, typer.Option(help="Session id for a single transcript.")] = None,
    no_redact: Annotated[
        bool, typer.Option("--no-redact", help="Keep secrets as they are (not recommended).")
    ] = False,
    json_out: Annotated[bool, typer.Option("--json", help="Machine-readable summary.")] = False,
) -> None:
    """Store transcripts verbatim as raw sessions (idempotent; longer versions append)."""
    vault = open_vault()
    progress = None
    bar = None
    if is_tty() and not json_out and sum(1 for p in paths if p != "-") > 0:
        from rich.progress import Progress

        bar = Progress(transient=True)
        task = bar.add_task("ingest", total=None)
        bar.start()

        def progress(done: int, total: int, label: str) -> None:
            bar.update(task, completed=done, total=total, description=Path(label).name or "ingest")

    try:
        res = vault.handle(IngestRequest(
            sources=list(paths),
            fmt=fmt,
            user=user,
            scope=scope,
            session=session,
            redact=False if no_redact else None,
            stdin=sys.stdin.buffer,
            progress=progress,
        ))
    finally:
        if bar is not None:
            bar.stop()
    for f in res.skipped:
        sys.stderr.write(f"memctl: skipped {f} (not a transcript)\n")
    for f in res.failed:
        sys.stderr.write(f"memctl: error: {f}\n")
    for notice in res.notices:
        sys.stderr.write(f"memctl: warning: {notice}\n")
    if json_out:
        emit_json("ingest", res.to_json())
    else:
        for s in res.sessions:
            if s.action != "unchanged":
                red = f", {s.redactions} redacted" if s.redactions else ""
                who = {"transcript": f" · user {s.user} (named in the transcript)",
                       "login": f" · user {s.user} (your login name: no speaker named; use --user)",
                       }.get(s.user_from, "")  # fmt: skip
                out(f"{s.action:9} {s.path}  (+{n(s.turns_added, 'turn')}{red}){who}")
        if res.commit:
            out(
                f"ingest: {n(len(res.changed), 'session')}, {n(res.turns_added, 'turn')}"
                f" · commit {res.commit[:10]}"
            )
        elif res.sessions or not res.failed:
            out(f"nothing new: {n(len(res.sessions), 'session')} already ingested")
    if res.failed:
        # the good files are in (and committed); the bad ones are named above
        raise typer.Exit(min(f.exit_code for f in res.failed))


@app.command()
def export(
    session: Annotated[str, typer.Argument(help="Session id or raw/... path.")],
    fmt: Annotated[str, typer.Option("--format", help=WRITE_HELP)] = "jsonl",
) -> None:
    """Write a session's messages back out exactly as they were ingested.

    What export writes, ingest reads back as the same messages.
    """
    vault = open_vault()
    write = sys.stdout.write
    for line in vault.export(session, fmt):
        write(line + "\n")
