"""The typer app behind `memctl`: the root options, and the click command built from it.

Imported only when a command line needs parsing (see `memctl.faces.cli.main`): typer, click and
the command modules cost tens of milliseconds that the per-prompt hook does not pay.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from memctl.faces.cli.common import VAULT_HELP, state
from memctl.version import __version__

app = typer.Typer(
    name="memctl",
    help="Long-term memory for LLM agents: a git-versioned vault of markdown files with "
    "verbatim transcripts and cited, verified notes.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,
    # `-h` as well: it is what people try first, and no command uses it for anything else
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        print(f"memctl {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    vault: Annotated[
        str | None,
        typer.Option("--vault", help=VAULT_HELP + " Also accepted after the command."),
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


# The commands built, by `only`: `memctl serve` runs a read command per request, and
# building one from its typed signature (typer's get_type_hints and inspect) costs ~6 ms,
# more than a search. A click command holds no state between invocations; each run gets a
# context of its own.
_BUILT: dict[str | None, Any] = {}


def command(only: str | None = None) -> Any:
    """The click command behind `app`, with `--vault` accepted after any command as well.

    People type `memctl status --vault X` as often as `memctl --vault X status`; click only
    knows a group's options before the subcommand, so every leaf command gets its own copy.
    With `only`, the group holds just that command (or group of commands), when it exists.
    """
    built = _BUILT.get(only)
    if built is None:
        built = _BUILT[only] = _build(only)
    return built


def _build(only: str | None) -> Any:
    import typer.main
    from typer.core import TyperOption

    saved = app.registered_commands, app.registered_groups
    if only is not None:
        # build the one command asked for: converting all of them to click costs ~25 ms
        app.registered_commands = [c for c in saved[0] if _name(c) == only]
        app.registered_groups = [g for g in saved[1] if g.name == only]
        if not app.registered_commands and not app.registered_groups:
            app.registered_commands, app.registered_groups = saved  # click says what is wrong
    try:
        root = typer.main.get_command(app)
    finally:
        app.registered_commands, app.registered_groups = saved

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
                    help=VAULT_HELP,
                    expose_value=False,
                    callback=_set_vault,
                    is_eager=True,
                )
            )

    add(root)
    _tidy(root, [])
    return root


# Option metavars that are not the option's own name in capitals.
_METAVARS = {"to": "REV", "since": "WHEN", "until": "WHEN", "budget": "TOKENS", "limit": "N",
             "debounce": "SECONDS", "ingest": "FOLDER", "as": "USER"}


def _tidy(cmd: Any, path: list[str]) -> None:
    """One metavar style in every help text, and each command's example at its end.

    Options read `--user USER`, arguments `NAME`, `[NAME]` when optional and `NAME...` when
    repeatable: typer alone mixes `<str>`, `{paths}...` and `[path]` by type and position.
    """
    import types

    from memctl.faces.cli.examples import epilog

    if path and cmd.epilog is None:
        cmd.epilog = epilog(" ".join(path))
    for p in cmd.params:
        if getattr(p, "param_type_name", "") == "argument":
            if p.metavar is None:
                p.make_metavar = types.MethodType(_argument_metavar, p)
        elif not p.is_flag and not p.count and p.metavar is None:
            name = max(p.opts, key=len).lstrip("-")
            p.metavar = _METAVARS.get(name, name.upper().replace("-", "_"))
    for name, sub in (getattr(cmd, "commands", None) or {}).items():
        _tidy(sub, [*path, name])


def _argument_metavar(self: Any, ctx: Any = None, *, usage: bool = False) -> str:
    var = str(self.name or "").upper()
    if self.nargs != 1:
        var += "..."
    return f"[{var}]" if usage and not self.required else var


def _name(info: Any) -> str:
    """The command name typer gives a registered function (its own rule)."""
    return str(info.name or info.callback.__name__.lower().replace("_", "-"))
