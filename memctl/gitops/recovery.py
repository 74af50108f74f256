"""Finishing or undoing what a killed command left behind, from its write-ahead journal.

`memctl.core.store` journals every file a transaction is about to change. A command killed
with SIGKILL (or by a power cut after its fsync) leaves that journal behind; the next
command that takes the vault lock runs `recover` first. The decision for each path:

- the file already matches HEAD (the commit landed, or the write was a no-op): keep it;
- a raw session an ingest was writing: keep it. Raw files are written whole by rename,
  so any that exists is a complete session (possibly grown by some turns); those are
  committed with a `Memctl-Recovered:` trailer, with the INDEX files rebuilt around them;
- anything else (notes, INDEX files, the curation watermark): put back as it was before
  the command, by renaming the journal's link over it, or removed if the command made it.

Then the staged entries of what was undone are reset, stray temp files removed, and a git
lock file left by a process that is gone is deleted (one that a live git holds is not).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.core.store import JOURNAL_REL, PURGE_REL, open_journal_names, restore
from memctl.errors import MemctlError
from memctl.gitops.gitlocks import GIT_LOCK_NAMES, clear_stale_git_locks

if TYPE_CHECKING:
    from memctl.core.floor import Floor

# Commands whose complete raw sessions are worth keeping: the turns were on their way in.
FORWARD = frozenset({"ingest"})


@dataclass
class Recovery:
    """What one recovery did; `summary()` is the one line the front ends print."""

    commands: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    locks: list[str] = field(default_factory=list)
    commit: str | None = None
    followed: str | None = None
    purge: str | None = None
    sync: str | None = None  # what was put right after an interrupted sync

    def __bool__(self) -> bool:
        return bool(self.commands or self.locks or self.followed or self.purge or self.sync)

    def summary(self) -> str:
        parts = []
        if self.commands:
            what = ", ".join(sorted(set(self.commands)))
            parts.append(f"finished an interrupted {what}")
            if self.commit:
                n = sum(1 for p in self.kept if _is_raw_session(p))
                parts.append(f"committed {n} complete session{'s' * (n != 1)} ({self.commit[:10]})")
            undone = len(self.restored) + len(self.removed)
            if undone:
                parts.append(f"put back {undone} half-written file{'s' * (undone != 1)}")
        if self.locks:
            parts.append("removed stale git lock " + ", ".join(self.locks))
        if self.sync:
            parts.append(self.sync)
        if self.purge:
            parts.append(self.purge)
        if not parts and self.followed:
            return self.followed
        if self.followed:
            parts.append(self.followed)
        return "recovered: " + "; ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {
            "commands": self.commands,
            "kept": self.kept,
            "restored": self.restored,
            "removed": self.removed,
            "locks": self.locks,
            "commit": self.commit,
            "followed": self.followed,
            "purge": self.purge,
            "sync": self.sync,
        }


def pending(root: Path) -> list[Path]:
    """Journals left by another process (or an earlier life of this one), oldest first."""
    base = root / JOURNAL_REL
    try:
        names = sorted(e.name for e in os.scandir(base) if e.is_dir())
    except OSError:
        return []
    mine = open_journal_names(root)
    return [base / n for n in names if n not in mine]


def needed(root: Path) -> bool:
    """Cheap check every command can afford: a leftover journal or a git lock file."""
    if pending(root):
        return True
    from memctl.gitops.syncrecovery import interrupted

    if interrupted(root) is not None:
        return True  # a sync that did not finish (memctl.gitops.syncrecovery.repair)
    git_dir = root / ".git"
    if any((git_dir / name).exists() for name in GIT_LOCK_NAMES[:2]):
        return True
    if (root / PURGE_REL).exists():
        return True
    from memctl.gitops.follow import moved

    return moved(root)


def read_journal(path: Path) -> tuple[dict[str, Any], list[tuple[str, str | None]]]:
    """Header and (path, backup) entries; a line cut short by the kill is ignored."""
    header: dict[str, Any] = {}
    entries: list[tuple[str, str | None]] = []
    try:
        data = (path / "log").read_bytes()
    except OSError:
        return header, entries
    for raw in data.split(b"\n"):
        try:
            rec = json.loads(raw.decode("utf-8", "surrogateescape"))
        except ValueError:
            continue
        if not isinstance(rec, dict):
            continue
        if "journal" in rec:
            header = rec
        elif isinstance(rec.get("path"), str):
            backup = rec.get("backup")
            entries.append((rec["path"], backup if isinstance(backup, str) else None))
    return header, entries


def recover(vault: Floor, wait: float = 5.0) -> Recovery:
    """Finish or undo every leftover journal; the caller holds the vault lock.

    `wait`: how long to let a live git that holds a lock finish (a reader passes 0).
    """
    from memctl.gitops import syncrecovery

    res = Recovery()
    res.locks = clear_stale_git_locks(vault.root, wait)
    res.sync = syncrecovery.repair(vault.root)
    journals = pending(vault.root)
    if not journals:
        _finish_purge(vault, res)
        _follow(vault, res)
        return res
    history = vault.history
    forward: list[str] = []
    recovered_from: list[str] = []
    # Newest first: a recovery that was itself killed is undone before the work it recovered.
    for jdir in reversed(journals):
        header, entries = read_journal(jdir)
        command = str(header.get("command") or "write")
        res.commands.append(command)
        paths = list(dict.fromkeys(p for p, _ in entries))
        backups = {p: b for p, b in reversed(entries)}  # the first record of a path counts
        head = history.head_blobs(paths)
        now = history.file_blobs(paths)
        undone: list[str] = []
        for rel in paths:
            target = vault.root / rel
            backup = backups.get(rel)
            if now[rel] == head[rel]:
                restore_tmp_only(target)
                # the file is HEAD's, but git may have staged the command's version first
                # (`git revert` writes the index before the files): unstaged below
                undone.append(rel)
                continue
            if command in FORWARD and _is_raw_session(rel) and now[rel] is not None:
                forward.append(rel)
                restore_tmp_only(target)
                continue
            restore(target, jdir / backup if backup else None)
            (res.restored if backup else res.removed).append(rel)
            undone.append(rel)
        if undone:
            with contextlib.suppress(Exception):
                history.unstage(undone)
        if command == "undo" and (vault.root / ".git" / "REVERT_HEAD").exists():
            # the killed undo's `git revert --no-commit`: its files are back, end the revert
            _quit_revert(vault.root)
        if command in FORWARD:
            recovered_from.append(
                f"{command} pid {header.get('pid', '?')} started {header.get('started', '?')}"
            )
        shutil.rmtree(jdir, ignore_errors=True)
    if forward:
        res.kept = sorted(set(forward))
        res.commit = _commit_forward(vault, res.kept, recovered_from)
    _reindex(vault, [*res.kept, *res.restored, *res.removed])
    _finish_purge(vault, res)
    _follow(vault, res)
    return res


def _finish_purge(vault: Floor, res: Recovery) -> None:
    """A `forget --purge` killed after its record: rewrite history now, or say it is due.

    The forget's own journal has been dealt with first: if its commit never landed, the
    files are back and the record is dropped; if it did, history is rewritten here.
    """
    from memctl.gitops import purge

    if not (vault.root / PURGE_REL).exists():
        return
    try:
        notes = purge.finish_purge(vault)
    except MemctlError as exc:
        res.purge = f"purge incomplete: run `memctl doctor --repair` ({exc.message})"
        return
    if notes:
        res.commands.append("forget --purge")
        res.purge = "rewrote history for an interrupted forget --purge; " + " ".join(notes[:1])


def _follow(vault: Floor, res: Recovery) -> None:
    """HEAD moved outside memctl (a plain git revert, reset, pull): derived files follow."""
    from memctl.gitops import follow

    if follow.moved(vault.root):
        done = follow.follow(vault)
        res.followed = done.summary() if done else None


def _quit_revert(root: Path) -> None:
    """End the killed undo's revert. `git revert --quit` clears the sequencer, but a
    single-commit `--no-commit` revert has none, only REVERT_HEAD (which the undo's own
    commit would have removed); the files are HEAD's again, so it goes too."""
    import subprocess

    subprocess.run(["git", "-C", str(root), "revert", "--quit"], capture_output=True,
                   check=False)  # fmt: skip
    (root / ".git" / "REVERT_HEAD").unlink(missing_ok=True)


def restore_tmp_only(target: Path) -> None:
    """Remove the temp files a killed atomic write left beside `target`."""
    if target.parent.is_dir():
        for tmp in target.parent.glob(f".{target.name}.*.tmp"):
            with contextlib.suppress(OSError):
                tmp.unlink()


def _commit_forward(vault: Floor, kept: list[str], origins: list[str]) -> str | None:
    n = len(kept)
    with vault.change(
        "ingest",
        subject=f"ingest: {n} session{'s' * (n != 1)} recovered after an interrupted run",
        journal="recover",
        index=False,
    ) as ch:
        ch.paths = list(kept)
        ch.trailers["Memctl-Sessions"] = str(n)
        ch.trailers["Memctl-Recovered"] = "; ".join(origins) or "interrupted ingest"
    return ch.commit


def _reindex(vault: Floor, paths: list[str]) -> None:
    if not paths:
        return
    from memctl.index import writer

    writer.after_write(vault, paths)


def _is_raw_session(rel: str) -> bool:
    return rel.startswith("raw/") and rel.endswith(".md") and not rel.endswith("/INDEX.md")
