"""Is the search index in `.memctl/index/` in step with the files? Where it lives, and why.

Layout (ignored by git; rebuilt from the files whenever in doubt):

    .memctl/index/current.json     {"schema": N, "gen": "g-..."}: the generation readers open
    .memctl/index/g-.../           one tantivy index plus manifest.json (what it was built from)

The manifest maps every indexed file to (mtime_ns, size, sha256, racy). `sync` is the cheap
check every reading command runs. It stats every folder and every note, not every file: a
create, delete or rename changes the mtime of the folder it happens in, and memctl, git and
most editors save by temp file + rename; an editor that writes a note in place changes only
the note, which is why notes are statted one by one. Raw sessions are immutable and only
ever replaced by rename, so their folders speak for them (a session changed in place anyway
is shown as it is now and re-indexed once a search meets it; `memctl doctor` hashes them
all). When anything moved, one full stat walk follows; only files whose mtime or size moved
are hashed; only files whose hash moved are reindexed (delete by path, add again); vanished
files are deleted. Writers hold the vault lock and replace the manifest atomically *after* the index
commit, so a crash in between only means the next sync redoes a few files. Readers search
tantivy's snapshot of the last commit, so a search beside a writer sees the index before or
after a commit, never half of one. A rebuild fills a new generation and then flips
`current.json`, so nobody ever reads a half-built index either.
"""

from __future__ import annotations

import contextlib
import getpass
import hashlib
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from stat import S_ISREG
from typing import Any

import tantivy

from memctl.core.localstate import RAW_READ_BOUND, READ_BOUND
from memctl.core.store import DEPENDENCY_DIRS, atomic_write, stays_inside
from memctl.errors import LockTimeoutError
from memctl.index.host import IndexedVault
from memctl.index.schema import (
    BROKEN,
    CURRENT,
    INDEX_REL,
    MANIFEST,
    QUICK_VERSION,
    RACY_NS,
    SCHEMA_VERSION,
    STATS,
    register_analyzers,
)

# ---- the stat walk and the manifest -------------------------------------------------------

Entry = tuple[int, int, str, int]  # mtime_ns, size, sha256, racy (1: hash again next sync)


def scan(root: Path, dirs: dict[str, int] | None = None) -> dict[str, list[int]]:
    """Every indexable markdown file -> (mtime_ns, size): one stat each, nothing read.

    With `dirs`, also fills it with every folder walked (the vault itself is "") -> its
    mtime_ns, taken before the folder is listed, so a change made while it is listed shows
    as a changed folder next time.
    """
    out: dict[str, list[int]] = {}
    if dirs is not None:
        dirs[""] = root.stat().st_mtime_ns
    stack: list[tuple[str, str]] = [("", str(root))]
    while stack:
        prefix, folder = stack.pop()
        try:
            it = os.scandir(folder)
        except OSError:
            continue
        with it:
            for e in it:
                name = e.name
                if name[0] == ".":
                    continue
                try:
                    # most entries are notes or sessions: test the name before the type
                    if name.endswith(".md") and name != "INDEX.md" and e.is_file():
                        if e.is_symlink() and not stays_inside(root, prefix + name):
                            continue  # a link out of the vault (or into .git) is not indexed
                        st = e.stat()
                        if st.st_size > (RAW_READ_BOUND if prefix.startswith("raw/")
                                         else READ_BOUND):  # fmt: skip
                            continue  # never read past the bound (core.localstate; doctor)
                        out[prefix + name] = [st.st_mtime_ns, st.st_size]
                    elif e.is_dir(follow_symlinks=False):
                        if name in DEPENDENCY_DIRS:
                            continue  # node_modules/*/README.md is nobody's note
                        if dirs is not None:
                            dirs[prefix + name] = e.stat(follow_symlinks=False).st_mtime_ns
                        stack.append((f"{prefix}{name}/", e.path))
                except OSError:
                    continue
    return out


def _by_folder(rel: str) -> bool:
    """Files the quick check leaves to their folder's mtime: raw sessions (see the top)."""
    return rel.startswith("raw/")


def read_file(path: Path) -> tuple[str, bytes, tuple[int, int]] | None:
    """sha256, bytes and the (mtime_ns, size) of exactly those bytes (fstat, not a re-stat)."""
    try:
        with path.open("rb") as fh:
            st = os.fstat(fh.fileno())
            data = fh.read()
    except OSError:
        return None
    return hashlib.sha256(data).hexdigest(), data, (st.st_mtime_ns, st.st_size)


def make_entry(st: tuple[int, int], sha: str, now_ns: int) -> Entry:
    return (st[0], st[1], sha, int(now_ns - st[0] < RACY_NS))


class Generation:
    """One index generation on disk: its folder, its manifest and its tantivy index."""

    def __init__(self, root: Path, name: str) -> None:
        self.name = name
        self.dir = root / INDEX_REL / name
        self._files: dict[str, Entry] | None = None

    @property
    def files(self) -> dict[str, Entry]:
        if self._files is None:
            raw = json.loads((self.dir / MANIFEST).read_text(encoding="utf-8"))
            if raw.get("schema") != SCHEMA_VERSION:
                raise ValueError("manifest schema differs")
            self._files = {k: (v[0], v[1], v[2], v[3]) for k, v in raw["files"].items()}
        return self._files

    def write_files(self, files: dict[str, Entry], dirs: dict[str, int], seen_ns: int) -> None:
        data = json.dumps({"schema": SCHEMA_VERSION, "files": files}, separators=(",", ":"))
        atomic_write(self.dir / MANIFEST, data)
        self._files = files
        self.write_stats(dirs, seen_ns)

    def write_stats(self, dirs: dict[str, int], seen_ns: int) -> None:
        """What the every-command check reads: folders and notes with their stat, racy ones.

        Written after the manifest: a crash in between leaves stat.json behind it, which
        the next check reads as "something changed" and settles from the full manifest.
        `seen_ns` is when `dirs` were taken: a folder whose mtime is that close to it could
        change again within the same clock tick without its mtime moving, so it is racy.
        """
        files = self.files
        racy = sorted(k for k, v in files.items() if v[3])
        if any(seen_ns - m < RACY_NS for m in dirs.values()):
            racy.append("/")  # a racy folder: list them all next time
        notes = sorted(k for k in files if not _by_folder(k))
        names = sorted(dirs)
        data = {
            "schema": SCHEMA_VERSION,
            "quick": QUICK_VERSION,
            "racy": racy,
            "dirs": names,
            "dir_mtime": [dirs[d] for d in names],
            "files": notes,
            "file_stat": [[files[k][0], files[k][1]] for k in notes],
        }
        with contextlib.suppress(*BROKEN):
            if self.stats() == data:
                return  # nothing to say that it does not say already
        atomic_write(self.dir / STATS, json.dumps(data, separators=(",", ":")))

    def stats(self) -> dict[str, Any]:
        raw = _read_json_once(self.dir / STATS)
        if raw.get("schema") != SCHEMA_VERSION:
            raise ValueError("manifest schema differs")
        return raw  # type: ignore[no-any-return]

    def open(self) -> tantivy.Index:
        if not (self.dir / "meta.json").is_file():
            raise ValueError(f"{self.dir.name}: index files are missing")
        idx = tantivy.Index.open(str(self.dir))
        register_analyzers(idx)
        return idx

    def size(self) -> int:
        return sum(p.stat().st_size for p in self.dir.iterdir() if p.is_file())


UNREADABLE = "search index was unreadable; rebuilt it from the files"


_CURRENT_SEEN: dict[str, tuple[tuple[int, int, int], Any]] = {}  # path -> (stat, parsed)


def _read_json_once(path: Path) -> Any:
    """A JSON file memctl replaces only by rename, parsed once per process per version.

    A long-lived process (MCP server, learning loop) checks freshness on every recall;
    stat.json of a 100k-turn vault is thousands of entries to decode each time.
    """
    st = path.stat()
    key = (st.st_ino, st.st_mtime_ns, st.st_size)
    seen = _CURRENT_SEEN.get(str(path))
    if seen is not None and seen[0] == key:
        return seen[1]
    data = json.loads(path.read_text(encoding="utf-8"))
    _CURRENT_SEEN[str(path)] = (key, data)
    return data


def current_generation(root: Path) -> tuple[Generation | None, str]:
    """The live generation, or None and the reason the index must be rebuilt."""
    path = root / INDEX_REL / CURRENT
    try:
        # read once per process while its stat holds: a recall asks a dozen times, and
        # current.json is only ever replaced by a rename (a new inode)
        data = _read_json_once(path)
    except FileNotFoundError:
        return None, "search index missing; built it from the files"
    except (OSError, ValueError):
        return None, UNREADABLE
    if not isinstance(data, dict) or not isinstance(data.get("gen"), str):
        return None, UNREADABLE
    if data.get("schema") != SCHEMA_VERSION:
        return None, (
            f"search index schema changed (v{data.get('schema')} -> v{SCHEMA_VERSION}); "
            "rebuilt it from the files"
        )
    gen = data["gen"]
    if not gen.startswith("g-") or "/" in gen or "\\" in gen:
        return None, UNREADABLE
    return Generation(root, gen), ""


# ---- locking ------------------------------------------------------------------------------


# ---- a vault memctl cannot write ------------------------------------------------------------
#
# tantivy takes a lock file inside the index folder even to read it (its meta lock, see
# quickwit-oss/tantivy#557; tantivy-py offers no read-only directory), so on a read-only
# mount, or in a vault owned by someone else, no search could run. There the index lives
# in a "shadow" home outside the vault (under the cache dir, one per vault path): a copy
# of the vault's own generation when that one is current, otherwise one built and kept up
# to date from the files, exactly as the vault's own would be. The vault is never written.

_SHADOW_LOCKS: dict[Path, Any] = {}


def _writable(root: Path) -> bool:
    """Can this process change the vault's index? access(2) says no on a read-only mount
    even to root, and for a vault of another user to everyone else."""
    base = str(root)  # asked before every search: plain strings, not three pathlib joins
    for probe in (f"{base}/{INDEX_REL}", f"{base}/.memctl", base):
        if os.path.isdir(probe):  # noqa: PTH112
            return os.access(probe, os.W_OK)
    return True


def _shadow_home(vault: IndexedVault) -> Path:
    base = getattr(vault.config, "cache_dir", None)
    if base is None:
        base = Path(tempfile.gettempdir()) / f"memctl-{getpass.getuser()}"
    key = hashlib.sha256(str(Path(vault.root).resolve()).encode()).hexdigest()[:16]
    return Path(base) / "index" / key


def index_home(vault: IndexedVault) -> Path:
    """Where this vault's index is read and written: the vault, or its shadow home."""
    root = Path(vault.root)
    return root if _writable(root) else _shadow_home(vault)


def _lock_of(vault: IndexedVault, home: Path) -> Any:
    if home == Path(vault.root):
        return vault.lock
    lock = _SHADOW_LOCKS.get(home)
    if lock is None:
        from memctl.core.store import VaultLock

        (home / ".memctl").mkdir(parents=True, exist_ok=True)
        lock = _SHADOW_LOCKS[home] = VaultLock(home)
    return lock


def seed_shadow(vault: IndexedVault, home: Path) -> str | None:
    """Copy the vault's own generation to the shadow home when it is current and not
    copied yet; the caller holds the shadow's lock. Returns the notice to show."""
    root = Path(vault.root)
    own, _ = current_generation(root)
    if own is None:
        return None
    try:
        if not (files_unchanged(own, root) or _same_bytes(own, root)):
            return None
    except BROKEN:
        return None
    have, _ = current_generation(home)
    if have is not None and have.name == own.name:
        return None
    base = home / INDEX_REL
    base.mkdir(parents=True, exist_ok=True)
    tmp = base / f".copy-{own.name}-{os.getpid()}"
    shutil.rmtree(tmp, ignore_errors=True)
    shutil.copytree(own.dir, tmp)
    shutil.rmtree(base / own.name, ignore_errors=True)
    tmp.rename(base / own.name)
    atomic_write(base / CURRENT, json.dumps({"schema": SCHEMA_VERSION, "gen": own.name}) + "\n")
    for old in base.iterdir():
        if old.is_dir() and old.name.startswith("g-") and old.name != own.name:
            shutil.rmtree(old, ignore_errors=True)
    return f"the vault is read-only: searching a copy of its index in {home}"


def _same_bytes(gen: Generation, root: Path) -> bool:
    """True when the files are exactly those `gen` indexed, decided without writing.

    The quick check says no when a folder or note was touched, or stat.json is racy (the
    last write fell in the clock tick of the last index, as after every ingest or curate).
    A writable vault settles that with its next sync; a read-only one cannot, so before it
    builds a shadow index from the files it compares what it has: the same set of files,
    and each one's stat or, where the stat moved or was racy, its sha256.
    """
    files = gen.files
    seen = scan(root)
    if seen.keys() != files.keys():
        return False
    for rel, st in seen.items():
        old = files[rel]
        if old[0] == st[0] and old[1] == st[1] and not old[3]:
            continue
        got = read_file(root / rel)
        if got is None or got[0] != old[2]:
            return False
    return True


@contextlib.contextmanager
def locked(vault: IndexedVault, wait: bool, home: Path | None = None) -> Iterator[bool]:
    """Hold the vault lock (re-entrant); without `wait`, yield False if another process has it.

    For a shadow `home` (a read-only vault) the shadow's own lock is held instead.
    """
    lock = vault.lock if home is None else _lock_of(vault, home)
    old = lock.timeout
    if not wait:
        lock.timeout = 0.0
    try:
        lock.__enter__()
    except LockTimeoutError:
        if wait:
            raise
        lock.timeout = old
        yield False
        return
    lock.timeout = old
    try:
        yield True
    finally:
        lock.__exit__(None, None, None)



_QUICK: dict[str, tuple[Any, list[str], list[int], list[str], list[tuple[int, int]]]] = {}

# A process that checks the same vault again and again (MCP server, learning loop, any
# program holding a Vault) watches its folders (memctl.index.fsnotify) from its first check on:
# once a check has passed with every folder watched, no event since means nothing changed,
# and the ~1 stat per folder and note is skipped. Setting the watch costs about a third of
# a check on top of it, so a one-shot command (CLI, hook: `Vault.one_shot`) checks once
# and never sets one; should it check again, it watches from its second check.
_WATCH_LOCK = threading.Lock()
_WATCH: dict[str, tuple[Any, Any]] = {}  # stat.json path -> (its Watch, the stats it vouches for)
_CHECKS: dict[str, int] = {}  # stat.json path -> checks made in this process
WATCH_AFTER = 2  # the check at which a one-shot command starts to watch (any other: the first)


def files_unchanged(gen: Generation, root: Path, after: int = WATCH_AFTER) -> bool:
    """True when no folder and no note moved since the index saw them and none is racy.

    One lstat per folder and one stat per note, compared as two lists in C; the paths are
    joined once per process per stat.json. A watched vault whose watch saw nothing since
    a check passed is unchanged without a stat; the watch is set at check `after`.
    """
    raw = gen.stats()
    if raw.get("quick") != QUICK_VERSION or raw["racy"]:
        return False  # an older stat.json (no folders in it), or something racy
    key = str(gen.dir / STATS)
    got = _QUICK.get(key)
    if got is None or got[0] is not raw:
        base = str(root) + os.sep
        dirs = [base + d for d in raw["dirs"]]
        files = [base + f for f in raw["files"]]
        got = (raw, dirs, raw["dir_mtime"], files, [tuple(x) for x in raw["file_stat"]])
        _QUICK.clear()
        _QUICK[key] = got
    _, dirs, dir_mtime, files, file_stat = got
    with _WATCH_LOCK:
        watch = _watch(key, root, raw, after)
        if watch is True:
            return True
        try:
            if [os.lstat(d).st_mtime_ns for d in dirs] != dir_mtime:
                return False
            if watch is not None:
                # vouch only for plain files: an edit through a symlink's target or another
                # hard link raises its event in a folder that may not be watched
                sts = list(map(os.lstat, files))
                if [(s.st_mtime_ns, s.st_size) for s in sts] == file_stat and all(
                    S_ISREG(s.st_mode) and s.st_nlink == 1 for s in sts
                ):
                    _WATCH[key] = (watch, raw)
                    return True
            return [(s.st_mtime_ns, s.st_size) for s in map(os.stat, files)] == file_stat
        except OSError:
            return False  # a folder or note vanished


def _watch(key: str, root: Path, raw: Any, after: int) -> Any:
    """True when the vault's watch vouches that nothing changed since `raw` was checked;
    else a fresh watch set on every folder (before the caller's stats look), or None."""
    from memctl.index import fsnotify

    if len(_CHECKS) > 1000:  # a test run opens thousands of vaults
        _CHECKS.clear()
    checks = _CHECKS[key] = _CHECKS.get(key, 0) + 1
    old = _WATCH.get(key)
    if old is not None:
        if old[1] is raw and old[0].quiet():
            return True
        old[0].close()
        del _WATCH[key]
    if checks < after:
        return None
    for k in [k for k in _WATCH if k != key]:  # one vault watched at a time, as _QUICK
        _WATCH.pop(k)[0].close()
    if not fsnotify.available(str(root)):
        return None
    try:
        w = fsnotify.Watch()
    except OSError:
        return None
    if not w.add(_QUICK[key][1]):
        w.close()
        return None
    _WATCH[key] = (w, None)
    return w


