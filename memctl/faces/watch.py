"""The watchdog adapter: file events in, debounced `Vault.reindex` / `Vault.ingest` calls out.

It has no logic of its own beyond batching: an editor saving a note fires several events in a
few milliseconds, and `git checkout` fires hundreds, so events are collected and flushed once
the tree has been quiet for `debounce` seconds.
"""

from __future__ import annotations

import contextlib
import threading
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer
from watchdog.observers.api import ObservedWatch

from memctl.requests import IngestRequest

TRANSCRIPT_SUFFIXES = (".jsonl", ".json", ".md", ".txt")
# What changes a file. watchdog also reports opens and closes without a write (inotify's
# IN_OPEN, IN_CLOSE_NOWRITE); counting those, every read (the watcher's own reindex among
# them) looked like an edit and the watcher never settled.
CHANGES = frozenset({"created", "modified", "deleted", "moved", "closed"})


_REWATCH = r"Callback with id .* already exists for watch"


@dataclass
class WatchEvent:
    """What one flush did, for the front end to report."""

    reindexed: list[str] = field(default_factory=list)
    ingested: list[str] = field(default_factory=list)
    turns_added: int = 0
    error: str | None = None


class _Collector(FileSystemEventHandler):
    def __init__(self, keep: Callable[[str], bool]) -> None:
        self.keep = keep
        self.pending: set[str] = set()
        self.last = 0.0
        self.lock = threading.Lock()

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.is_directory or event.event_type not in CHANGES:
            return
        paths = [event.src_path, getattr(event, "dest_path", "") or ""]
        with self.lock:
            for p in paths:
                p = p.decode() if isinstance(p, bytes) else p
                if p and self.keep(p):
                    self.pending.add(p)
                    self.last = time.monotonic()

    def add(self, p: str) -> None:
        """Count `p` as changed: a file found by a walk rather than reported by an event."""
        if self.keep(p):
            with self.lock:
                self.pending.add(p)
                self.last = time.monotonic()

    def take(self, quiet: float) -> list[str]:
        with self.lock:
            if not self.pending or time.monotonic() - self.last < quiet:
                return []
            out = sorted(self.pending)
            self.pending.clear()
            return out


class _TopLevel(FileSystemEventHandler):
    """The vault root, watched alone: its own files go to the note collector, and each new
    folder in it gets a recursive watch of its own."""

    def __init__(
        self, notes: _Collector, watch: Callable[[Path], None], unwatch: Callable[[Path], None]
    ) -> None:
        self.notes, self.watch, self.unwatch = notes, watch, unwatch

    def on_any_event(self, event: FileSystemEvent) -> None:
        def path(p: str | bytes) -> Path:
            return Path(p.decode() if isinstance(p, bytes) else p)

        if event.is_directory:
            if event.event_type in ("deleted", "moved"):
                self.unwatch(path(event.src_path))
            if event.event_type in ("created", "moved"):
                self.watch(path(event.dest_path if event.event_type == "moved" else event.src_path))
        self.notes.on_any_event(event)


class VaultWatcher:
    """Keeps the index in step with hand edits and ingests transcripts as agents write them."""

    def __init__(
        self,
        vault: Any,
        ingest_dirs: list[Path] | None = None,
        *,
        user: str | None = None,
        scope: str | None = None,
        debounce: float = 0.5,
    ) -> None:
        self.vault = vault
        self.root = Path(vault.root).resolve()
        self.ingest_dirs = [p.resolve() for p in ingest_dirs or []]
        self.user, self.scope = user, scope
        self.debounce = debounce
        self._notes = _Collector(self._is_note)
        self._transcripts = _Collector(self._is_transcript)
        self._observer = Observer()
        self._watched: dict[Path, ObservedWatch] = {}
        self._stop = threading.Event()
        # files this watcher's own ingests wrote, with the stat they were left at: their
        # events may arrive a flush later, and are not edits
        self._own: dict[str, tuple[int, int]] = {}

    def _is_note(self, p: str) -> bool:
        try:
            rel = Path(p).resolve().relative_to(self.root)
        except ValueError:
            return False
        return rel.suffix == ".md" and not any(part.startswith(".") for part in rel.parts)

    def _rel(self, p: str) -> str:
        return Path(p).resolve().relative_to(self.root).as_posix()

    def _stat(self, rel: str) -> tuple[int, int] | None:
        try:
            st = (self.root / rel).stat()
        except OSError:
            return None
        return st.st_mtime_ns, st.st_size

    def _mine(self, p: str) -> bool:
        """An event for a file this watcher wrote and nobody has touched since."""
        try:
            rel = self._rel(p)
        except ValueError:
            return False
        return rel in self._own and self._own[rel] == self._stat(rel)

    def _is_transcript(self, p: str) -> bool:
        name = Path(p).name
        return name.endswith(TRANSCRIPT_SUFFIXES) and not name.startswith(".")

    def _watch_folder(self, d: Path, *, new: bool = True) -> None:
        """Watch a top-level folder of the vault, unless notes never live there (dot-folders).

        A recursive watch of the root would put an inotify watch on every `.git/objects/xx`
        and `.memctl/index` folder and wake on every commit and index write, for events the
        note filter then drops. Whatever a new folder held before its watch was set (`mkdir
        -p` and a save in one go, a folder moved in) is found by walking it once.
        """
        if d.parent != self.root or d.name.startswith(".") or d in self._watched:
            return
        if d.is_symlink() or not d.is_dir():
            return
        self._watched[d] = self._observer.schedule(self._notes, str(d), recursive=True)
        if new:
            for p in sorted(d.rglob("*.md")):
                self._notes.add(str(p))

    def _unwatch_folder(self, d: Path) -> None:
        """A top-level folder deleted or moved away: its name may be made again and watched."""
        watch = self._watched.pop(d, None)
        if watch is not None:
            with contextlib.suppress(KeyError):
                self._observer.unschedule(watch)

    def start(self) -> None:
        # watchdog's inotify thread warns when a folder's creation event and its recursive
        # scan both add the same watch ("Callback with id ... will be Overwritten"): the
        # watch it keeps is the one asked for, so the line on stderr would only alarm
        warnings.filterwarnings("ignore", message=_REWATCH, category=RuntimeWarning)
        top = _TopLevel(self._notes, self._watch_folder, self._unwatch_folder)
        self._observer.schedule(top, str(self.root))
        for d in sorted(self.root.iterdir()):
            self._watch_folder(d, new=False)
        for d in self.ingest_dirs:
            self._observer.schedule(self._transcripts, str(d), recursive=True)
        self._observer.start()

    def waiting(self) -> list[Path]:
        """The transcripts already in the watched folders, oldest first: what a watcher
        started late (or for the first time on ~/.claude/projects) has not seen written."""
        found: dict[Path, float] = {}
        for d in self.ingest_dirs:
            for p in d.rglob("*"):
                if any(part.startswith(".") for part in p.relative_to(d).parts):
                    continue
                if self._is_transcript(str(p)) and p.is_file() and not p.is_symlink():
                    with contextlib.suppress(OSError):
                        found[p] = p.stat().st_mtime
        return sorted(found, key=lambda p: (found[p], str(p)))

    def catch_up(
        self, progress: Callable[[int, int], None] | None = None, batch: int = 25
    ) -> WatchEvent:
        """Ingest the transcripts already there, a batch at a time (one commit each);
        `progress(done, total)` after each. Ingest skips turns it already has, so running
        it again (or on a folder the Stop hook saved from) adds nothing.

        A batch that fails is tried file by file, so one bad transcript is reported and the
        others still go in."""
        todo = self.waiting()
        ev = WatchEvent()
        errors: list[str] = []
        if progress is not None:
            progress(0, len(todo))
        for i in range(0, len(todo), batch):
            if self._stop.is_set():
                break  # asked to stop: the batches done are committed, the rest wait
            part = todo[i : i + batch]
            for group in ([part] if len(part) == 1 else [part, *([p] for p in part)]):
                try:
                    res = self.vault.ingest([str(p) for p in group], user=self.user,
                                            scope=self.scope)  # fmt: skip
                except Exception as exc:
                    if len(group) == 1:
                        errors.append(f"{group[0]}: {exc}")
                    continue
                ev.ingested += [c.path for c in res.changed]
                ev.turns_added += res.turns_added
                if group is part:
                    break  # the whole batch went in: no need to try its files alone
            if progress is not None:
                progress(min(i + batch, len(todo)), len(todo))
        if errors:
            ev.error = "; ".join(errors[:3]) + (f" (and {len(errors) - 3} more)"
                                                if len(errors) > 3 else "")  # fmt: skip
        return ev

    def poll(self) -> WatchEvent | None:
        """Flush whatever has settled; None when there was nothing to do."""
        ev = WatchEvent()
        transcripts = [p for p in self._transcripts.take(self.debounce) if Path(p).is_file()]
        notes = [p for p in self._notes.take(self.debounce) if not self._mine(p)]
        if not transcripts and not notes:
            return None
        try:
            if transcripts:
                ask = IngestRequest(sources=list(transcripts), user=self.user, scope=self.scope)
                res = self.vault.handle(ask)
                ev.ingested = [c.path for c in res.changed]
                ev.turns_added = res.turns_added
                # The ingest's own writes come back as note events; it indexed them already.
                # Anything else that arrived meanwhile (a hand edit) is still to be done.
                ours = {*ev.ingested, "INDEX.md", "raw/INDEX.md"}
                self._own = {rel: st for rel in ours if (st := self._stat(rel)) is not None}
                later = [p for p in self._notes.take(0) if self._rel(p) not in ours]
                notes = sorted({*notes, *later})
            notes = [p for p in notes if not self._mine(p)]
            if notes:
                self.vault.reindex(paths=notes)
                ev.reindexed = [self._rel(p) for p in notes]
        except Exception as exc:
            ev.error = str(exc)
        return ev

    def run(
        self,
        on_event: Callable[[WatchEvent], None],
        until: Callable[[], bool] | None = None,
        tick: float = 0.1,
        on_ready: Callable[[], None] | None = None,
        catch_up: Callable[[int, int], None] | bool | None = None,
    ) -> None:
        """Poll until stopped (Ctrl-C in the CLI, or `until()` returning True in tests).

        `catch_up` (True, or a progress callback): first ingest the transcripts already in
        the watched folders; the observers run by then, so nothing written meanwhile is lost.
        """
        self.start()
        if catch_up is not None and catch_up is not False and self.ingest_dirs:
            caught = self.catch_up(None if catch_up is True else catch_up)
            if caught.ingested or caught.error:
                on_event(caught)
        if on_ready is not None and not self._stop.is_set():
            on_ready()
        try:
            while not self._stop.is_set() and not (until and until()):
                ev = self.poll()
                if ev is not None:
                    on_event(ev)
                time.sleep(tick)
        finally:
            self.stop()

    def ask_stop(self) -> None:
        """End `run` after the step in hand; safe from a signal handler (it only sets a flag,
        where `stop` joins the observer thread, which may wait on a lock the handler's
        thread holds)."""
        self._stop.set()

    @property
    def stopping(self) -> bool:
        return self._stop.is_set()

    def stop(self) -> None:
        self._stop.set()
        if self._observer.is_alive():
            self._observer.stop()
            self._observer.join(timeout=5)
