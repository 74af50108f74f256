"""`memctl serve`: the vault's resident process for hooks and read commands (and the viewer)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from memctl.faces.cli.common import open_vault
from memctl.faces.cli.render import is_tty, out
from memctl.faces.cli.root import app


@app.command()
def serve(
    idle: Annotated[
        float, typer.Option("--idle", metavar="SECONDS", help="Stop after this long unasked.")
    ] = 900.0,
    max_memory: Annotated[
        int,
        typer.Option("--max-memory", metavar="MB", help="Stop when resident memory passes this."),
    ] = 1024,
    http: Annotated[
        str | None,
        typer.Option(
            "--http", metavar="HOST_PORT",
            help="Also serve the browser viewer here (e.g. 127.0.0.1:8377); no port otherwise.",
        ),
    ] = None,
    writable: Annotated[
        bool, typer.Option("--writable", help="Let the viewer accept and reject proposals.")
    ] = False,
    stop: Annotated[bool, typer.Option("--stop", help="Stop the vault's service.")] = False,
    status: Annotated[bool, typer.Option("--status", help="Say whether one runs.")] = False,
) -> None:
    """Keep one memctl resident for this vault: hooks and search/recall/context answer over a
    Unix socket without starting Python. Hooks start it on demand; it stops when idle."""
    from memctl.faces.hooks.handlers import log
    from memctl.faces.serve import server

    vault = open_vault(one_shot=False)
    root = vault.root
    if stop or status:
        info = server.status(root)
        if stop and info is not None:
            server.stop(root)
        verb = ("stopped" if stop else "running") if info else "not running"
        out(f"memctl serve for {root}: {verb}" + (f" (pid {info['pid']})" if info else ""))
        return
    options = server.Options(
        idle=idle,
        max_memory=max_memory << 20,
        http=server.parse_http(http) if http else None,
        writable=writable,
    )
    loud = is_tty()

    def note(line: str) -> None:
        log(root, "serve", line)
        if loud:
            sys.stderr.write(f"memctl serve: {line}\n")

    def ready(service: server.Service) -> None:
        # said once the socket listens, so a script knows when requests will be answered
        out(f"serving {root} on {service.sock_path} (Ctrl-C stops)")
        sys.stdout.flush()

    why = server.serve(root, options, note, ready)
    if not why and loud:
        sys.stderr.write(f"memctl serve: already running for {root}\n")
