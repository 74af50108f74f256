"""Bringing the index in step with the files: build a generation, apply changes, feed
what ingest writes, and the entry points the floor calls after every write.
"""


from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterable
from pathlib import Path

import tantivy

from memctl.core import lineage
from memctl.core.diskspace import out_of_space, space_text
from memctl.core.model import Message
from memctl.core.raw import RawHeader, parse_session
from memctl.core.store import atomic_write
from memctl.errors import MemctlError
from memctl.index.freshness import (
    UNREADABLE,
    WATCH_AFTER,
    Entry,
    Generation,
    current_generation,
    files_unchanged,
    index_home,
    locked,
    make_entry,
    read_file,
    scan,
    seed_shadow,
)
from memctl.index.host import IndexedVault
from memctl.index.schema import (
    BROKEN,
    CURRENT,
    INDEX_REL,
    KEY,
    SCHEMA,
    SCHEMA_VERSION,
    ReindexResult,
    SyncReport,
    claim_docs,
    is_broken,
    note_doc,
    note_fields,
    register_analyzers,
    session_docs,
)

# ---- building and updating ----------------------------------------------------------------


class _Writer:
    """Adds and deletes the documents of whole files through one tantivy writer."""

    def __init__(self, vault: IndexedVault, index: tantivy.Index, bulk: bool) -> None:
        self.folders = {sc.folder.strip("/"): name for name, sc in vault.config.stores.items()}
        # tantivy buffers documents up to this many bytes before writing a segment: it bounds
        # memory for a huge ingest (a 200 MB export must not need 200 MB more RAM).
        heap = 64_000_000 if bulk else 30_000_000
        self.writer = index.writer(heap_size=heap, num_threads=0 if bulk else 1)
        self.turns = 0
        self.notes = 0
        self.skipped: list[str] = []
        self.root: Path = vault.root
        self.agent = (vault.config.agent.name, vault.config.agent.email)
        self.lineage: list[tuple[str, bytes]] = []  # notes taken in: who added their lines
        self.gone: list[str] = []

    def add(self, rel: str, data: bytes, st: tuple[int, int]) -> None:
        try:
            text = data.decode("utf-8")
            if rel.startswith("raw/"):
                self.add_session(rel, data, *parse_session(text, rel), st)
            else:
                f = note_fields(rel, text, self.folders)
                self.writer.add_document(note_doc(rel, text, self.folders, f))
                for d in claim_docs(rel, text, f):
                    self.writer.add_document(d)
                self.notes += 1
                self.lineage.append((rel, data))
        except (MemctlError, UnicodeDecodeError, ValueError, TypeError) as exc:
            # a file memctl cannot read is left out of search, not a reason to fail a command
            self.skipped.append(f"{rel}: {exc}".splitlines()[0])

    def add_session(
        self,
        rel: str,
        data: bytes,
        header: RawHeader,
        messages: list[Message],
        st: tuple[int, int],
    ) -> None:
        add = self.writer.add_document
        for d in session_docs(rel, data, header, messages, st):
            add(d)
        self.turns += len(messages)

    def delete(self, rel: str) -> None:
        self.writer.delete_documents_by_term(KEY, f"path:{rel}")
        self.gone.append(rel)

    def commit(self) -> None:
        self.writer.commit()
        self.writer.wait_merging_threads()
        # provenance labels from git, computed when a note changes, not when a prompt comes
        taken = {rel for rel, _ in self.lineage}
        if self.lineage or self.gone:
            lineage.refresh(self.root, self.lineage, self.agent,
                            gone=[r for r in self.gone if r not in taken])  # fmt: skip
        self.lineage, self.gone = [], []


def _build_locked(vault: IndexedVault, home: Path | None = None) -> tuple[Generation, _Writer, int]:
    """A new generation from every file, made current; older generations are removed.

    The files are the vault's; the index goes to `home` (the vault unless it is a shadow).
    """
    root: Path = vault.root
    home = root if home is None else home
    base = home / INDEX_REL
    base.mkdir(parents=True, exist_ok=True)
    gen = Generation(home, f"g-{time.time_ns():x}-{os.getpid()}")
    gen.dir.mkdir()
    w: _Writer | None = None
    try:
        index = tantivy.Index(SCHEMA, path=str(gen.dir), reuse=False)
        register_analyzers(index)
        w = _Writer(vault, index, bulk=True)
        files: dict[str, Entry] = {}
        dirs: dict[str, int] = {}
        seen_ns = time.time_ns()
        for rel in sorted(scan(root, dirs)):
            got = read_file(root / rel)
            if got is not None:
                w.add(rel, got[1], got[2])
                files[rel] = make_entry(got[2], got[0], time.time_ns())
        w.commit()
        gen.write_files(files, dirs, seen_ns)
        current = json.dumps({"schema": SCHEMA_VERSION, "gen": gen.name}) + "\n"
        atomic_write(base / CURRENT, current)
    except BaseException:
        # a half-built generation is never current: leave no folder behind (a full disk
        # would otherwise gather one per command, each holding what fitted). tantivy's
        # threads stop first, or a file they write lands in a folder being removed.
        if w is not None:
            with contextlib.suppress(BaseException):
                w.writer.rollback()
            with contextlib.suppress(BaseException):
                w.writer.wait_merging_threads()
        for _ in range(3):
            shutil.rmtree(gen.dir, ignore_errors=True)
            if not gen.dir.exists():
                break
            time.sleep(0.05)
        raise
    _sweep(gen)
    return gen, w, len(files)


def _apply_locked(
    vault: IndexedVault,
    gen: Generation,
    force: set[str],
    report: SyncReport,
    rewrite: bool = False,
    feed: Feed | None = None,
) -> None:
    """Bring `gen` in step with the files; the caller holds the vault lock.

    With a `feed`, the files it indexed from memory are taken as they are, unless their
    stat shows they changed again since; its writer then also carries everything else.
    """
    root: Path = vault.root
    files = dict(gen.files)
    fed: dict[str, Entry] = {}
    dirs: dict[str, int] = {}
    seen_ns = time.time_ns()
    seen = scan(root, dirs)
    now = time.time_ns()
    todo: list[tuple[str, bytes, tuple[int, int], Entry]] = []
    restat: dict[str, Entry] = {}
    for rel, st in seen.items():
        if feed is not None and (new := feed.entries.get(rel)) is not None:
            if new[0] == st[0] and new[1] == st[1]:
                fed[rel] = new
                continue
            force = force | {rel}  # edited again after memctl wrote it: index the file
        old = files.get(rel)
        if (
            old is not None
            and old[0] == st[0]
            and old[1] == st[1]
            and not old[3]
            and rel not in force
        ):
            continue
        got = read_file(root / rel)
        if got is None:
            continue
        if old is not None and old[2] == got[0] and rel not in force:
            restat[rel] = make_entry(got[2], got[0], now)  # touched, same bytes: remember the stat
        else:
            todo.append((rel, got[1], got[2], make_entry(got[2], got[0], now)))
    gone = [rel for rel in files if rel not in seen]
    if feed is not None:
        gone += [rel for rel in feed.entries if rel not in seen and rel not in files]
    w = feed.writer if feed is not None else None
    if todo or gone or w is not None:
        if w is None:
            w = _Writer(vault, gen.open(), bulk=len(todo) > 100)
        for rel in gone:
            w.delete(rel)
        for rel, data, stamp, _ in todo:
            w.delete(rel)
            w.add(rel, data, stamp)
        w.commit()
        report.notices.extend(f"not searchable: {s}" for s in w.skipped)
        report.turns, report.notes, report.skipped = w.turns, w.notes, w.skipped
    for rel in gone:
        files.pop(rel, None)
    for rel, ent in [*((t[0], t[3]) for t in todo), *fed.items()]:
        if rel in files:
            report.updated += 1
        else:
            report.added += 1
        files[rel] = ent
    files.update(restat)
    report.removed += len(gone)
    if todo or gone or restat or fed or rewrite:
        gen.write_files(files, dirs, seen_ns)
        _sweep(gen)
    else:
        gen.write_stats(dirs, seen_ns)  # folders may have moved, or stopped being racy


def _sweep(keep: Generation) -> None:
    """Remove every generation but the current one; the caller holds the vault lock, under
    which every index is built, so any other is an old one or what a build that died (a
    full disk, a kill) left half-made. A reader still searching one keeps its open files."""
    with contextlib.suppress(OSError):
        for old in keep.dir.parent.iterdir():
            if old.is_dir() and old.name.startswith("g-") and old.name != keep.name:
                shutil.rmtree(old, ignore_errors=True)



def sync(vault: IndexedVault, touched: Iterable[str] = ()) -> SyncReport:
    """Bring the index in step with the files; one stat walk when nothing changed."""
    report = SyncReport()
    root: Path = vault.root
    home = index_home(vault)
    shadow = home != Path(root)
    force = {t for t in touched if _indexable(t)}
    gen, why = current_generation(home)
    rewrite = False
    if gen is not None and not force:
        try:
            if files_unchanged(gen, root, WATCH_AFTER if vault.one_shot else 1):
                return report
        except BROKEN:
            rewrite = True  # stat.json is unreadable: the full manifest settles it below
    # Rebuilding cannot be skipped, so wait for the lock; an update can: while a writer holds
    # the lock we search its last commit, and the writer indexes what it writes itself.
    # A shadow always waits: nobody else brings it up to date.
    with locked(vault, wait=shadow or gen is None or bool(force), home=home) as got:
        if not got:
            report.busy = True
            return report
        if shadow and (seeded := seed_shadow(vault, home)) is not None:
            report.notices.append(seeded)
            return report
        gen, why2 = current_generation(home)  # another process may have done the work meanwhile
        if gen is not None:
            try:
                _apply_locked(vault, gen, force, report, rewrite)
                if shadow and (report.added or report.updated or report.removed):
                    report.notices.append(
                        f"the vault is read-only: brought its search index up to date in {home}"
                    )
                return report
            except BaseException as exc:
                if not is_broken(exc):
                    raise
                why2 = UNREADABLE
        note = why2 or why
        if shadow:
            note = (
                "the vault is read-only and its search index is stale or missing: "
                f"built one from the files in {home}"
            )
        report = SyncReport(rebuilt=True, notices=[note])
        _, w, n = _build_locked(vault, home)
        report.added = n
        report.notices.extend(f"not searchable: {s}" for s in w.skipped)
        report.turns, report.notes, report.skipped = w.turns, w.notes, w.skipped
    return report


class Feed:
    """Indexes the sessions an ingest writes from the messages it already holds.

    Without it the index re-read and re-parsed every file ingest had just rendered, a third
    of ingest's time. Documents go to tantivy as each session is written, so its indexing
    threads work while the next session is read; `finish` commits them after git has
    committed the files. Anything unusual (no index yet, a broken one) turns the feed off
    and `finish` falls back to indexing from the files, as after any other write.
    """

    def __init__(self, vault: IndexedVault) -> None:
        """Call with the vault lock held, before the command writes anything."""
        self.vault = vault
        self.entries: dict[str, Entry] = {}
        self.writer: _Writer | None = None
        self._gen: Generation | None = None
        self._off = False
        self.notices: list[str] = []
        self.dropped: set[str] = set()
        try:
            gen, why = current_generation(vault.root)
            if gen is None:  # a new vault, or a lost index: build it from what is there now
                gen, w, _ = _build_locked(vault)
                self.notices = [why, *(f"not searchable: {s}" for s in w.skipped)]
            gen.files  # noqa: B018 - an unreadable manifest turns the feed off here
            self._gen = gen
        except BaseException as exc:
            if not is_broken(exc):
                raise
            self._off = True

    def session(
        self, rel: str, text: str, header: RawHeader, messages: list[Message], path: Path
    ) -> None:
        """Index a session file just written at `path` with exactly `text`."""
        if self._off:
            return
        try:
            if self.writer is None:
                self.writer = _Writer(self.vault, self._gen.open(), bulk=True)  # type: ignore[union-attr]
            data = text.encode("utf-8", "surrogatepass")
            st = path.stat()
            stat = (st.st_mtime_ns, st.st_size)
            if rel in self.entries or rel in self._gen.files:  # type: ignore[union-attr]
                self.writer.delete(rel)
            self.writer.add_session(rel, data, header, messages, stat)
            self.entries[rel] = make_entry(stat, hashlib.sha256(data).hexdigest(), time.time_ns())
        except BaseException as exc:
            if not is_broken(exc):
                raise
            self.abort()

    def drop(self, rels: list[str]) -> None:
        """Forget the documents of files put back mid-command (a bad file in a folder);
        `finish` indexes whatever those files hold now from the files themselves."""
        self.dropped.update(rels)
        for rel in rels:
            if rel in self.entries:
                del self.entries[rel]
                if self.writer is not None:
                    self.writer.delete(rel)

    def abort(self) -> None:
        """Drop every uncommitted document: the command failed, or the feed gave up."""
        if self.writer is not None:
            with contextlib.suppress(BaseException):
                self.writer.writer.rollback()
        self.writer = None
        self.entries.clear()
        self._off = True

    def finish(self, touched: list[str]) -> SyncReport:
        """After the commit: make the fed documents searchable, then index what else moved.

        Like `after_write`, never raises for the index's sake.
        """
        if self._off or self.writer is None or self._gen is None:
            return after_write(self.vault, [*touched, *sorted(self.dropped)])
        rest = {t for t in {*touched, *self.dropped} if _indexable(t) and t not in self.entries}
        report = SyncReport(notices=list(self.notices))
        try:
            _apply_locked(self.vault, self._gen, rest, report, feed=self)
        except BaseException as exc:
            if not (is_broken(exc) or isinstance(exc, MemctlError)):
                raise
            self.abort()
            return after_write(self.vault, touched)
        self.writer = None
        return report


def why(exc: BaseException) -> str:
    """Why the index could not follow, in the user's words."""
    if out_of_space(exc):
        return space_text(exc)
    return (exc.strerror if isinstance(exc, OSError) else None) or str(exc)


def _indexable(rel: str) -> bool:
    return rel.endswith(".md") and not rel.endswith("INDEX.md")


def after_write(vault: IndexedVault, touched: list[str]) -> SyncReport:
    """Called by the vault inside its lock after every write: index what the command wrote.

    Never raises for the index's sake: the write has been committed by now, and a derived
    index that could not follow (a full disk, a broken index) is caught up by the next sync.
    """
    try:
        return sync(vault, touched)
    except BaseException as exc:
        if not (is_broken(exc) or isinstance(exc, MemctlError)):
            raise
        notice = f"search index not updated ({why(exc)}); the next search retries"
        return SyncReport(notices=[notice])


def refresh(vault: IndexedVault, rels: Iterable[str]) -> SyncReport:
    """Re-index files a reader found changed in place, unless a writer holds the lock.

    The every-command check leaves raw sessions to their folders' mtimes (see the top);
    this is how one changed in place anyway catches up, once a search meets it.
    """
    force = {r for r in rels if _indexable(r)}
    home = index_home(vault)
    with locked(vault, wait=False, home=home) as got:
        gen, _ = current_generation(home)
        if not got or gen is None or not force:
            return SyncReport(busy=not got)
        report = SyncReport()
        try:
            _apply_locked(vault, gen, force, report)
        except BaseException as exc:
            if not is_broken(exc):
                raise
            report.notices.append(f"search index not updated ({why(exc)}); the next search retries")
        return report


def in_memory(vault: IndexedVault) -> tantivy.Index:
    """Every file's documents in an index held in memory, for a disk with no room for a
    generation: a vault whose index was never built (a fresh clone: the index is never
    committed) still answers its first search. Nothing is written; provenance labels are
    left to the next build on disk."""
    index = tantivy.Index(SCHEMA)  # no path: tantivy keeps it in RAM
    register_analyzers(index)
    w = _Writer(vault, index, bulk=True)
    root: Path = vault.root
    for rel in sorted(scan(root, {})):
        got = read_file(root / rel)
        if got is not None:
            w.add(rel, got[1], got[2])
    w.writer.commit()
    w.writer.wait_merging_threads()
    index.reload()
    return index


def repair(vault: IndexedVault) -> str:
    """Rebuild after a reader found the index unreadable; returns the notice to show."""
    home = index_home(vault)
    with locked(vault, wait=True, home=home):
        _build_locked(vault, home)
    return UNREADABLE


def rebuild(vault: IndexedVault, paths: Iterable[str | Path] | None = None) -> ReindexResult:
    """`memctl reindex`: a fresh generation from the files, older generations removed.

    With `paths` (a file watcher's events), only those files and whatever else the stat
    walk finds changed are reindexed, in place.
    """
    start = time.perf_counter()
    if paths is not None:
        root = Path(vault.root).resolve()
        rels = []
        for p in paths:
            full = Path(p) if Path(p).is_absolute() else root / p
            with contextlib.suppress(ValueError):
                rels.append(full.resolve().relative_to(root).as_posix())
        with locked(vault, wait=True):
            rep = sync(vault, rels)
            gen, _ = current_generation(vault.root)
        return ReindexResult(
            files=rep.added + rep.updated + rep.removed,
            turns=rep.turns,
            notes=rep.notes,
            skipped=rep.skipped,
            seconds=time.perf_counter() - start,
            index_bytes=gen.size() if gen is not None else 0,
        )
    with locked(vault, wait=True):
        gen, w, n = _build_locked(vault)
    return ReindexResult(
        files=n,
        turns=w.turns,
        notes=w.notes,
        skipped=w.skipped,
        seconds=time.perf_counter() - start,
        index_bytes=gen.size(),
    )


