"""The viewer: what memctl learned, in a browser, served from this machine.

A timeline of sessions and the claims each taught (with their verbatim quotes, linked to
the turn they cite), every session's turns (tool calls shown, not hidden in a comment),
the review queue, `diff`, search and each project's note. Pages are rendered on the
server (Jinja2, autoescaped) and served by Werkzeug; the page asks for nothing else, so
it works offline and makes no request past the server that sent it.

Read-only unless made `writable`: then accept and reject, posted with a per-process token,
go through `Vault.review` and make the commit the CLI makes. Werkzeug and Jinja2 load only
here, when a viewer is asked for (`memctl --help` must not pay for them).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memctl.vault import Vault


def make_app(vault: Vault, *, writable: bool = False, hosts: tuple[str, ...] = ()) -> Any:
    """The viewer as a WSGI app over `vault`; `hosts`: names it answers to besides loopback."""
    from memctl.faces.viewer.app import Viewer

    return Viewer(vault, writable=writable, hosts=hosts)


def serve_http(
    vault: Vault,
    host: str,
    port: int,
    *,
    writable: bool = False,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Serve the viewer on host:port until interrupted; `ready` gets the URL once bound
    (port 0 picks a free one)."""
    from memctl.faces.viewer.app import serve

    serve(vault, host, port, writable=writable, ready=ready)


__all__ = ["make_app", "serve_http"]
