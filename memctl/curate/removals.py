"""What a person removed from memory stays removed: curation never learns it again.

A claim a person takes out (by editing a note, `git revert`, `memctl undo`, rejecting a
proposal, `memctl forget`) is recorded in `.memctl/state/removed.jsonl`, in git, as the
claim's key and the turns it cited. A curator that later proposes the same claim from
those same turns (after a revert rolled the watermark back, say) is screened out; the
same claim from a *new* source is new evidence and may be learned.

People rarely tell memctl what they removed, so the record is also kept by looking: the
last curate commit's notes are compared with the notes now, and every agent claim that
is gone from them (not moved to History, not moved to another note) was removed by
someone after that run. The comparison runs once per curation run, before anything is
learned, so the watermark being rolled back cannot bring a removed claim back.

A forgotten claim is recorded by its key's digest only, never its words, so that
`forget --purge` leaves nothing of it behind. Lines are JSON, sorted, and merged across
clones with git's `union` driver (duplicates fold on load).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.core.notes import claim_key, parse_note
from memctl.core.store import read_text
from memctl.errors import MemctlError

if TYPE_CHECKING:
    from memctl.core.floor import Floor

REMOVED_REL = ".memctl/state/removed.jsonl"


def claim_digest(text: str) -> str:
    """A claim's identity without its words: the digest of its key."""
    return hashlib.sha256(claim_key(text).encode("utf-8")).hexdigest()[:20]


@dataclass(frozen=True)
class Removal:
    """One removed claim: who removed it how, and the turns it was learned from."""

    claim: str  # claim_digest of the text
    sources: tuple[str, ...]  # raw/...md#tN
    store: str  # "*" for every store (a forgotten claim)
    note: str
    by: str  # edit | revert | review | undo | forget | rollback
    date: str
    text: str | None = None  # kept for a person reading the file; never for forget

    def to_line(self) -> str:
        d: dict[str, Any] = {
            "claim": self.claim,
            "sources": list(self.sources),
            "store": self.store,
            "note": self.note,
            "by": self.by,
            "date": self.date,
        }
        if self.text is not None:
            d["text"] = self.text
        return json.dumps(d, ensure_ascii=False, sort_keys=True)

    @property
    def sort_key(self) -> tuple[str, str, tuple[str, ...]]:
        return (self.note, self.claim, self.sources)


class Removals:
    """The removed-claims record of one vault."""

    def __init__(self, records: Iterable[Removal] = ()) -> None:
        self.records: dict[tuple[str, str, tuple[str, ...]], Removal] = {}
        for r in records:
            self.records.setdefault((r.store, r.claim, r.sources), r)

    @classmethod
    def load(cls, root: Path) -> Removals:
        path = root / REMOVED_REL
        if not path.exists():
            return cls()
        out = []
        for n, line in enumerate(read_text(path).splitlines(), 1):
            if not line.strip():
                continue
            try:
                d = json.loads(line)
                out.append(
                    Removal(
                        str(d["claim"]),
                        tuple(sorted(str(s) for s in d.get("sources") or ())),
                        str(d.get("store", "")),
                        str(d.get("note", "")),
                        str(d.get("by", "")),
                        str(d.get("date", "")),
                        d.get("text"),
                    )
                )
            except (ValueError, KeyError, TypeError, AttributeError):
                raise MemctlError("not a removed-claim record", REMOVED_REL, n) from None
        return cls(out)

    def render(self) -> str:
        lines = [r.to_line() for r in sorted(self.records.values(), key=lambda r: r.sort_key)]
        return "".join(line + "\n" for line in lines)

    def blocks(self, store: str, text: str, refs: Sequence[str]) -> bool:
        """Would learning `text` into `store` from `refs` bring back a removed claim?

        Per store: taking a claim out of knowledge/ says nothing about the session note
        that records the same words.
        """
        return bool(refs) and self.blocks_digest(store, claim_digest(text), refs)

    def blocks_digest(self, store: str, digest: str, refs: Sequence[str]) -> bool:
        want = set(refs)
        return any(
            r.claim == digest and r.store in (store, "*") and want <= set(r.sources)
            for r in self.records.values()
        )

    def add(self, r: Removal) -> bool:
        if self.blocks_digest(r.store, r.claim, r.sources):
            return False
        self.records[(r.store, r.claim, r.sources)] = r
        return True

    def drop_sources(self, gone: set[str]) -> None:
        """Forget sessions: a record whose sources are all gone can never match again."""
        for key in list(self.records):
            r = self.records.pop(key)
            left = tuple(s for s in r.sources if s.split("#", 1)[0] not in gone and s not in gone)
            if left:
                nr = Removal(r.claim, left, r.store, r.note, r.by, r.date, r.text)
                self.records.setdefault((nr.store, nr.claim, nr.sources), nr)


def today() -> str:
    return datetime.now(UTC).date().isoformat()


# ---- finding what a person removed since the last curation -----------------------------------


def _git(root: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, check=False
    )
    return proc.stdout.decode("utf-8", "surrogateescape") if proc.returncode == 0 else ""


def _last_curate(root: Path) -> str | None:
    out = _git(root, "log", "-1", "--format=%H", "--grep=^Memctl-Command: curate$", "HEAD")
    return out.strip() or None


def agent_claims(text: str, path: str) -> list[tuple[str, tuple[str, ...], str]]:
    """(text, cited refs, key) of every cited claim in a note, History included."""
    try:
        note = parse_note(text, path)
    except MemctlError:
        return []
    out = []
    for _, c in note.all_claims():
        if c.human:
            continue
        refs = tuple(sorted({x.ref for x in note.citations(c) if x.ref}))
        if refs:
            out.append((c.text, refs, c.key))
    return out


def _how(root: Path, since: str, path: str) -> str:
    """How a note lost claims after `since`: the newest commit that touched it says."""
    log = _git(root, "log", "-1", "--format=%s%x00%b", f"{since}..HEAD", "--", path)
    if not log.strip():
        return "edit"  # not committed yet: a hand edit in the working tree
    subject, _, body = log.partition("\x00")
    if subject.startswith('Revert "'):
        return "revert"
    for cmd in ("undo", "review", "rollback", "forget"):
        if f"Memctl-Command: {cmd}" in body:
            return cmd
    return "edit"


def scan(vault: Floor, known: Removals) -> list[Removal]:
    """Agent claims present after the last curate run and gone from the notes now."""
    root = vault.root
    since = _last_curate(root)
    if since is None:
        return []
    folders = sorted({s.folder.strip("/") for s in vault.config.stores.values()})
    changed = [
        p
        for p in _git(root, "diff", "--name-only", "-z", since, "--", *folders).split("\0")
        if p.endswith(".md") and not p.endswith("INDEX.md")
    ]
    if not changed:
        return []
    old: dict[str, list[tuple[str, tuple[str, ...], str]]] = {}
    present: set[str] = set()
    for rel in changed:
        before = _git(root, "show", f"{since}:{rel}")
        if before:
            old[rel] = agent_claims(before, rel)
        target = root / rel
        if target.is_file():
            present.update(k for _, _, k in agent_claims(read_text(target), rel))
            try:
                note = parse_note(read_text(target), rel)
                present.update(c.key for _, c in note.all_claims())
            except MemctlError:
                pass
    store_of = {s.folder.strip("/"): s.name for s in vault.config.stores.values()}
    out: list[Removal] = []
    day = today()
    for rel, claims in sorted(old.items()):
        how: str | None = None
        for text, refs, key in claims:
            if key in present:
                continue
            if not any((root / r.split("#", 1)[0]).is_file() for r in refs):
                continue  # its sessions are forgotten: nothing can teach it again
            digest = claim_digest(text)
            store = store_of.get(rel.split("/", 1)[0], "")
            if known.blocks_digest(store, digest, refs):
                continue
            how = how or _how(root, since, rel)
            r = Removal(digest, refs, store, rel, how, day, text)
            if known.add(r):
                out.append(r)
    return out


# ---- the curation engine's one call --------------------------------------------------------


class _RunGuard:
    """One curation run's view of the record, scanned and saved on first use."""

    def __init__(self, vault: Floor, dry_run: bool) -> None:
        self.removals = Removals.load(vault.root)
        found = scan(vault, self.removals)
        if found and not dry_run:
            with vault.lock:  # re-entrant: curation may plan without holding it
                self._save(vault, found)

    def _save(self, vault: Floor, found: list[Removal]) -> None:
        n = len(found)
        with vault.change(
            "removed",
            subject=f"removed: {n} claim{'s' * (n != 1)} a person removed "
            f"stay{'s' * (n == 1)} removed",
            body="\n".join(f"- {r.note}: {r.text}" for r in found),
            refresh=False,
            index=False,
        ) as ch:
            ch.trailers["Memctl-Removed"] = str(n)
            ch.trailers["Memctl-Removed-By"] = ", ".join(sorted({r.by for r in found}))
            ch.tx.write(REMOVED_REL, self.removals.render())


# run object's id -> (a weak reference to it, its guard): one scan per curation run
_GUARDS: dict[int, tuple[weakref.ref[Any], _RunGuard]] = {}


def screen(
    vault: Floor, run: object, session: str, claims: list[Any], *, dry_run: bool = False
) -> list[Any]:
    """Drop proposals that would re-learn a removed claim from the turns it was removed with.

    `claims` are curator proposals (store, text, citations of turns of `session`); `run` is
    any object that lives exactly as long as one curation run (the engine's NoteSet). The
    first call of a run records what people removed since the last curate commit, in a
    commit of its own by the human (not in a dry run).
    """
    for k in [k for k, (ref, _) in _GUARDS.items() if ref() is None]:
        del _GUARDS[k]
    hit = _GUARDS.get(id(run))
    if hit is None or hit[0]() is not run:
        hit = _GUARDS[id(run)] = (weakref.ref(run), _RunGuard(vault, dry_run))
    guard = hit[1]
    if not guard.removals.records:
        return claims
    kept = []
    for p in claims:
        refs = [f"{session}#t{q.turn}" for q in p.citations]
        if p.action in ("retract", "resolve") or not guard.removals.blocks(p.store, p.text, refs):
            kept.append(p)
    return kept


def record(vault: Floor, removals: Iterable[Removal]) -> tuple[str, str] | None:
    """(path, new text) of the record with `removals` added, for a command's transaction."""
    rec = Removals.load(vault.root)
    changed = False
    for r in removals:
        changed = rec.add(r) or changed
    return (REMOVED_REL, rec.render()) if changed else None
