"""Merging verified claims into notes: add, update, supersede, retract, or no-op.

All notes a run touches live in memory in a `NoteSet` until the run commits, so a dry run
and a real run compute exactly the same thing, and a failure writes nothing.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memctl.core.notes import (
    HISTORY,
    Claim,
    Lifetime,
    Note,
    claim_key,
    new_note,
    parse_note,
    render_note,
    slug,
)
from memctl.core.plaintext import title as clean_title
from memctl.core.provenance import RawTurns
from memctl.core.store import read_text, walk_markdown
from memctl.errors import MemctlError

PROPOSED_SUFFIX = ".proposed.md"
_SCOPE_RANK = {"global": 0, "team": 1}


def scope_rank(scope: str) -> int:
    return _SCOPE_RANK.get(scope, 2)


def note_scope(store_scope: str, session_scope: str, user: str) -> str:
    """The scope a store's note gets from a session: never wider than the session's own."""
    if store_scope == "user":
        return f"user:{user}"
    if store_scope == "session":
        return session_scope
    if scope_rank(store_scope) > scope_rank(session_scope):
        # A user-scoped store fed by a team session narrows; a different user never does.
        return store_scope if scope_rank(session_scope) < 2 else session_scope
    return session_scope if scope_rank(session_scope) > scope_rank(store_scope) else store_scope


def visible_scopes(session_scope: str, user: str) -> set[str]:
    """Notes a session may read: its own scope, its user's, and anything wider it belongs to."""
    out = {session_scope, f"user:{user}", "global"}
    if scope_rank(session_scope) <= 1:
        out.add("team")
    return out


def proposal_path(path: str) -> str:
    return path[:-3] + PROPOSED_SUFFIX


def is_proposal(path: str) -> bool:
    return path.endswith(PROPOSED_SUFFIX)


def text_digest(text: str | None) -> str:
    return "new" if text is None else "sha256:" + hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass
class Outcome:
    """What applying one claim did."""

    action: str  # added | reinforced | updated | superseded | retracted | resolved | noop
    path: str
    text: str


@dataclass
class NoteSet:
    """The notes of a vault as one run sees and changes them."""

    root: Path
    folders: dict[str, str]  # store -> folder
    today: str
    turns: RawTurns
    label: str  # derived_by entry for notes this run changes
    notes: dict[str, Note] = field(default_factory=dict)
    before: dict[str, str | None] = field(default_factory=dict)
    dirty: set[str] = field(default_factory=set)
    reserved: dict[tuple[str, str, str], str] = field(default_factory=dict)
    _scanned: set[str] = field(default_factory=set)
    _versions: dict[str, int] = field(default_factory=dict)
    _summaries: dict[str, tuple[int, list[tuple[str, str, tuple[tuple[str, str], ...]]]]] = field(
        default_factory=dict
    )

    def summary(self, note: Note) -> list[tuple[str, str, tuple[tuple[str, str], ...]]]:
        """(section, text, cites) of a note's active claims, recomputed only after a change."""
        version = self._versions.get(note.path, 0)
        cached = self._summaries.get(note.path)
        if cached is None or cached[0] != version:
            rows = [
                (s.name, c.text, tuple((x.ref, x.quote) for x in note.citations(c) if x.ref))
                for s, c in note.active_claims()
            ]
            cached = (version, rows)
            self._summaries[note.path] = cached
        return cached[1]

    # -- loading --------------------------------------------------------------------------------

    def _scan(self, store: str) -> None:
        if store in self._scanned:
            return
        self._scanned.add(store)
        folder = self.folders[store]
        for p in walk_markdown(self.root, folder):
            if p.name == "INDEX.md":
                continue
            rel = p.relative_to(self.root).as_posix()
            if rel in self.notes:
                continue
            text = read_text(p)
            try:
                note = parse_note(text, rel)
            except MemctlError as exc:
                # Skipping it would fork the note into a new file; better to stop and say so.
                raise MemctlError(
                    f"{exc.message}; fix this note (or move it out of {folder}/) and curate again",
                    rel,
                    exc.line,
                ) from None
            self.notes[rel] = note
            self.before[rel] = text

    def in_store(self, store: str) -> list[Note]:
        """Every note of a store, proposals included, in path order."""
        self._scan(store)
        folder = self.folders[store].rstrip("/") + "/"
        return [n for p, n in sorted(self.notes.items()) if p.startswith(folder)]

    def active(self, store: str, scopes: set[str] | None = None) -> list[Note]:
        return [
            n
            for n in self.in_store(store)
            if not is_proposal(n.path) and (scopes is None or n.scope in scopes)
        ]

    # -- finding and creating notes -------------------------------------------------------------

    def locate(
        self,
        store: str,
        scope: str,
        title: str,
        slug_hint: str | None,
        propose: bool,
        meta: dict[str, Any],
    ) -> Note:
        """The note claims titled `title` go to (created when missing, or its proposal)."""
        title = clean_title(title)  # as new_note writes it, so the next claim finds it
        want = title.casefold()
        base: Note | None = None
        for n in self.in_store(store):
            if n.scope != scope:
                continue
            # Titles only: an alias ("Alex") never pulls a claim into another note.
            if n.title.casefold() == want:
                if is_proposal(n.path):
                    target = str(n.meta.get("proposal_of") or n.path)
                    if target not in self.notes or is_proposal(target):
                        base = base or n
                    continue
                base = n
                break
        if base is not None and not is_proposal(base.path):
            if not propose:
                return base
            pp = proposal_path(base.path)
            if pp in self.notes:
                return self.notes[pp]
            prop = copy.deepcopy(base)
            prop.path = pp
            prop.meta["status"] = "proposed"
            prop.meta["proposal_of"] = base.path
            prop.meta["base"] = text_digest(self.before.get(base.path))
            self.notes[pp] = prop
            self.before[pp] = None
            return prop
        if base is not None:
            return base  # a pending proposal for a note that does not exist yet
        path = self.reserve(store, scope, title, slug_hint)
        note = new_note(path, store, title, scope, self.today, **meta)
        if propose:
            note.path = proposal_path(path)
            note.meta["status"] = "proposed"
            note.meta["proposal_of"] = path
            note.meta["base"] = "new"
        self.notes[note.path] = note
        self.before.setdefault(note.path, None)
        return note

    def reserve(self, store: str, scope: str, title: str, slug_hint: str | None = None) -> str:
        """The path of the note (store, scope, title), deciding it now if the note is new."""
        title = clean_title(title)
        want = title.casefold()
        for n in self.in_store(store):
            if n.scope == scope and n.title.casefold() == want:
                return str(n.meta.get("proposal_of") or n.path) if is_proposal(n.path) else n.path
        key = (store, scope, want)
        if key not in self.reserved:
            self.reserved[key] = self._free_path(store, scope, slug_hint or title)
        return self.reserved[key]

    def _free_path(self, store: str, scope: str, hint: str) -> str:
        folder = self.folders[store].rstrip("/")
        stem = slug(hint)
        candidates = [stem, f"{stem}-{slug(scope.split(':')[-1])}"]
        candidates += [f"{stem}-{i}" for i in range(2, 1000)]
        for c in candidates:
            p = f"{folder}/{c}.md"
            if (
                c != "index"  # index.md is INDEX.md on macOS and Windows
                and p not in self.notes
                and proposal_path(p) not in self.notes
                and p not in self.reserved.values()
                and not (self.root / p).exists()
            ):
                return p
        raise MemctlError(f"no free file name for {hint!r} in {folder}/")

    # -- changing notes -------------------------------------------------------------------------

    def touch(self, note: Note) -> None:
        self._versions[note.path] = self._versions.get(note.path, 0) + 1
        note.meta["updated"] = self.today
        derived = list(note.meta.get("derived_by") or [])
        if self.label not in derived:
            derived.append(self.label)
        note.meta["derived_by"] = derived
        self.dirty.add(note.path)

    def apply(
        self,
        note: Note,
        section: str,
        order: tuple[str, ...],
        text: str,
        cites: list[tuple[str, str]],
        inferred: bool,
        action: str,
        replaces: str | None,
        when: str,
        observed: bool = False,
    ) -> Outcome:
        """Merge one verified claim into `note` (`observed`: read from what the agent did)."""
        key = claim_key(text) if text else ""
        labels = [note.cite(ref, q) for ref, q in cites]

        def same(c: Claim) -> bool:
            return c.key == key

        if action in ("retract", "resolve"):
            found = _find(note, replaces)
            if found is None:
                _unused(note)
                return Outcome("noop", note.path, text or (replaces or ""))
            sec, old = found
            kind = "retracted" if action == "retract" else "resolved"
            self._to_history(note, sec, old, kind, when, extra_refs=labels)
            self.touch(note)
            return Outcome(kind, note.path, old.text)

        for _sec, c in note.active_claims():
            if same(c):
                new_refs = tuple(dict.fromkeys([*c.refs, *labels]))
                if new_refs == c.refs:
                    _unused(note)
                    return Outcome("noop", note.path, c.text)
                # a person saying what was observed makes it stated, as with inferred
                kept = Claim(c.text, new_refs, c.inferred and inferred, None,
                             c.observed and observed)  # fmt: skip
                _replace(note, c, kept)
                self.touch(note)
                return Outcome("reinforced", note.path, c.text)

        if action in ("update", "supersede", "correct") and replaces:
            found = _find(note, replaces)
            if found is not None:
                sec, old = found
                if action == "update":
                    refs = tuple(dict.fromkeys([*old.refs, *labels]))
                    _replace(note, old, Claim(text, refs, inferred, None, observed))
                    self.touch(note)
                    return Outcome("updated", note.path, text)
                kind = "corrected" if action == "correct" else "superseded"
                self._to_history(note, sec, old, kind, when)
                target = note.ensure_section(section, order)
                _insert_near(target, Claim(text, tuple(labels), inferred, None, observed))
                self.touch(note)
                return Outcome("superseded", note.path, text)

        target = note.ensure_section(section, order)
        target.items.append(Claim(text, tuple(labels), inferred, None, observed))
        self.touch(note)
        return Outcome("added", note.path, text)

    def _to_history(
        self,
        note: Note,
        sec: Any,
        old: Claim,
        kind: str,
        until: str,
        extra_refs: list[str] | None = None,
    ) -> None:
        sec.items.remove(old)
        if not any(isinstance(i, Claim) or i.strip() for i in sec.items):
            note.sections.remove(sec)  # memctl emptied it; a human's empty heading stays
        dates = sorted(
            d for d in (self.turns.date(c.ref) for c in note.citations(old) if c.ref) if d
        )
        since = dates[0] if dates else "?"
        refs = tuple(dict.fromkeys([*old.refs, *(extra_refs or [])]))
        hist = note.ensure_section(HISTORY)
        life = Lifetime(kind, since, until)
        hist.items.append(Claim(old.text, refs, old.inferred, life, old.observed))

    # -- output ---------------------------------------------------------------------------------

    def changed(self) -> dict[str, str]:
        """path -> new text, for notes whose rendering differs from what is on disk."""
        out = {}
        for path in sorted(self.dirty):
            note = self.notes[path]
            note.prune_footnotes()
            text = render_note(note)
            if text != self.before.get(path):
                out[path] = text
        return out


def _find(note: Note, text: str | None) -> tuple[Any, Claim] | None:
    if not text:
        return None
    key = claim_key(text)
    for sec, c in note.active_claims():
        if c.key == key:
            return sec, c
    return None


def _replace(note: Note, old: Claim, new: Claim) -> None:
    for s in note.sections:
        for i, it in enumerate(s.items):
            if it is old:
                s.items[i] = new
                return


def _insert_near(section: Any, claim: Claim) -> None:
    section.items.append(claim)


def _unused(note: Note) -> None:
    """Forget footnotes `cite` added for a claim that turned out to be a no-op."""
    note.prune_footnotes()
