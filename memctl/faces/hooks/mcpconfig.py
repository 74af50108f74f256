"""Register memctl's MCP server with Claude Code, beside its hooks, and describe memctl as a
Claude Code plugin.

Claude Code reads MCP servers from three places (its MCP docs, "installation scopes"), which
match the three settings files `memctl hooks install` writes to:

- `--project` (this machine, this project): `~/.claude.json`, under
  `projects.<project folder>.mcpServers` (Claude Code's "local" scope);
- `--portable` (the team's, committed): the project's `.mcp.json`, `mcpServers`;
- `--global` (every project): `~/.claude.json`, top-level `mcpServers` ("user" scope).

Only the `memctl` entry is added, updated or removed; everything else in the file stays
exactly as it was, key order too, as with the hooks.

The plugin (`.claude-plugin/plugin.json` in memctl's repository) is what `plugin_manifest`
returns: the same hooks as `memctl hooks install --portable` and the same MCP server, with
commands that find memctl on PATH and the vault from the session's folder or $MEMCTL_VAULT.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path
from typing import Any

from memctl.errors import MemctlError
from memctl.faces.hooks import (
    EVENTS,
    HooksResult,
    finish,
    hook_command,
    load_settings,
    remove_file,
    render_settings,
)
from memctl.version import __version__

SERVER = "memctl"


def mcp_location(where: str, project_dir: Path | None = None,
                 home: Path | None = None) -> tuple[Path, tuple[str, ...]]:  # fmt: skip
    """The file and the key path of the `mcpServers` object for a settings location."""
    home = home or Path.home()
    project = (project_dir or Path.cwd()).resolve()
    if where == "user":
        return home / ".claude.json", ("mcpServers",)
    if where == "project":
        return home / ".claude.json", ("projects", str(project), "mcpServers")
    if where == "shared":
        return project / ".mcp.json", ("mcpServers",)
    raise MemctlError(f"unknown MCP location {where!r}")


def memctl_argv() -> list[str]:
    """How Claude Code should start this memctl, as a command and its arguments."""
    here = Path(sys.executable).with_name("memctl")
    if here.is_file():
        return [str(here)]
    found = shutil.which("memctl")
    return [found] if found else [sys.executable, "-m", "memctl"]


def mcp_entry(vault_root: Path | None, user: str | None = None,
              base: list[str] | None = None) -> dict[str, Any]:  # fmt: skip
    """The `mcpServers.memctl` entry: a stdio server running `memctl mcp`."""
    argv = list(base) if base is not None else memctl_argv()
    args = argv[1:]
    if vault_root is not None:
        args += ["--vault", str(vault_root)]
    args.append("mcp")
    if user:
        args += ["--user", user]
    return {"type": "stdio", "command": argv[0], "args": args}


def _servers(data: dict[str, Any], keys: tuple[str, ...], path: Path,
             create: bool) -> dict[str, Any] | None:  # fmt: skip
    node: Any = data
    for i, key in enumerate(keys):
        nxt = node.get(key)
        if nxt is None:
            if not create:
                return None
            nxt = node[key] = {}
        if not isinstance(nxt, dict):
            where = ".".join(keys[: i + 1])
            raise MemctlError(f'"{where}" is not an object; fix it by hand', path)
        node = nxt
    return node  # type: ignore[no-any-return]


def install_mcp(path: Path, keys: tuple[str, ...], entry: dict[str, Any], *,
                dry_run: bool = False) -> HooksResult:  # fmt: skip
    """Add (or update in place) the memctl MCP server in the file at `path`; idempotent."""
    data, before, indent = load_settings(path)
    res = HooksResult("install", str(path), False, dry_run)
    res.commands[SERVER] = " ".join([entry["command"], *entry["args"]])
    servers = _servers(data, keys, path, create=True)
    assert servers is not None
    old = servers.get(SERVER)
    if old != entry:
        (res.updated if old is not None else res.added).append(f"mcpServers.{SERVER}")
        servers[SERVER] = entry
    return finish(res, path, before, render_settings(data, indent), dry_run)


def uninstall_mcp(path: Path, keys: tuple[str, ...], *, dry_run: bool = False) -> HooksResult:
    """Remove the memctl MCP server (only it) from the file at `path`."""
    data, before, indent = load_settings(path)
    res = HooksResult("uninstall", str(path), False, dry_run)
    servers = _servers(data, keys, path, create=False) if path.exists() else None
    if not servers or SERVER not in servers:
        return res
    del servers[SERVER]
    res.removed.append(f"mcpServers.{SERVER}")
    if not servers and keys == ("mcpServers",):
        del data["mcpServers"]
    if not data and path.name == ".mcp.json":
        return remove_file(res, path, before, dry_run)  # the file held only memctl's server
    return finish(res, path, before, render_settings(data, indent), dry_run)


PLUGIN_HOOKS = "./claude-code/hooks.json"


def plugin_files() -> dict[str, str]:
    """memctl as a Claude Code plugin whose root is memctl's repository: the manifest, and
    the hooks file it names. The hooks sit outside the standard `hooks/hooks.json` (which
    Claude Code loads on its own, and refuses when the manifest names it too); the MCP
    server is inline in the manifest."""
    hooks: dict[str, list[dict[str, Any]]] = {}
    for event, name, timeout in EVENTS:
        command = hook_command(name, None, base="memctl")
        one = {"type": "command", "command": command, "timeout": timeout}
        hooks.setdefault(event, []).append({"hooks": [one]})
    manifest = {
        "name": "memctl",
        "version": __version__,
        "description": "Long-term memory for Claude Code as a git-versioned vault of markdown "
        "notes: recall on every prompt, sessions saved and curated with cited claims, and "
        "the vault as MCP tools.",
        "author": {"name": "memctl"},
        "license": "MIT",
        "keywords": ["memory", "mcp", "hooks", "git", "markdown"],
        "hooks": PLUGIN_HOOKS,
        "mcpServers": {SERVER: mcp_entry(None, base=["memctl"])},
    }
    hooks_file = {
        "description": "memctl: context at session start, recall on every prompt, the session "
        "saved and curated when it stops or is compacted",
        "hooks": hooks,
    }
    return {
        ".claude-plugin/plugin.json": render_settings(manifest, 2),
        PLUGIN_HOOKS.removeprefix("./"): render_settings(hooks_file, 2),
    }
