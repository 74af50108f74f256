"""An interrupted `memctl sync`: its journal, and putting right what it left.

Sync writes `<git dir>/memctl/sync.json` before it fetches and removes it when done; sync
holds the vault lock throughout, so whoever takes the lock and finds the journal knows that
sync is dead. Recovery (memctl.recovery, on the next command) and `memctl doctor --repair`
call `repair`, after clearing the git locks the killed git left.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from memctl.core.localstate import git_dir, local_dir, run_git, write_local
from memctl.errors import MemctlError

JOURNAL = "sync.json"


def start(root: Path, branch: str, head: str) -> Path:
    """Written before anything moves: what the next command needs to put an interrupted
    sync right (abort its rebase, remove the merge drivers' temp files)."""
    p = local_dir(root) / JOURNAL
    write_local(p, json.dumps({"branch": branch, "head": head, "pid": os.getpid()}) + "\n")
    return p


def interrupted(root: Path) -> dict[str, Any] | None:
    """The journal of a sync that did not finish, if any (cheap: one stat)."""
    p = local_dir(root) / JOURNAL
    if not p.is_file():
        return None
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        data = {}
    return data if isinstance(data, dict) else {}


def rebase_in_progress(root: Path) -> bool:
    gd = git_dir(root)
    return (gd / "rebase-merge").exists() or (gd / "rebase-apply").exists()


def pulled_strays(root: Path, branch: str) -> list[str]:
    """Untracked files that hold exactly what the fetched branch has at their path: the
    pull's checkout wrote them, and was killed before git recorded them, so aborting its
    rebase left them behind. A file of the person's own is never the same bytes at a path
    the pull brings (git would have refused to pull over it), and the next sync brings
    these back where they belong."""
    if not branch:
        return []
    run = run_git(root)
    out = []
    try:  # a recovery step: whatever git says here, the next command still runs
        names = [n for n in run("ls-files", "--others", "--exclude-standard", "-z").split("\0")
                 if n]  # fmt: skip
        tips = [t for t in run("for-each-ref", "--format=%(objectname)",
                               f"refs/remotes/*/{branch}").split() if t]  # fmt: skip
        if not names or not tips:
            return []
        mine = dict(zip(names, run("hash-object", "--", *names).split(), strict=False))
        for tip in tips:
            for line in run("ls-tree", "-r", "-z", tip, "--", *names).split("\0"):
                meta, _, path = line.partition("\t")
                parts = meta.split()
                if len(parts) == 3 and parts[1] == "blob" and mine.get(path) == parts[2]:
                    out.append(path)
    except MemctlError:
        return []
    return sorted(set(out))


def driver_temp_files(root: Path) -> list[Path]:
    """Temp files git's merge left in the work tree (`.merge_file_*`)."""
    try:
        return sorted(p for p in root.iterdir() if p.name.startswith(".merge_file_"))
    except OSError:
        return []


def repair(root: Path) -> str | None:
    """Put right what an interrupted sync left (the caller holds the vault lock): abort the
    rebase it started (every local commit comes back as it was), go back to its branch,
    remove the drivers' temp files. One line saying which, or None when nothing was left."""
    data = interrupted(root)
    if data is None:
        return None
    done = []
    run = run_git(root)
    branch = str(data.get("branch") or "")
    if rebase_in_progress(root):
        try:
            run("rebase", "--abort")
        except MemctlError:
            # killed before git wrote what --abort reads: the branch ref is only moved when
            # a rebase finishes, so it still names the commits from before that sync
            if not branch:
                return "an interrupted sync left a rebase that could not be aborted"
            gd = git_dir(root)
            for name in ("rebase-merge", "rebase-apply"):
                shutil.rmtree(gd / name, ignore_errors=True)
            run("checkout", "-q", "-f", branch)
        done.append("aborted its rebase (your vault is as it was before that sync)")
    try:
        current = run("rev-parse", "--abbrev-ref", "HEAD").strip()
    except MemctlError:
        current = branch
    if current == "HEAD" and branch:
        try:
            run("checkout", "-q", branch)
            done.append(f"back on branch {branch}")
        except MemctlError:
            pass
    strays = pulled_strays(root, branch)
    for rel in strays:
        (root / rel).unlink(missing_ok=True)
    if strays:
        done.append(f"removed {len(strays)} file{'s' * (len(strays) != 1)} its pull had "
                    "written but not recorded")  # fmt: skip
    temps = driver_temp_files(root)
    for p in temps:
        p.unlink(missing_ok=True)
    if temps:
        done.append(f"removed {len(temps)} merge temp file{'s' * (len(temps) != 1)}")
    (local_dir(root) / JOURNAL).unlink(missing_ok=True)
    return "an interrupted sync: " + (", ".join(done) if done else "nothing was left half-done")
