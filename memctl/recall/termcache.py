"""Each raw session's feedback counts, kept between processes in `.memctl/cache/terms/`.

Relevance feedback (memctl.recall.rank) asks, for the two best sessions of a question, in
how many of their turns each content word is. Counting means running the stemming analyzer
over every turn of both: ~4 ms of a ~27 ms first ask on a 100k-turn vault, paid again by
every new process, and the prompt hook is a new process on every prompt. Kept inside the
index, the counts grew its doc store by a third and slowed every search (schema 12,
bench/README.md); kept here, one small file per session asked about, they cost a read.

An entry is keyed by the session's path and holds the digest of the text it was counted
from, and of the turns it counted: a session that grew by turns (the live one grows by a
turn per prompt) has only its new turns counted; a rewritten or forgotten turn makes the
entry stale, never wrong. A changed
analyzer or stopword list (`fingerprint`) does the same. What cannot be read or parsed is
counted again and written over; a vault that cannot be written only loses the speed-up.
`memctl forget` and `purge` remove the folder: a forgotten word must not outlive its turn.
"""

from __future__ import annotations

import hashlib
import marshal
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from memctl.core.localstate import RAW_READ_BOUND, read_bounded_bytes
from memctl.core.raw import session_contents
from memctl.recall.words import stop_stems, turn_counts

VERSION = 1
KEEP = 2000  # entries kept at most; the oldest are dropped when a write goes past it
_FINGERPRINT: str | None = None
_MEMORY: dict[str, Counter[str]] = {}  # by text digest, for a long-lived process
_MEMORY_LIMIT = 64


def folder(root: Path) -> Path:
    return root / ".memctl" / "cache" / "terms"


def entry_of(root: Path, path: str) -> Path:
    """Where the counts of the raw session at `path` are kept."""
    return folder(root) / f"{hashlib.blake2b(path.encode(), digest_size=12).hexdigest()}.marshal"


def fingerprint() -> str:
    """What the counts depend on besides the text: the analyzer and the stopwords."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        from memctl.index.schema import analyze, analyzer_id

        probe = " ".join(analyze("running studies flies cached memories"))
        stops = ",".join(sorted(stop_stems()))
        py = "{}.{}".format(*sys.version_info[:2])  # marshal's format is the Python version's
        blob = f"{VERSION}|{py}|{analyzer_id()}|{probe}|{stops}".encode()
        _FINGERPRINT = hashlib.blake2b(blob, digest_size=8).hexdigest()
    return _FINGERPRINT


def session_counts(root: Path, path: str, text: str) -> Counter[str]:
    """For each content term of the session `text` (the raw file at `path`), in how many
    of its turns it is: `words.turn_counts` over `raw.session_contents`, from the cache
    when its entry was counted from this very text, or from the turns it starts with (a
    live session grows by a turn per prompt: only the new turns are counted). A copy:
    the caller may change it."""
    digest = _digest(text)
    got = _MEMORY.get(digest)
    if got is None:
        entry = entry_of(root, path)
        data = _read(entry)
        if data is not None and data["digest"] == digest:
            got = Counter(data["counts"])
        else:
            contents = list(session_contents(text))
            k = data["turns"] if data is not None else 0
            if data is not None and k <= len(contents) and _prefix(contents, k) == data["prefix"]:
                got = Counter(data["counts"])
                got.update(turn_counts(contents[k:]))
            else:
                got = turn_counts(contents)
            _write(entry, digest, contents, got)
        if len(_MEMORY) >= _MEMORY_LIMIT:
            _MEMORY.clear()
        _MEMORY[digest] = got
    return Counter(got)


# The last texts digested, by identity: a session's text is the one string the parse cache
# (memctl.recall.graph) keeps while its file holds, and hashing a long session again for
# every prompt of a resident process cost more than counting from the cache saved.
_DIGESTED: dict[int, tuple[str, str]] = {}


def _digest(text: str) -> str:
    got = _DIGESTED.get(id(text))
    if got is not None and got[0] is text:
        return got[1]
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()
    if len(_DIGESTED) >= 64:
        _DIGESTED.clear()
    _DIGESTED[id(text)] = (text, digest)
    return digest


def _prefix(contents: list[str], k: int) -> str:
    """The digest of the first `k` turns' contents, each led by its length (so no two
    different lists of turns give the same stream)."""
    h = hashlib.blake2b(digest_size=16)
    for c in contents[:k]:
        b = c.encode("utf-8", "surrogatepass")
        h.update(len(b).to_bytes(8, "little"))
        h.update(b)
    return h.hexdigest()


def _read(entry: Path) -> dict[str, Any] | None:
    """The entry when it is whole and was counted by this analyzer, else None."""
    try:
        # bounded: a file someone made huge in the cache fails to parse, unread past this
        data = marshal.loads(read_bounded_bytes(entry, RAW_READ_BOUND))
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if (
        not isinstance(data, dict)
        or data.get("fingerprint") != fingerprint()
        or not isinstance(data.get("digest"), str)
        or not isinstance(data.get("prefix"), str)
        or type(data.get("turns")) is not int
        or data["turns"] < 0
        or not isinstance(data.get("counts"), dict)
        or not set(map(type, data["counts"].values())) <= {int}
    ):
        return None  # damaged, or another analyzer's: counted again
    return data


def _write(entry: Path, digest: str, contents: list[str], counts: Counter[str]) -> None:
    from memctl.core.store import atomic_write

    data = {
        "digest": digest,
        "fingerprint": fingerprint(),
        "turns": len(contents),
        "prefix": _prefix(contents, len(contents)),
        "counts": dict(counts),
    }
    try:
        make_room(entry.parent, KEEP)
        # a cache: not worth an fsync on the prompt path; a torn file fails to parse
        atomic_write(entry, marshal.dumps(data), durable=False)
    except OSError:
        pass  # a read-only vault only loses the speed-up


LOOK_EVERY = 32  # writes into a cache folder between two counts of its entries
_WRITES: dict[str, int] = {}


def make_room(folder: Path, keep: int) -> None:
    """Before a write into a cache folder (this one's, memctl.recall.notecache's): make
    it, or drop its oldest half once it holds `keep` entries. Listing thousands of entries
    cost ~1 ms, so a process counts them at its first write into the folder and at every
    LOOK_EVERY-th after: a folder may pass `keep` by that many, never grow without end."""
    n = _WRITES.get(str(folder), 0)
    _WRITES[str(folder)] = n + 1
    if not folder.is_dir():
        folder.mkdir(parents=True, exist_ok=True)
    elif n % LOOK_EVERY == 0 and len(names := list(folder.iterdir())) >= keep:
        prune_oldest(names)


def prune_oldest(entries: list[Path]) -> None:
    """Drop the oldest half of a cache folder's entries (by when they were written): this
    one's and memctl.recall.notecache's."""
    stamped = []
    for p in entries:
        try:
            stamped.append((p.stat().st_mtime_ns, str(p)))
        except OSError:
            continue
    for _, name in sorted(stamped)[: len(stamped) // 2 + 1]:
        try:
            Path(name).unlink()
        except OSError:
            continue
