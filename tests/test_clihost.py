"""The warm host (tests/clihost.py) answers as a fresh `python -m memctl` does.

Most CLI tests run through it, so a difference here would make the suite test something
else than what a user runs: each case runs once in a fresh interpreter and once forked
from the host, and the two must agree on exit code, stdout and stderr.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from util import host_socket, new_vault, spawn, warm

pytestmark = pytest.mark.skipif(
    os.environ.get("MEMCTL_TEST_FRESH", "") not in ("", "0"),
    reason="MEMCTL_TEST_FRESH asks for no warm host",
)
TRANSCRIPT = "User: We deploy on Fridays only after the smoke tests pass.\nAssistant: Noted.\n"


def _fresh(argv: list[str], data: bytes | None, cwd: Path) -> tuple[int, bytes, bytes]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "COLUMNS": "200"}
    proc = subprocess.run([sys.executable, "-m", "memctl", *argv], input=data, cwd=cwd,
                          env=env, capture_output=True, timeout=120, check=False)  # fmt: skip
    return proc.returncode, proc.stdout, proc.stderr


def _warm(argv: list[str], data: bytes | None, cwd: Path) -> tuple[int, bytes, bytes]:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "COLUMNS": "200"}
    got = warm(argv, data, cwd, env, 120)
    assert got is not None, "the warm host did not answer: the comparison would be vacuous"
    return got


def test_the_host_runs() -> None:
    assert host_socket() is not None


@pytest.mark.parametrize(
    "argv",
    [
        ["--version"],
        ["no-such-command"],
        ["--vault", "/nonexistent/vault", "status"],
        ["search", "--limit", "x", "y"],
        ["help", "search"],
    ],
    ids=["version", "unknown command", "no vault", "bad option", "help"],
)
def test_an_answer_is_the_fresh_interpreters(argv: list[str], tmp_path: Path) -> None:
    assert _warm(argv, None, tmp_path) == _fresh(argv, None, tmp_path)


def test_stdin_reaches_the_command_and_the_vault_is_the_same(tmp_path: Path) -> None:
    # the same ingest from stdin into two equal vaults: same output, same raw files
    runs = {}
    for how, run in (("fresh", _fresh), ("warm", _warm)):
        vault = new_vault(tmp_path, how)
        code, out, err = run(["--vault", str(vault), "ingest", "-", "--format", "text",
                              "--user", "dana"], TRANSCRIPT.encode(), tmp_path)  # fmt: skip
        assert code == 0, err
        raw = sorted(p.read_text(encoding="utf-8") for p in (vault / "raw").rglob("*.md"))
        # the commit's hash holds its time, which two runs need not share
        said = out.replace(str(vault).encode(), b"V")
        said = re.sub(rb"commit [0-9a-f]{7,40}", b"commit C", said)
        runs[how] = (said, raw)
    assert runs["warm"] == runs["fresh"]
    assert "smoke tests" in "".join(runs["warm"][1])


def _running_in(folder: Path) -> list[int]:
    """Pids of the processes whose working folder is `folder` (a forked command's cmdline
    is the host's, so the folder is what tells it apart)."""
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and (proc / "cwd").readlink() == folder:
                pids.append(int(proc.name))
        except OSError:
            continue
    return pids


def test_a_command_past_its_timeout_is_killed(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    work = tmp_path / "here"
    work.mkdir()
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        warm(["--vault", str(vault), "watch"], None, work, env, 2.0)
    assert time.monotonic() - started < 10
    deadline = time.monotonic() + 5
    while _running_in(work.resolve()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _running_in(work.resolve()) == []


def test_a_changed_interpreter_setting_gets_a_fresh_interpreter(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "LANG": "C"}
    assert warm(["--version"], None, tmp_path, env, 30) is None


def test_a_spawned_command_leads_its_own_group_and_a_group_kill_ends_it(tmp_path: Path) -> None:
    """What the crash tests rely on: Popen(start_new_session=True) semantics."""
    import signal

    vault = new_vault(tmp_path)
    # `watch` runs until it is stopped: a command that is surely still running when killed
    proc = spawn(["--vault", str(vault), "watch"], tmp_path)
    assert proc is not None
    assert os.getpgid(proc.pid) == proc.pid and os.getsid(proc.pid) == proc.pid
    time.sleep(0.3)
    assert proc.poll() is None
    os.killpg(proc.pid, signal.SIGKILL)
    assert proc.wait() == -signal.SIGKILL
    assert proc.poll() == -signal.SIGKILL
    done = spawn(["--version"], tmp_path)
    assert done is not None
    assert done.communicate() == (b"memctl 0.1.0\n", b"") and done.returncode == 0
