"""The CLI: a thin typer layer over `memctl.Vault`. The one place errors become exit codes.

typer, click and the command modules load only when a command line needs parsing, and
then only the command asked for is built (`memctl.cli.root`). The hooks Claude Code runs
on every prompt come in the one form `memctl hooks install` writes
(`memctl [--vault V] hook EVENT [--as U]`) and go straight to their handler.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.errors import MemctlError
from memctl.version import __version__

if TYPE_CHECKING:
    from memctl.vault import Vault


class State:
    """Global options, resolved once in the callback and read by every command."""

    vault_path: str | None = None


state = State()
_VAULT_HELP = "Vault folder (default: $MEMCTL_VAULT, else walk up from cwd)."


def __getattr__(name: str) -> Any:
    """`app` and `command` live in memctl.cli.root, imported on first use (typer with it)."""
    if name in ("app", "command"):
        from memctl.cli import root

        return getattr(root, name)
    raise AttributeError(f"module 'memctl.cli' has no attribute {name!r}")


def open_vault(*, recover: bool = True, one_shot: bool = True, **flags: Any) -> Vault:
    """The single point where the CLI turns options and environment into a Vault.

    Opening finishes what a killed command left (one line on stderr says what), unless
    `recover` is off, for `memctl doctor` to report it first. A command runs once and
    exits (`one_shot`), except those that serve until stopped (`mcp`, `watch`).
    """
    from memctl.vault import Vault

    return Vault.open(
        state.vault_path,
        env=dict(os.environ),
        notice=_notice,
        recover=recover,
        one_shot=one_shot,
        **flags,
    )


def _notice(line: str) -> None:
    sys.stderr.write(f"memctl: {line}\n")


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app and render any MemctlError as one line on stderr."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        print(f"memctl {__version__}")
        return
    hook = _hook_call(args)
    if hook is not None:
        run_hook(*hook)
        return
    from memctl.cli import commands  # noqa: F401 - registers the commands on `app`
    from memctl.cli.root import command

    try:
        command(_command_name(args))(args=args, prog_name="memctl", standalone_mode=True)
    except MemctlError as exc:
        sys.stderr.write(f"memctl: error: {_one_line(str(exc))}\n")
        sys.exit(exc.exit_code)
    except KeyboardInterrupt:
        sys.stderr.write("memctl: interrupted; the vault is unchanged\n")
        sys.exit(130)
    except BrokenPipeError:
        # `memctl search x | head` closes the pipe early; that is not an error.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    except OSError as exc:
        # a disk or filesystem fault the library did not name itself: still one line
        where = f"{exc.filename}: " if exc.filename else ""
        sys.stderr.write(f"memctl: error: {where}{exc.strerror or exc}\n")
        sys.exit(1)
    except Exception as exc:
        if not type(exc).__module__.startswith(("git.", "gitdb")):
            raise
        # a git fault (a damaged repository, a missing object): one line, as for any other
        from memctl.history import git_error

        sys.stderr.write(f"memctl: error: {_one_line(str(git_error(exc)))}\n")
        sys.exit(1)


def _one_line(text: str) -> str:
    return " ".join(text.split("\n")[0].split()) if "\n" in text else text


def vault_path_arg(p: str | None) -> Path | None:
    return Path(p) if p else None


def _command_name(args: list[str]) -> str | None:
    """The command a command line names, past the root's own `--vault`; None for anything
    else (`--help`, no command), which needs the whole app."""
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--vault":
            i += 2
        elif a.startswith("--vault="):
            i += 1
        else:
            return None if a.startswith("-") else a
    return None


HOOK_EVENTS = ("session-start", "user-prompt-submit", "stop")


def _hook_call(args: list[str]) -> tuple[str, str | None, str | None, bool] | None:
    """(event, vault, user, worker) for `memctl [--vault V] hook EVENT [--as U] [--vault V]`
    (and the Stop worker's `--worker`); None for any other command line, typer's to parse."""
    vault: str | None = None
    user: str | None = None
    worker = False
    event: str | None = None
    i = 0
    while i < len(args):
        a = args[i]
        name, eq, value = a.partition("=")
        if name in (("--vault", "--as") if event is not None else ("--vault",)):
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
    from memctl.hooks.handlers import handle

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
