"""Helpers shared by CLI tests: run the real `memctl` in a subprocess and snapshot a vault."""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import json
import os
import resource
import select
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def memctl(*args: str | Path, input: str | bytes | None = None, cwd: Path | None = None,
           env: dict[str, str] | None = None, timeout: float = 120,
           fsize_limit: int | None = None) -> Run:
    """Run `python -m memctl ARGS` exactly as a user would, in a clean environment, in a
    process of its own: a child of the warm host (tests/clihost.py), else a fresh
    interpreter. `fsize_limit`: its writes past that many bytes fail (EFBIG, as ENOSPC on
    a full disk)."""
    full_env = dict(os.environ)
    full_env.pop("MEMCTL_VAULT", None)
    full_env["PYTHONIOENCODING"] = "utf-8"
    full_env["COLUMNS"] = "200"
    if env:
        full_env.update(env)
    data = input.encode() if isinstance(input, str) else input
    argv = [str(a) for a in args]
    done = warm(argv, data, cwd, full_env, timeout, fsize_limit)
    if done is None:
        proc = subprocess.run(
            [sys.executable, "-m", "memctl", *argv],
            input=data, capture_output=True, cwd=cwd, env=full_env, timeout=timeout, check=False,
            preexec_fn=(lambda: limit_file_size(fsize_limit)) if fsize_limit else None,
        )
        done = proc.returncode, proc.stdout, proc.stderr
    code, out, err = done
    return Run(code, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))


# What changes how the interpreter itself starts: a call that sets one of these gets a fresh
# interpreter, since a child forked from the warm host started under the host's values.
_STARTUP_VARS = ("PYTHON", "LANG", "LC_")
_host: dict[str, Any] = {}
_host_lock = threading.Lock()


def host_socket() -> str | None:
    """The socket of this process's warm CLI host (tests/clihost.py), started on first use."""
    if os.environ.get("MEMCTL_TEST_FRESH", "") not in ("", "0"):
        return None
    with _host_lock:
        return _start_host()


def _start_host() -> str | None:
    if _host.get("pid") == os.getpid():
        return _host.get("path")
    _host.clear()
    _host["pid"] = os.getpid()
    folder = tempfile.mkdtemp(prefix="memctl-host-")
    path = str(Path(folder) / "s")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCTL_")}
    proc = subprocess.Popen(
        [sys.executable, str(ROOT / "tests" / "clihost.py"), path, str(os.getpid())],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, cwd=ROOT, env=env,
    )  # fmt: skip
    ready = select.select([proc.stdout], [], [], 60)[0]
    if not ready or proc.stdout is None or proc.stdout.readline() != b"ready\n":
        proc.kill()
        return None  # every call starts a fresh interpreter, as before

    def stop() -> None:
        proc.kill()
        proc.wait()
        shutil.rmtree(folder, ignore_errors=True)

    atexit.register(stop)
    _host["path"] = path
    return path


def limit_file_size(limit: int) -> None:
    """Writes past `limit` bytes fail with EFBIG (SIGXFSZ ignored, so the write returns the
    error), as they fail with ENOSPC on a full disk; children inherit the limit."""
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def _host_connection(env: dict[str, str]) -> socket.socket | None:
    """A connection to the warm host for a command run in `env`, or None where only a
    fresh interpreter will do (no host, or `env` changes how Python itself starts)."""
    changed = {k for k in set(env) | set(os.environ) if env.get(k) != os.environ.get(k)}
    if any(k.startswith(_STARTUP_VARS) and k != "PYTHONIOENCODING" for k in changed):
        return None
    path = host_socket()
    if path is None:
        return None
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:
        conn.close()
        return None
    return conn


def warm(argv: list[str], data: bytes | None, cwd: Path | None, env: dict[str, str],
         timeout: float, fsize_limit: int | None = None) -> tuple[int, bytes, bytes] | None:
    """`python -m memctl ARGV` run by a child of the warm host: (exit code, stdout, stderr)
    as subprocess.run gives them, or None where only a fresh interpreter will do."""
    conn = _host_connection(env)
    if conn is None:
        return None
    in_r, in_w = os.pipe() if data is not None else (None, None)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    stdin = in_r if in_r is not None else os.open(os.devnull, os.O_RDONLY)
    request = {"argv": argv, "env": env, "cwd": str(cwd or Path.cwd()),
               "sigint_ignored": signal.getsignal(signal.SIGINT) == signal.SIG_IGN,
               "umask": _umask(), "fsize_limit": fsize_limit}
    raw = json.dumps(request).encode()
    with conn:
        socket.send_fds(conn, [len(raw).to_bytes(4, "big") + raw], [stdin, out_w, err_w])
        for fd in (stdin, out_w, err_w):
            os.close(fd)
        reader = conn.makefile("rb")
        pid = json.loads(_framed(reader))["pid"]
        try:
            out, err = _communicate(in_w, data, out_r, err_r, timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            raise subprocess.TimeoutExpired(["memctl", *argv], timeout) from None
        code = json.loads(_framed(reader))["code"]
    return code, out, err


class Spawned:
    """A `memctl` the warm host started in a session of its own, not waited for: the part
    of `subprocess.Popen` the crash tests use (pid, poll, wait, communicate, the pipes)."""

    def __init__(self, conn: socket.socket, out_r: int, err_r: int) -> None:
        self._conn = conn  # read unbuffered, so that select() sees the end when it comes
        self.pid: int = json.loads(_framed(_Exact(conn)))["pid"]
        self.returncode: int | None = None
        self._out, self._err = out_r, err_r
        self.stdout = os.fdopen(out_r, "rb")
        self.stderr = os.fdopen(err_r, "rb")

    def poll(self) -> int | None:
        if self.returncode is None and select.select([self._conn], [], [], 0)[0]:
            self.wait()
        return self.returncode

    def wait(self) -> int:
        if self.returncode is None:
            self.returncode = json.loads(_framed(_Exact(self._conn)))["code"]
            self._conn.close()
        return self.returncode

    def communicate(self) -> tuple[bytes, bytes]:
        out, err = _communicate(None, None, os.dup(self._out), os.dup(self._err), 600)
        self.wait()
        return out, err


def spawn(argv: list[str], cwd: Path | None = None,
          env: dict[str, str] | None = None) -> Spawned | None:
    """Start `python -m memctl ARGV` from the warm host in a new session (its process group
    is its pid, as with `Popen(start_new_session=True)`), or None where only a fresh
    interpreter will do."""
    full_env = dict(env if env is not None else os.environ)
    conn = _host_connection(full_env)
    if conn is None:
        return None
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    stdin = os.open(os.devnull, os.O_RDONLY)
    request = {"argv": argv, "env": full_env, "cwd": str(cwd or Path.cwd()),
               "sigint_ignored": False, "umask": _umask(), "session": True}
    raw = json.dumps(request).encode()
    socket.send_fds(conn, [len(raw).to_bytes(4, "big") + raw], [stdin, out_w, err_w])
    for fd in (stdin, out_w, err_w):
        os.close(fd)
    return Spawned(conn, out_r, err_r)


class _Exact:
    """`read(n)` of exactly n bytes from a socket (fewer only at its end), nothing ahead."""

    def __init__(self, conn: socket.socket) -> None:
        self._conn = conn

    def read(self, n: int) -> bytes:
        parts: list[bytes] = []
        while n > 0:
            chunk = self._conn.recv(n)
            if not chunk:
                break
            parts.append(chunk)
            n -= len(chunk)
        return b"".join(parts)


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _framed(reader: Any) -> bytes:
    head = reader.read(4)
    body = reader.read(int.from_bytes(head, "big")) if len(head) == 4 else b""
    if not body:  # not a memctl failure: say so rather than fail on an empty JSON text
        raise ConnectionError("the warm CLI host (tests/clihost.py) went away mid-command")
    return body  # type: ignore[no-any-return]


def _communicate(in_w: int | None, data: bytes | None, out_r: int, err_r: int,
                 timeout: float) -> tuple[bytes, bytes]:
    """Feed stdin and drain stdout and stderr until both close, as Popen.communicate."""
    chunks: dict[int, list[bytes]] = {out_r: [], err_r: []}
    sel = selectors.DefaultSelector()
    for fd in chunks:
        sel.register(fd, selectors.EVENT_READ)
    pending = memoryview(data or b"")
    if in_w is not None:
        os.set_blocking(in_w, False)
        sel.register(in_w, selectors.EVENT_WRITE)
    deadline = time.monotonic() + timeout
    try:
        while sel.get_map():
            left = deadline - time.monotonic()
            if left <= 0:
                raise subprocess.TimeoutExpired("memctl", timeout)
            for key, _ in sel.select(left):
                fd = key.fd
                if fd == in_w:
                    try:
                        pending = pending[os.write(fd, pending[: 1 << 16]) :]
                    except BrokenPipeError:
                        pending = pending[:0]
                    if not pending:
                        sel.unregister(fd)
                        os.close(fd)
                        in_w = None
                    continue
                chunk = os.read(fd, 1 << 16)
                if chunk:
                    chunks[fd].append(chunk)
                else:
                    sel.unregister(fd)
    finally:
        sel.close()
        for fd in (in_w, out_r, err_r):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
    return b"".join(chunks[out_r]), b"".join(chunks[err_r])


def ok(*args: str | Path, **kw: Any) -> Run:
    """Run and insist on success, showing stderr when it fails."""
    r = memctl(*args, **kw)
    assert r.code == 0, f"memctl {' '.join(map(str, args))} failed ({r.code}): {r.err}{r.out}"
    return r


def git(vault: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(vault), *args], capture_output=True, text=True,
                          check=True).stdout


def snapshot(vault: Path) -> dict[str, str]:
    """Every file below the vault (index and lock excluded) with its hash, plus git HEAD."""
    out: dict[str, str] = {}
    for p in sorted(vault.rglob("*")):
        rel = p.relative_to(vault).as_posix()
        if not p.is_file() or rel.startswith((".memctl/index", ".memctl/cache", ".git/")) \
                or rel == ".memctl/lock":
            continue
        out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    out["HEAD"] = git(vault, "rev-parse", "HEAD").strip()
    return out


def new_vault(tmp: Path, name: str = "vault") -> Path:
    """A new, empty vault at tmp/name, as `memctl init` makes it."""
    return init_vault(tmp / name)


_TEMPLATE: dict[tuple[tuple[str, str], ...], Path] = {}


def init_vault(target: Path) -> Path:
    """`memctl init target`, made by copying a vault that a real `memctl init` made once in
    this process: the suite sets up a few hundred empty vaults, and an init costs ~130 ms
    of CPU where a copy costs ~5. The init commit, config, templates, merge drivers and git
    index are the same bytes; nothing in them names the vault's folder. What else an init
    depends on is kept equal: memctl's and git's variables (one template per set of them),
    and no git config in the test's home (the init commit's author comes from git config).
    A folder that holds files (init adopts them) or a home with a git config gets a real
    init. Tests of init itself run `memctl init`."""
    home = Path(os.environ.get("HOME", "/nonexistent"))
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    settings = tuple(sorted(
        (k, v) for k, v in os.environ.items()
        if k.startswith(("MEMCTL_", "GIT_", "XDG_CONFIG_HOME")) and k != "MEMCTL_HOME"
    ))  # fmt: skip
    if (target.exists() and any(target.iterdir())) or (home / ".gitconfig").exists() \
            or (xdg / "git" / "config").exists():
        ok("init", target)
        return target
    if settings not in _TEMPLATE:
        made = Path(tempfile.mkdtemp(prefix="memctl-template-"))
        atexit.register(shutil.rmtree, made, ignore_errors=True)
        env = {**os.environ, "HOME": str(made), "MEMCTL_HOME": str(made)}
        env.pop("MEMCTL_VAULT", None)
        subprocess.run([sys.executable, "-m", "memctl", "init", str(made / "vault")], env=env,
                       capture_output=True, check=True)  # fmt: skip
        _TEMPLATE[settings] = made / "vault"
    shutil.copytree(_TEMPLATE[settings], target, symlinks=True, dirs_exist_ok=True)
    return target


def ctrl_c_stops() -> None:
    """Popen's preexec_fn for a process a test stops with SIGINT: a suite started in the
    background by a shell (`pytest ... &`) inherits SIGINT ignored, Python then installs no
    KeyboardInterrupt, and Ctrl-C would never reach the command under test."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def serve_pids(path: str | Path, *, below: bool = False) -> list[int]:
    """Pids of the live `memctl ... serve` processes for the vault at `path`, or with
    `below`, for any vault under that folder."""
    want = os.fsencode(str(path))
    prefix = want.rstrip(b"/") + b"/"
    found: list[int] = []
    proc = Path("/proc")
    for d in proc.iterdir() if proc.is_dir() else ():
        if not d.name.isdigit():
            continue
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
            state = (d / "stat").read_text(encoding="ascii", errors="replace")
        except OSError:
            continue
        if state.rsplit(")", 1)[-1].split()[:1] == ["Z"]:
            continue  # exited, not yet reaped by its parent
        if b"serve" not in argv:
            continue
        if any(a.startswith(prefix) if below else a == want for a in argv):
            found.append(int(d.name))
    return found
