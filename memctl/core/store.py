"""The only module that writes vault files: atomic replaces, a vault-wide lock, and rollback.

Every command that changes the vault runs inside one `Transaction` while holding the lock.
Files are written to a temp file in the same directory and renamed over the target, so a
reader never sees half a file; the original bytes are kept until the command has committed,
so a failure anywhere (a bad file later in the batch, git refusing) puts every file back.

The originals are kept on disk, not in memory, in a write-ahead journal under
`.memctl/journal/<id>/`: before a file is first replaced or deleted, a hard link to it is
made there and a line naming it is appended to the journal's log. A process killed with
SIGKILL thus leaves a record of everything it was changing, which the next command reads
(`memctl.gitops.recovery`) to finish or undo the work. Putting a file back is a rename of its link,
and forgetting a new file an unlink, so a rollback needs no free disk space.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import shutil
import stat
import tempfile
import time
import unicodedata
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType

from memctl.core.diskspace import SPACE_ERRNOS, space_text
from memctl.errors import LockTimeoutError, MemctlError, PathEscapeError, ReadOnlyVaultError

# Characters a reader cannot see or that change how a path is displayed: a path holding
# one is either an attack or a mistake, never a note someone meant to name.
_INVISIBLE = frozenset(("Cc", "Cf", "Co", "Cs", "Zl", "Zp"))


def _own_state(parts: list[str] | tuple[str, ...], i: int) -> bool:
    """Is component ``i`` memctl's own state (`.memctl/`, `.gitignore`, `.gitattributes`)?"""
    first = [p for p in parts[: i + 1] if p not in ("", ".")]
    return len(first) == 1 and first[0] in (".memctl", ".gitignore", ".gitattributes")


def lexical_problem(rel: str, hidden: bool = False) -> str | None:
    """Why a vault path a config names is refused before the filesystem is asked, or None
    (the same test every read and write of memctl applies first)."""
    return _lexical_problem(rel, hidden)


def _lexical_problem(rel: str, hidden: bool) -> str | None:
    """Why ``rel`` is refused before the filesystem is even asked, or None."""
    if "\x00" in rel:
        return "it holds a NUL byte"
    if "\\" in rel:
        return "it holds a backslash"
    if rel.startswith(("/", "~")) or (len(rel) > 1 and rel[1] == ":" and rel[0].isalpha()):
        return "it is absolute"
    parts = rel.split("/")
    for i, part in enumerate(parts):
        if part == "..":
            return "it climbs out with '..'"
        if not part.isascii():
            if any(unicodedata.category(c) in _INVISIBLE for c in part):
                return "it holds an invisible character"
            folded = unicodedata.normalize("NFKC", part)
            if folded != unicodedata.normalize("NFC", part) and (
                folded.isascii() or "/" in folded or "\\" in folded
            ):
                return f"{part!r} is a lookalike of {folded!r}"
        if part.startswith(".") and part != "." and not (hidden and _own_state(parts, i)):
            return "it is inside a hidden folder"
    first = next((p for p in parts if p not in ("", ".")), "")
    if first != "raw" and fold(first) == "raw":
        return f"{first!r} is a case lookalike of 'raw'"
    last = parts[-1]
    if last != "INDEX.md" and fold(last) == "index.md":
        return f"{last!r} is a case lookalike of 'INDEX.md'"
    return None


def fold(name: str) -> str:
    """A name as a case-insensitive, normalising filesystem compares it.

    macOS (APFS, HFS+) and Windows (NTFS) by default ignore case and Unicode
    normalisation, and Windows drops trailing dots and spaces, so `RAW`, `Raw.`, `raw `
    and `ｒａｗ` all open `raw/` there. memctl's own rules (raw/ is immutable, INDEX.md
    is generated, nothing is served from .git) compare exact names, so a path must be
    refused when its fold names a different spelling, on every OS alike.
    """
    once = unicodedata.normalize("NFKC", name).casefold()
    return unicodedata.normalize("NFKC", once).rstrip(". ")


# The names at each vault root, as last listed. Only refreshed when a path's first
# component is missing from it, so the check costs a set lookup for every path into a
# folder that exists and a listdir for the rest.
_ROOT_NAMES: dict[Path, frozenset[str]] = {}


def _root_lookalike(real_root: Path, rel: str) -> str | None:
    """Is the first component a case or Unicode lookalike of another folder at the root?

    `Knowledge/team.md` in a vault with `knowledge/` reaches the real folder on macOS and
    Windows and a new one on Linux; both are refused, on every OS, unless a folder of
    exactly that spelling exists too (only possible on a case-sensitive filesystem).
    """
    first = next((p for p in rel.split("/") if p not in ("", ".")), "")
    if not first:
        return None
    names = _ROOT_NAMES.get(real_root)
    if names is None or first not in names:
        try:
            names = _ROOT_NAMES[real_root] = frozenset(p.name for p in real_root.iterdir())
        except OSError:
            return None
        if first in names:
            return None
        key = fold(first)
        for name in sorted(names):
            if fold(name) == key:
                return f"{first!r} is a case lookalike of {name!r}"
    return None


def inside(root: Path, rel: str | Path, *, hidden: bool = False) -> Path:
    """The one check for every vault path memctl reads, writes, indexes or serves.

    Refuses `..`, absolute paths, NUL, backslashes, invisible characters, Unicode and
    case lookalikes (a fullwidth `．．` or `RAW/` mean `..` or `raw/` to some filesystem
    or reader; `Knowledge/` means `knowledge/` on macOS and Windows; see `fold`), and
    anything whose real location, symlinks followed, is outside the vault.
    Hidden folders (`.git`, `.memctl`, in any case) are refused too; with `hidden` the
    writer may touch memctl's own state (`.memctl/`, `.gitignore`, `.gitattributes` with
    memctl's merge drivers, spelled exactly so),
    never git's, and nothing is ever served from either.
    Returns the real path.
    """
    text = rel.as_posix() if isinstance(rel, Path) else str(rel)
    why = _lexical_problem(text, hidden)
    real_root = _resolved_root(root)
    if why is None:
        why = _root_lookalike(real_root, text)
    if why is None:
        plain = _plain_target(real_root, text)
        if plain is not None:
            target, parts = plain
        else:
            target = (real_root / text).resolve()
            if target != real_root and real_root not in target.parents:
                raise PathEscapeError(text, "it leads outside the vault")
            parts = list(target.relative_to(real_root).parts)
        if any(
            p.startswith(".") and not (hidden and _own_state(parts, i))
            for i, p in enumerate(parts)
        ):
            why = "it leads into a hidden folder"
        else:
            return target
    raise PathEscapeError(text, why)


# Each absolute vault root as resolved the first time it was checked: recall reads a
# thousand files per query and resolving the root again for each cost a third of `inside`.
_REAL_ROOTS: dict[Path, Path] = {}


def _resolved_root(root: Path) -> Path:
    """`root.resolve()`, once per absolute root (a relative one follows the cwd: never cached)."""
    if not root.is_absolute():
        return root.resolve()
    real = _REAL_ROOTS.get(root)
    if real is None:
        real = root.resolve()
        if real.is_dir():  # a root not made yet may still become a symlink
            _REAL_ROOTS[root] = real
    return real


def _plain_target(real_root: Path, text: str) -> tuple[Path, list[str]] | None:
    """`(real_root / text).resolve()` and its components below the root when none of them
    is a symlink, else None.

    `text` has passed `_lexical_problem` (no `..`, not absolute), and `real_root` is already
    real, so without a symlink the resolved path is the root joined with the components:
    one lstat per component below the root instead of `realpath`'s lstat of every
    component from `/`. A component that is missing ends the walk: nothing beneath it
    exists to be a link, as `resolve` (not strict) also finds. Any symlink, or a
    non-POSIX system (where `resolve` also normalises case and follows junctions), leaves
    the answer to `resolve` and the checks after it.
    """
    if os.name != "posix":
        return None
    path = str(real_root)
    parts = [p for p in text.split("/") if p not in ("", ".")]
    walking = True
    for name in parts:
        path = f"{path}/{name}" if path != "/" else f"/{name}"
        if walking:
            try:
                mode = os.lstat(path).st_mode
            except (FileNotFoundError, NotADirectoryError):
                walking = False
                continue
            except OSError:
                return None
            if stat.S_ISLNK(mode):
                return None
    return Path(path), parts


def stays_inside(root: Path, rel: str) -> bool:
    """For folder walks: does this entry (a symlink, say) pass `inside`?"""
    try:
        inside(root, rel)
    except MemctlError:
        return False
    return True


def _umask() -> int:
    """The process umask; reading it means setting it, so put it straight back."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _mode_for(path: Path) -> int:
    """An existing file keeps its mode; a new one gets what `open()` would give it.

    mkstemp creates its file 0600 and the rename would carry that over, making every
    vault file (and a user's 0644 `.claude/settings.json`) private whatever the umask.
    """
    try:
        return stat.S_IMODE(path.stat().st_mode)
    except OSError:
        return 0o666 & ~_umask()


def atomic_write(path: Path, data: str | bytes, durable: bool = True) -> None:
    """Temp file + rename: readers see the old file or the new one, never half.

    Durable: the temp file's bytes reach the disk before the rename (so a power cut leaves
    the old file or the whole new one, never an empty one), and the folder after it (so the
    rename itself survives). `durable=False` skips both so a Transaction can fsync all its
    files and folders at once in `flush()` (one fsync per file in sequence cost ~3 ms each
    here; in parallel, ~0.15 ms); its journal is durable before each such write.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data
    mode = _mode_for(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            if mode != 0o600:
                os.fchmod(fh.fileno(), mode)
            fh.write(raw)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        Path(tmp).replace(path)
    except BaseException:
        with contextlib.suppress(OSError):
            Path(tmp).unlink()
        raise
    if durable:
        sync_dir(path.parent)


try:  # POSIX
    import fcntl
except ImportError:  # Windows, where Obsidian users edit their notes
    fcntl = None  # type: ignore[assignment]
try:
    import msvcrt
except ImportError:
    msvcrt = None  # type: ignore[assignment]


def _try_lock(fd: int) -> bool:
    """Take the OS lock on `fd` without waiting: True if taken, False if someone holds it."""
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        elif msvcrt is not None:
            os.lseek(fd, 0, os.SEEK_SET)
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)  # type: ignore[attr-defined]
        else:
            raise OSError(errno.ENOSYS, "no file locking on this platform")
        return True
    except OSError as exc:
        if exc.errno in (errno.EAGAIN, errno.EACCES, errno.EDEADLK):
            return False
        raise


def _unlock(fd: int) -> None:
    if fcntl is not None:
        fcntl.flock(fd, fcntl.LOCK_UN)
    elif msvcrt is not None:
        os.lseek(fd, 0, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)  # type: ignore[attr-defined]


class VaultLock:
    """An exclusive OS lock on `.memctl/lock` (flock on POSIX, msvcrt.locking on Windows):
    serialises writers across processes, and dies with the process that held it."""

    def __init__(self, root: Path, timeout: float = 60.0) -> None:
        self.path = root / ".memctl" / "lock"
        self.timeout = timeout
        self._fd: int | None = None
        self._depth = 0
        # Run once each time the lock is taken afresh: the vault finishes a killed
        # command's journal there, before any new work starts.
        self.on_acquire: Callable[[], None] | None = None

    def __enter__(self) -> VaultLock:
        if self._depth:
            self._depth += 1
            return self
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
                # nobody can write here, so there is no writer to wait for
                raise ReadOnlyVaultError(
                    f"the vault is read-only ({exc.strerror}); memctl can only read it",
                    self.path.parent.parent,
                ) from None
            raise
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                if _try_lock(fd):
                    break
            except OSError as exc:
                os.close(fd)
                raise MemctlError(f"cannot lock the vault: {exc.strerror}", self.path) from None
            if time.monotonic() > deadline:
                os.close(fd)
                raise LockTimeoutError(
                    f"another memctl process has held the vault lock for {self.timeout:.0f}s",
                    self.path,
                ) from None
            time.sleep(0.02)
        self._fd = fd
        self._depth = 1
        if self.on_acquire is not None:
            try:
                self.on_acquire()
            except BaseException:
                self.__exit__(None)
                raise
        return self

    def __exit__(self, exc_type: object = None, *exc: object) -> None:
        self._depth -= 1
        if self._depth == 0 and self._fd is not None:
            # The lock's scope is the command's: a journal still open when it ends normally
            # belongs to work that completed; one left by an exception is undone right here
            # (or, if even that fails, by the next command).
            _close_journals(self.path.parent.parent, failed=exc_type is not None)
            _unlock(self._fd)
            os.close(self._fd)
            self._fd = None


# Per vault root: makes the check a Transaction runs before it first touches each path (the
# vault refuses to write on a detached HEAD, mid-merge, over conflict markers). Registered
# by the vault, so that every writer gets it without passing it along.
Guard = Callable[[str, Path], None]
_GUARDS: dict[Path, Callable[[], Guard]] = {}


def register_guard(root: Path, factory: Callable[[], Guard]) -> None:
    _GUARDS[root.resolve()] = factory


JOURNAL_REL = ".memctl/journal"
PURGE_REL = JOURNAL_REL + "/purge.json"  # a history rewrite still to do (gitops/purge.py)
_JOURNAL_VERSION = 1
# Journals this process has open, by vault root: closed when the vault lock is released.
_OPEN: dict[Path, list[Journal]] = {}


def open_journal_names(root: Path) -> set[str]:
    """Journal folders this process has open for `root` (not leftovers to recover)."""
    return {j.dir.name for j in _OPEN.get(root.resolve(), [])}


class Journal:
    """The write-ahead record of one transaction: a log of the paths it changes, plus links.

    The log is JSON lines: a header naming the command and process, then one line per path
    (`{"path": rel, "backup": name-or-null}`) written *before* that path changes. A backup is a
    hard link to the original file (a copy only where the filesystem has no links), so
    keeping it costs no space and restoring it is one rename.
    """

    def __init__(self, root: Path, command: str) -> None:
        self.root = root
        self.command = command
        base = root / JOURNAL_REL
        made = not base.is_dir()
        base.mkdir(parents=True, exist_ok=True)
        if made:
            sync_dir(base.parent)
        ignore = base / ".gitignore"
        if not ignore.exists():
            # vaults made before the journal existed lack the .gitignore line for it
            with contextlib.suppress(OSError):
                ignore.write_text("*\n", encoding="utf-8")
        stamp = time.strftime("%Y%m%dT%H%M%S", time.gmtime())
        self.dir = Path(tempfile.mkdtemp(prefix=f"{stamp}-{os.getpid()}-", dir=base))
        # the header is written under another name and the log renamed into place: a kill
        # right after the log appeared left it empty, naming no command for recovery
        self._log: int | None = os.open(
            self.dir / "log.new", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600
        )
        self._n = 0
        self._linked = False  # a link made since the last sync of the folder
        self.owner: Transaction | None = None
        self._append(
            {
                "journal": _JOURNAL_VERSION,
                "command": command,
                "pid": os.getpid(),
                "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
        )
        (self.dir / "log.new").rename(self.dir / "log")  # the open descriptor follows it
        # durable where recovery looks: the log in its folder, the folder in journal/
        sync_dir(self.dir)
        sync_dir(base)
        _OPEN.setdefault(root, []).append(self)

    def _append(self, record: dict[str, object], sync: bool = True) -> None:
        """One line, on disk before this returns: it is written ahead of what it names."""
        line = json.dumps(record, ensure_ascii=False) + "\n"
        assert self._log is not None, "journal already discarded"
        os.write(self._log, line.encode("utf-8", "surrogateescape"))
        if sync:
            _sync_data(self._log)

    def record(self, rel: str, target: Path, sync: bool = True) -> Path | None:
        """Note that `target` is about to change; returns where its original now also lives.

        The line and the link are durable when this returns, before the caller's write
        begins, so after a power cut every changed file is one recovery knows about (the
        writes themselves are synced together at `Transaction.flush`). `sync=False` leaves
        that to one `sync_records()` after a batch of records, before any of their writes.
        """
        backup: Path | None = None
        if target.exists():
            self._n += 1
            backup = self.dir / f"b{self._n}"
            try:
                os.link(target, backup)
            except OSError:
                shutil.copy2(target, backup)  # no hard links here (some network filesystems)
                _fsync_path(backup)
        self._append({"path": rel, "backup": backup.name if backup else None}, sync)
        if backup is not None:
            if sync:
                sync_dir(self.dir)
            else:
                self._linked = True
        return backup

    def sync_records(self) -> None:
        """Make a batch of `record(..., sync=False)` durable: the log, and the folder its
        links are in."""
        assert self._log is not None, "journal already discarded"
        _sync_data(self._log)
        if self._linked:
            sync_dir(self.dir)
            self._linked = False

    def sync(self) -> None:
        """Make the log durable (called where the transaction fsyncs its files)."""
        if self._log is not None:
            with contextlib.suppress(OSError):
                os.fsync(self._log)

    def discard(self) -> None:
        """The transaction is over (committed or rolled back): forget the journal."""
        if self._log is not None:
            with contextlib.suppress(OSError):
                os.close(self._log)
            self._log = None
        shutil.rmtree(self.dir, ignore_errors=True)
        mine = _OPEN.get(self.root, [])
        if self in mine:
            mine.remove(self)
        if not mine:
            _OPEN.pop(self.root, None)


def _close_journals(root: Path, failed: bool) -> None:
    for journal in list(_OPEN.get(root.resolve(), [])):
        tx = journal.owner
        if failed and tx is not None:
            try:
                tx.rollback()
            except OSError:
                continue  # left for the next command's recovery
        journal.discard()


class Mark:
    """A point inside a transaction that the writes after it can be undone to."""

    def __init__(self) -> None:
        self.new: list[Path] = []  # first touched after the mark
        self.saved: dict[Path, Path | None] = {}  # touched before, changed again after it


class Transaction:
    """Collects a command's writes; `rollback()` restores every touched file exactly.

    `command` names the work in the journal, so that recovery after a crash knows whether
    to finish it (an ingest's complete raw sessions are kept and committed) or undo it.

    Every file memctl writes passes through `write`, so this is where secrets are masked
    for good: whatever a writer assembled (a transcript's title or stray top-level key,
    an INDEX line, a curator's or an agent's claim) is redacted on its way to disk. With
    `redact=False` (`ingest --no-redact`) text is written as given.

    Raw sessions are redacted per string before rendering (ingest), so their text is
    written as given: a pass over JSON-escaped text alters what the content hash covers.
    """

    def __init__(self, root: Path, command: str = "write", *, redact: bool = True) -> None:
        self.root = root
        self.command = command
        self.redact = redact
        self._real_root = root.resolve()
        self._real_dirs: dict[Path, Path] = {}
        # target -> its original's journal link, or None for a file this transaction made
        self._backup: dict[Path, Path | None] = {}
        self._unsynced: set[Path] = set()
        self._journal: Journal | None = None
        self.touched: list[str] = []
        self._mark: Mark | None = None
        factory = _GUARDS.get(self._real_root)
        self._guard: Guard | None = factory() if factory is not None else None

    def path(self, rel: str | Path) -> Path:
        """`inside(root, rel)`, with each folder resolved once per transaction.

        Resolving walks every path component with lstat; a large ingest writes thousands
        of files into a few hundred folders. A final component that is a symlink still
        gets the full check.
        """
        text = rel.as_posix() if isinstance(rel, Path) else rel
        if why := _lexical_problem(text, hidden=True) or _root_lookalike(self._real_root, text):
            raise PathEscapeError(text, why)
        joined = self.root / rel
        real = self._real_dirs.get(joined.parent)
        if real is None:
            real = joined.parent.resolve()
            if real != self._real_root and self._real_root not in real.parents:
                raise PathEscapeError(text, "it leads outside the vault")
            self._real_dirs[joined.parent] = real
        target = real / joined.name
        if joined.name in ("", ".", "..") or target.is_symlink():
            return inside(self.root, rel, hidden=True)
        return target

    def _remember(self, target: Path, sync: bool = True) -> None:
        if target not in self._backup:
            rel = target.relative_to(self._real_root).as_posix()
            if self._guard is not None:
                self._guard(rel, target)
            try:
                if self._journal is None:
                    self._journal = Journal(self._real_root, self.command)
                    self._journal.owner = self
                self._backup[target] = self._journal.record(rel, target, sync)
            except OSError as exc:
                raise write_error(rel, exc) from None
            self.touched.append(rel)
            if self._mark is not None:
                self._mark.new.append(target)
        elif (
            self._mark is not None
            and target not in self._mark.saved
            and target not in self._mark.new
            and self._journal is not None
        ):
            rel = target.relative_to(self._real_root).as_posix()
            try:
                self._mark.saved[target] = self._journal.record(rel, target)
            except OSError as exc:
                raise write_error(rel, exc) from None

    def expect(self, rels: list[str] | list[Path]) -> None:
        """Journal the files a writer is about to change, all at once: one sync of the
        journal for the batch instead of one per file (each costs a disk flush, ~3 ms
        here), still before the first of their writes begins."""
        fresh = False
        for rel in rels:
            target = self.path(rel)
            if target not in self._backup:
                self._remember(target, sync=False)
                fresh = True
        if fresh and self._journal is not None:
            try:
                self._journal.sync_records()
            except OSError as exc:
                raise write_error(str(rels[0]), exc) from None

    def mark(self) -> Mark:
        """Start a unit of work that `undo_to` can take back alone (one file of a folder)."""
        self._mark = Mark()
        return self._mark

    def undo_to(self, mark: Mark) -> list[str]:
        """Put back what changed since `mark`; returns the paths it touched."""
        out = []
        for target in reversed(mark.new):
            restore(target, self._backup.pop(target, None))
            rel = target.relative_to(self._real_root).as_posix()
            if rel in self.touched:
                self.touched.remove(rel)
            self._unsynced.discard(target)
            out.append(rel)
        for target, backup in mark.saved.items():
            restore(target, backup)
            out.append(target.relative_to(self._real_root).as_posix())
        self._mark = None
        return out

    def release(self, mark: Mark) -> None:
        if self._mark is mark:
            self._mark = None

    def write(self, rel: str | Path, data: str | bytes) -> Path:
        """Atomically replace one vault file, remembering what was there before."""
        from memctl.core.redact.files import check_name, for_disk

        if self.redact and not is_raw_session(rel):
            data = for_disk(rel, data)
        elif self.redact:
            check_name(rel)
        target = self.path(rel)
        self._remember(target)
        try:
            atomic_write(target, data, durable=False)
        except OSError as exc:
            raise write_error(rel, exc) from None
        self._unsynced.add(target)
        return target

    def flush(self) -> None:
        """Make every write so far durable: fsync files and their folders, in parallel.

        Call before committing; until then a power cut may lose writes that git has not
        recorded yet, which the next command reports as uncommitted changes.
        """
        if self._journal is not None:
            self._journal.sync()
        if not self._unsynced:
            return
        from concurrent.futures import ThreadPoolExecutor

        targets = [p for p in self._unsynced if p.exists()]
        dirs = {p.parent for p in self._unsynced}
        try:
            with ThreadPoolExecutor(max_workers=16) as pool:
                list(pool.map(_fsync_path, [*targets, *dirs]))
        except OSError as exc:
            raise write_error(str(exc.filename or "a vault file"), exc) from None
        self._unsynced.clear()

    def delete(self, rel: str | Path) -> None:
        """Remove a file; rollback brings it back."""
        target = inside(self.root, rel, hidden=True)
        self._remember(target)
        with contextlib.suppress(FileNotFoundError):
            target.unlink()

    def rollback(self) -> None:
        """Put back every file as it was before this transaction; new files disappear.

        Renames and unlinks only, so this works on a full disk.
        """
        for target, backup in reversed(list(self._backup.items())):
            restore(target, backup)
        self._backup.clear()
        self.done()

    def done(self) -> None:
        """The work is committed (or undone): drop the journal. The lock's release does it too.

        After this there is nothing to roll back: the files are what git recorded.
        """
        self._backup.clear()
        if self._journal is not None:
            self._journal.discard()
            self._journal = None

    def __enter__(self) -> Transaction:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is not None:
            self.rollback()


def write_error(rel: str, exc: OSError) -> MemctlError:
    """A failed write as one line: which file, and what the system said (disk full, ...)."""
    what = exc.strerror or str(exc)
    if exc.errno == errno.EROFS:
        what += "; the vault is read-only, so memctl can only read it"
    elif exc.errno in SPACE_ERRNOS:
        what = f"{space_text(exc)}; free some space and run the command again (nothing was changed)"
    return MemctlError(f"cannot write {rel}: {what}")


def restore(target: Path, backup: Path | None) -> None:
    """Put one journaled file back: rename its original over it, or remove a file that was new."""
    if backup is None:
        with contextlib.suppress(FileNotFoundError):
            target.unlink()
    elif backup.exists():
        target.parent.mkdir(parents=True, exist_ok=True)
        backup.replace(target)
    for tmp in target.parent.glob(f".{target.name}.*.tmp") if target.parent.is_dir() else ():
        with contextlib.suppress(OSError):
            tmp.unlink()


def is_raw_session(rel: str | Path) -> bool:
    text = rel.as_posix() if isinstance(rel, Path) else rel
    return text.startswith("raw/") and text.endswith(".md") and not text.endswith("/INDEX.md")


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _sync_data(fd: int) -> None:
    """A file's bytes and what is needed to read them back (its size); fdatasync where the
    system has it, which skips timestamps."""
    getattr(os, "fdatasync", os.fsync)(fd)


def sync_dir(path: Path) -> None:
    """Make the entries of a folder durable (a file created, renamed in or linked there).

    Windows cannot open a folder to sync it; NTFS journals its metadata itself.
    """
    if os.name == "nt":
        return
    _fsync_path(path)


def read_text(path: Path) -> str:
    """Read a vault file exactly (no newline translation: `\\r` in a transcript is content).

    One decode of the whole file, not a text-mode read: the same string in half the time
    (recall reads dozens of ~30 KB sessions per prompt on a large vault)."""
    return Path(path).read_bytes().decode("utf-8")


# Folders of installed dependencies: their README.md files are nobody's notes (dot-folders,
# .venv and .git among them, are skipped as well). memctl.core.adopt says why to `memctl init`.
DEPENDENCY_DIRS = frozenset({"node_modules", "bower_components", "venv", "__pycache__"})


def walk_markdown(root: Path, sub: str = "") -> Iterator[Path]:
    """Every markdown file in the vault, skipping dot-folders (.git, .memctl, .obsidian)
    and dependency folders (node_modules)."""
    skip = DEPENDENCY_DIRS
    for dirpath, dirnames, filenames in os.walk(root / sub if sub else root):  # none: nothing
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in skip)
        for name in sorted(filenames):
            if name.endswith(".md") and not name.startswith("."):
                path = Path(dirpath) / name
                try:  # os.walk lists a linked file (never what a linked folder holds)
                    mode = os.lstat(path).st_mode
                    if stat.S_ISLNK(mode) and stays_inside(root, path.relative_to(root)):
                        mode = path.stat().st_mode
                except OSError:
                    continue
                if stat.S_ISREG(mode):  # a pipe named like a note is none: a read would wait
                    yield path
