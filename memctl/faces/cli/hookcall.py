"""The hook fast path: `memctl [--vault V] hook EVENT [--user U]` goes straight to its handler,
without typer, because Claude Code runs it on every prompt.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

HOOK_EVENTS = ("session-start", "user-prompt-submit", "stop", "pre-compact")
# The read commands `memctl serve` answers when it runs: what people and agents run often
SERVED = ("search", "recall", "context")


def hook_call(args: list[str]) -> tuple[str, str | None, str | None, bool] | None:
    """(event, vault, user, worker) for `memctl [--vault V] hook EVENT [--user U] [--vault V]`
    (`--as` is the older name of `--user`)
    (and the Stop worker's `--worker`); None for any other command line, typer's to parse."""
    vault: str | None = None
    user: str | None = None
    worker = False
    event: str | None = None
    i = 0
    while i < len(args):
        a = args[i]
        name, eq, value = a.partition("=")
        if name in (("--vault", "--user", "--as") if event is not None else ("--vault",)):
            if not eq:
                if i + 1 >= len(args) or args[i + 1].startswith("-"):
                    return None
                value = args[i + 1]
                i += 1
            if name == "--vault":
                vault = value
            else:
                user = value
        elif a == "--worker" and event == "stop":
            worker = True
        elif event is None and a == "hook" and i + 1 < len(args) and args[i + 1] in HOOK_EVENTS:
            event = args[i + 1]
            i += 1
        else:
            return None
        i += 1
    return None if event is None else (event, vault, user, worker)


# What the process guard adds to the deadline: the recall's own deadline (a thread) answers
# first whenever Python can switch threads; the guard is for when it cannot.
_GRACE = 0.5
_DEADLINE = 8.0  # memctl.faces.hooks.handlers.DEADLINE (a test holds the two equal)


def _guarded(name: str, raw: bytes, vault_path: str | None, as_user: str | None) -> Any:
    """`handle` in a forked child the parent waits for, up to the deadline, then kills.

    The recall's deadline is a thread that waits for the work; but a long call into C (a
    regex backtracking on a long line, a YAML parser expanding aliases) keeps the GIL, so
    the waiting thread never wakes and the hook ran past Claude Code's timeout. A separate
    process waiting on a pipe is never held up by what the work does, and killing the child
    frees whatever memory it grew.
    """
    import select
    import signal
    import time

    from memctl.faces.hooks.handlers import deadline, handle, late, root_of

    limit = deadline(os.environ)
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: do the work, send the answer, never return into the CLI
        code = 0
        try:
            os.close(r)
            res = handle(name, raw, vault_path=vault_path, user=as_user)
            data = json.dumps({"stdout": res.stdout}).encode()
            while data:
                data = data[os.write(w, data) :]
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    chunks: list[bytes] = []
    ends = time.monotonic() + limit + _GRACE
    done = False
    while not done:
        left = ends - time.monotonic()
        if left <= 0 or not select.select([r], [], [], left)[0]:
            break
        chunk = os.read(r, 1 << 16)
        chunks.append(chunk)
        done = not chunk
    os.close(r)
    if not done:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        os.waitpid(pid, 0)
    try:
        stdout = json.loads(b"".join(chunks))["stdout"] if done else None
    except (ValueError, KeyError, TypeError):
        stdout = None
    if stdout is None:
        return late(root_of(raw, vault_path, os.environ), name, limit)
    from memctl.faces.hooks.handlers import HookOutcome

    return HookOutcome(stdout=stdout)


def _service_root(vault_path: str | None, raw: bytes) -> str | None:
    """The vault whose service should answer this hook, or None: do it in-process."""
    from memctl.faces.serve import wire

    if not wire.enabled(os.environ):
        return None
    try:
        payload = json.loads(raw) if raw.strip() else {}
    except ValueError:
        return None  # the handler logs what is wrong with it
    cwd = payload.get("cwd") if isinstance(payload, dict) else None
    return wire.find_root(vault_path, os.environ, cwd if isinstance(cwd, str) else None)


def _served_hook(name: str, raw: bytes, vault_path: str | None, as_user: str | None) -> str | None:
    """The service's answer to the hook (what to print), or None: do it here."""
    from memctl.faces.serve import wire

    root = _service_root(vault_path, raw)
    if root is None:
        return None
    try:  # as memctl.faces.hooks.handlers.deadline, without importing it on the fast path
        limit = float(os.environ.get("MEMCTL_HOOK_DEADLINE") or _DEADLINE)
    except ValueError:
        limit = _DEADLINE
    request = {"op": "hook", "name": name, "raw": raw.decode("utf-8", "replace"),
               "user": as_user, "env": wire.request_env(), "cwd": _cwd()}  # fmt: skip
    answer = wire.ask(root, request, limit + _GRACE)
    return None if answer is None else str(answer.get("stdout") or "")


def _cwd() -> str | None:
    try:
        return str(Path.cwd())
    except OSError:
        return None


def run_hook(
    name: str, vault_path: str | None, as_user: str | None, worker: bool = False,
    exit_when_served: bool = False,
) -> None:  # fmt: skip
    """Run one Claude Code hook: its JSON on stdin, its answer (maybe nothing) on stdout.

    The vault's resident service (`memctl serve`) answers when it runs, and is started for
    the next hook when it does not; otherwise, or when it fails, the work is done here.
    `exit_when_served`: this process is the hook (not a caller's): once the service's
    answer is written, it ends at once (`done`).
    """
    try:
        raw = b"" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.buffer.read()
    except (OSError, ValueError):
        raw = b""
    answer = None if worker else _served_hook(name, raw, vault_path, as_user)
    if answer is not None:
        _write(answer)
        if exit_when_served:
            done(0)
        return
    from memctl.faces.hooks.handlers import handle

    if name in ("session-start", "user-prompt-submit") and hasattr(os, "fork"):
        res = _guarded(name, raw, vault_path, as_user)
    else:
        res = handle(name, raw, vault_path=vault_path, user=as_user, worker=worker)
    _write(res.stdout)
    if res.late:
        # the recall still running past its deadline is abandoned, not waited for
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.flush()
        os._exit(0)


def done(code: int) -> NoReturn:
    """End this process now, its output written: what a served hook or command leaves is
    the interpreter's teardown (every module and object freed, one by one), ~3-5 ms of a
    ~30 ms process paid after the answer is complete, on every prompt. Nothing of memctl's
    is left to finish (no file open for writing, no exit handler), so none is skipped."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):
            stream.flush()
    os._exit(code)


def _write(text: str) -> None:
    if text:
        try:
            sys.stdout.write(text)
            sys.stdout.flush()
        except (OSError, ValueError):
            pass


def _vault_flag(args: list[str]) -> str | None:
    """The last `--vault V` on a command line (the CLI accepts it before or after the command)."""
    found = None
    for i, a in enumerate(args):
        if a == "--":
            break
        if a == "--vault" and i + 1 < len(args):
            found = args[i + 1]
        elif a.startswith("--vault="):
            found = a.partition("=")[2]
    return found


def served(args: list[str]) -> int | None:
    """Run a read command (`SERVED`) through the vault's service: its exit code once its
    output is written, or None to run it here (no service, or it did not answer)."""
    from memctl.faces.serve import wire

    if not wire.enabled(os.environ) or {"--help", "-h"} & set(args):
        return None
    root = wire.find_root(_vault_flag(args), os.environ, None)
    if root is None:
        return None  # the in-process command says what is wrong
    env = wire.request_env()
    tty = sys.stdout.isatty()
    if tty and "COLUMNS" not in env:
        with contextlib.suppress(OSError):
            env["COLUMNS"] = str(os.get_terminal_size(sys.stdout.fileno()).columns)
    request = {"op": "cli", "args": args, "env": env, "cwd": _cwd(), "tty": tty}
    answer = wire.ask(root, request, 600.0)
    if answer is None:
        return None
    with contextlib.suppress(OSError, ValueError):
        sys.stderr.write(str(answer.get("stderr") or ""))
        sys.stdout.write(str(answer.get("stdout") or ""))
        sys.stdout.flush()
    code = answer.get("code")
    return code if isinstance(code, int) else 1
