"""`memctl view`: the viewer in a browser, served from this machine until Ctrl-C."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from memctl.faces.cli.common import open_vault
from memctl.faces.cli.render import out
from memctl.faces.cli.root import app


@app.command()
def view(
    port: Annotated[
        int, typer.Option("--port", min=0, max=65535, help="Port on 127.0.0.1 (0: a free one).")
    ] = 0,
    no_open: Annotated[
        bool, typer.Option("--no-open", help="Print the address; open no browser.")
    ] = False,
    writable: Annotated[
        bool, typer.Option("--writable", help="Allow accept and reject of proposals.")
    ] = False,
) -> None:
    """Browse what memctl learned: sessions, claims and quotes, review, diff, search."""
    from memctl.faces.viewer import serve_http

    vault = open_vault(one_shot=False)

    def ready(url: str) -> None:
        mode = "writable: accept and reject commit" if writable else "read-only"
        out(f"memctl view: serving {vault.root} at {url} ({mode}; Ctrl-C stops)")
        sys.stdout.flush()
        if not no_open:
            import webbrowser

            if not webbrowser.open(url):  # no browser here (a server, a bare terminal)
                sys.stderr.write(f"memctl view: no browser to open; open {url}\n")

    # loopback only: the viewer shows everything in the vault to whoever reaches it
    serve_http(vault, "127.0.0.1", port, writable=writable, ready=ready)
