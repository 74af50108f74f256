"""memctl imports and answers --help where fcntl does not exist (Windows, where Obsidian users
edit their notes); with no OS lock at all, a command is a clear one-line error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from util import ROOT, new_vault

# `sys.modules[name] = None` makes `import name` raise ImportError, as on Windows
NO_FCNTL = "import sys; sys.modules['fcntl'] = None; sys.modules['msvcrt'] = None\n"


def _run(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", NO_FCNTL + code, *args], capture_output=True,
                          text=True, check=False, cwd=ROOT, timeout=60)


def test_the_package_imports_and_helps_without_fcntl() -> None:
    r = _run(
        "import memctl, memctl.core.store, memctl.vault, memctl.faces.mcp\n"
        "import memctl.faces.cli.commands\n"
        "from memctl.faces.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit as e:\n    print('EXIT', e.code)\n"
    )
    assert r.returncode == 0, r.stderr
    assert "EXIT 0" in r.stdout and "ingest" in r.stdout


def test_without_any_os_lock_a_command_fails_in_one_line(tmp_path: Path) -> None:
    # Windows has msvcrt (its branch is not exercised on this Linux runner); a platform with
    # neither lock refuses to touch the vault, in one line, rather than risk two writers
    v = new_vault(tmp_path)
    main = "import sys\nfrom memctl.faces.cli import main\nmain(sys.argv[1:])\n"
    for args in (["search", "anything"], ["ingest", "-", "--format", "jsonl"]):
        r = _run(main, "--vault", str(v), *args)
        assert r.returncode == 1, (args, r.stderr)
        assert "Traceback" not in r.stderr and r.stderr.count("\n") == 1, r.stderr
        assert "cannot lock the vault: no file locking on this platform" in r.stderr
