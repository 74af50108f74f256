"""A fake OpenAI-compatible LLM server, faked at the wire.

memctl's tests never mock our own code; the remote LLM is the one thing we fake, and we
fake it as an HTTP server on 127.0.0.1 so litellm's real client path (the openai SDK over
httpx, retries, SSE parsing, error mapping) runs exactly as it would in production.

Ergonomics follow simonw/llm's MockModel: queue canned replies with ``enqueue`` and
inspect what the client actually sent in ``history``. A call the test did not enqueue a
reply for gets a loud 500 rather than a silent default, so a missing ``enqueue`` is
never mistaken for a passing test.

Only the standard library is used so the fake cannot drift with a dependency upgrade.

``NetworkGuard`` lives here too: it is the proof that a test session talked to nothing
but loopback (see ``install_network_guard``).
"""

from __future__ import annotations

import http.client
import ipaddress
import json
import re
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Final, Self

__all__ = [
    "FakeLLM",
    "FakeLLMStartupError",
    "NetworkBlockedError",
    "NetworkGuard",
    "RecordedRequest",
    "install_network_guard",
    "network_guard",
]

CHAT_PATHS: Final = frozenset({"/v1/chat/completions", "/chat/completions"})
MODELS_PATHS: Final = frozenset({"/v1/models", "/models"})
# Not recorded in history: it only proves the serving loop is up.
_HEALTH_PATH: Final = "/_fakellm/health"
DEFAULT_MODEL: Final = "gpt-4o-mini"
QUEUE_EMPTY_CODE: Final = "fakellm_queue_empty"

_REPLY_KEYS: Final = frozenset(
    {"content", "json", "usage", "finish_reason", "model", "status", "body", "headers", "delay"}
)


class FakeLLMStartupError(RuntimeError):
    """Raised when the server is not answering before the deadline: a hung fixture is worse
    than a failed one."""


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it on the wire, so tests assert on what litellm
    really sent (after its own parameter mapping), not on what we passed to it."""

    method: str
    path: str
    headers: dict[str, str]  # names lower-cased: HTTP header names are case-insensitive
    body: Any  # parsed JSON, or None when the body was empty or not JSON
    raw_body: bytes
    client_host: str

    @property
    def messages(self) -> list[dict[str, Any]]:
        return list(self.body.get("messages", [])) if isinstance(self.body, dict) else []

    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body, dict) else None


@dataclass(frozen=True)
class _Reply:
    content: str | None = None
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    usage: dict[str, int] | None = None
    finish_reason: str = "stop"
    model: str | None = None
    delay: float = 0.0


def _to_reply(item: str | Mapping[str, Any]) -> _Reply:
    """Validate at enqueue time so a typo in a test fails where it was written, not as a
    puzzling client error later."""
    if isinstance(item, str):
        return _Reply(content=item)
    unknown = set(item) - _REPLY_KEYS
    if unknown:
        raise ValueError(
            f"unknown FakeLLM reply keys {sorted(unknown)}; allowed: {sorted(_REPLY_KEYS)}"
        )
    if "content" in item and "json" in item:
        raise ValueError("give either 'content' or 'json', not both")
    if not ({"content", "json", "status", "body"} & set(item)):
        raise ValueError("a FakeLLM reply dict needs one of 'content', 'json', 'status', 'body'")
    content = json.dumps(item["json"]) if "json" in item else item.get("content")
    return _Reply(
        content=content,
        status=int(item.get("status", 200)),
        body=item.get("body"),
        headers={str(k): str(v) for k, v in dict(item.get("headers", {})).items()},
        usage=dict(item["usage"]) if "usage" in item else None,
        finish_reason=str(item.get("finish_reason", "stop")),
        model=item.get("model"),
        delay=float(item.get("delay", 0.0)),
    )


def _error_body(message: str, err_type: str, code: str | None = None) -> dict[str, Any]:
    return {"error": {"message": message, "type": err_type, "param": None, "code": code}}


def _words(text: str) -> int:
    return len(text.split())


def _prompt_tokens(body: Any) -> int:
    """Deterministic stand-in for a tokenizer (about one token per word) so tests can
    predict usage without a tokenizer download."""
    total = 0
    messages = body.get("messages", []) if isinstance(body, dict) else []
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, str):
            total += _words(content)
        elif isinstance(content, list):
            total += sum(
                _words(str(part.get("text", ""))) for part in content if isinstance(part, dict)
            )
    return max(total, 1)


def _usage(reply: _Reply, body: Any) -> dict[str, int]:
    usage = {
        "prompt_tokens": _prompt_tokens(body),
        "completion_tokens": _words(reply.content or ""),
    }
    usage.update(reply.usage or {})
    if "total_tokens" not in (reply.usage or {}):
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    return usage


class FakeLLM:
    """OpenAI-compatible chat server on 127.0.0.1:<free port> with a queue of canned replies.

    Use as a context manager or via ``start``/``stop``. Point litellm at it with
    ``litellm.completion(model="openai/gpt-4o-mini", api_base=fake.base_url, ...)``.

    Reply forms for ``enqueue``:

    - ``"text"``: a 200 completion whose assistant message is ``text``.
    - ``{"content": "text", "usage": {...}, "finish_reason": ..., "model": ...}``: the same
      with overrides; ``usage`` keys you omit are computed (about one token per word).
    - ``{"json": obj}``: content is ``json.dumps(obj)``, for ``response_format`` callers.
    - ``{"status": 500, "body": {...}, "headers": {...}}``: an error; ``body`` defaults to an
      OpenAI-style error object. Errors carry ``x-should-retry: false`` unless ``headers``
      says otherwise, so the openai SDK's built-in retries do not eat the next queued reply
      or add seconds of backoff; give ``{"x-should-retry": "true"}`` to test retrying.
    - ``{"body": {...}}`` with a 2xx status: sent verbatim, for malformed-response tests.
    - ``"delay": seconds`` on any dict: wait before answering, for client-timeout tests.
    """

    def __init__(self, *, startup_timeout: float = 5.0) -> None:
        self.startup_timeout = startup_timeout
        self.history: list[RecordedRequest] = []
        self._queue: deque[_Reply] = deque()
        self._responder: Callable[[dict[str, Any]], str | Mapping[str, Any]] | None = None
        self._lock = threading.Lock()
        self._counter = 0
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------

    def start(self) -> Self:
        if self._server is not None:
            return self
        server = _Server(("127.0.0.1", 0), _Handler)
        server.fake = self
        thread = threading.Thread(
            target=server.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"fakellm-{server.server_address[1]}",
            daemon=True,
        )
        self._server, self._thread = server, thread
        thread.start()
        try:
            self._wait_until_serving()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_until_serving(self) -> None:
        """Probe with a real HTTP round trip, not just a connect: the socket listens before
        the serving loop runs, and a bounded deadline keeps a broken fake from hanging CI."""
        deadline = time.monotonic() + self.startup_timeout
        last_error: BaseException | None = None
        while time.monotonic() < deadline:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=0.5)
            try:
                conn.request("GET", _HEALTH_PATH)
                if conn.getresponse().status == 200:
                    return
            except OSError as exc:
                last_error = exc
            finally:
                conn.close()
            time.sleep(0.02)
        raise FakeLLMStartupError(
            f"FakeLLM did not answer on {self.url} within {self.startup_timeout}s: {last_error!r}"
        )

    def stop(self) -> None:
        server, thread = self._server, self._thread
        self._server = self._thread = None
        if server is not None:
            server.shutdown()
            server.server_close()
        if thread is not None:
            thread.join(timeout=5.0)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    # -- addresses -------------------------------------------------------------------

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("FakeLLM is not running; call start() first")
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        """Server root, without the ``/v1`` prefix."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """What OpenAI-style clients call ``api_base``/``base_url``."""
        return f"{self.url}/v1"

    # -- test API --------------------------------------------------------------------

    def enqueue(self, *replies: str | Mapping[str, Any]) -> None:
        """Queue replies, served in order, one per chat request."""
        parsed = [_to_reply(r) for r in replies]
        with self._lock:
            self._queue.extend(parsed)

    def respond_with(self, fn: Callable[[dict[str, Any]], str | Mapping[str, Any]]) -> None:
        """Answer each chat request the queue has no reply for with ``fn(request body)``
        (any ``enqueue`` form): a model whose answer depends on what it was asked, e.g.
        which turns a curation batch marks as new."""
        with self._lock:
            self._responder = fn

    @property
    def pending(self) -> int:
        """Replies still queued: non-zero after a test means it expected more calls."""
        with self._lock:
            return len(self._queue)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        with self._lock:
            return [r for r in self.history if r.path in CHAT_PATHS]

    @property
    def last_request(self) -> RecordedRequest:
        with self._lock:
            if not self.history:
                raise AssertionError("FakeLLM received no request")
            return self.history[-1]

    def reset(self) -> None:
        """Forget queue and history, so a shared server starts each test clean."""
        with self._lock:
            self._queue.clear()
            self.history.clear()
            self._responder = None

    # -- called from handler threads -------------------------------------------------

    def _record(self, request: RecordedRequest) -> None:
        with self._lock:
            self.history.append(request)

    def _next_reply(self, body: dict[str, Any] | None = None) -> _Reply | None:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
            responder = self._responder
        if responder is None:
            return None
        try:
            return _to_reply(responder(body or {}))
        except Exception as exc:  # the test's bug: say so on the wire, not as a dropped socket
            err = _error_body(f"FakeLLM responder failed: {exc!r}", "server_error")
            return _Reply(status=500, body=err)

    def _next_id(self) -> str:
        with self._lock:
            self._counter += 1
            return f"chatcmpl-fake{self._counter:06d}"


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a keep-alive connection left open must not block interpreter exit
    fake: FakeLLM


class _Handler(BaseHTTPRequestHandler):
    server: _Server
    protocol_version = "HTTP/1.1"  # keep-alive and chunked SSE, as the real API does
    timeout = 30  # idle keep-alive connections are dropped rather than held forever
    server_version = "FakeLLM/1.0"

    def log_message(self, format: str, *args: Any) -> None:
        """Silent: pytest output should show test failures, not access logs."""

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        if path == _HEALTH_PATH:
            self._send_json(200, {"status": "ok"})
            return
        self._record(path, b"", None)
        if path in MODELS_PATHS:
            self._send_json(
                200,
                {
                    "object": "list",
                    "data": [
                        {
                            "id": DEFAULT_MODEL,
                            "object": "model",
                            "created": 0,
                            "owned_by": "fakellm",
                        }
                    ],
                },
            )
        else:
            self._not_found(path)

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0]
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        self._record(path, raw, body)
        if path not in CHAT_PATHS:
            self._not_found(path)
            return
        if not isinstance(body, dict):
            self._send_json(
                400,
                _error_body("FakeLLM: request body is not a JSON object", "invalid_request_error"),
            )
            return
        reply = self.server.fake._next_reply(body)
        if reply is None:
            self._send_json(
                500,
                _error_body(
                    "FakeLLM queue is empty: the test made an LLM call "
                    f"(model={body.get('model')!r}) without enqueuing a reply. "
                    "Call fake_llm.enqueue(...) before the code under test calls the LLM.",
                    "server_error",
                    QUEUE_EMPTY_CODE,
                ),
                {"x-should-retry": "false"},
            )
            return
        if reply.delay:
            time.sleep(reply.delay)
        if reply.status >= 400:
            headers = {"x-should-retry": "false", **reply.headers}
            error = reply.body
            if error is None:
                error = _error_body(
                    f"FakeLLM enqueued error {reply.status}", "server_error", str(reply.status)
                )
            self._send_json(reply.status, error, headers)
        elif reply.body is not None:
            self._send_json(reply.status, reply.body, reply.headers)
        elif body.get("stream") is True:
            self._send_stream(reply, body)
        else:
            self._send_json(reply.status, self._completion(reply, body), reply.headers)

    # -- response builders -----------------------------------------------------------

    def _completion(self, reply: _Reply, body: dict[str, Any]) -> dict[str, Any]:
        return {
            "id": self.server.fake._next_id(),
            "object": "chat.completion",
            "created": int(time.time()),
            "model": reply.model or body.get("model") or DEFAULT_MODEL,
            "system_fingerprint": "fp_fakellm",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.content, "refusal": None},
                    "logprobs": None,
                    "finish_reason": reply.finish_reason,
                }
            ],
            "usage": _usage(reply, body),
        }

    def _send_stream(self, reply: _Reply, body: dict[str, Any]) -> None:
        """SSE over chunked encoding, shaped like OpenAI's: a role chunk, content deltas, a
        finish chunk, an optional usage chunk (``stream_options.include_usage``), then
        ``[DONE]``."""
        base = {
            "id": self.server.fake._next_id(),
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": reply.model or body.get("model") or DEFAULT_MODEL,
            "system_fingerprint": "fp_fakellm",
        }

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            return {**base, "choices": [choice]}

        events: list[dict[str, Any]] = [chunk({"role": "assistant", "content": ""})]
        events += [
            chunk({"content": piece}) for piece in re.findall(r"\S+\s*|\s+", reply.content or "")
        ]
        events.append(chunk({}, reply.finish_reason))
        options = body.get("stream_options")
        if isinstance(options, dict) and options.get("include_usage"):
            events.append({**base, "choices": [], "usage": _usage(reply, body)})

        self.send_response(reply.status)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        for name, value in reply.headers.items():
            self.send_header(name, value)
        self.end_headers()
        for event in events:
            self._write_chunk(f"data: {json.dumps(event)}\n\n".encode())
        self._write_chunk(b"data: [DONE]\n\n")
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):X}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _send_json(
        self, status: int, payload: Any, headers: Mapping[str, str] | None = None
    ) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def _not_found(self, path: str) -> None:
        self._send_json(
            404,
            _error_body(f"FakeLLM has no route {self.command} {path}", "invalid_request_error"),
            {"x-should-retry": "false"},
        )

    def _record(self, path: str, raw: bytes, body: Any) -> None:
        self.server.fake._record(
            RecordedRequest(
                method=self.command,
                path=path,
                headers={k.lower(): v for k, v in self.headers.items()},
                body=body,
                raw_body=raw,
                client_host=str(self.client_address[0]),
            )
        )


# -- network guard -------------------------------------------------------------------


class NetworkBlockedError(ConnectionRefusedError):
    """An OSError subclass, so HTTP clients treat it as an ordinary connect failure (and fall
    back where they would offline) while the guard still records the attempt."""


def _is_local(host: Any) -> bool:
    if host is None:
        return True  # getaddrinfo(None, ...) resolves a passive/bind address, not a peer
    if isinstance(host, bytes):
        host = host.decode(errors="replace")
    host = str(host)
    if host in ("", "localhost", "localhost.") or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host.split("%", 1)[0]).is_loopback
    except ValueError:
        return False  # any other hostname needs DNS, which is itself off-machine


class NetworkGuard:
    """Records, and by default blocks, every socket-level attempt to reach a non-loopback
    host, via a ``sys.addaudithook`` hook.

    An audit hook sees every connect and name lookup made from Python, whichever HTTP
    library (httpx, requests, urllib, aiohttp) or thread makes it, so an empty
    ``attempts`` list is real evidence that nothing left the machine, not just that our
    own mocks were not bypassed. Blocking also turns a would-be DNS timeout into an
    instant failure.
    """

    _EVENTS: Final = frozenset(
        {
            "socket.connect",
            "socket.sendto",
            "socket.sendmsg",
            "socket.getaddrinfo",
            "socket.gethostbyname",
            "socket.gethostbyname_ex",
            "socket.gethostbyaddr",
        }
    )

    def __init__(self, *, block: bool = True) -> None:
        self.block = block
        self.attempts: list[str] = []
        self.installed = False

    def install(self) -> None:
        """Idempotent; audit hooks cannot be removed, so there is no uninstall."""
        if not self.installed:
            sys.addaudithook(self._hook)
            self.installed = True

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if event not in self._EVENTS:
            return
        if event in ("socket.connect", "socket.sendto", "socket.sendmsg"):
            address = args[1] if len(args) > 1 else None
            if not isinstance(address, tuple) or not address:
                return  # AF_UNIX paths and connected-socket sends stay on this machine
            host = address[0]
        else:
            host = args[0] if args else None
        if _is_local(host):
            return
        self.attempts.append(f"{event} {host!r}")
        if self.block:
            raise NetworkBlockedError(
                f"memctl tests may only reach loopback; blocked {event} to {host!r}"
            )


network_guard: Final = NetworkGuard()


def install_network_guard() -> NetworkGuard:
    """Install the process-wide guard; call before anything imports litellm so its
    import-time fetches are caught too."""
    network_guard.install()
    return network_guard
