"""`memctl diff`: what the agent learned, claim by claim, from git history.

Every change to a note between two points in history is classified per claim: added,
reinforced (a new source for a known claim), superseded (moved to History because the fact
changed or was corrected), retracted, resolved (an open thread closed), edited (same sources,
new words), removed (deleted outright), or rejected (a proposal review took out without
accepting it). Each carries its source quote and the author of the commit that made it, so
an edit by a human is told apart from one by the agent.
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from memctl.curate.claimdiff import ClaimChange, claim_changes, read_note
from memctl.errors import InputError

if TYPE_CHECKING:
    from collections.abc import Callable

    from memctl.core.floor import Floor

UNCOMMITTED = "uncommitted"


@dataclass
class NoteChanges:
    store: str
    path: str
    title: str
    changes: list[ClaimChange] = field(default_factory=list)


@dataclass
class DiffResult:
    """Claim-level changes grouped by store and note."""

    range: str
    commits: int
    notes: list[NoteChanges] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for n in self.notes:
            for c in n.changes:
                out[c.action] = out.get(c.action, 0) + 1
        return dict(sorted(out.items()))

    def by_store(self) -> dict[str, list[NoteChanges]]:
        out: dict[str, list[NoteChanges]] = {}
        for n in self.notes:
            out.setdefault(n.store, []).append(n)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "range": self.range,
            "commits": self.commits,
            "counts": self.counts(),
            "stores": {
                store: [
                    {
                        "path": n.path,
                        "title": n.title,
                        "changes": [{**asdict(c), "plain": c.plain} for c in n.changes],
                    }
                    for n in notes
                ]
                for store, notes in self.by_store().items()
            },
        }


def _since_arg(since: str) -> str:
    """Our date vocabulary (7d, 3w, ISO dates) as a git --since value; unreadable is an error."""
    from memctl.core.when import parse_when

    epoch = parse_when(since, datetime.now(UTC))
    return datetime.fromtimestamp(epoch or 0, UTC).isoformat()


def diff(
    vault: Floor,
    *,
    since: str | None = None,
    rev_range: str | None = None,
    store: str | list[str] | None = None,
    uncommitted: bool | None = None,
) -> DiffResult:
    """Claim-level changes in `rev_range` (A..B), or since a time (default 7 days)."""
    git = vault.history.read
    stores = vault.config.stores
    wanted = [store] if isinstance(store, str) else list(store or [])
    for w in wanted:
        if w not in stores:
            raise InputError(f"no store {w!r}: configured stores are {', '.join(stores)}")
    folders = {
        s.folder.rstrip("/"): name for name, s in stores.items() if not wanted or name in wanted
    }
    if not vault.history.has_commits():
        return DiffResult(rev_range or f"since {since or '7d'}", 0)
    if rev_range:
        if ".." not in rev_range:
            rev_range = f"{rev_range}..HEAD"
        shas = git("rev-list", "--reverse", _checked_range(git, rev_range)).split()
        label = rev_range
        uncommitted = bool(uncommitted) and rev_range.endswith("..HEAD")
    else:
        since = since or "7d"
        shas = git("rev-list", "--reverse", f"--since={_since_arg(since)}", "HEAD").split()
        label = f"since {since}"
        uncommitted = True if uncommitted is None else uncommitted
    agent = vault.config.agent
    by_path: dict[str, NoteChanges] = {}

    def record(
        path: str, old_t: str | None, new_t: str | None, who: str, human: bool, sha: str, date: str,
        landed: set[str] | None = None,
    ) -> None:
        st = next((n for f, n in folders.items() if path.startswith(f + "/")), None)
        if st is None or path.endswith("/INDEX.md") or not path.endswith(".md"):
            return
        old, new = read_note(old_t, path), read_note(new_t, path)
        changes = claim_changes(old, new, who, human, sha, date)
        if landed is not None and old is not None and old.status == "proposed" and new is None:
            # a proposal taken out by review: a claim that landed in its note in the same
            # commit was accepted (its `added` says so); the others were rejected, not removed
            changes = [
                dataclasses.replace(c, action="rejected") if c.action == "removed" else c
                for c in changes
                if not (c.action == "removed" and c.plain in landed)
            ]
        if not changes:
            return
        either = new or old
        nc = by_path.setdefault(path, NoteChanges(st, path, either.title if either else path))
        if new is not None:
            nc.title = new.title
        nc.changes.extend(changes)

    specs = list(folders)
    commits: list[tuple[str, str, str, str, str | None, list[str]]] = []
    for sha in shas:
        meta = git("show", "-s", "--format=%an%x00%ae%x00%aI%x00%P%x00%B", sha).split("\x00")
        an, ae, date, parents = meta[0], meta[1], meta[2], meta[3].split()
        if "\nMemctl-Command: init" in "\n" + meta[4]:
            continue  # adopting existing notes is not learning anything new
        parent = parents[0] if parents else None
        args = ["--no-commit-id", "--name-only", "-r", "-z"]
        names = (
            git("diff-tree", *args, parent, sha, "--", *specs)
            if parent
            else git("diff-tree", *args, "--root", sha, "--", *specs)
        )
        commits.append((sha, an, ae, date, parent, [p for p in names.split("\0") if p]))
    # every note's text before and after each commit, in one read for all of them
    asked = [(rev, path) for sha, _, _, _, parent, paths in commits for path in paths
             for rev in ((parent, sha) if parent else (sha,))]  # fmt: skip
    asked = list(dict.fromkeys(asked))  # a commit's after is the next one's before
    read = dict(zip(asked, vault.history.texts(asked), strict=True))
    for sha, an, ae, date, parent, paths in commits:
        human = not (an == agent.name and ae == agent.email)
        texts = [
            (path, read[(parent, path)] if parent else None, read[(sha, path)])
            for path in paths
        ]
        # what this commit added to notes that are not proposals: what a review accepted
        reviewed = any(p.endswith(".proposed.md") and new_t is None for p, _, new_t in texts)
        landed = {
            c.plain
            for path, old_t, new_t in (texts if reviewed else ())
            if new_t is not None and not path.endswith(".proposed.md")
            for c in claim_changes(
                read_note(old_t, path), read_note(new_t, path), "", False, "", ""
            )
            if c.action == "added"
        }
        for path, old_t, new_t in texts:
            record(path, old_t, new_t, an, human, sha, date[:10], landed)
    if uncommitted:
        status = git("status", "--porcelain", "-z", "--untracked-files=all", "--", *specs)
        entries = [e for e in status.split("\0") if e]
        who = vault.human_identity().name
        for e in entries:
            path = e[3:]
            target = vault.root / path
            from memctl.core.store import read_text

            new_t = read_text(target) if target.is_file() else None
            old_t = _show(git, "HEAD", path)
            record(path, old_t, new_t, who, True, UNCOMMITTED, datetime.now(UTC).date().isoformat())
    order = {name: i for i, name in enumerate(stores)}
    notes = sorted(by_path.values(), key=lambda n: (order.get(n.store, 99), n.path))
    return DiffResult(label, len(shas), notes)


def _checked_range(git: Callable[..., str], rev_range: str) -> str:
    """`A..B` (or `A...B`) with both ends resolved to commits, or InputError.

    The range is never handed to git as the user typed it: a revision that starts with
    "-" is an option to git (`--output=FILE` makes `git rev-list` create or truncate
    FILE anywhere), so each end is checked and replaced by the commit it names.
    """
    sep = "..." if "..." in rev_range else ".."
    ends = rev_range.split(sep, 1)
    shas = []
    for end in ends:
        end = end or "HEAD"
        if end.startswith("-") or "\x00" in end or not end.isprintable():
            raise InputError(f"bad revision range {rev_range!r}: use REV..REV")
        try:
            shas.append(git("rev-parse", "--verify", "--quiet", f"{end}^{{commit}}").strip())
        except Exception:
            raise InputError(f"bad revision range {rev_range!r}: use REV..REV") from None
    return sep.join(shas)


def _show(git: Callable[..., str], rev: str | None, path: str) -> str | None:
    if rev is None:
        return None
    try:
        return git("show", f"{rev}:{path}", whole=True)
    except Exception:
        return None
