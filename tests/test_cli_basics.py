"""The CLI starts fast, finds its vault, and says clearly when there is none."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from util import git, memctl, new_vault, ok


def test_help_loads_nothing_heavy() -> None:
    code = (
        "import sys\n"
        "from memctl.faces.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        "heavy = [m for m in ('litellm', 'tantivy', 'git', 'frontmatter', 'yaml', 'mcp',"
        " 'werkzeug', 'jinja2')"
        " if m in sys.modules]\n"
        "print('HEAVY', heavy)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "HEAVY []" in out.stdout
    assert "ingest" in out.stdout


def test_diff_and_status_load_no_gitpython(tmp_path: Path) -> None:
    """The commands run git themselves; gitpython's import alone was a third of `diff`."""
    v = new_vault(tmp_path)
    ok("--vault", v, "remember", "--own", "The team uses Postgres.")
    code = (
        "import sys\n"
        "from memctl.faces.cli import main\n"
        "for cmd in (['diff', 'HEAD~1..HEAD'], ['status']):\n"
        "    try:\n        main(['--vault', sys.argv[1], *cmd])\n    except SystemExit:\n"
        "        pass\n"
        "print('GIT', 'git' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(v)], capture_output=True, text=True,
                         check=True)  # fmt: skip
    assert "The team uses Postgres." in out.stdout, out.stderr
    assert "GIT False" in out.stdout


def test_version_prints_the_version() -> None:
    # how fast --version and --help are is measured in bench/startup.py, not asserted here
    assert ok("--version").out.startswith("memctl ")


def test_outside_a_vault_says_how_to_fix(tmp_path: Path) -> None:
    r = memctl("status", cwd=tmp_path)
    assert r.code == 2
    assert r.err.count("\n") == 1
    assert "memctl init" in r.err


def test_vault_found_by_flag_env_and_walking_up(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    (v / "profile" / "deep").mkdir(parents=True)
    assert ok("--vault", v, "status").out.startswith(f"vault   {v}")
    assert ok("status", env={"MEMCTL_VAULT": str(v)}).out.startswith(f"vault   {v}")
    assert ok("status", cwd=v / "profile" / "deep").out.startswith(f"vault   {v}")
    r = memctl("status", env={"MEMCTL_VAULT": str(tmp_path / "nope")})
    assert r.code == 2 and "MEMCTL_VAULT" in r.err


def test_init_creates_a_committed_vault(tmp_path: Path) -> None:
    v = tmp_path / "v"
    r = ok("init", v, "--json").json()
    assert r["memctl_result_version"] == 1 and r["created"] is True
    for rel in (".memctl/config.toml", ".gitignore", "INDEX.md", "raw/INDEX.md",
                "profile/INDEX.md", "knowledge/INDEX.md", "instructions/INDEX.md"):
        assert (v / rel).is_file(), rel
    assert ".memctl/index/" in (v / ".gitignore").read_text()
    assert git(v, "status", "--porcelain") == ""
    assert git(v, "log", "--format=%s").strip() == "init: memctl vault"
    # Running it again changes nothing.
    again = ok("init", v, "--json").json()
    assert again["created"] is False and again["commit"] is None
    assert len(git(v, "log", "--format=%H").split()) == 1


def test_init_adopts_existing_notes(tmp_path: Path) -> None:
    v = tmp_path / "notes"
    (v / "knowledge").mkdir(parents=True)
    (v / "knowledge" / "kafka.md").write_text("# Kafka\n\n- we run 3 brokers\n")
    (v / "ideas.md").write_text("# Ideas\n")
    r = ok("init", v, "--json").json()
    assert sorted(r["adopted"]) == ["ideas.md", "knowledge/kafka.md"]
    tracked = git(v, "ls-files").split()
    assert "knowledge/kafka.md" in tracked and "ideas.md" in tracked
    assert "adopted 2 notes" in git(v, "log", "-1", "--format=%s")


def test_commits_work_without_a_global_git_identity(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    env = {"HOME": str(home), "GIT_CONFIG_GLOBAL": str(home / "none"),
           "GIT_CONFIG_NOSYSTEM": "1"}
    v = tmp_path / "v"
    ok("init", v, env=env)
    author = git(v, "log", "-1", "--format=%an <%ae>").strip()
    assert author == "memctl user <user@memctl.invalid>"
