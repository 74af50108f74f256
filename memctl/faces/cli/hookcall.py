"""The hook fast path: `memctl [--vault V] hook EVENT [--user U]` goes straight to its handler,
without typer, because Claude Code runs it on every prompt.
"""

from __future__ import annotations

import contextlib
import os
import sys

HOOK_EVENTS = ("session-start", "user-prompt-submit", "stop", "pre-compact")


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


def run_hook(name: str, vault_path: str | None, as_user: str | None, worker: bool = False) -> None:
    """Run one Claude Code hook: its JSON on stdin, its answer (maybe nothing) on stdout."""
    from memctl.faces.hooks.handlers import handle

    try:
        raw = b"" if sys.stdin is None or sys.stdin.isatty() else sys.stdin.buffer.read()
    except (OSError, ValueError):
        raw = b""
    res = handle(name, raw, vault_path=vault_path, user=as_user, worker=worker)
    if res.stdout:
        try:
            sys.stdout.write(res.stdout)
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
    if res.late:
        # the recall still running past its deadline is abandoned, not waited for
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.flush()
        os._exit(0)
