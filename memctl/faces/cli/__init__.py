"""The CLI: a thin typer layer over `memctl.Vault`. The one place errors become exit codes.

typer, click and the command modules load only when a command line needs parsing, and
then only the module of the command asked for is imported (`memctl.faces.cli.homes`) and
only that command is built (`memctl.faces.cli.root`). The hooks Claude Code runs
on every prompt come in the one form `memctl hooks install` writes
(`memctl [--vault V] hook EVENT [--user U]`) and go straight to their handler.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from memctl.errors import MemctlError
from memctl.faces.cli.common import VAULT_HELP, open_vault, state, vault_path_arg
from memctl.faces.cli.hookcall import HOOK_EVENTS, SERVED, done, hook_call, run_hook, served
from memctl.version import __version__


def __getattr__(name: str) -> Any:
    """`app` and `command` live in memctl.faces.cli.root, imported on first use (typer with it)."""
    if name in ("app", "command"):
        from memctl.faces.cli import root

        return getattr(root, name)
    raise AttributeError(f"module 'memctl.faces.cli' has no attribute {name!r}")


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app and render any MemctlError as one line on stderr."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        print(f"memctl {__version__}")
        return
    if args[:1] == ["help"]:
        args = [*args[1:], "--help"]  # `memctl help [COMMAND...]`, as git and pip spell it
    hook = hook_call(args)
    # this process is memctl itself (not a caller's main(argv)): a served answer ends it
    entry = argv is None
    if hook is not None:
        run_hook(*hook, exit_when_served=entry)
        return
    if _command_name(args) in SERVED:
        code = served(args)
        if code is not None:
            if entry:
                done(code)
            sys.exit(code)
    execute(args)


def execute(args: list[str]) -> None:
    """Parse and run one command line in this process; exits (SystemExit) as a command does.

    `memctl serve` runs the read commands through this same function, so an answer from the
    service is the one this process would have printed.
    """
    from memctl.faces.cli.homes import load
    from memctl.faces.cli.root import command

    name = _command_name(args)
    load(name)  # only the module of the command asked for (all of them for --help)
    try:
        command(name)(args=args, prog_name="memctl", standalone_mode=True)
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
        from memctl.vault import Vault

        sys.stderr.write(f"memctl: error: {_one_line(str(Vault.git_error(exc)))}\n")
        sys.exit(1)


def _one_line(text: str) -> str:
    return " ".join(text.split("\n")[0].split()) if "\n" in text else text


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


__all__ = [
    "HOOK_EVENTS", "VAULT_HELP", "execute", "main", "open_vault", "run_hook", "state",
    "vault_path_arg",
]  # fmt: skip
