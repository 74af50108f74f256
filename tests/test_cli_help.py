"""What `--help` promises a new user: one name per meaning, one metavar style, an example
in every command's help, and help texts that say what the command does."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from memctl.faces.cli import command, commands  # noqa: F401 - registers the commands


def _walk(cmd: Any, path: list[str]) -> Iterator[tuple[str, Any, str]]:
    ctx = cmd.context_class(cmd, info_name=" ".join(path), terminal_width=100,
                            max_content_width=100)
    yield " ".join(path), cmd, cmd.get_help(ctx)
    for name in getattr(cmd, "list_commands", lambda _c: [])(ctx):
        sub = cmd.get_command(ctx, name)
        if sub is not None and not sub.hidden:
            yield from _walk(sub, [*path, name])


HELP = {name: (cmd, text) for name, cmd, text in _walk(command(), ["memctl"])}
LEAVES = [name for name, (cmd, _) in HELP.items() if not hasattr(cmd, "list_commands")]


def test_the_walk_sees_every_command() -> None:
    assert len(LEAVES) >= 28 and "memctl hook stop" in LEAVES and "memctl init" in LEAVES


@pytest.mark.parametrize("name", sorted(HELP))
def test_every_command_help_ends_with_an_example(name: str) -> None:
    text = HELP[name][1]
    if name == "memctl":
        return  # the root lists the commands; each of them has its own example
    block = text.split("Example", 1)
    assert len(block) == 2, f"{name} --help has no example"
    lines = [ln.strip() for ln in block[1].splitlines()[1:] if ln.strip()]
    assert lines and all(ln.startswith(("memctl ", "echo ")) for ln in lines), lines
    # the example runs the command it is the help of
    assert all(name.removeprefix("memctl ").split()[0] in ln for ln in lines), lines


@pytest.mark.parametrize("name", sorted(HELP))
def test_one_metavar_style(name: str) -> None:
    """Options read `--user USER`, arguments `NAME`, `[NAME]`, `NAME...`; no `<str>`,
    `{paths}` or lower-case argument names, whichever type or position typer saw."""
    text = HELP[name][1]
    usage = text.splitlines()[0]
    assert "{" not in usage and "<" not in usage, usage
    words = usage.split("[OPTIONS]", 1)[1].split() if "[OPTIONS]" in usage else []
    for w in words:
        bare = w.strip("[]").removesuffix("...")
        assert bare == bare.upper(), f"{name}: argument {w!r} is not in capitals"
    for line in text.splitlines():
        m = re.match(r"\s+(-[-\w]+(?:, -[-\w]+)*)( \S+)?\s", line + " ")
        if m and m.group(2):
            meta = m.group(2).strip()
            assert re.fullmatch(r"[A-Z_.]+", meta), f"{name}: {line.strip()!r}"


def test_user_means_the_memctl_user_everywhere() -> None:
    """`--user` takes the memctl user in every command (`--as` is its older alias); the
    settings file for every project is `--global`, no longer a second `--user`."""
    seen = 0
    for name, (cmd, _) in HELP.items():
        for p in cmd.params:
            opts = set(p.opts) | set(p.secondary_opts)
            if "--as" in opts:
                assert "--user" in opts, f"{name}: --as without --user"
            if "--user" in opts:
                seen += 1
                assert not p.is_flag, f"{name}: --user is a flag here, not a user"
                assert p.metavar == "USER", f"{name}: --user {p.metavar}"
    assert seen >= 11
    assert "--global" in HELP["memctl hooks install"][1]
    for event in ("session-start", "user-prompt-submit", "stop", ):
        assert "--user" in HELP[f"memctl hook {event}"][1]
    assert "--user" in HELP["memctl mcp"][1]


def test_help_texts_say_what_the_command_does() -> None:
    # Stop ingests and curates; it does not recall
    assert "Recall as" not in HELP["memctl hook stop"][1]
    assert "Ingest" in HELP["memctl hook stop"][1]
    # show takes the turn form recall prints
    assert "64628a#t3" in HELP["memctl show"][1]


def test_each_command_is_loaded_from_the_module_that_registers_it() -> None:
    """`memctl X` imports only X's module (faces/cli/homes.py): a command missing from that
    table would load every module, and a wrong entry would fail to find the command."""
    from memctl.faces.cli.homes import HOMES
    from memctl.faces.cli.root import _name, app

    registered = {_name(c): c.callback.__module__ for c in app.registered_commands}
    for g in app.registered_groups:
        [module] = {c.callback.__module__ for c in g.typer_instance.registered_commands}
        registered[g.name] = module
    assert {k: f"memctl.faces.cli.{v}" for k, v in HOMES.items()} == registered


@pytest.mark.parametrize(
    ("asked", "same_as"),
    [
        (["-h"], ["--help"]),
        (["help"], ["--help"]),
        (["help", "search"], ["search", "--help"]),
        (["search", "-h"], ["search", "--help"]),
        (["help", "hooks", "install"], ["hooks", "install", "--help"]),
    ],
)
def test_h_and_help_are_what_help_prints(asked: list[str], same_as: list[str]) -> None:
    """`memctl -h` and `memctl help [COMMAND]` are what a new user types first."""
    from util import memctl

    got, want = memctl(*asked), memctl(*same_as)
    assert got.code == 0, got.err
    assert got.out == want.out and want.out.startswith("Usage: memctl")
