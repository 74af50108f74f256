"""The viewer's WSGI app: Werkzeug routes requests, Jinja2 renders pages.

Every request is answered under one lock: a Vault is not made for threads, and a person
clicking through pages never waits long behind another click. Only loopback host names
(and those the server was bound to) are answered, so a web page elsewhere cannot reach
the viewer through a DNS name it points at 127.0.0.1. Writes are POST only, carry a
token made when the app starts (a page from another site cannot read it), and exist only
when the app is writable.
"""

from __future__ import annotations

import hmac
import secrets
import socket
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from werkzeug.exceptions import BadRequest, Forbidden, HTTPException
from werkzeug.routing import Map, Rule
from werkzeug.serving import WSGIRequestHandler, make_server
from werkzeug.wrappers import Request, Response

from memctl.errors import InputError, MemctlError
from memctl.faces.viewer import pages

if TYPE_CHECKING:
    from memctl.vault import Vault

LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
# The page may load nothing: no script, image, font or frame, from anywhere. Styles are
# inline. So nothing a transcript says can make the browser fetch a thing.
CSP = ("default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; base-uri 'none'; "
       "frame-ancestors 'none'")  # fmt: skip

ROUTES = Map([
    Rule("/", endpoint="timeline"),
    Rule("/session/<path:ref>", endpoint="session"),
    Rule("/note/<path:ref>", endpoint="note"),
    Rule("/projects", endpoint="projects"),
    Rule("/review", endpoint="review", methods=["GET"]),
    Rule("/review", endpoint="decide", methods=["POST"]),
    Rule("/diff", endpoint="diff"),
    Rule("/search", endpoint="search"),
], strict_slashes=False)  # fmt: skip


class Viewer:
    """The WSGI app: one vault, read-only unless `writable`."""

    def __init__(self, vault: Vault, *, writable: bool = False, hosts: Iterable[str] = ()) -> None:
        self.vault = vault
        self.writable = writable
        self.hosts = {*LOOPBACK, *hosts}
        self.token = secrets.token_urlsafe(32)
        self.lock = threading.Lock()
        self.env = Environment(
            loader=FileSystemLoader(Path(__file__).parent / "templates"),
            autoescape=True,
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters["turn_href"] = pages.turn_href
        self.env.filters["url"] = lambda s: quote(str(s), safe="/")

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        request = Request(environ)
        with self.lock:
            response = self.respond(request)
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        return response(environ, start_response)

    def respond(self, request: Request) -> Response:
        try:
            if request.host.rsplit(":", 1)[0] not in self.hosts and request.host not in self.hosts:
                raise BadRequest(f"this viewer answers only to {', '.join(sorted(self.hosts))}")
            endpoint, args = ROUTES.bind_to_environ(request.environ).match()
            pages_: dict[str, Callable[..., Response]] = {
                "timeline": self.page_timeline, "session": self.page_session,
                "note": self.page_note, "projects": self.page_projects,
                "review": self.page_review, "decide": self.page_decide,
                "diff": self.page_diff, "search": self.page_search,
            }  # fmt: skip
            return pages_[endpoint](request, **args)
        except HTTPException as exc:
            if (exc.code or 500) < 400:  # a redirect routing asks for (a doubled slash)
                return exc.get_response(request.environ)  # type: ignore[return-value]
            return self.render("error.html", status=exc.code or 500, title=exc.name,
                               message=exc.description or exc.name)  # fmt: skip
        except (MemctlError, LookupError) as exc:
            return self.render("error.html", status=404, title="Not found",
                               message=str(exc).split("\n")[0])  # fmt: skip

    def render(self, template: str, *, status: int = 200, **context: Any) -> Response:
        html = self.env.get_template(template).render(
            writable=self.writable, token=self.token, root=str(self.vault.root), **context
        )
        return Response(html, status=status, content_type="text/html; charset=utf-8")

    # ---- pages ---------------------------------------------------------------------------

    def page_timeline(self, request: Request) -> Response:
        page = _int(request.args.get("page"), 1)
        return self.render("timeline.html", title="Timeline", **pages.timeline(self.vault, page))

    def page_session(self, request: Request, ref: str) -> Response:
        at = _int(request.args.get("t"), 0) or None
        data = pages.session(self.vault, ref, at)
        return self.render("session.html", title=data["header"].get("title") or ref, **data)

    def page_note(self, request: Request, ref: str) -> Response:
        data = pages.note(self.vault, ref)
        return self.render("note.html", title=data["path"], **data)

    def page_projects(self, request: Request) -> Response:
        return self.render("projects.html", title="Projects", notes=pages.projects(self.vault))

    def page_search(self, request: Request) -> Response:
        data = pages.search(self.vault, request.args.get("q", ""))
        return self.render("search.html", title="Search", **data)

    def page_diff(self, request: Request) -> Response:
        data = pages.diff(self.vault, request.args.get("since"), request.args.get("session"))
        return self.render("diff.html", title="What was learned", **data)

    def page_review(self, request: Request) -> Response:
        return self.render(
            "review.html",
            title="Review",
            pending=pages.review(self.vault),
            done=request.args.getlist("done"),
            failed=request.args.get("failed", ""),
        )

    def page_decide(self, request: Request) -> Response:
        """Accept or reject one proposal, through `Vault.review`, as `memctl review` does."""
        if not self.writable:
            raise Forbidden("the viewer is read-only: start it with --writable to review")
        sent = request.form.get("token", "")
        if not hmac.compare_digest(sent.encode(), self.token.encode()):
            raise Forbidden("the form's token is missing or stale: reload the review page")
        action, pid = request.form.get("action", ""), request.form.get("id", "").strip()
        if action not in ("accept", "reject") or not pid:
            raise BadRequest("say accept or reject, and which proposal")
        try:
            if action == "accept":
                res = self.vault.review(accept=[pid])
            else:
                res = self.vault.review(reject=[pid])
        except MemctlError as exc:
            return _redirect("/review?" + urlencode({"failed": str(exc).split("\n")[0]}))
        done = [f"accepted {a}" for a in res.accepted] + [f"rejected {r}" for r in res.rejected]
        if res.commit:
            done.append(f"commit {res.commit[:10]}")
        return _redirect("/review?" + urlencode([("done", d) for d in done]))


def _redirect(location: str) -> Response:
    """After a POST, a GET of the page it came from (303: reloading never posts again)."""
    return Response("", status=303, headers={"Location": location})


def _int(value: str | None, default: int) -> int:
    try:
        return int(value) if value else default
    except ValueError:
        return default


class _QuietHandler(WSGIRequestHandler):
    """Werkzeug's handler without a log line per request (errors are still logged)."""

    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        return


def bind(
    vault: Vault,
    host: str,
    port: int,
    *,
    writable: bool = False,
    wrap: Callable[[Any], Any] | None = None,
) -> Any:
    """A server bound to host:port, not yet serving (port 0 picks a free one); `wrap` sees
    every request first (the resident service counts them as activity)."""
    if port:
        _port_free(host, port)
    app: Any = make_app_for(vault, host, writable)
    return make_server(host, port, wrap(app) if wrap else app, threaded=True,
                       request_handler=_QuietHandler)  # fmt: skip


def _port_free(host: str, port: int) -> None:
    """Refuse a port in use in one line: Werkzeug prints three and exits on its own."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the server binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            raise InputError(f"cannot serve on {host}:{port}: {exc.strerror or exc}; "
                             "pick another port (--port)") from None  # fmt: skip


def serve(
    vault: Vault,
    host: str,
    port: int,
    *,
    writable: bool = False,
    ready: Callable[[str], None] | None = None,
) -> None:
    """Serve until interrupted (Ctrl-C), on threads, one request at a time in the vault."""
    server = bind(vault, host, port, writable=writable)
    shown = f"[{host}]" if ":" in host else host
    try:
        if ready is not None:
            ready(f"http://{shown}:{server.server_port}/")
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def make_app_for(vault: Vault, host: str, writable: bool) -> Viewer:
    """The app for a server bound to `host`: it answers to that name as well."""
    return Viewer(vault, writable=writable, hosts=() if host in LOOPBACK else (host,))
