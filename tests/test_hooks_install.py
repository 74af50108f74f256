"""`memctl hooks install|uninstall claude-code`: merge into settings.json, never clobber."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from util import memctl, new_vault, ok

from memctl.errors import MemctlError
from memctl.faces.hooks import EVENTS, install, is_ours, settings_path, uninstall

BASE = "/opt/bin/memctl"

THEIRS = {
    "model": "claude-sonnet",
    "permissions": {"allow": ["Bash(git status)"], "deny": []},
    "env": {"FOO": "1"},
    "hooks": {
        "UserPromptSubmit": [
            {"hooks": [{"type": "command", "command": "~/bin/check-secrets.sh"}]}
        ],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "audit.sh", "timeout": 5}]}
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}],
    },
    "zzz_unknown": [1, 2, 3],
}


def _ours(data: dict, event: str) -> list[str]:
    return [
        h["command"]
        for g in data.get("hooks", {}).get(event, [])
        for h in g.get("hooks", [])
        if is_ours(h.get("command"))
    ]


def test_install_into_a_missing_file_adds_every_event(tmp_path: Path) -> None:
    path = tmp_path / ".claude" / "settings.json"
    res = install(path, tmp_path / "vault", base=BASE)
    assert res.changed and sorted(res.added) == sorted(e for e, _, _ in EVENTS)
    data = json.loads(path.read_text())
    assert _ours(data, "UserPromptSubmit") == [
        f"{BASE} --vault {tmp_path / 'vault'} hook user-prompt-submit"
    ]
    assert _ours(data, "SessionStart")[0].endswith("hook session-start")
    assert _ours(data, "Stop")[0].endswith("hook stop")
    assert _ours(data, "SessionEnd")[0].endswith("hook stop")
    hook = data["hooks"]["UserPromptSubmit"][0]["hooks"][0]
    assert hook["type"] == "command" and hook["timeout"] == 10
    assert "+++" in res.diff and "user-prompt-submit" in res.diff


def test_install_keeps_everything_else_exactly(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(THEIRS, indent=4) + "\n")
    install(path, tmp_path / "vault", base=BASE)
    data = json.loads(path.read_text())
    # every key the user had is still there, in the same order, with the same values
    assert list(data)[: len(THEIRS)] == list(THEIRS)
    for key in ("model", "permissions", "env", "zzz_unknown"):
        assert data[key] == THEIRS[key]
    assert data["hooks"]["PreToolUse"] == THEIRS["hooks"]["PreToolUse"]
    assert data["hooks"]["UserPromptSubmit"][0] == THEIRS["hooks"]["UserPromptSubmit"][0]
    assert data["hooks"]["Stop"][0] == THEIRS["hooks"]["Stop"][0]
    assert len(_ours(data, "UserPromptSubmit")) == 1
    # the file's own indentation is kept
    assert '\n    "model"' in path.read_text()


def test_install_twice_changes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(THEIRS))
    install(path, tmp_path / "vault", base=BASE)
    before = path.read_bytes()
    again = install(path, tmp_path / "vault", base=BASE)
    assert not again.changed and again.diff == "" and not again.added
    assert path.read_bytes() == before


def test_install_updates_our_command_in_place(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    install(path, tmp_path / "old-vault", base=BASE)
    res = install(path, tmp_path / "new-vault", user="marco", base=BASE)
    assert sorted(set(res.updated)) == sorted({e for e, _, _ in EVENTS})
    assert not res.added
    data = json.loads(path.read_text())
    cmds = _ours(data, "UserPromptSubmit")
    assert cmds == [f"{BASE} --vault {tmp_path / 'new-vault'} hook user-prompt-submit --user marco"]


def test_duplicate_copies_of_ours_are_collapsed(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    ours = {"type": "command", "command": "memctl hook user-prompt-submit"}
    groups = [{"hooks": [ours]}, {"hooks": [ours]}]
    path.write_text(json.dumps({"hooks": {"UserPromptSubmit": groups}}))
    res = install(path, None, base="memctl")
    data = json.loads(path.read_text())
    assert len(_ours(data, "UserPromptSubmit")) == 1
    assert res.removed


def test_uninstall_removes_only_ours(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(THEIRS, indent=2) + "\n")
    original = path.read_text()
    install(path, tmp_path / "vault", base=BASE)
    res = uninstall(path)
    assert res.changed and len(res.removed) == len(EVENTS)
    assert json.loads(path.read_text()) == THEIRS
    assert path.read_text() == original
    assert not uninstall(path).changed  # idempotent


def test_uninstall_of_a_file_we_created_removes_it(tmp_path: Path) -> None:
    """A settings file that held only memctl's hooks goes with them: an empty `{}` left
    behind would be a file the project did not have before install."""
    path = tmp_path / "settings.json"
    install(path, None, base=BASE)
    assert not uninstall(path, dry_run=True).diff.count("+{")
    assert path.exists()
    res = uninstall(path)
    assert res.changed and not path.exists()
    assert not uninstall(path).changed


def test_cli_portable_install_then_uninstall_leaves_the_project_as_it_was(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    ok("hooks", "install", "--project", "--portable", "--user", "dana", cwd=project)
    assert (project / ".claude" / "settings.json").is_file()
    r = ok("hooks", "uninstall", "--project", "--portable", cwd=project)
    assert "removed" in r.out + r.err
    assert not (project / ".claude" / "settings.json").exists()


def test_uninstall_without_a_file_is_a_no_op(tmp_path: Path) -> None:
    res = uninstall(tmp_path / "nope.json")
    assert not res.changed and not (tmp_path / "nope.json").exists()


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps(THEIRS))
    before = path.read_bytes()
    res = install(path, tmp_path / "v", base=BASE, dry_run=True)
    assert res.changed and res.diff and path.read_bytes() == before
    install(path, tmp_path / "v", base=BASE)
    res = uninstall(path, dry_run=True)
    assert res.changed and res.removed
    assert len(_ours(json.loads(path.read_text()), "Stop")) == 1


@pytest.mark.parametrize(
    "text",
    ["{not json", "[1, 2]", '{"hooks": []}', '{"hooks": {"Stop": {"x": 1}}}'],
)
def test_a_settings_file_we_cannot_merge_is_refused_untouched(tmp_path: Path, text: str) -> None:
    path = tmp_path / "settings.json"
    path.write_text(text)
    with pytest.raises(MemctlError) as info:
        install(path, None, base=BASE)
    assert str(path) in str(info.value)
    assert path.read_text() == text


def test_settings_locations(tmp_path: Path) -> None:
    assert settings_path("user", home=tmp_path) == tmp_path / ".claude" / "settings.json"
    local = tmp_path / ".claude/settings.local.json"
    assert settings_path("project", project_dir=tmp_path) == local
    assert settings_path("shared", project_dir=tmp_path) == tmp_path / ".claude/settings.json"


def test_is_ours_recognises_every_form() -> None:
    assert is_ours("memctl hook stop")
    assert is_ours("/home/u/.venv/bin/memctl --vault '/a b' hook user-prompt-submit --as dana")
    assert is_ours("/usr/bin/python3 -m memctl --vault /v hook session-start")
    assert not is_ours("memctl recall hook stop-words")
    assert not is_ours("~/bin/check-secrets.sh")
    assert not is_ours(None)


# ---- through the CLI -------------------------------------------------------------------------


def test_cli_install_and_uninstall_project(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    project = tmp_path / "project"
    (project / ".claude").mkdir(parents=True)
    shared = project / ".claude" / "settings.json"
    shared.write_text(json.dumps(THEIRS, indent=2) + "\n")
    # this machine's paths go to the file Claude Code keeps out of git, never the shared one
    settings = project / ".claude" / "settings.local.json"
    settings.write_text(json.dumps(THEIRS, indent=2) + "\n")
    env = {"MEMCTL_VAULT": str(vault)}

    dry = ok("hooks", "install", "claude-code", "--project", "--dry-run", cwd=project, env=env)
    assert "would change" in dry.out and "+" in dry.out
    assert json.loads(settings.read_text()) == THEIRS

    r = ok("hooks", "install", "claude-code", "--project", cwd=project, env=env)
    assert "changed" in r.out and "UserPromptSubmit" in r.out
    data = json.loads(settings.read_text())
    cmd = _ours(data, "UserPromptSubmit")[0]
    assert f"--vault {vault}" in cmd and cmd.endswith("hook user-prompt-submit")

    again = ok("hooks", "install", "claude-code", cwd=project, env=env, input="")
    assert "already up to date" in again.out

    js = ok("hooks", "uninstall", "claude-code", "--project", "--json", cwd=project, env=env)
    payload = js.json()
    assert payload["command"] == "hooks uninstall" and len(payload["removed"]) == len(EVENTS)
    assert json.loads(settings.read_text()) == THEIRS
    assert json.loads(shared.read_text()) == THEIRS


def test_project_install_leaves_the_committed_settings_alone(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    r = ok("--vault", vault, "hooks", "install", "--project", cwd=project)
    local = project / ".claude" / "settings.local.json"
    assert str(local) in r.out
    assert not (project / ".claude" / "settings.json").exists()
    assert str(vault) in _ours(json.loads(local.read_text()), "SessionStart")[0]
    ok("hooks", "install", "--portable", cwd=project)
    shared = json.loads((project / ".claude" / "settings.json").read_text())
    assert _ours(shared, "SessionStart") == ["memctl hook session-start"]
    ok("hooks", "uninstall", "--portable", cwd=project)
    assert not (project / ".claude" / "settings.json").exists()  # install made it: gone again
    assert _ours(json.loads(local.read_text()), "SessionStart")  # the local file is untouched


def test_cli_install_user_level_uses_home(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    home = Path(os.environ["HOME"])
    r = ok("--vault", vault, "hooks", "install", "claude-code", "--global", "--user", "dana")
    target = home / ".claude" / "settings.json"
    assert str(target) in r.out
    cmd = _ours(json.loads(target.read_text()), "SessionStart")[0]
    assert cmd.endswith("hook session-start --user dana")
    # `--as` is still accepted for the user, as hooks installed before wrote it
    ok("--vault", vault, "hooks", "install", "--global", "--as", "dana")
    ok("hooks", "uninstall", "--global")
    assert not target.exists()  # it held only memctl's hooks


def test_cli_rejects_unknown_agents_and_both_locations(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    r = memctl("--vault", vault, "hooks", "install", "cursor", cwd=tmp_path)
    assert r.code == 2 and "unknown agent 'cursor'" in r.err
    r = memctl("--vault", vault, "hooks", "install", "--project", "--global", cwd=tmp_path)
    assert r.code == 2 and "one of --project and --global" in r.err


def test_cli_portable_install_writes_no_machine_paths(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    ok("hooks", "install", "--project", "--portable", "--user", "dana", cwd=project)
    data = json.loads((project / ".claude" / "settings.json").read_text())
    assert _ours(data, "UserPromptSubmit") == ["memctl hook user-prompt-submit --user dana"]
    assert _ours(data, "Stop") == ["memctl hook stop --user dana"]


def test_portable_install_keeps_the_vault_it_is_given(tmp_path: Path) -> None:
    """`--portable --vault ../vault` used to drop the vault silently; it is kept as the path
    from the project, never as this machine's absolute path."""
    vault = new_vault(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    ok("hooks", "install", "--portable", "--vault", "../vault", cwd=project)
    data = json.loads((project / ".claude" / "settings.json").read_text())
    assert _ours(data, "SessionStart") == ["memctl --vault ../vault hook session-start"]
    ok("--vault", vault, "hooks", "install", "--portable", cwd=project)  # absolute, given
    text = (project / ".claude" / "settings.json").read_text()
    assert str(tmp_path) not in text
    assert _ours(json.loads(text), "Stop") == ["memctl --vault ../vault hook stop"]


def test_project_install_keeps_the_local_file_out_of_git(tmp_path: Path) -> None:
    """settings.local.json holds this machine's paths; `git add -A` must not commit it."""
    vault = new_vault(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".gitignore").write_text("node_modules/")  # no newline at its end
    r = ok("--vault", vault, "hooks", "install", "--project", cwd=project)
    assert ".gitignore" in r.err and "settings.local.json" in r.err
    assert (project / ".gitignore").read_text() == "node_modules/\n.claude/settings.local.json\n"
    check = subprocess.run(["git", "-C", str(project), "check-ignore", "-q",
                            ".claude/settings.local.json"], check=False)
    assert check.returncode == 0
    status = subprocess.run(["git", "-C", str(project), "status", "--porcelain", "-uall"],
                            capture_output=True, text=True, check=True).stdout
    assert "settings.local.json" not in status
    again = ok("--vault", vault, "hooks", "install", "--project", cwd=project)
    assert ".gitignore" not in again.err
    assert (project / ".gitignore").read_text().count("settings.local.json") == 1


def test_installing_in_two_settings_files_warns_of_running_twice(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    project = tmp_path / "project"
    project.mkdir()
    first = ok("--vault", vault, "hooks", "install", "--project", cwd=project)
    assert "twice" not in first.err
    r = ok("hooks", "install", "--portable", cwd=project)
    local = project / ".claude" / "settings.local.json"
    assert f"also in {local}" in r.err and "twice" in r.err
    assert "memctl hooks uninstall --project" in r.err
    js = ok("hooks", "install", "--portable", "--json", cwd=project).json()
    assert any("twice" in line for line in js["notes"])
