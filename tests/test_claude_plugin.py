"""One-step Claude Code install: `memctl hooks install` registers memctl's MCP server where
Claude Code reads it for the same settings, and memctl ships as a Claude Code plugin whose
layout is checked here against what Claude Code's plugin docs require."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from util import ROOT, memctl, new_vault, ok

from memctl.faces.cli.hookcall import hook_call
from memctl.faces.hooks import EVENTS, is_ours
from memctl.faces.hooks.mcpconfig import plugin_files

# ---- the plugin layout, against Claude Code's plugin reference -------------------------------

# plugin.json's documented top-level fields (plugins reference, "Fields"); any other key is
# stripped by Claude Code with a warning, so a typo would silently drop a component
MANIFEST_FIELDS = {
    "name", "version", "description", "author", "homepage", "repository", "license",
    "keywords", "commands", "agents", "skills", "hooks", "mcpServers", "outputStyles",
    "lspServers", "userConfig", "channels", "monitors",
}  # fmt: skip
COMPONENT_PATHS = ("commands", "agents", "skills", "hooks", "mcpServers", "outputStyles",
                   "lspServers")  # fmt: skip
# the hook events Claude Code documents (hooks reference)
HOOK_EVENTS = {
    "PreToolUse", "PostToolUse", "PostToolUseFailure", "Notification", "UserPromptSubmit",
    "Stop", "SubagentStart", "SubagentStop", "PreCompact", "SessionStart", "SessionEnd",
    "PermissionRequest",
}  # fmt: skip
KEBAB = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
SEMVER = re.compile(r"^\d+\.\d+\.\d+([-+][0-9A-Za-z.-]+)?$")


def _component_path(value: str) -> Path:
    """Path rules: relative to the plugin root, starting with ./, never leaving it."""
    assert value.startswith("./"), f"{value!r}: component paths start with ./"
    p = (ROOT / value).resolve()
    assert p.is_relative_to(ROOT), f"{value!r} leaves the plugin root"
    assert p.exists(), f"{value!r} does not exist"
    return p


def _check_hooks(doc: object, where: str) -> int:
    assert isinstance(doc, dict) and set(doc) <= {"description", "hooks"}, where
    hooks = doc["hooks"]
    assert isinstance(hooks, dict) and hooks, where
    n = 0
    for event, groups in hooks.items():
        assert event in HOOK_EVENTS, f"{where}: unknown hook event {event!r}"
        assert isinstance(groups, list) and groups
        for g in groups:
            assert isinstance(g, dict) and set(g) <= {"matcher", "hooks"}
            assert isinstance(g["hooks"], list) and g["hooks"]
            for h in g["hooks"]:
                assert h["type"] == "command" and isinstance(h["command"], str)
                assert set(h) <= {"type", "command", "timeout", "async"}
                assert isinstance(h.get("timeout", 1), int | float)
                n += 1
    return n


def test_the_plugin_layout_follows_claude_codes_plugin_reference() -> None:
    meta = ROOT / ".claude-plugin"
    # only the manifest (and a marketplace file) belong in .claude-plugin/
    assert {p.name for p in meta.iterdir()} <= {"plugin.json", "marketplace.json"}
    manifest = json.loads((meta / "plugin.json").read_text(encoding="utf-8"))
    assert isinstance(manifest, dict)
    assert set(manifest) <= MANIFEST_FIELDS, set(manifest) - MANIFEST_FIELDS
    # required: name, kebab-case; the validator warns without version, description, author
    assert isinstance(manifest["name"], str) and KEBAB.match(manifest["name"])
    assert SEMVER.match(manifest["version"]) and manifest["description"].strip()
    assert isinstance(manifest["author"], dict) and manifest["author"]["name"]
    for key in COMPONENT_PATHS:
        if isinstance(manifest.get(key), str):
            _component_path(manifest[key])
    # hooks: a file beside the standard hooks/hooks.json, which Claude Code loads by itself
    # and refuses as a duplicate when the manifest names it
    assert manifest["hooks"] != "./hooks/hooks.json"
    hooks_file = _component_path(manifest["hooks"])
    hooks = json.loads(hooks_file.read_text(encoding="utf-8"))
    assert _check_hooks(hooks, str(hooks_file)) == len(EVENTS)
    # mcpServers inline: a stdio server with a command and string arguments
    servers = manifest["mcpServers"]
    assert isinstance(servers, dict) and set(servers) == {"memctl"}
    for entry in servers.values():
        assert entry.get("type", "stdio") == "stdio"
        assert isinstance(entry["command"], str) and entry["command"]
        assert all(isinstance(a, str) for a in entry.get("args", []))
        assert entry["command"] == "memctl" and entry["args"] == ["mcp"]


def test_the_plugins_hooks_are_memctls_own_and_take_the_fast_path() -> None:
    hooks = json.loads((ROOT / "claude-code" / "hooks.json").read_text(encoding="utf-8"))
    for event, name, _ in EVENTS:
        [group] = [g for g in hooks["hooks"][event] if is_ours(g["hooks"][0]["command"])]
        argv = shlex.split(group["hooks"][0]["command"])
        assert argv[0] == "memctl"  # on PATH: the plugin holds no machine's paths
        assert hook_call(argv[1:]) == (name, None, None, False)


def test_the_shipped_plugin_is_what_memctl_would_write() -> None:
    """The files in the repository are generated from the hook table, so they cannot lag."""
    for rel, text in plugin_files().items():
        assert (ROOT / rel).read_text(encoding="utf-8") == text, (
            f"{rel} is out of date: python -c 'from memctl.faces.hooks.mcpconfig import "
            "plugin_files' and write each file"
        )


# ---- hooks install registers the MCP server ---------------------------------------------------


def _claude_json(home: Path) -> dict:
    return json.loads((home / ".claude.json").read_text(encoding="utf-8"))


def test_project_install_registers_the_mcp_server_for_this_project_only(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    theirs = {"numStartups": 7, "projects": {"/elsewhere": {"mcpServers": {"x": {
        "command": "x"}}}}, "mcpServers": {"github": {"type": "http", "url": "https://x"}}}
    (home / ".claude.json").write_text(json.dumps(theirs, indent=2) + "\n")
    env = {"MEMCTL_VAULT": str(vault), "HOME": str(home)}
    r = ok("hooks", "install", "claude-code", "--project", cwd=project, env=env)
    assert ".claude.json" in r.out
    data = _claude_json(home)
    entry = data["projects"][str(project.resolve())]["mcpServers"]["memctl"]
    assert entry["type"] == "stdio" and entry["args"][-3:] == ["--vault", str(vault), "mcp"][-3:]
    assert entry["args"][-1] == "mcp" and str(vault) in entry["args"]
    # everything else is as it was
    assert data["numStartups"] == 7 and data["mcpServers"] == theirs["mcpServers"]
    assert data["projects"]["/elsewhere"] == theirs["projects"]["/elsewhere"]
    # the MCP server it registers starts and serves this vault
    argv = [entry["command"], *entry["args"]]
    assert argv[-1] == "mcp"
    again = ok("hooks", "install", "claude-code", "--project", cwd=project, env=env)
    assert _claude_json(home) == data and "changed" not in again.out.replace("unchanged", "")
    ok("hooks", "uninstall", "claude-code", "--project", cwd=project, env=env)
    after = _claude_json(home)
    assert "memctl" not in after["projects"][str(project.resolve())].get("mcpServers", {})
    assert after["mcpServers"] == theirs["mcpServers"]


def test_portable_install_writes_the_projects_mcp_json(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / ".mcp.json").write_text(json.dumps(
        {"mcpServers": {"db": {"command": "db-mcp", "args": []}}}, indent=2) + "\n")
    ok("hooks", "install", "claude-code", "--portable", cwd=project)
    data = json.loads((project / ".mcp.json").read_text())
    assert data["mcpServers"]["db"] == {"command": "db-mcp", "args": []}
    assert data["mcpServers"]["memctl"] == {"type": "stdio", "command": "memctl",
                                            "args": ["mcp"]}  # fmt: skip
    js = ok("hooks", "uninstall", "claude-code", "--portable", "--json", cwd=project).json()
    assert js["mcp"]["removed"] == ["mcpServers.memctl"]
    assert json.loads((project / ".mcp.json").read_text()) == {
        "mcpServers": {"db": {"command": "db-mcp", "args": []}}}


def test_global_install_registers_a_user_mcp_server_and_no_mcp_skips_it(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    env = {"MEMCTL_VAULT": str(vault), "HOME": str(home)}
    js = ok("hooks", "install", "claude-code", "--global", "--no-mcp", "--json", env=env).json()
    assert "mcp" not in js and not (home / ".claude.json").exists()
    js = ok("hooks", "install", "claude-code", "--global", "--json", env=env).json()
    assert js["mcp"]["added"] == ["mcpServers.memctl"]
    assert _claude_json(home)["mcpServers"]["memctl"]["args"][-1] == "mcp"


def test_a_claude_json_memctl_cannot_merge_is_left_alone(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    (home / ".claude.json").write_text("{not json")
    r = memctl("hooks", "install", "claude-code", "--global",
               env={"MEMCTL_VAULT": str(vault), "HOME": str(home)})  # fmt: skip
    assert r.code != 0 and ".claude.json" in r.err
    assert (home / ".claude.json").read_text() == "{not json"


@pytest.mark.parametrize("flag", ["--project", "--portable"])
def test_dry_run_writes_no_mcp_file(tmp_path: Path, flag: str) -> None:
    vault = new_vault(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    home = tmp_path / "home"
    home.mkdir()
    env = {"MEMCTL_VAULT": str(vault), "HOME": str(home)}
    r = ok("hooks", "install", "claude-code", flag, "--dry-run", cwd=project, env=env)
    assert "memctl" in r.out
    assert not (home / ".claude.json").exists() and not (project / ".mcp.json").exists()
