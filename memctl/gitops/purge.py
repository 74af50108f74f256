"""`forget --purge`: the forgotten words out of every commit of every branch, crash-safe.

The rewrite (git-filter-repo) runs after the forget commit, so it is journalled: before
that commit, `.memctl/journal/purge.json` records what to replace and which paths go (and
HEAD before the forget commit); the record goes once history is rewritten. A command
killed in between leaves the record, and the next command's recovery finishes the rewrite
(or drops the record when the forget commit never landed); doctor reports it while due.
memctl never force-pushes: `purge_instructions` says what each remote and clone must do.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.core.store import PURGE_REL, read_text
from memctl.errors import MemctlError

if TYPE_CHECKING:
    from memctl.core.floor import Floor

FORGOTTEN = "[forgotten]"


def filter_repo_cmd() -> list[str]:
    """git-filter-repo: the module next to this interpreter, else the script on PATH."""
    import importlib.util

    if importlib.util.find_spec("git_filter_repo") is not None:
        return [sys.executable, "-m", "git_filter_repo"]
    found = shutil.which("git-filter-repo")
    if found:
        return [found]
    raise MemctlError(
        "--purge needs git-filter-repo (pip install git-filter-repo); nothing was changed",
        exit_code=2,
    )




def purge_plan(root: Path, secrets: list[str], gone: list[str]) -> dict[str, Any]:
    """What the rewrite replaces (text expressions) and removes (whole paths)."""
    lines = []
    for secret in _still_secret(root, secrets):
        if "\n" in secret or "\r" in secret or "==>" in secret:
            pattern = re.escape(secret).replace("\n", r"\n").replace("\r", r"\r")
            lines.append(f"regex:{pattern.replace('==>', '=(?:)=>')}==>{FORGOTTEN}")
        else:
            lines.append(f"literal:{secret}==>{FORGOTTEN}")
    return {"expressions": lines, "paths": sorted(set(gone))}


def write_intent(vault: Floor, plan: dict[str, Any]) -> None:
    """Record, durably and before the forget commit, that history is to be rewritten.

    It holds the forgotten words themselves (the rewrite needs them), readable by the
    owner only, and goes as soon as the rewrite is done. `base` is HEAD before the forget
    commit: if HEAD is still there after a kill, the forget never landed (its journal puts
    the files back) and there is nothing to purge.
    """
    import json
    import os

    from memctl.core.store import atomic_write, sync_dir

    filter_repo_cmd()
    target = vault.root / PURGE_REL
    target.parent.mkdir(parents=True, exist_ok=True)
    ignore = target.parent / ".gitignore"
    if not ignore.exists():  # the journal folder is never committed (store's Journal too)
        atomic_write(ignore, "*\n", durable=False)
    record = {"purge": 1, "base": vault.history.head_sha(), "pid": os.getpid(), **plan}
    atomic_write(target, json.dumps(record, ensure_ascii=False), durable=True)
    target.chmod(0o600)
    sync_dir(target.parent)


def drop_intent(root: Path) -> None:
    (root / PURGE_REL).unlink(missing_ok=True)


def pending_purge(root: Path) -> dict[str, Any] | None:
    """The recorded purge a killed command did not finish, if any."""
    import json

    try:
        data = json.loads((root / PURGE_REL).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def finish_purge(vault: Floor) -> list[str]:
    """Rewrite every branch and tag as the recorded purge says; then drop the record.

    Safe to run again after a kill at any point: replacing words already replaced and
    removing paths already gone change nothing. Returns what the person must do elsewhere.
    """
    from memctl.index import writer

    root = vault.root
    plan = pending_purge(root)
    if plan is None:
        return []
    if plan.get("base") and vault.history.head_sha() == plan["base"]:
        drop_intent(root)  # the forget commit never landed: nothing was forgotten
        return []
    cmd = filter_repo_cmd()
    _drop_commit_graph(root)  # a rewrite killed in its gc leaves one naming pruned commits
    from memctl.gitops.gitlocks import clear_stale_git_locks

    clear_stale_git_locks(root, wait=0)  # and its gc.pid, which stops the next gc
    # Each purge is a rewrite of its own, never the "continuation" filter-repo makes of a run
    # that left .git/filter-repo behind: a killed run's state refuses --sensitive-data-removal,
    # and a day-old one makes filter-repo ask a question on stdin.
    shutil.rmtree(root / ".git" / "filter-repo", ignore_errors=True)
    with tempfile.TemporaryDirectory(prefix="memctl-purge-") as tmp:
        exprs = Path(tmp) / "replace.txt"
        with exprs.open("w", encoding="utf-8", newline="\n") as fh:
            fh.write("".join(line + "\n" for line in plan.get("expressions") or []))
        args = [
            *cmd,
            "--force",
            "--sensitive-data-removal",
            "--no-fetch",
            "--quiet",
            "--replace-text",
            str(exprs),
            "--replace-message",
            str(exprs),
        ]
        gone = [str(p) for p in plan.get("paths") or []]
        if gone:
            args += ["--invert-paths"]
            for p in gone:
                args += ["--path", p]
        proc = subprocess.run(args, cwd=root, capture_output=True, text=True, check=False,
                              stdin=subprocess.DEVNULL)  # fmt: skip
        if proc.returncode != 0:
            raise MemctlError(
                "git-filter-repo failed; the forget commit stands, history is not rewritten "
                "yet (purge incomplete: run `memctl doctor --repair`): "
                + (proc.stderr.strip().splitlines() or ["no output"])[-1],
                exit_code=1,
            )
    from memctl.core.lineage import rewritten

    rewritten(root, root / ".git" / "filter-repo" / "commit-map")  # own commits stay own
    # everything derived from the old files goes too: index, header cache, stray objects
    shutil.rmtree(root / ".memctl" / "cache", ignore_errors=True)
    (root / ".git" / "COMMIT_EDITMSG").unlink(missing_ok=True)  # the unrewritten message
    writer.rebuild(vault)
    vault.history = None  # rewritten: opened afresh on next use
    drop_intent(root)
    remotes = subprocess.run(
        ["git", "-C", str(root), "remote"], capture_output=True, text=True, check=False
    ).stdout.split()
    return purge_instructions(remotes)


def _drop_commit_graph(root: Path) -> None:
    """The commit-graph is a cache git rebuilds; a stale one makes fsck and log fail."""
    info = root / ".git" / "objects" / "info"
    (info / "commit-graph").unlink(missing_ok=True)
    shutil.rmtree(info / "commit-graphs", ignore_errors=True)


def _still_secret(root: Path, secrets: list[str]) -> list[str]:
    """Forgotten words that no file of the vault holds any more.

    Words that are still in a current file (another session said the same sentence) are
    not what was forgotten; replacing them in history would alter memory that was kept.
    """
    listed = subprocess.run(
        ["git", "-C", str(root), "ls-files", "-z"], capture_output=True, check=False
    ).stdout.decode("utf-8", "surrogateescape")
    corpus = []
    for rel in listed.split("\0"):
        p = root / rel
        if rel and p.is_file():
            try:
                corpus.append(read_text(p))
            except (OSError, UnicodeDecodeError):
                continue
    blob = "\0".join(corpus)
    return [s for s in secrets if s not in blob]


def purge_instructions(remotes: list[str]) -> list[str]:
    """What the person has to do elsewhere: memctl never force-pushes on its own."""
    out = [
        "history is rewritten here: no branch or tag of this repository holds the content.",
        "Every other copy still does until you act:",
    ]
    for r in remotes or ["REMOTE"]:
        out.append(f"  git push --force --all {r} && git push --force --tags {r}")
    out += [
        "  every other clone: delete it and clone again (a pull would bring the old commits "
        "back), then `memctl init` there",
        "  a hosting service may keep old commits reachable (pull requests, forks, caches): "
        "ask it to purge them",
    ]
    return out
