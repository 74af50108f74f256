"""The client half of `memctl serve`, and the framing both halves speak.

Every prompt in Claude Code runs `memctl hook ...` as a new process; this module is what that
process adds to the interpreter's floor, so it imports only what `memctl --version` already
loads (os, json) and the C socket module. Each message is a 4-byte big-endian length, then
that many bytes of UTF-8 JSON; one request and one answer per connection.

Where the socket lives: `<vault>/.memctl/cache/serve.sock` (the cache folder is git-ignored
in every vault, so the socket is never committed), unless that path is past what an
AF_UNIX address holds (108 bytes with its NUL) or the folder (or, before it exists,
`.memctl/`) cannot be written (a read-only vault): then a name made of the vault path's
hash in $XDG_RUNTIME_DIR, else in /tmp/memctl-<uid>/. The lock that keeps one service per
vault sits beside the socket.
"""

from __future__ import annotations

# `_socket` is the C module under `socket`: the Python wrapper imports selectors, array and
# enum wrappers, ~4 ms on every hook for nothing the client uses
import _socket
import contextlib
import json
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

PROTOCOL = 1
MAX_MESSAGE = 64 << 20  # bytes: a longer length prefix is a broken peer, not a message
_UNIX_PATH_MAX = 107
# How long a hook waits for the service to accept: a live one accepts at once (the kernel
# queues the connection), so anything slower is a service too busy to beat in-process work.
CONNECT_WAIT = 0.05
_OFF = ("0", "off", "no", "false")


def enabled(env: Mapping[str, str]) -> bool:
    """MEMCTL_SERVE=0 (or off/no/false): never use nor start a service; else use it."""
    return env.get("MEMCTL_SERVE", "").strip().lower() not in _OFF


def _short_home() -> Path:
    base = os.environ.get("XDG_RUNTIME_DIR") or ""
    if base and Path(base).is_dir() and os.access(base, os.W_OK):
        return Path(base)
    return Path("/tmp") / f"memctl-{os.getuid()}"


def paths(root: str) -> tuple[str, str]:
    """(socket, lock) of the service for the vault at `root` (a resolved path)."""
    cache = Path(root) / ".memctl" / "cache"
    sock = cache / "serve.sock"
    # judged by the folder that holds it until it exists: a fresh clone has no cache
    # folder until a command writes one, and a place chosen by whether it exists yet
    # moved then, and a second service started beside the first
    writable = os.access(cache if cache.exists() else cache.parent, os.W_OK)
    if len(os.fsencode(sock)) <= _UNIX_PATH_MAX and writable:
        return str(sock), str(cache / "serve.lock")
    import hashlib  # only for a vault whose own path is too long or read-only

    tag = hashlib.sha256(os.fsencode(root)).hexdigest()[:20]
    home = _short_home()
    if len(os.fsencode(home / f"memctl-{tag}.sock")) > _UNIX_PATH_MAX:
        home = Path("/tmp") / f"memctl-{os.getuid()}"  # a runtime folder with a long name
    return str(home / f"memctl-{tag}.sock"), str(home / f"memctl-{tag}.lock")


def find_root(vault: str | None, env: Mapping[str, str], cwd: str | None) -> str | None:
    """The vault a hook or read command means, as `memctl.vault` finds it: --vault, then
    MEMCTL_VAULT (either must hold .memctl/), then walking up from `cwd`, then from the
    process's own working folder."""
    for cand in (vault, env.get("MEMCTL_VAULT")):
        if cand:
            p = Path(cand).expanduser().resolve()
            return str(p) if (p / ".memctl").is_dir() else None
    starts = [Path(cwd)] if cwd else []
    with contextlib.suppress(OSError):
        starts.append(Path.cwd())
    for start in starts:
        if not start.is_dir():
            continue
        cur = start.resolve()
        for d in (cur, *cur.parents):
            if (d / ".memctl").is_dir():
                return str(d)
    return None


def send(sock: Any, message: Any) -> None:
    # ASCII escapes: an environment value that is not UTF-8 arrives as lone surrogates,
    # which only an escape carries through intact
    data = json.dumps(message).encode("ascii")
    sock.sendall(len(data).to_bytes(4, "big") + data)


def receive(sock: Any) -> Any:
    """One message; ConnectionError when the peer closed first, ValueError when it is bad."""
    size = int.from_bytes(_exactly(sock, 4), "big")
    if size > MAX_MESSAGE:
        raise ValueError(f"message of {size} bytes")
    return json.loads(_exactly(sock, size).decode("utf-8"))


def _exactly(sock: Any, size: int) -> bytes:
    buf = bytearray()
    while len(buf) < size:
        chunk = sock.recv(min(size - len(buf), 1 << 20))
        if not chunk:
            raise ConnectionError("the other side closed the connection")
        buf += chunk
    return bytes(buf)


# what `call` says when there is no answer: nobody listens (start one), the service timed out
# (it is stuck: stop it), it went away mid-request, it serves another path (the vault moved)
# (or it answered that the request failed there: the caller does it, and shows what failed)
ABSENT, TIMEOUT, GONE, REFUSED, ERROR = "absent", "timeout", "gone", "refused", "error"


def call(root: str, request: dict[str, Any], timeout: float) -> tuple[dict[str, Any] | None, str]:
    """The service's answer to `request` and "ok", or None and why there is none."""
    sock_path, _ = paths(root)
    s = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        s.settimeout(CONNECT_WAIT)
        try:
            s.connect(sock_path)
        except OSError:
            return None, ABSENT
        s.settimeout(timeout)
        try:
            send(s, {"v": PROTOCOL, "root": root, "code": code(), **request})
            answer = receive(s)
        except TimeoutError:
            return None, TIMEOUT
        except (OSError, ValueError):
            return None, GONE
    finally:
        s.close()
    if not isinstance(answer, dict) or answer.get("root") != root:
        return None, REFUSED
    if not answer.get("ok"):
        # moved: a service for the new path (or for memctl's new code) is to start in its
        # place; anything else, this caller does the work itself, and starts nothing
        return None, REFUSED if answer.get("why") == "moved" else ERROR
    return answer, "ok"


def code() -> str:
    """Which memctl this process runs: its version and where its package lives. A service
    answers only the processes that run the same memctl (a hook from another install
    would get another memctl's answer); nothing is read from disk for it."""
    from memctl import version

    return f"{version.__version__}|{Path(version.__file__).parent}"


def request_env() -> dict[str, str]:
    """The environment a request carries: the service runs it in the caller's."""
    return dict(os.environ)


def start(root: str) -> None:
    """Start `memctl serve` for the vault in the background; never waits, never raises.

    Two hooks may both start one: the service that does not get the lock exits at once.
    None is started from a command run under a file-size limit (`ulimit -f`): the service
    would keep that one command's limit for its whole life, and every later search through
    it would fail to write the index with EFBIG.
    """
    import subprocess  # only when no service answered

    if _size_limited():
        return
    cmd = [sys.executable, "-m", "memctl", "--vault", root, "serve"]
    with contextlib.suppress(OSError):
        subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # outlives the hook and Claude Code's process group
            close_fds=True,
            cwd=root,
        )


def _size_limited() -> bool:
    try:
        import resource
    except ImportError:  # no such limits where there is no resource module
        return False
    try:
        soft, _ = resource.getrlimit(resource.RLIMIT_FSIZE)
    except (OSError, ValueError):
        return False
    return soft != resource.RLIM_INFINITY


def stop_stuck(root: str) -> None:
    """Kill the vault's service after it let a request run past its deadline: whatever holds
    it (a long call into C) would hold the next prompt too. Its pid is in its lock file."""
    import signal

    _, lock = paths(root)
    try:
        pid = int(Path(lock).read_text(encoding="ascii").split()[0])
    except (OSError, ValueError, IndexError):
        return
    if pid > 1 and pid != os.getpid():
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def ask(root: str, request: dict[str, Any], timeout: float) -> dict[str, Any] | None:
    """`call`, then act on a missing answer: start a service when none listens or the one
    there serves another path, stop one that is stuck. None: do the work in-process."""
    answer, why = call(root, request, timeout)
    if answer is not None:
        return answer
    if why == TIMEOUT:
        stop_stuck(root)
    if why != ERROR:
        start(root)
    return None
