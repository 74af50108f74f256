"""`memctl watch`: keep the index in step with hand edits, and ingest transcripts as they grow."""

from __future__ import annotations

import signal
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from memctl.faces.cli.common import open_vault
from memctl.faces.cli.render import emit_json, n, out
from memctl.faces.cli.root import app

if TYPE_CHECKING:
    from memctl.faces.watch import VaultWatcher


@app.command()
def watch(
    ingest: Annotated[
        list[Path] | None,
        typer.Option(
            "--ingest",
            help="Also ingest transcripts written under this folder "
            "(e.g. ~/.claude/projects). Repeatable.",
        ),
    ] = None,
    user: Annotated[str | None, typer.Option(help="User for ingested sessions.")] = None,
    scope: Annotated[str | None, typer.Option(help="Scope for ingested sessions.")] = None,
    debounce: Annotated[float, typer.Option(help="Seconds of quiet before acting.")] = 0.5,
    json_out: Annotated[bool, typer.Option("--json", help="One JSON object per event.")] = False,
    no_catch_up: Annotated[
        bool,
        typer.Option(
            "--no-catch-up",
            help="Do not first ingest the transcripts already in the --ingest folders.",
        ),
    ] = False,
) -> None:
    """Watch the vault (and optional transcript folders) until Ctrl-C; transcripts already in
    the folders are ingested first (turns the vault has are skipped), with a progress bar."""
    from memctl.faces.watch import VaultWatcher

    vault = open_vault(one_shot=False)
    for d in ingest or []:
        if not d.is_dir():
            from memctl.errors import InputError

            raise InputError("not a folder", d)
    watcher = VaultWatcher(vault, list(ingest or []), user=user, scope=scope, debounce=debounce)

    def report(ev: object) -> None:
        data = vars(ev)
        if json_out:
            emit_json("watch", {"event": "change", **data}, line=True)
        else:
            if data["error"]:  # what else went in is said below it
                sys.stderr.write(f"memctl watch: {data['error']}\n")
            if data["ingested"]:
                sessions = n(len(data["ingested"]), "session")
                out(f"ingested {sessions} (+{n(data['turns_added'], 'turn')})")
            if data["reindexed"]:
                out(
                    f"reindexed {', '.join(data['reindexed'][:5])}"
                    + (
                        f" and {len(data['reindexed']) - 5} more"
                        if len(data["reindexed"]) > 5
                        else ""
                    )
                )
        sys.stdout.flush()

    def ready() -> None:
        # Said once the observers are running, so a script knows when edits will be seen.
        if json_out:
            roots = [str(vault.root), *map(str, ingest or [])]
            emit_json("watch", {"event": "ready", "watching": roots}, line=True)
        else:
            extra = "".join(f" and {d}" for d in ingest or [])
            out(f"watching {vault.root}{extra} (Ctrl-C stops)")
        sys.stdout.flush()

    _stop_on_signals(watcher)
    try:
        if no_catch_up or not ingest:
            watcher.run(report, on_ready=ready)
        elif json_out:
            watcher.run(report, on_ready=ready, catch_up=True)
        else:
            with _Progress() as bar:
                watcher.run(report, on_ready=ready, catch_up=bar)
    except KeyboardInterrupt:
        watcher.stop()
    if json_out:
        emit_json("watch", {"event": "stopped"}, line=True)
    else:
        out("stopped")


def _stop_on_signals(watcher: VaultWatcher) -> None:
    """SIGTERM (`kill`, `systemctl stop`) and Ctrl-C end the watcher after the step in hand,
    so an index commit is never cut off from its manifest; a second signal interrupts at
    once. Ctrl-C is left alone where it was ignored (a job started in the background)."""

    def ask(signum: int, frame: object) -> None:
        if watcher.stopping:
            raise KeyboardInterrupt
        watcher.ask_stop()

    signal.signal(signal.SIGTERM, ask)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
        signal.signal(signal.SIGINT, ask)


class _Progress:
    """A rich progress bar on stderr for the catch-up: `bar(done, total)`."""

    def __enter__(self) -> _Progress:
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        self.progress = Progress(
            TextColumn("catching up on transcripts"), BarColumn(), MofNCompleteColumn(),
            console=Console(stderr=True), transient=True,
        )  # fmt: skip
        self.task = self.progress.add_task("catch-up", total=None)
        self.started = False
        return self

    def __call__(self, done: int, total: int) -> None:
        if not self.started:
            self.progress.start()
            self.started = True
        self.progress.update(self.task, completed=done, total=total)
        if done >= total:
            self.progress.stop()

    def __exit__(self, *exc: object) -> None:
        if self.started:
            self.progress.stop()
