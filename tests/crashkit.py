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


def _ingest_calibrate(vault: Path, src: Path) -> float:
    start = time.monotonic()
    proc = memctl_popen(["--vault", str(vault), "ingest", str(src)])
    proc.communicate()
    return time.monotonic() - start


def kill_points(root: Path, kind: str, points: int, seed: int = 0,
                sessions: int = 40, turns: int = 20) -> dict[str, object]:
    """Run `kind` (ingest or curate) `points` times, each killed with SIGKILL at a random
    moment (a third of them once git has taken its index lock), then check the vault.

    Returns counts: points killed, points the command finished before its kill time,
    failures (each a message; the run stops at the first), and turns acknowledged.
    """
    import random

    rnd = random.Random(seed)
    vault = root / f"{kind}-vault"
    subprocess.run([sys.executable, "-m", "memctl", "init", str(vault)], check=True,
                   capture_output=True)
    acknowledged: set[str] = set()
    killed = finished = git_phase = 0
    phases = {"before writing": 0, "writing": 0, "git": 0}
    failures: list[str] = []
    lock = vault / ".git" / "index.lock"

    def ack_ingest(src: Path, ids: set[str]) -> None:
        r = subprocess.run([sys.executable, "-m", "memctl", "--vault", str(vault), "ingest",
                            str(src), "--user", "dana", "--scope", "team"],
                           capture_output=True, text=True, check=False)
        if r.returncode != 0:
            failures.append(f"ingest after recovery failed: {r.stderr.strip()}")
        acknowledged.update(ids)

    if kind == "curate":
        src = curatable(root / "cur-seed", 30, tag="seed")
        ack_ingest(src, {f"seed{i}-m{t}" for i in range(30) for t in (1, 2)})
        base = 1.0
    else:
        base = _ingest_calibrate(vault, transcripts(root / "calib", sessions, turns, "cal"))
        acknowledged.update(f"cal{i}-m{t}" for i in range(sessions) for t in range(turns))
    for point in range(points):
        tag = f"p{point}x"
        if kind == "ingest":
            # new sessions, plus a longer version of the previous point's (appends)
            src = transcripts(root / f"in{point}", sessions, turns, tag)
            if point:
                transcripts(root / f"in{point - 1}", sessions, turns + 5, f"p{point - 1}x")
            args = ["ingest", str(src)] + ([str(root / f"in{point - 1}")] if point else [])
        else:
            ack_ingest(curatable(root / f"cur{point}", 8, tag=tag),
                       {f"{tag}{i}-m{t}" for i in range(8) for t in (1, 2)})
            args = ["curate"]
        proc = memctl_popen(["--vault", str(vault), *args])
        at_git = point % 3 == 2
        after = None if at_git else rnd.uniform(0.05, max(0.1, base * 1.2))
        hit = kill_when(proc, lock.exists if at_git else None, after=after, timeout=300)
        if hit:
            killed += 1
            git_phase += at_git
            # where the kill landed: before any write, while writing (a journal is open)
            journal = vault / ".memctl" / "journal"
            writing = journal.is_dir() and any(d.is_dir() for d in journal.iterdir())
            phases["git" if lock.exists() else "writing" if writing else "before writing"] += 1
        else:
            finished += 1
            if kind == "ingest" and proc.returncode == 0:
                acknowledged.update(_ids_of(src) | (_ids_of(root / f"in{point - 1}")
                                                    if point else set()))
        # the next command, whatever it is, recovers
        r = subprocess.run([sys.executable, "-m", "memctl", "--vault", str(vault), "status"],
                           capture_output=True, text=True, check=False)
        if r.returncode != 0 or "Traceback" in r.stderr:
            failures.append(f"point {point}: status after the kill failed: {r.stderr.strip()}")
            break
        try:
            assert_healthy(vault)
            ids = head_turn_ids(vault)
            assert len(ids) == len(set(ids)), "a turn is in HEAD twice"
            lost = acknowledged - set(ids)
            assert not lost, f"{len(lost)} acknowledged turns missing, e.g. {sorted(lost)[:3]}"
            if kind == "curate":
                log = git(vault, "log", "--format=%s")
                assert "edited by hand" not in log, "the agent's output was taken for a human's"
                for note in note_files(vault):
                    lines = [x for x in note.read_text().splitlines() if x.startswith("- ")]
                    assert len(lines) == len(set(lines)), f"duplicated lines in {note.name}"
        except AssertionError as exc:
            failures.append(f"point {point} ({'git phase' if at_git else 'random'}): {exc}")
            break
    # finally everything once more, to completion: every turn in HEAD exactly once
    if not failures and kind == "ingest":
        for point in range(points):
            ack_ingest(root / f"in{point}", _ids_of(root / f"in{point}"))
        ids = head_turn_ids(vault)
        if sorted(ids) != sorted(acknowledged):
            failures.append("after re-running every ingest, HEAD's turns differ from the input")
    return {"kind": kind, "points": points, "killed": killed, "git_phase": git_phase,
            "finished_first": finished, "failures": failures, "phases": phases,
            "acknowledged_turns": len(acknowledged), "lost": 0 if not failures else None}


def _ids_of(folder: Path) -> set[str]:
    out = set()
    for f in folder.glob("*.jsonl"):
        for line in f.read_text().splitlines():
            if line.strip():
                out.add(json.loads(line)["id"])
    return out
