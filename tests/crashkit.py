"""Killing real memctl processes at chosen moments, and checking the vault they leave.

Shared by tests/test_crash.py (a few kill points per run) and bench/crash.py (the full
hundred). A kill is a SIGKILL to the whole process group, so a git child dies with memctl
and its lock files stay behind, as after a power cut or an OOM kill.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from util import git


def transcripts(folder: Path, sessions: int, turns: int, tag: str = "s") -> Path:
    """`sessions` JSONL files of `turns` turns each, every turn with a unique id."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(sessions):
        lines = []
        for t in range(turns):
            role = "user" if t % 2 == 0 else "assistant"
            text = f"{tag} session {i} turn {t}: we chose Postgres {i} for the billing service"
            lines.append(json.dumps({"id": f"{tag}{i}-m{t}", "role": role, "content": text,
                                     "timestamp": f"2026-03-{1 + i % 28:02d}T10:{t % 60:02d}:00Z"}))
        (folder / f"{tag}{i:04d}.jsonl").write_text("\n".join(lines) + "\n")
    return folder


_WORDS = ("Alpha", "Bravo", "Cobalt", "Delta", "Ember", "Falcon", "Garnet", "Harbor", "Indigo",
          "Juniper", "Kestrel", "Lumen", "Meridian", "Nimbus", "Onyx", "Pylon", "Quartz", "Raven",
          "Sierra", "Tundra")


def curatable(folder: Path, sessions: int, tag: str = "c") -> Path:
    """Short sessions the builtin curator learns a lot from: ~3 notes each."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(sessions):
        org = _WORDS[i % 20] + _WORDS[(i // 20) % 20]
        msgs = [
            {"id": f"{tag}{i}-m1", "role": "user",
             "timestamp": f"2026-03-{1 + i % 28:02d}T09:00:00Z",
             "content": f"I'm a platform engineer at {org}. We decided to move billing to "
                        f"Postgres. I prefer Terraform over Pulumi. {org} is cutting cloud costs "
                        "this quarter."},
            {"id": f"{tag}{i}-m2", "role": "assistant", "content": "Sounds good."},
        ]
        (folder / f"{tag}{i:03d}.jsonl").write_text("\n".join(json.dumps(m) for m in msgs) + "\n")
    return folder


def note_files(vault: Path) -> list[Path]:
    return [p for p in vault.rglob("*.md")
            if not p.relative_to(vault).as_posix().startswith(("raw/", ".git/", ".memctl/"))
            and p.name != "INDEX.md"]


def memctl_popen(args: list[str], cwd: Path | None = None) -> subprocess.Popen[bytes]:
    env = dict(os.environ)
    env.pop("MEMCTL_VAULT", None)
    return subprocess.Popen([sys.executable, "-m", "memctl", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)


def kill_when(proc: subprocess.Popen[bytes], cond: Callable[[], bool] | None = None,
              after: float | None = None, timeout: float = 120) -> bool:
    """SIGKILL the process group once `cond()` holds or `after` seconds passed.

    Returns False when the process finished before that (no kill happened).
    """
    start = time.monotonic()
    while proc.poll() is None:
        now = time.monotonic() - start
        if (after is not None and now >= after) or (cond is not None and cond()):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return True
        if now > timeout:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise AssertionError("process neither finished nor met the kill condition")
        time.sleep(0.002)
    return False


def head_turn_ids(vault: Path) -> list[str]:
    """Every turn id in every raw session of HEAD, with repeats (so duplicates show)."""
    names = git(vault, "ls-tree", "-r", "--name-only", "HEAD", "raw/").split()
    ids: list[str] = []
    for name in names:
        if name.endswith("INDEX.md"):
            continue
        text = git(vault, "show", f"HEAD:{name}")
        for line in text.splitlines():
            if line.startswith("<!-- memctl:turn "):
                rec = json.loads(line[len("<!-- memctl:turn "):-len(" -->")])
                ids.append(rec.get("id"))
    return ids


def assert_healthy(vault: Path) -> None:
    """The vault after recovery: clean status, fsck clean, every note parses."""
    from memctl.notes import parse_note
    from memctl.raw import parse_session

    status = git(vault, "status", "--porcelain", "--untracked-files=all")
    assert status == "", f"git status not clean after recovery:\n{status}"
    fsck = subprocess.run(["git", "-C", str(vault), "fsck", "--no-progress"],
                          capture_output=True, text=True, check=False)
    assert fsck.returncode == 0, fsck.stderr
    for p in vault.rglob("*.md"):
        rel = p.relative_to(vault).as_posix()
        if rel.startswith((".git/", ".memctl/")):
            continue
        text = p.read_text(encoding="utf-8")
        if rel.startswith("raw/") and not rel.endswith("INDEX.md"):
            parse_session(text, rel)
        elif not rel.endswith("INDEX.md"):
            parse_note(text, rel)
    assert not (vault / ".memctl" / "journal").exists() or not any(
        d.is_dir() for d in (vault / ".memctl" / "journal").iterdir()
    ), "a journal survived recovery"
