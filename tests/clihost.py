"""A warm interpreter that runs `python -m memctl ARGS` for the test suite, in forked children.

The suite runs the CLI a few thousand times, and each fresh interpreter spends ~120 ms of
CPU importing typer, gitpython, tantivy and memctl before the command does anything: about
half of the suite's time. This host imports them once; every run is then a child forked from
it, given the caller's argv, environment, working folder and its three standard streams
(passed over the socket as file descriptors), so the command still runs in a process of its
own, with real exit codes, signals and output pipes. What a fresh start would do that a fork
cannot is rebuilt in the child: stdio objects for the new descriptors, default signal
dispositions, `sys.argv` as `python -m` sets it, and, at the end, the interpreter's own
shutdown steps (non-daemon threads joined, atexit handlers run, streams flushed).

`tests/util.py` starts one host per test process and falls back to a fresh interpreter when
the host cannot answer, for a call whose environment changes how Python itself starts, and
everywhere when MEMCTL_TEST_FRESH=1 (the way to check that nothing depends on the fork).

    python tests/clihost.py SOCKET PARENT_PID
"""

from __future__ import annotations

import atexit
import io
import json
import os
import signal
import socket
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MAIN = str(ROOT / "memctl" / "__main__.py")


def _preload() -> None:
    """Everything a command may import or compile that does not depend on who runs it or where.

    Every memctl module (a command imports most of its own lazily, so each child would
    otherwise import them again: ~90 ms a command), the libraries they load on first use,
    and every `lazy` regular expression (~70 ms more for a command that curates): a child
    then inherits them compiled. `MEMCTL_TEST_FRESH=1` still runs everything cold.
    """
    import gc
    import importlib
    import pkgutil

    import frontmatter  # noqa: F401
    import regex  # noqa: F401
    import yaml  # noqa: F401

    import memctl
    from memctl.core.lazyre import _LazyPattern
    from memctl.faces.cli.homes import load

    for info in pkgutil.walk_packages(memctl.__path__, "memctl."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    load(None)  # every command module; `command(name)` still builds only the one asked for

    for obj in gc.get_objects():  # held anywhere: module globals, tuples, detector tables
        if isinstance(obj, _LazyPattern):
            obj.search  # noqa: B018  (the first attribute read compiles it)


def _message(conn: socket.socket, data: Any) -> None:
    raw = json.dumps(data).encode()
    conn.sendall(len(raw).to_bytes(4, "big") + raw)


def _receive(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
    if len(data) < 4:
        raise ConnectionError("short request")
    size = int.from_bytes(data[:4], "big")
    buf = bytearray(data[4:])
    while len(buf) < size:
        chunk = conn.recv(size - len(buf))
        if not chunk:
            raise ConnectionError("request cut short")
        buf += chunk
    return json.loads(buf), list(fds)


def _stdio(env: dict[str, str]) -> None:
    """sys.stdin/stdout/stderr over fds 0-2, configured as a fresh interpreter would."""
    enc, _, errors = env.get("PYTHONIOENCODING", "").partition(":")
    import locale

    encoding = enc or locale.getpreferredencoding(False)
    out_errors = errors or "strict"

    def stream(fd: int, mode: str, errs: str) -> io.TextIOWrapper:
        raw = io.FileIO(fd, mode, closefd=False)
        tty = raw.isatty()
        if mode == "r":
            buffered: Any = io.BufferedReader(raw)
        else:
            buffered = io.BufferedWriter(raw)
        return io.TextIOWrapper(
            buffered, encoding=encoding, errors=errs, line_buffering=tty or fd == 2,
            write_through=fd == 2,
        )  # fmt: skip

    sys.stdin = sys.__stdin__ = stream(0, "r", errors or "strict")
    sys.stdout = sys.__stdout__ = stream(1, "w", out_errors)
    sys.stderr = sys.__stderr__ = stream(2, "w", "backslashreplace")


def _exit_code(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    sys.stderr.write(f"{code}\n")
    return 1


def _command(request: dict[str, Any], fds: list[int]) -> None:
    """The forked command: becomes `python -m memctl ARGS` and never returns."""
    code = 1
    try:
        if request.get("session"):
            os.setsid()  # a group of its own, which a crash test kills whole, git and all
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        os.chdir(request["cwd"])
        os.umask(request["umask"])
        if request.get("fsize_limit"):
            import resource

            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            limit = request["fsize_limit"]
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        os.environ.clear()
        os.environ.update(request["env"])
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        # exec keeps an ignored SIGINT ignored and resets a handled one; Python then
        # installs KeyboardInterrupt only where SIGINT was not ignored
        ignored = request.get("sigint_ignored")
        signal.signal(signal.SIGINT, signal.SIG_IGN if ignored else signal.default_int_handler)
        sys.argv = [MAIN, *request["argv"]]
        _stdio(request["env"])
        from memctl.faces.cli import main

        try:
            main()
            code = 0
        except SystemExit as exc:
            code = _exit_code(exc)
        except KeyboardInterrupt:
            traceback.print_exc()
            code = -signal.SIGINT
        except BaseException:
            traceback.print_exc()
            code = 1
        # what Python does on its way out: wait for non-daemon threads, run atexit, flush
        threading._shutdown()  # type: ignore[attr-defined]
        atexit._run_exitfuncs()
        for s in (sys.stdout, sys.stderr):
            try:
                s.flush()
            except (OSError, ValueError):
                code = code or 120
    finally:
        if code < 0:
            signal.signal(-code, signal.SIG_DFL)
            os.kill(os.getpid(), -code)
        os._exit(code)


def _waiter(conn: socket.socket, request: dict[str, Any], fds: list[int]) -> None:
    """The child that forks the command, reports its pid, waits, reports how it ended."""
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        pid = os.fork()
        if pid == 0:
            conn.close()
            _command(request, fds)
        for fd in fds:
            os.close(fd)
        while request.get("session"):  # the pid is its group's once the child ran setsid()
            try:
                if os.getsid(pid) == pid:
                    break
            except ProcessLookupError:
                break
            time.sleep(0.0005)
        _message(conn, {"pid": pid})
        _, status = os.waitpid(pid, 0)
        _message(conn, {"code": os.waitstatus_to_exitcode(status)})
    finally:
        os._exit(0)


def serve(path: str, parent: int) -> None:
    _preload()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(128)
    server.settimeout(1.0)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # waiters are reaped by the kernel
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C on pytest is pytest's to handle
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while os.getppid() == parent:
        try:
            conn, _ = server.accept()
        except TimeoutError:
            continue
        try:
            conn.settimeout(10)
            request, fds = _receive(conn)
            conn.settimeout(None)
        except (OSError, ValueError):
            conn.close()
            continue
        if os.fork() == 0:
            server.close()
            _waiter(conn, request, fds)
        conn.close()
        for fd in fds:
            os.close(fd)


if __name__ == "__main__":
    serve(sys.argv[1], int(sys.argv[2]))
