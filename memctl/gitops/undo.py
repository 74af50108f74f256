"""`memctl undo` and `memctl rollback NOTE --to REV`: going back, as new commits.

History is never rewritten here (only `forget --purge` does that). Undo reverts the last
memctl command that is not undone yet, so repeated undos walk back one command at a
time; rollback restores one note as it was at a revision. Claims either takes out of
memory are recorded as removed by a person, so the next curation does not learn them
again, and a curation undone keeps its watermark: the turns were read, the person only
disagreed with what was learned from them.
"""

from __future__ import annotations

import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.core.store import Transaction, read_text
from memctl.errors import ConflictError, InputError, MemctlError

if TYPE_CHECKING:
    from memctl.core.floor import Floor

UNDOABLE = ("ingest", "curate", "review", "forget", "edit", "remember", "rollback", "gc")


@dataclass
class UndoResult:
    """What was undone (or rolled back), the claims it took out and gave back, and the new
    commit. A dry run fills both claim lists exactly as the real run would."""

    undone: str | None
    subject: str
    files: list[str] = field(default_factory=list)
    claims_removed: list[str] = field(default_factory=list)
    commit: str | None = None
    claims_restored: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _git(vault: Floor, *args: str, check: bool = True) -> str:
    return _git_at(vault.root, *args, check=check)


def _git_at(root: Path, *args: str, check: bool = True) -> str:
    proc = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, check=False
    )
    if check and proc.returncode != 0:
        raise MemctlError(f"git {args[0]} failed: {proc.stderr.strip() or proc.stdout.strip()}")
    return proc.stdout


def _last(vault: Floor) -> tuple[str, str, str, dict[str, str]] | None:
    """A commit is the user's when this clone made it: its reflogs say so (a `git pull`,
    fetch and merge or clone records no commit of its own there), as memctl.core.lineage
    reads them for provenance. Commits `sync` listed as pulled are skipped as well."""
    from memctl.core.lineage import own_commits
    from memctl.core.localstate import pulled

    undone: set[str] = set()
    theirs = pulled(vault.root)
    own = own_commits(vault.root)
    for c in vault.history.log(500):
        if c.sha in theirs or (own and c.sha not in own):
            continue
        cmd = c.trailers.get("Memctl-Command")
        if cmd == "undo":
            undone.add(c.trailers.get("Memctl-Undoes", ""))
            continue
        if c.sha in undone or cmd not in UNDOABLE:
            continue
        return c.sha, c.subject, cmd, c.trailers
    return None


def _purged(vault: Floor, sha: str, cmd: str) -> bool:
    """Was this forget purged? Then reverting it gives back `[forgotten]`, not the words.

    A purge rewrites every earlier commit, so the "before" a revert restores holds the
    placeholder where the content was: the commit's own removed lines read `[forgotten]`.
    """
    if cmd != "forget":
        return False
    from memctl.gitops.purge import FORGOTTEN

    diff = _git(vault, "show", "--format=", "--unified=0", sha, check=False)
    return any(line.startswith("-") and not line.startswith("---") and FORGOTTEN in line
               for line in diff.splitlines())  # fmt: skip


def _removed_claims(
    vault: Floor, before: dict[str, str], how: str, after: dict[str, str | None] | None = None
) -> list[Any]:
    """Agent claims in `before` (path -> old text) that the files on disk no longer have, or,
    for a dry run, that `after` (path -> the text a real run would write) does not."""
    from memctl.curate import removals

    out = []
    present: set[str] = set()
    for rel in before:
        target = vault.root / rel
        if after is not None:
            new = after.get(rel)
        else:
            new = read_text(target) if target.is_file() else None
        if new is not None:
            present |= {k for _, _, k in removals.agent_claims(new, rel)}
    store_of = {s.folder.strip("/"): s.name for s in vault.config.stores.values()}
    day = removals.today()
    for rel, text in sorted(before.items()):
        for ctext, refs, key in removals.agent_claims(text, rel):
            if key in present:
                continue
            store = store_of.get(rel.split("/", 1)[0], "")
            out.append(
                removals.Removal(removals.claim_digest(ctext), refs, store, rel, how, day, ctext)
            )
    return out


def _note_paths(vault: Floor, paths: list[str]) -> list[str]:
    folders = tuple(s.folder.rstrip("/") + "/" for s in vault.config.stores.values())
    return [p for p in paths if p.startswith(folders) and p.endswith(".md")
            and not p.endswith("INDEX.md")]  # fmt: skip


def undo(vault: Floor, dry_run: bool = False) -> UndoResult:
    """Revert the last memctl command not undone yet, as one new commit by the human."""
    from memctl.curate.specs import STATE_REL

    with vault.lock:
        found = _last(vault)
        if found is None:
            raise InputError("nothing to undo: no memctl command in this history")
        sha, subject, cmd, _ = found
        if _purged(vault, sha, cmd):
            raise ConflictError(
                f"cannot undo {sha[:10]} ({subject}): it was purged, so no commit holds what "
                "it forgot; ingest the transcript again to bring it back"
            )
        files = [
            p for p in _git(vault, "show", "--name-only", "--format=", sha).splitlines() if p
        ]
        res = UndoResult(sha, subject, files)
        # a dry run checks what the real run checks, so its answer is the real run's answer
        dirty = vault.history.dirty()
        if dirty:
            raise ConflictError(
                f"undo needs a clean working tree; {len(dirty)} uncommitted change(s), e.g. "
                f"{dirty[0].strip()}: commit or stash them first"
            )
        head = vault.history.head_sha() or ""
        notes = _note_paths(vault, [*files])
        now = {rel: _text(vault.root / rel) for rel in notes}
        before = {rel: t for rel, t in now.items() if t is not None}
        added_raw = _git(vault, "show", "--name-only", "--diff-filter=A", "--format=", sha)
        new_sessions = [p for p in added_raw.splitlines() if p.startswith("raw/")]
        if new_sessions:
            pats = [x for p in new_sessions for x in ("-e", p)]
            cited = _git(vault, "grep", "-l", "-F", *pats, "HEAD", "--",
                         *(s.folder for s in vault.config.stores.values()),
                         check=False)  # fmt: skip
            users = sorted({line.split(":", 1)[1] for line in cited.splitlines() if ":" in line})
            if users:
                raise ConflictError(
                    f"undoing {sha[:10]} would delete sessions that notes cite ({users[0]}); "
                    "use `memctl forget SESSION` to remove a session and what was learned from it"
                )
        if dry_run:
            # the same revert, in a throwaway worktree: the user's files are not touched
            after = _preview(vault, sha, notes)
            gone = _removed_claims(vault, before, "undo", after=after)
            res.claims_removed = [f"{r.note}: {r.text}" for r in gone]
            res.claims_restored = _restored(now, after)
            return res
        # One journalled transaction: every file the revert may touch is journalled before
        # git changes it, so a kill at any step (mid-revert, staged, mid-commit) is put back
        # by the next command's recovery, or kept whole if the undo commit landed.
        with vault.change(
            "undo",
            subject=f"undo: {subject}",
            body=f'This reverts commit {sha} ("{subject}").',
            refresh=False,
        ) as ch:
            ch.tx.expect([p for p in dict.fromkeys([*files, STATE_REL]) if not p.endswith("/")])

            def abort() -> None:
                _git(vault, "revert", "--abort", check=False)
                _git(vault, "reset", "-q", "--hard", head, check=False)

            ch.on_failure(abort, restores=True)  # the reset puts every file back as HEAD has it
            _revert(vault, vault.root, sha)
            if cmd == "curate" and (vault.root / STATE_REL).exists():
                # the turns were read; what was learned from them is what the person undoes
                _git(vault, "checkout", head, "--", STATE_REL)
            _finish(vault, ch.tx, before, "undo", res)
            res.claims_restored = _restored(now, {rel: _text(vault.root / rel) for rel in notes})
            ch.trailers["Memctl-Undoes"] = sha
            ch.trailers["Memctl-Claims-Removed"] = str(len(res.claims_removed))
            ch.trailers["Memctl-Claims-Restored"] = str(len(res.claims_restored))
            ch.paths = files
            ch.committer = lambda paths, ch: _commit_staged(
                vault, paths, ch.subject, ch.trailers, ch.body
            )
        res.commit = ch.commit
    return res


def _text(path: Path) -> str | None:
    return read_text(path) if path.is_file() else None


def _revert(vault: Floor, root: Path, sha: str) -> None:
    """Stage the revert of `sha` in the work tree at `root`, conflicts resolved claim-wise;
    no git operation stays "in progress" afterwards, so memctl may write."""
    proc = subprocess.run(
        ["git", "-C", str(root), "revert", "--no-commit", "--no-edit", sha],
        capture_output=True,
        text=True,
        check=False,
    )
    if proc.returncode != 0:
        _resolve_deletions(vault, sha, root)
    _git_at(root, "revert", "--quit", check=False)


def _preview(vault: Floor, sha: str, notes: list[str]) -> dict[str, str | None]:
    """The notes as the real undo would leave them: the same revert, the same merge drivers
    (bound in the repository's shared config), in a temporary worktree of HEAD."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="memctl-undo-") as tmp:
        tree = Path(tmp) / "tree"
        _git(vault, "-c", "core.hooksPath=/dev/null", "worktree", "add", "-q", "--detach",
             str(tree), "HEAD")  # fmt: skip
        try:
            _revert(vault, tree, sha)
            return {rel: _text(tree / rel) for rel in notes}
        finally:
            _git(vault, "worktree", "remove", "--force", str(tree), check=False)
            _git(vault, "worktree", "prune", check=False)


def _restored(before: dict[str, str | None], after: dict[str, str | None]) -> list[str]:
    """Claims a note gets back (active after, not before), classified as `memctl diff`
    classifies the commit, so the list and the diff of the new commit agree."""
    from memctl.curate.claimdiff import claim_changes, read_note

    out = []
    for rel in sorted(after):
        old, new = read_note(before.get(rel), rel), read_note(after[rel], rel)
        for c in claim_changes(old, new, "", False, "", ""):
            if c.action in ("added", "edited", "proposed"):
                out.append(f"{rel}: {c.text}")
    return out


def _commit_staged(
    vault: Floor, paths: list[str], subject: str, trailers: dict[str, str], body: str
) -> str:
    """Commit what the revert staged plus `paths`, as the human.

    `History.commit` commits exactly its paths; a revert has already staged deletions
    that no pathspec can name any more, so this commits the index as it stands. The
    commit may be empty: undoing a curate that learned nothing takes nothing back (its
    watermark stays), but the undo is recorded so the next one reaches the command before.
    """
    import os
    import tempfile

    existing = [p for p in dict.fromkeys(paths) if (vault.root / p).exists()]
    if existing:
        _git(vault, "add", "-A", "--", *existing)
    who = vault.human_identity()
    env = {**os.environ, "GIT_AUTHOR_NAME": who.name, "GIT_AUTHOR_EMAIL": who.email,
           "GIT_COMMITTER_NAME": who.name, "GIT_COMMITTER_EMAIL": who.email}  # fmt: skip
    message = f"{subject}\n\n{body}\n\n" + "".join(f"{k}: {v}\n" for k, v in trailers.items())
    fd, msgfile = tempfile.mkstemp(prefix="message.", dir=vault.root / ".memctl")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(message)
        proc = subprocess.run(
            ["git", "-C", str(vault.root), "commit", "-q", "--no-verify", "--allow-empty",
             "-F", msgfile],
            capture_output=True, text=True, env=env, check=False,
        )  # fmt: skip
    finally:
        Path(msgfile).unlink()
    _git(vault, "revert", "--quit", check=False)
    if proc.returncode != 0:
        raise MemctlError(f"git commit failed: {proc.stderr.strip() or proc.stdout.strip()}")
    from memctl.core.history import record_head

    sha = _git(vault, "rev-parse", "HEAD").strip()
    record_head(vault.root, sha)
    return sha


def _resolve_deletions(vault: Floor, sha: str, root: Path) -> None:
    """A note the undone command created and a later command changed: take out its claims.

    git reports this as modify/delete, which no merge driver sees. The claim-level answer
    is the note as it is now without the claims the undone command added.
    """
    from memctl.core.notes import parse_note, render_note

    status = _git_at(root, "status", "--porcelain", "-z").split("\0")
    for entry in status:
        if len(entry) < 4:
            continue
        code, rel = entry[:2], entry[3:]
        if code not in ("UD", "DU", "AU", "UA", "UU", "DD"):
            continue
        if code != "UD" or not _note_paths(vault, [rel]):
            raise ConflictError(
                f"undo of {sha[:10]} conflicts in {rel}; nothing was changed "
                "(use `memctl rollback NOTE --to REV` for one note)"
            )
        added = parse_note(_git_at(root, "show", f"{sha}:{rel}"), rel)
        keys = {c.key for _, c in added.all_claims() if not c.human}
        now = parse_note(read_text(root / rel), rel)
        for sec in now.sections:
            sec.items = [i for i in sec.items if isinstance(i, str) or i.key not in keys]
        now.sections = [s for s in now.sections if s.items]
        now.forget_citations()
        if any(now.all_claims()):
            now.prune_footnotes()
            from memctl.core.store import atomic_write

            atomic_write(root / rel, render_note(now))
            _git_at(root, "add", "--", rel)
        else:
            _git_at(root, "rm", "-q", "-f", "--", rel)


def _finish(vault: Floor, tx: Transaction, before: dict[str, str], how: str, res: Any) -> None:
    """Record removed claims and regenerate INDEX files, in the command's transaction."""
    from memctl.curate import indexfiles, removals

    found = _removed_claims(vault, before, how)
    res.claims_removed = [f"{r.note}: {r.text}" for r in found]
    update = removals.record(vault, found)
    if update is not None:
        tx.write(*update)
    indexfiles.refresh(vault, tx)


def rollback(vault: Floor, note: str, rev: str, dry_run: bool = False) -> UndoResult:
    """Restore one note as it was at `rev`, as a new commit; later claims recorded removed."""
    from memctl.core import refs

    with vault.lock:
        try:
            ref = refs.resolve(vault, note)
        except InputError:
            ref = None  # a note deleted since: named by its path
        rel = ref.path if ref is not None else (note if note.endswith(".md") else note + ".md")
        if ref is not None and ref.kind != "note":
            raise InputError(f"{note} is not a note; rollback restores notes")
        if not _note_paths(vault, [rel]):
            raise InputError(f"{rel} is not a note in a store folder")
        full = _git(vault, "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}", check=False)
        if not full.strip():
            raise InputError(f"no revision {rev!r} in this history")
        sha = full.strip()
        old = subprocess.run(
            ["git", "-C", str(vault.root), "show", f"{sha}:{rel}"],
            capture_output=True,
            check=False,
        )
        target = vault.root / rel
        current = read_text(target) if target.is_file() else None
        text = old.stdout.decode("utf-8", "surrogateescape") if old.returncode == 0 else None
        if text is None and current is None:
            raise InputError(f"no note {rel}, now or at {rev}")
        res = UndoResult(sha, f"rollback: {rel} to {sha[:10]}", [rel])
        if text == current:
            return res
        if dry_run:
            # what the real run would record as removed, worked out from the texts alone
            before = {rel: current} if current is not None else {}
            found = _removed_claims(vault, before, "rollback", after={rel: text})
            res.claims_removed = [f"{r.note}: {r.text}" for r in found]
            res.claims_restored = _restored({rel: current}, {rel: text})
            return res
        with vault.change("rollback", subject=res.subject) as ch:
            if text is None:
                ch.tx.delete(rel)
            else:
                ch.tx.write(rel, text)
            _finish(vault, ch.tx, {rel: current} if current is not None else {}, "rollback", res)
            res.claims_restored = _restored({rel: current}, {rel: _text(target)})
            ch.trailers["Memctl-Note"] = rel
            ch.trailers["Memctl-To"] = sha
            ch.trailers["Memctl-Claims-Removed"] = str(len(res.claims_removed))
            ch.trailers["Memctl-Claims-Restored"] = str(len(res.claims_restored))
        res.commit = ch.commit
    return res
