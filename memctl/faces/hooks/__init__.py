"""Claude Code integration: merge memctl's hooks into a settings.json, or take them out again.

Claude Code reads hooks from `~/.claude/settings.json` (every project) or
`<project>/.claude/settings.json` (one project) in this shape::

    {"hooks": {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": "...",
                                                 "timeout": 10}]}]}}

`install` adds one command per event, or updates ours in place when it is already there;
`uninstall` removes only commands that run `memctl ... hook <event>`. Everything else in the
file (other hooks, permissions, env, unknown keys) is left exactly as it was, key order too.
Both return the diff they make, and write nothing on a dry run.

The handlers themselves live in `memctl.faces.hooks.handlers`.
"""

from __future__ import annotations

import difflib
import json
import re
import shlex
import shutil
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memctl.errors import InputError, MemctlError

AGENTS = ("claude-code",)

# Claude Code event -> our `memctl hook` subcommand, and how long Claude Code may wait.
EVENTS: tuple[tuple[str, str, int], ...] = (
    ("SessionStart", "session-start", 15),
    ("UserPromptSubmit", "user-prompt-submit", 10),
    ("Stop", "stop", 15),
    ("SessionEnd", "stop", 15),
    ("PreCompact", "pre-compact", 15),
)
_OURS = re.compile(
    r"\bmemctl\b.*\shook\s+(session-start|user-prompt-submit|stop|pre-compact)(?:\s|$)"
)


@dataclass
class HooksResult:
    """What `memctl hooks install|uninstall` did (or would do) to one settings file."""

    action: str  # install | uninstall
    path: str
    changed: bool
    dry_run: bool
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    commands: dict[str, str] = field(default_factory=dict)
    diff: str = ""
    # one line each: what else was done (the ignore rule) or needs the user's eye (duplicates)
    notes: list[str] = field(default_factory=list)
    mcp: HooksResult | None = None  # the MCP server's registration, done beside the hooks

    def to_json(self) -> dict[str, Any]:
        return {
            "action": self.action,
            "path": self.path,
            "changed": self.changed,
            "dry_run": self.dry_run,
            "added": self.added,
            "updated": self.updated,
            "removed": self.removed,
            "commands": self.commands,
            "diff": self.diff,
            "notes": self.notes,
            **({"mcp": self.mcp.to_json()} if self.mcp is not None else {}),
        }


def settings_path(where: str, project_dir: Path | None = None, home: Path | None = None) -> Path:
    """Claude Code's settings files: `user` ~/.claude/settings.json; `project` the project's
    .claude/settings.local.json (this machine's, not committed); `shared` the project's
    .claude/settings.json, which teams commit, so only portable commands belong there."""
    if where == "user":
        return (home or Path.home()) / ".claude" / "settings.json"
    if where == "project":
        return (project_dir or Path.cwd()) / ".claude" / "settings.local.json"
    if where == "shared":
        return (project_dir or Path.cwd()) / ".claude" / "settings.json"
    raise InputError(f"unknown settings location {where!r}: use --project or --user")


def memctl_command() -> str:
    """How Claude Code should start this memctl: the script next to this Python, if any."""
    here = Path(sys.executable).with_name("memctl")
    if here.is_file():
        return shlex.quote(str(here))
    found = shutil.which("memctl")
    if found:
        return shlex.quote(found)
    return f"{shlex.quote(sys.executable)} -m memctl"


def hook_command(
    name: str, vault_root: Path | None, user: str | None = None, base: str | None = None
) -> str:
    """The shell command for one event; the vault is pinned so any working directory works."""
    parts = [base or memctl_command()]
    if vault_root is not None:
        parts += ["--vault", shlex.quote(str(vault_root))]
    parts += ["hook", name]
    if user:
        parts += ["--user", shlex.quote(user)]
    return " ".join(parts)


def is_ours(command: Any) -> bool:
    return isinstance(command, str) and _OURS.search(command) is not None


def load_settings(path: Path) -> tuple[dict[str, Any], str, int]:
    """The settings object, the text it came from, and its indent (to write it back alike)."""
    if not path.exists():
        return {}, "", 2
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise MemctlError(f"cannot read Claude Code settings: {exc}", path) from None
    if not text.strip():
        return {}, text, 2
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise MemctlError(
            f"not valid JSON ({exc.msg}); fix it by hand, memctl will not overwrite it",
            path,
            exc.lineno,
        ) from None
    if not isinstance(data, dict):
        raise MemctlError("settings must be a JSON object; memctl will not overwrite it", path, 1)
    m = re.search(r"\n( +)\S", text)
    return data, text, len(m.group(1)) if m else 2


def render_settings(data: dict[str, Any], indent: int) -> str:
    return json.dumps(data, indent=indent, ensure_ascii=False) + "\n"


def _event_groups(data: dict[str, Any], event: str, path: Path, create: bool) -> list[Any] | None:
    hooks = data.get("hooks")
    if hooks is None:
        if not create:
            return None
        hooks = data["hooks"] = {}
    if not isinstance(hooks, dict):
        raise MemctlError('"hooks" is not an object; fix it by hand', path)
    groups = hooks.get(event)
    if groups is None:
        if not create:
            return None
        groups = hooks[event] = []
    if not isinstance(groups, list):
        raise MemctlError(f'"hooks.{event}" is not a list; fix it by hand', path)
    return groups


def _write(path: Path, text: str) -> None:
    from memctl.vault import Vault

    Vault.write_outside(path, text)


def install(
    path: Path,
    vault_root: Path | None,
    *,
    user: str | None = None,
    dry_run: bool = False,
    base: str | None = None,
) -> HooksResult:
    """Merge memctl's hooks into the settings file at `path`; idempotent."""
    data, before, indent = load_settings(path)
    res = HooksResult("install", str(path), False, dry_run)
    for event, name, timeout in EVENTS:
        want = {"type": "command", "command": hook_command(name, vault_root, user, base)}
        want["timeout"] = timeout  # type: ignore[assignment]
        res.commands[event] = want["command"]
        groups = _event_groups(data, event, path, create=True)
        assert groups is not None
        found = False
        for g in groups:
            if not isinstance(g, dict) or not isinstance(g.get("hooks"), list):
                continue
            keep = []
            for h in g["hooks"]:
                if isinstance(h, dict) and is_ours(h.get("command")):
                    if found:
                        res.removed.append(f"{event}: {h.get('command')}")  # a duplicate of ours
                        continue
                    found = True
                    if h != want:
                        res.updated.append(event)
                        h = dict(want)
                keep.append(h)
            g["hooks"] = keep
        if not found:
            groups.append({"hooks": [dict(want)]})
            res.added.append(event)
        _prune(data, event)
    after = render_settings(data, indent)
    return finish(res, path, before, after, dry_run)


def uninstall(path: Path, *, dry_run: bool = False) -> HooksResult:
    """Remove only memctl's hooks from the settings file at `path`."""
    data, before, indent = load_settings(path)
    res = HooksResult("uninstall", str(path), False, dry_run)
    if not path.exists():
        return res
    for event in dict.fromkeys(e for e, _, _ in EVENTS):
        groups = _event_groups(data, event, path, create=False)
        if not groups:
            continue
        for g in groups:
            if not isinstance(g, dict) or not isinstance(g.get("hooks"), list):
                continue
            kept = []
            for h in g["hooks"]:
                if isinstance(h, dict) and is_ours(h.get("command")):
                    res.removed.append(f"{event}: {h.get('command')}")
                else:
                    kept.append(h)
            g["hooks"] = kept
        _prune(data, event)
    if not res.removed:
        return res
    if not data:
        # the file held memctl's hooks and nothing else (install made it): an empty `{}`
        # left behind would be a file the project never had
        return remove_file(res, path, before, dry_run)
    return finish(res, path, before, render_settings(data, indent), dry_run)


def remove_file(res: HooksResult, path: Path, before: str, dry_run: bool) -> HooksResult:
    res.changed = True
    lines = before.splitlines(keepends=True)
    res.diff = "".join(difflib.unified_diff(lines, [], f"{path} (before)", "/dev/null"))
    done = "would remove it" if dry_run else "removed it"
    res.notes.append(f"{path} held only memctl's entries: {done}")
    if not dry_run:
        path.unlink()  # one unlink: the file is there whole or gone, as an atomic write
    return res


def _prune(data: dict[str, Any], event: str) -> None:
    """Drop groups we emptied, then the event, then `hooks`, if nothing else is left."""
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return
    groups = hooks.get(event)
    if isinstance(groups, list):
        groups[:] = [
            g
            for g in groups
            if not (isinstance(g, dict) and isinstance(g.get("hooks"), list) and not g["hooks"])
        ]
        if not groups:
            del hooks[event]
    if not hooks:
        del data["hooks"]


def finish(res: HooksResult, path: Path, before: str, after: str, dry_run: bool) -> HooksResult:
    if before == after or (not before.strip() and after.strip() == "{}"):
        return res
    res.changed = True
    res.diff = "".join(
        difflib.unified_diff(
            before.splitlines(keepends=True),
            after.splitlines(keepends=True),
            fromfile=f"{path} (before)",
            tofile=f"{path} (after)",
        )
    )
    if not dry_run:
        _write(path, after)
    return res


LOCAL_REL = ".claude/settings.local.json"


def ignore_local(project_dir: Path, *, dry_run: bool = False) -> str | None:
    """Make sure git ignores the project's .claude/settings.local.json, which holds this
    machine's paths: append it to the project's .gitignore unless a rule already covers it.

    Returns the one line saying what was (or would be) done, or None when nothing was needed.
    """
    import subprocess

    try:
        r = subprocess.run(
            ["git", "-C", str(project_dir), "check-ignore", "-q", "--no-index", LOCAL_REL],
            capture_output=True, check=False, timeout=30,
        )  # fmt: skip
        code = r.returncode
    except (OSError, subprocess.SubprocessError):
        code = 128
    gitignore = project_dir / ".gitignore"
    text = gitignore.read_text(encoding="utf-8") if gitignore.is_file() else ""
    if code == 0:
        return None
    if code != 0 and code != 1:
        # not a git work tree (or no git): our own rule, if it is there, is all we can see
        names = {line.strip() for line in text.splitlines()}
        if names & {LOCAL_REL, "/" + LOCAL_REL, "settings.local.json", ".claude/", ".claude"}:
            return None
    if not dry_run:
        sep = "" if not text or text.endswith("\n") else "\n"
        _write(gitignore, f"{text}{sep}{LOCAL_REL}\n")
    verb = "would add" if dry_run else "added"
    return f"{verb} {LOCAL_REL} to {gitignore}: it holds this machine's paths, not for git"


def also_installed(path: Path, project_dir: Path, home: Path | None = None) -> list[str]:
    """The other settings files Claude Code reads for this project that hold memctl hooks too:
    Claude Code runs the hooks of every file, so each event would run memctl twice."""
    out = []
    others = (("user", "--global"), ("shared", "--portable"), ("project", "--project"))
    for where, flag in others:
        other = settings_path(where, project_dir, home)
        if other.resolve() == path.resolve() or not other.is_file():
            continue
        try:
            data = json.loads(other.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        hooks = data.get("hooks") if isinstance(data, dict) else None
        if not isinstance(hooks, dict):
            continue
        found = any(
            isinstance(g, dict) and isinstance(g.get("hooks"), list)
            and any(isinstance(h, dict) and is_ours(h.get("command")) for h in g["hooks"])
            for groups in hooks.values() if isinstance(groups, list) for g in groups
        )  # fmt: skip
        if found:
            out.append(
                f"memctl hooks are also in {other}: Claude Code runs both, so every hook "
                f"would run twice (memctl hooks uninstall {flag} removes those)"
            )
    return out
