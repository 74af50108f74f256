"""Derived files follow git: after a git operation done outside memctl, catch up.

A plain `git revert`, `checkout`, `reset`, `pull` or `merge` changes notes and sessions
behind memctl's back; the merge drivers merge INDEX lines, but nothing regenerates INDEX
files from what the notes now say, and the search index still holds what was there.
memctl remembers the HEAD its derived files were made for (`.memctl/cache/head`, written
after each of its own commits); the next command that opens the vault sees HEAD elsewhere
and, under the vault lock, re-indexes the files that changed between the two and rewrites
the INDEX files that are stale, as one commit of their own.

Reading HEAD is two small file reads, so every command can afford the check.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from memctl.core.history import head_of, record_head, recorded_head

if TYPE_CHECKING:
    from memctl.core.floor import Floor

# A git operation still under way (conflicts being resolved): wait until it is done.
_IN_PROGRESS = ("MERGE_HEAD", "REVERT_HEAD", "CHERRY_PICK_HEAD", "rebase-merge", "rebase-apply")


@dataclass
class Followed:
    """What catching up with git did; `summary()` is the notice line."""

    reindexed: list[str] = field(default_factory=list)
    index_files: list[str] = field(default_factory=list)
    commit: str | None = None
    reported: list[str] = field(default_factory=list)  # pulled curation state not taken

    def __bool__(self) -> bool:
        return bool(self.reindexed or self.index_files or self.reported)

    def summary(self) -> str:
        bits = [f"re-indexed {len(self.reindexed)} file{'s' * (len(self.reindexed) != 1)}"]
        bits += self.reported
        if self.index_files:
            n = len(self.index_files)
            bits.append(f"regenerated {n} INDEX file{'s' * (n != 1)}"
                        + (f" ({self.commit[:10]})" if self.commit else ""))  # fmt: skip
        return "followed a git change made outside memctl: " + ", ".join(bits)


def moved(root: Path) -> bool:
    """Cheap: has HEAD moved since memctl last brought its derived files in step?

    A vault that has no record yet (made by an older memctl, or its cache cleared) gets
    one here and is taken as in step.
    """
    now = head_of(root)
    if now is None:
        return False
    was = recorded_head(root)
    if was is None:
        record_head(root, now)
        return False
    return was != now


def follow(vault: Floor) -> Followed:
    """Re-index what changed since the recorded HEAD and rewrite stale INDEX files.

    The caller holds the vault lock. Nothing is done while a git operation is in progress
    (its conflicts are the person's); INDEX files with uncommitted edits are left for
    `memctl doctor`; on a detached HEAD (a checkout of an old commit) only the search
    index follows, since a commit there would be on no branch.
    """
    from memctl.curate import indexfiles
    from memctl.index import writer

    out = Followed()
    root = vault.root
    now = head_of(root)
    was = recorded_head(root)
    if now is None or was is None or was == now:
        return out
    git_dir = root / ".git"
    if any((git_dir / name).exists() for name in _IN_PROGRESS):
        return out
    changed = _changed(root, was, now)
    if changed is None:  # the old commit is gone (history rewritten): look at everything
        changed = _tracked(root)
    out.reindexed = sorted(changed)
    if changed:
        writer.after_write(vault, out.reindexed)
    attached = (git_dir / "HEAD").is_file() and (git_dir / "HEAD").read_text().startswith("ref:")
    if attached:
        dirty = {line[3:] for line in vault.history.dirty()}
        # only INDEX files that exist: a store newly configured, or one curation refuses,
        # gets its INDEX from the command that writes its first note (or doctor --repair)
        stale = [r for r in indexfiles.stale(vault) if r not in dirty and (root / r).exists()]
        # curation state a `git pull` brought is screened as `memctl sync` screens it
        fixes: dict[str, str] = {}
        if any(p.startswith(".memctl/state/") for p in changed) and _arrived(root, was, now):
            from memctl.gitops import pulledcuration

            fixes, out.reported = pulledcuration.screen(root, was)
            fixes = {rel: text for rel, text in fixes.items() if rel not in dirty}
        if stale or fixes:
            expected = indexfiles.expected(vault)
            with vault.change(
                "follow",
                subject="index: INDEX files regenerated after a git change made outside memctl"
                if not fixes else "sync: the curation state a pull brought, screened "
                "(followed a git change made outside memctl)",
                refresh=False,
            ) as ch:
                ch.trailers["Memctl-Follows"] = now
                for rel in stale:
                    ch.tx.write(rel, expected[rel])
                for rel, text in fixes.items():
                    ch.tx.write(rel, text)
            out.commit = ch.commit
            out.index_files = stale
    from memctl.core.localstate import held_path

    if held_path(root).is_file() and _arrived(root, was, now):
        from memctl.gitops.remotetrust import waiting

        cfg = root / ".memctl" / "config.toml"
        config = cfg.read_text(encoding="utf-8") if cfg.is_file() and not cfg.is_symlink() else None
        if held := waiting(root, config):
            out.reported.append(
                f"settings it changed are NOT in force until you accept them ({', '.join(held)}): "
                "review .memctl/config.toml, then `memctl sync --accept-config`")
    record_head(root)
    return out


def _arrived(root: Path, was: str, now: str) -> bool:
    """Whether a commit between `was` and `now` came from elsewhere (a pull, a fetch and
    merge), not from this clone: a memctl command killed after its commit, or a person's own
    `git commit`, moves its own curation state, and that is never screened."""
    from memctl.core.lineage import own_commits

    proc = subprocess.run(["git", "-C", str(root), "rev-list", f"{was}..{now}"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    if proc.returncode != 0:
        return True  # history rewritten under us: judge it as arrived
    return bool(set(proc.stdout.split()) - own_commits(root))


def _changed(root: Path, was: str, now: str) -> set[str] | None:
    proc = subprocess.run(
        ["git", "-C", str(root), "diff", "--name-only", "-z", "--no-renames", was, now],
        capture_output=True, check=False,
    )  # fmt: skip
    if proc.returncode != 0:
        return None
    return {p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p}


def _tracked(root: Path) -> set[str]:
    proc = subprocess.run(["git", "-C", str(root), "ls-files", "-z"], capture_output=True,
                          check=False)  # fmt: skip
    return {p for p in proc.stdout.decode("utf-8", "surrogateescape").split("\0") if p}
