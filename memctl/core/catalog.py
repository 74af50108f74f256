"""The raw sessions' frontmatter, kept in a cache that the files' stat keeps honest.

Every ingest looks sessions up by id, and every write rebuilds raw/INDEX.md from all session
headers. Reading and YAML-parsing each header took seconds per command on a vault of 10k
sessions, a hook's one-turn ingest included. `.memctl/cache/sessions.json` (ignored by git,
thrown away whenever in doubt) keeps each header with the (mtime_ns, size) it was read at;
a file whose stat moved is read again, a vanished one is dropped. As in the search index, a
file whose mtime was too close to the read to be trusted is marked racy and read once more
next time.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from memctl.core.raw import read_header
from memctl.core.store import atomic_write, read_text, stays_inside
from memctl.errors import MemctlError

CACHE_REL = ".memctl/cache/sessions.json"
VERSION = 1
RACY_NS = 50_000_000
HEAD_BYTES = 8192

# rel -> [mtime_ns, size, racy, header or None when the file has no readable frontmatter]
Entry = list[Any]


def _plain(data: dict[str, Any]) -> dict[str, Any]:
    """A JSON-safe copy, so a header from the cache equals one read from the file.

    YAML can hand back dates for hand-edited headers; every reader formats them with str().
    """
    return json.loads(json.dumps(data, default=str, ensure_ascii=False))


def _read(path: Path) -> dict[str, Any] | None:
    try:
        with path.open("r", encoding="utf-8", newline="") as fh:
            head = fh.read(HEAD_BYTES)
        if "\n---\n" not in head[3:]:
            head = read_text(path)
        return _plain(read_header(head, str(path)))
    except (MemctlError, OSError, UnicodeDecodeError):
        return None


class Catalog:
    """Session headers of one vault, read through the cache."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._entries: dict[str, Entry] | None = None
        self._mine: set[str] = set()  # written by this process: trusted even if racy
        self._heads: dict[str, bytes] = {}  # the frontmatter bytes this process wrote
        self._dirty = False

    def _load(self) -> dict[str, Entry]:
        if self._entries is None:
            try:
                raw = json.loads((self.root / CACHE_REL).read_text(encoding="utf-8"))
                files = raw["files"] if raw.get("version") == VERSION else {}
                self._entries = {k: v for k, v in files.items() if len(v) == 4}
            except (OSError, ValueError, KeyError, TypeError, AttributeError):
                self._entries = {}
        return self._entries

    def headers(self) -> list[tuple[str, dict[str, Any]]]:
        """(path, frontmatter) of every raw session, in the order a sorted walk finds them."""
        entries = self._load()
        out: list[tuple[str, dict[str, Any]]] = []
        seen: set[str] = set()
        now = time.time_ns()
        for rel, mtime, size in _walk(self.root, self.root / "raw", "raw/"):
            seen.add(rel)
            e = entries.get(rel)
            if e is None or e[0] != mtime or e[1] != size or (e[2] and rel not in self._mine):
                data = _read(self.root / rel)
                e = entries[rel] = [mtime, size, int(now - mtime < RACY_NS), data]
                self._dirty = True
            if e[3] is not None:
                out.append((rel, e[3]))
        for rel in [r for r in entries if r not in seen]:
            del entries[rel]
            self._dirty = True
        return out

    def put(self, rel: str, header: dict[str, Any], path: Path, text: str) -> None:
        """Record the header of the session file this process has just written at `path`."""
        st = path.stat()
        racy = int(time.time_ns() - st.st_mtime_ns < RACY_NS)
        self._load()[rel] = [st.st_mtime_ns, st.st_size, racy, _plain(header)]
        self._mine.add(rel)
        end = text.find("\n---\n", 3)
        if racy and end > 0:
            self._heads[rel] = text[: end + 5].encode("utf-8", "surrogatepass")
        self._dirty = True

    def _settle(self) -> None:
        """Clear the racy mark of files this process wrote, once their bytes check out.

        Every file ingest writes is racy when it is written, so without this the next
        command would parse every header of a large import again (5.8 s for 11k sessions).
        As git does for racily clean entries, the content is compared once the timestamp
        window has passed: here only the frontmatter bytes, which is all the cache holds.
        """
        now = time.time_ns()
        entries = self._entries or {}
        for rel, head in list(self._heads.items()):
            e = entries.get(rel)
            if e is None or not e[2]:
                del self._heads[rel]
                continue
            if now - e[0] < RACY_NS:
                continue  # still inside the window: the next reader checks it
            try:
                with (self.root / rel).open("rb") as fh:
                    st = os.fstat(fh.fileno())
                    same = fh.read(len(head)) == head
            except OSError:
                same = False
            if same and (st.st_mtime_ns, st.st_size) == (e[0], e[1]):
                e[2] = 0
            del self._heads[rel]

    def save(self) -> None:
        """Write the cache if it changed; losing it only costs the next command a re-read."""
        if not self._dirty or self._entries is None:
            return
        self._settle()
        data = json.dumps({"version": VERSION, "files": self._entries}, ensure_ascii=False)
        try:
            atomic_write(self.root / CACHE_REL, data, durable=False)
        except OSError:
            return
        self._dirty = False


def _walk(root: Path, folder: Path, prefix: str) -> list[tuple[str, int, int]]:
    """Markdown files below `folder` like `store.walk_markdown`: files first, names sorted."""
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError:
        return []
    out: list[tuple[str, int, int]] = []
    dirs = []
    for e in entries:
        name = e.name
        if name.startswith("."):
            continue
        try:
            if e.is_dir(follow_symlinks=False):
                dirs.append(e)
            elif name.endswith(".md") and name != "INDEX.md" and e.is_file():
                # a pipe or device named like a session is none: reading it would wait
                if e.is_symlink() and not stays_inside(root, prefix + name):
                    continue  # a link out of the vault is never read as a session
                st = e.stat()
                out.append((prefix + name, st.st_mtime_ns, st.st_size))
        except OSError:
            continue
    for d in dirs:
        out.extend(_walk(root, Path(d.path), f"{prefix}{d.name}/"))
    return out
