"""git's own lock files that a killed git leaves in `.git`, and removing the stale ones.

A kill (or a power cut) while git holds a lock leaves the lock file behind, and every
later git that needs it refuses to run. Recovery, `doctor --repair` and a purge's rewrite
remove those that no live process may hold; one that a live git holds is left alone.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

# git's locks a killed git leaves behind; the object-store ones come from a gc (filter-repo
# ends every purge with one) killed mid-write, and make every later gc refuse to start
GIT_LOCK_NAMES = (
    "index.lock",
    "HEAD.lock",
    "packed-refs.lock",
    "config.lock",
    "ORIG_HEAD.lock",
    "shallow.lock",
    "objects/info/commit-graph.lock",
    "objects/info/commit-graphs/commit-graph-chain.lock",
    "objects/pack/multi-pack-index.lock",
    # not a lock file but one: while it names a process that exists (a pid reused after a
    # crash, a killed gc not reaped yet) git refuses to gc, and a purge's rewrite gcs
    "gc.pid",
)
STALE_WITHOUT_PROC = 600.0  # seconds: where liveness can't be seen, only old locks are stale


def clear_stale_git_locks(root: Path, wait: float = 5.0) -> list[str]:
    """Remove lock files a dead git left in `.git`; never one a live process may hold."""
    git_dir = root / ".git"
    if not git_dir.is_dir():
        return []
    found = [git_dir / n for n in GIT_LOCK_NAMES if (git_dir / n).exists()]
    refs = git_dir / "refs"
    if refs.is_dir():
        found += list(refs.rglob("*.lock"))
    if not found:
        return []
    live = _live_git_users(root.resolve())
    deadline = time.monotonic() + wait
    while live and time.monotonic() < deadline:
        time.sleep(0.05)  # a git that outlived a killed memctl finishes its step
        live = _live_git_users(root.resolve())
    removed = []
    for lock in found:
        if live is None:
            try:
                age = time.time() - lock.stat().st_mtime
            except OSError:
                continue
            if age < STALE_WITHOUT_PROC:
                continue
        elif live or _held_open(lock):
            continue
        with contextlib.suppress(FileNotFoundError):
            lock.unlink()
            removed.append(lock.relative_to(root).as_posix())
    return removed


def _live_git_users(root: Path) -> list[int] | None:
    """Pids of running git processes working in `root`; None where /proc can't tell."""
    proc = Path("/proc")
    if not (proc / "self" / "fd").is_dir():
        return None
    out = []
    me = os.getpid()
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == me:
            continue
        try:
            comm = (entry / "comm").read_text().strip()
            if not comm.startswith("git"):
                continue
            stat = (entry / "stat").read_text()
            if int(stat.rsplit(")", 1)[1].split()[1]) == me:
                continue  # our own long-lived `git cat-file` helpers hold no lock
            cwd = (entry / "cwd").readlink()
        except OSError:
            continue
        if cwd == root or root in cwd.parents:
            out.append(int(entry.name))
    return out


def _held_open(lock: Path) -> bool:
    target = str(lock.resolve())
    for fd_dir in Path("/proc").glob("[0-9]*/fd"):
        try:
            for fd in fd_dir.iterdir():
                with contextlib.suppress(OSError):
                    if str(fd.readlink()) == target:
                        return True
        except OSError:
            continue
    return False
