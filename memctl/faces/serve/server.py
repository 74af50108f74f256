"""The resident process behind `memctl serve`: one per vault, answering over a Unix socket.

What it saves is the interpreter's start and memctl's imports (~100 ms a prompt); what it
runs is the very code a fresh process runs. Each request is executed as that process would:
in the caller's environment and working folder, through `memctl.faces.hooks.handlers.handle`
or the CLI's own `execute`, on a vault opened for that request (opening costs well under a
millisecond once the modules are loaded). So an answer never differs from the in-process
one, and a git operation done outside memctl (a checkout, a revert, a pull) is seen by the
next request exactly as the next command would see it.

Requests run one at a time (the caller's environment, working folder and stdout are the
process's while one runs); a prompt never waits long behind another, and a client that
cannot connect within a few milliseconds does the work itself.

It stops itself: after `idle` seconds without a request; when its vault is moved or
deleted (the path it serves no longer holds the folder it started on); when its resident
size passes `max_memory` bytes (checked after every request and every tick); when memctl's
own source on disk changed since it started (an upgrade, a reinstall, an edit of an
editable install: it would go on answering with the code it loaded), checked every
CODE_EVERY seconds and after requests; on SIGTERM. A request from a process that runs
another memctl (another version, another install) is refused: that process does the work.
It holds an exclusive lock beside its socket for its whole life, so a second one for the
same vault gives up at once, and a socket left by a killed one is replaced.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memctl.errors import InputError
from memctl.faces.serve import wire

IDLE = 900.0  # seconds without a request before the service stops itself
MAX_MEMORY = 1 << 30  # bytes of resident memory past which it stops (the next hook restarts it)
TICK = 0.5  # seconds between the accept loop's checks
READ_WAIT = 5.0  # seconds a client may take to send its request
LOCK_WAIT = 3.0  # seconds a new service waits for the lock of one that is stopping
CODE_EVERY = 2.0  # seconds between looks at memctl's source on disk (~1 ms a look)


def code_on_disk() -> tuple[int, int]:
    """(files, newest mtime) of memctl's package source: what an upgrade or an edit moves.
    Every file under the package but compiled caches: a template or data file is code too."""
    from memctl import version

    n = newest = 0
    stack = [str(Path(version.__file__).parent)]
    while stack:
        with contextlib.suppress(OSError), os.scandir(stack.pop()) as entries:
            for e in entries:
                if e.is_dir(follow_symlinks=False):
                    if e.name != "__pycache__":
                        stack.append(e.path)
                elif not e.name.endswith((".pyc", ".pyo")):
                    with contextlib.suppress(OSError):
                        n += 1
                        newest = max(newest, e.stat(follow_symlinks=False).st_mtime_ns)
    return n, newest


@dataclass
class Options:
    """How one service runs; the CLI's `memctl serve` options."""

    idle: float = IDLE
    max_memory: int = MAX_MEMORY
    http: tuple[str, int] | None = None
    writable: bool = False


class Capture(io.StringIO):
    """stdout or stderr of one CLI request, saying it is a terminal when the caller's is."""

    def __init__(self, tty: bool) -> None:
        super().__init__()
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


def parse_http(text: str) -> tuple[str, int]:
    """`HOST:PORT` for the viewer; only a loopback host unless the person names another."""
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InputError(f"--http wants HOST:PORT such as 127.0.0.1:8377, not {text!r}")
    return host.strip("[]"), int(port)


def resident_bytes() -> int:
    """This process's resident size now (Linux), else its peak (elsewhere)."""
    try:
        statm = Path("/proc/self/statm").read_text(encoding="ascii")
        return int(statm.split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        import resource

        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


class Service:
    """One vault's service: the lock, the socket, the loop, and what each request runs."""

    def __init__(self, root: Path, options: Options, log: Callable[[str], None]) -> None:
        self.root = root
        self.options = options
        self.log = log
        self.sock_path, self.lock_path = wire.paths(str(root))
        self.identity = self._identity()
        self.work = threading.Lock()
        self.busy = 0
        self.served = 0  # requests answered (ping says how many: tests and status read it)
        self.last = time.monotonic()
        self.stopping = threading.Event()
        self.why = ""
        self._lock_fd: int | None = None
        self._sock: Any = None
        self._bound: tuple[int, int] | None = None
        self.code = wire.code()  # which memctl this process runs, as its clients say theirs
        self._source = code_on_disk()
        self._source_at = time.monotonic()

    # ---- life ---------------------------------------------------------------------------------

    def _identity(self) -> tuple[int, int] | None:
        try:
            st = (self.root / ".memctl").stat()
        except OSError:
            return None
        return st.st_dev, st.st_ino

    def acquire(self) -> bool:
        """Take the vault's service lock; False when a live service holds it."""
        import fcntl

        Path(self.lock_path).parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.lock_path, os.O_RDWR | os.O_CREAT, 0o600)
        ends = time.monotonic() + LOCK_WAIT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except OSError:
                # another service holds it: if it answers for this vault, it is the one
                answer, _ = wire.call(str(self.root), {"op": "ping"}, 1.0)
                if answer is not None or time.monotonic() > ends:
                    os.close(fd)
                    return False
                time.sleep(0.05)  # it is stopping (its vault moved here): wait it out
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
        self._lock_fd = fd
        return True

    def bind(self) -> None:
        """Listen on the socket; one there already is stale, since we hold the lock."""
        import socket

        Path(self.sock_path).unlink(missing_ok=True)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # the socket is the vault's: its owner alone may connect
        try:
            s.bind(self.sock_path)
        finally:
            os.umask(old)
        s.listen(64)
        s.settimeout(TICK)
        st = Path(self.sock_path).stat()
        self._sock, self._bound = s, (st.st_dev, st.st_ino)

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        with contextlib.suppress(OSError):
            st = Path(self.sock_path).stat()
            if (st.st_dev, st.st_ino) == self._bound:  # a newer service's socket is left alone
                Path(self.sock_path).unlink()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None

    def stop(self, why: str) -> None:
        if not self.stopping.is_set():
            self.why = why
            self.stopping.set()

    def source_changed(self, now: bool = False) -> bool:
        """Has memctl's source on disk changed since this process loaded it (looked at
        every CODE_EVERY seconds, or `now`)."""
        if not now and time.monotonic() - self._source_at < CODE_EVERY:
            return False
        self._source_at = time.monotonic()
        return code_on_disk() != self._source

    def check(self) -> None:
        """Stop when idle, moved, deleted, too big, or running code no longer on disk."""
        if self._identity() != self.identity:
            self.stop(f"the vault is no longer at {self.root}")
        elif self.source_changed():
            self.stop("memctl's code on disk changed since this service started")
        elif self.busy == 0 and time.monotonic() - self.last > self.options.idle:
            self.stop(f"idle for {self.options.idle:g}s")
        elif (size := resident_bytes()) > self.options.max_memory:
            self.stop(f"resident memory {size >> 20} MB passed the cap of "
                      f"{self.options.max_memory >> 20} MB")  # fmt: skip

    def loop(self) -> None:
        """Accept until stopped; each connection on its own thread."""
        while not self.stopping.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                self.check()
                continue
            except OSError:
                if self.stopping.is_set():
                    break
                raise
            self.last = time.monotonic()
            threading.Thread(target=self.serve_one, args=(conn,), daemon=True).start()

    # ---- one request --------------------------------------------------------------------------

    def serve_one(self, conn: Any) -> None:
        with conn:
            conn.settimeout(READ_WAIT)
            try:
                req = wire.receive(conn)
            except (OSError, ValueError):
                return
            self.busy += 1
            try:
                answer = self.answer(req)
            finally:
                self.busy -= 1
                self.last = time.monotonic()
            with contextlib.suppress(OSError):
                conn.settimeout(None)
                wire.send(conn, answer)
        self.check()

    def answer(self, req: Any) -> dict[str, Any]:
        root = str(self.root)
        if not isinstance(req, dict) or req.get("v") != wire.PROTOCOL:
            return {"ok": False, "why": "protocol", "root": req.get("root") if isinstance(
                req, dict) else None}  # fmt: skip
        asked = req.get("root")
        if asked != root or self._identity() != self.identity:
            # the socket moved with the vault's folder, or this one was deleted: a service
            # for the new path starts in our place
            self.stop(f"asked for {asked}, serving {root}")
            return {"ok": False, "why": "moved", "root": asked}
        asker = req.get("code")
        if asker is not None and asker != self.code:
            if self.source_changed(now=True):  # upgraded under us: a new service takes over
                self.stop("memctl's code on disk changed since this service started")
                return {"ok": False, "why": "moved", "root": root}
            return {"ok": False, "why": "code", "root": root}  # another install's process
        op = req.get("op")
        if op == "ping":
            return {"ok": True, "root": root, "pid": os.getpid(), "served": self.served}
        if op == "stop":
            self.stop("asked to stop")
            return {"ok": True, "root": root, "pid": os.getpid()}
        try:
            with self.work, as_caller(req):
                if op == "hook":
                    out = run_hook(root, req)
                elif op == "cli":
                    out = run_cli(req)
                else:
                    return {"ok": False, "why": f"unknown op {op!r}", "root": root}
        except Exception as exc:  # the caller does the work itself and shows what went wrong
            self.log(f"failed: serving {op}: {type(exc).__name__}: {exc}")
            return {"ok": False, "why": "error", "root": root}
        self.served += 1
        return {"ok": True, "root": root, **out}


@contextlib.contextmanager
def as_caller(req: dict[str, Any]) -> Iterator[None]:
    """Run as the calling process would: its environment and its working folder."""
    env, cwd = req.get("env"), req.get("cwd")
    saved_env, saved_cwd = dict(os.environ), Path.cwd()
    try:
        if isinstance(env, dict):
            _set_environ({str(k): str(v) for k, v in env.items()})
        if isinstance(cwd, str) and Path(cwd).is_dir():
            os.chdir(cwd)
        yield
    finally:
        _set_environ(saved_env)
        with contextlib.suppress(OSError):
            os.chdir(saved_cwd)


def _set_environ(want: dict[str, str]) -> None:
    """Make os.environ `want`, touching only the variables that differ: each one set or
    unset is a putenv, and clearing and refilling ~40 of them twice a request cost more
    than a ping's round trip, where a hook's caller rarely differs from the last."""
    env = os.environ
    for k in [k for k in env if k not in want]:
        del env[k]
    for k, v in want.items():
        if env.get(k) != v:
            env[k] = v


def run_hook(root: str, req: dict[str, Any]) -> dict[str, Any]:
    from memctl.faces.hooks.handlers import handle

    res = handle(str(req["name"]), str(req.get("raw") or ""), vault_path=root,
                 user=req.get("user") or None, env=dict(os.environ))  # fmt: skip
    return {"stdout": res.stdout}


def run_cli(req: dict[str, Any]) -> dict[str, Any]:
    """One CLI read command through the CLI's own entry, its output captured."""
    from memctl.faces.cli import execute

    tty = bool(req.get("tty"))
    out, err = Capture(tty), Capture(tty)
    saved = sys.stdout, sys.stderr, sys.stdin
    code: Any = 0
    try:
        sys.stdout, sys.stderr, sys.stdin = out, err, io.StringIO()
        try:
            execute([str(a) for a in req.get("args") or []])
        except SystemExit as exc:
            code = exc.code
    finally:
        sys.stdout, sys.stderr, sys.stdin = saved
    if code is None:
        code = 0
    elif not isinstance(code, int):
        err.write(f"{code}\n")
        code = 1
    return {"stdout": out.getvalue(), "stderr": err.getvalue(), "code": code}


def start_http(service: Service, host: str, port: int) -> Any:
    """The browser viewer on a thread of this process, with a vault of its own (the viewer
    serialises its requests; the socket's requests open theirs)."""
    from memctl.faces.viewer.app import bind
    from memctl.vault import Vault

    vault = Vault.open(service.root, one_shot=False)

    def counted(app: Any) -> Any:
        def call(environ: Any, start_response: Any) -> Any:
            service.last = time.monotonic()  # a person reading the viewer keeps it up
            return app(environ, start_response)

        return call

    httpd = bind(vault, host, port, writable=service.options.writable, wrap=counted)
    threading.Thread(target=httpd.serve_forever, name="memctl-http", daemon=True).start()
    return httpd


def serve(root: Path, options: Options, log: Callable[[str], None],
          ready: Callable[[Service], None] | None = None) -> str:  # fmt: skip
    """Run the vault's service until it stops itself; returns why it stopped, or "" when
    another service already serves this vault."""
    service = Service(root, options, log)
    if not service.acquire():
        return ""
    httpd = None
    try:
        preload(root)
        service.bind()
        if options.http is not None:
            httpd = start_http(service, *options.http)
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: service.stop("stopped by a signal"))
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        log(f"serving {root} on {service.sock_path} (pid {os.getpid()})")
        if ready is not None:
            ready(service)
        service.loop()
    finally:
        if httpd is not None:
            httpd.shutdown()
        service.close()
    log(f"stopped: {service.why}")
    return service.why


def preload(root: Path) -> None:
    """Load what the first prompt would, before the socket listens: the hook handler and
    recall (~0.2 s of imports), the tokenizer and the index (`Vault.warm`). Until it
    listens, a hook does its own work, as with no service; after, no prompt pays for the
    service's start. Nothing here may stop the service: what fails now loads when asked."""
    try:
        from memctl.faces.hooks import handlers  # noqa: F401
        from memctl.vault import Vault

        Vault.open(root, recover=False).warm()
    except Exception:
        return


def stop(root: Path, timeout: float = 5.0) -> int | None:
    """Ask the vault's service to stop; its pid, or None when none was running."""
    answer, _ = wire.call(str(root), {"op": "stop"}, timeout)
    return int(answer["pid"]) if answer is not None else None


def status(root: Path) -> dict[str, Any] | None:
    """The running service's pid and socket, or None."""
    answer, _ = wire.call(str(root), {"op": "ping"}, 2.0)
    if answer is None:
        return None
    return {"pid": answer["pid"], "socket": wire.paths(str(root))[0], "served": answer["served"]}
