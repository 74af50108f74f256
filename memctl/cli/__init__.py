"""The CLI: a thin typer layer over `memctl.Vault`. The one place errors become exit codes."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from memctl.errors import MemctlError
from memctl.version import __version__

if TYPE_CHECKING:
    from memctl.vault import Vault

app = typer.Typer(
    name="memctl",
    help="Long-term memory for LLM agents: a git-versioned vault of markdown files with "
    "verbatim transcripts and cited, verified notes.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,
)


class State:
    """Global options, resolved once in the callback and read by every command."""

    vault_path: str | None = None


state = State()
_VAULT_HELP = "Vault folder (default: $MEMCTL_VAULT, else walk up from cwd)."


def _version(value: bool) -> None:
    if value:
        print(f"memctl {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    vault: Annotated[
        str | None,
        typer.Option(
            "--vault", help=_VAULT_HELP + " Also accepted after the command."
        ),
    ] = None,
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """Long-term memory for LLM agents."""
    state.vault_path = vault


def _set_vault(ctx: Any, param: Any, value: str | None) -> None:
    if value is not None:
        state.vault_path = value


def command() -> Any:
    """The click command behind `app`, with `--vault` accepted after any command as well.

    People type `memctl status --vault X` as often as `memctl --vault X status`; click only
    knows a group's options before the subcommand, so every leaf command gets its own copy.
    """
    import typer.main
    from typer.core import TyperOption

    root = typer.main.get_command(app)

    def add(cmd: Any) -> None:
        subs = getattr(cmd, "commands", None)
        if subs is not None:
            for sub in subs.values():
                add(sub)
        elif cmd is not root and not any(p.name == "vault" for p in cmd.params):
            cmd.params.append(
                TyperOption(
                    param_decls=["--vault"],
                    metavar="PATH",
                    help=_VAULT_HELP,
                    expose_value=False,
                    callback=_set_vault,
                    is_eager=True,
                )
            )

    add(root)
    return root


def open_vault(*, recover: bool = True, **flags: Any) -> Vault:
    """The single point where the CLI turns options and environment into a Vault.

    Opening finishes what a killed command left (one line on stderr says what), unless
    `recover` is off, for `memctl doctor` to report it first.
    """
    from memctl.vault import Vault

    return Vault.open(
        state.vault_path, env=dict(os.environ), notice=_notice, recover=recover, **flags
    )


def _notice(line: str) -> None:
    sys.stderr.write(f"memctl: {line}\n")


def main(argv: list[str] | None = None) -> None:
    """Entry point: run the app and render any MemctlError as one line on stderr."""
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        print(f"memctl {__version__}")
        return
    from memctl.cli import commands  # noqa: F401 - registers the commands on `app`

    try:
        command()(args=args, prog_name="memctl", standalone_mode=True)
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
