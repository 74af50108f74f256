"""Parsed notes and what ranking reads from their lines, kept between processes in
`.memctl/cache/notes/`.

A question about sessions no process has asked about before parses a score of notes and
works out, for each of their lines, its plain text, its words (the stemming analyzer), its
quotes' words and its day: ~0.25 ms a note, a fifth of a first recall on a 100k-turn vault,
paid again by every new process, and the prompt hook is a new process on every prompt
(bench/recall_latency.py). Kept here, one small file per note asked about, they cost a read.

An entry is keyed by the note's path and holds the stat (inode, mtime, size) of the file
it was read from: any change to the file makes it stale, never wrong. A file read within
RACY_NS of its last change is never kept (it could change again in the same clock tick),
as the index and git do. A changed analyzer, stopword list or memctl (`fingerprint`) does
the same. What cannot be read, or is not what a note gives, is parsed again and written
over; a vault that cannot be written only loses the speed-up. `memctl forget` removes the
folder, as it removes the feedback counts (memctl.recall.termcache): a forgotten line must
not outlive its note.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import time
from pathlib import Path
from typing import Any

from memctl.core.localstate import READ_BOUND, read_bounded_bytes
from memctl.core.notes import Citation, Claim, Lifetime, Note, Section
from memctl.recall.termcache import make_room

VERSION = 1
KEEP = 4000  # entries kept at most; the oldest half is dropped when a write goes past it
ENTRY_BOUND = 3 * READ_BOUND  # bytes: an entry holds a note (at most READ_BOUND) and its rows
_FINGERPRINT: str | None = None
# Notes parsed from their files in this process and not yet kept: by id, with the note
# itself (so the id is not reused), its vault, path and the stat it was read at.
_PENDING: dict[int, tuple[Note, Path, str, tuple[int, int, int]]] = {}
_PENDING_LIMIT = 4096
# Notes read from their entries, with their rows, until ranking takes them (`kept_rows`).
_LOADED: dict[int, tuple[Note, list[Any] | None, Path, str, tuple[int, int, int]]] = {}


def folder(root: Path) -> Path:
    return root / ".memctl" / "cache" / "notes"


def entry_of(root: Path, path: str) -> Path:
    """Where what was read from the note at `path` is kept."""
    return folder(root) / f"{hashlib.blake2b(path.encode(), digest_size=12).hexdigest()}.marshal"


def fingerprint() -> str:
    """What an entry depends on besides the file: how lines are analyzed (the analyzer, the
    stopwords, Python's marshal format: memctl.recall.termcache) and memctl's own version."""
    global _FINGERPRINT
    if _FINGERPRINT is None:
        from memctl.recall import termcache
        from memctl.version import __version__

        blob = f"{VERSION}|{__version__}|{termcache.fingerprint()}".encode()
        _FINGERPRINT = hashlib.blake2b(blob, digest_size=8).hexdigest()
    return _FINGERPRINT


def _stamp(st: os.stat_result) -> tuple[int, int, int]:
    return st.st_ino, st.st_mtime_ns, st.st_size


def load(root: Path, path: str, target: Path) -> Note | None:
    """The note at `path` (its real file `target`) as kept, when the entry was read from
    the file as it is now; else None. Its lines' ranking data wait for `kept_rows`."""
    try:
        st = target.stat()
        # bounded: a file someone made huge in the cache fails to parse, unread past this
        data = marshal.loads(read_bounded_bytes(entry_of(root, path), ENTRY_BOUND))
    except (OSError, EOFError, ValueError, TypeError):
        return None
    try:
        if (
            not isinstance(data, tuple)
            or len(data) != 5
            or data[0] != fingerprint()
            or data[1] != path
            or tuple(data[2]) != _stamp(st)
        ):
            return None
        note = _note(path, data[3])
        rows = None if data[4] is None else list(data[4])
    except (TypeError, ValueError, IndexError, KeyError, AttributeError):
        return None  # damaged: parsed again
    if len(_LOADED) >= _PENDING_LIMIT:
        _LOADED.clear()
    _LOADED[id(note)] = (note, rows, root, path, _stamp(st))
    return note


def kept_rows(note: Note) -> list[Any] | None:
    """The lines' ranking data kept with `note`, if it was read from its entry (`load`)
    and they were worked out before; asked once. Should there be none, or should they not
    fit its lines, `keep` writes the entry over with the rows ranking works out."""
    got = _LOADED.pop(id(note), None)
    if got is None or got[0] is not note:
        return None
    _, rows, root, path, stamp = got
    _PENDING[id(note)] = (note, root, path, stamp)
    return rows


def settled(note: Note) -> None:
    """The kept rows fitted: nothing to write."""
    _PENDING.pop(id(note), None)


def parsed(note: Note, root: Path, path: str, st: os.stat_result) -> None:
    """Say that `note` was just parsed from its file, whose stat before the read was `st`:
    it is kept now, and again with its lines' ranking data once ranking reads them
    (`keep`): a note a recall reads and never ranks (out of the user's scope, another
    project's) is not parsed again by every process. Not when the file was written too
    recently to be sure of."""
    from memctl.index.schema import RACY_NS

    if time.time_ns() - st.st_mtime_ns < RACY_NS:
        return
    if len(_PENDING) >= _PENDING_LIMIT:
        _PENDING.clear()
    _PENDING[id(note)] = (note, root, path, _stamp(st))
    _write(note, root, path, _stamp(st), None)


def keep(note: Note, rows: list[Any]) -> None:
    """Write `note` and its lines' ranking data `rows` (plain values) to its entry, if it
    was parsed from its file in this process (`parsed`) or its entry lacked them."""
    got = _PENDING.pop(id(note), None)
    if got is None or got[0] is not note:
        return
    _, root, path, stamp = got
    _write(note, root, path, stamp, rows)


def _write(
    note: Note, root: Path, path: str, stamp: tuple[int, int, int], rows: list[Any] | None
) -> None:
    try:
        blob = marshal.dumps((fingerprint(), path, stamp, _plain(note), rows))
    except ValueError:
        return  # a value marshal cannot hold (YAML can give anything): not kept
    from memctl.core.store import atomic_write

    entry = entry_of(root, path)
    try:
        make_room(entry.parent, KEEP)
        # a cache: not worth an fsync on the prompt path; a torn file fails to parse
        atomic_write(entry, blob, durable=False)
    except OSError:
        pass  # a read-only vault only loses the speed-up


def _item(i: Claim | str) -> Any:
    if isinstance(i, str):
        return i
    lt = i.lifetime
    return (i.text, i.refs, i.inferred, None if lt is None else (lt.kind, lt.since, lt.until),
            i.observed)  # fmt: skip


def _plain(note: Note) -> tuple[Any, ...]:
    return (
        note.meta,
        note.title,
        [_item(i) for i in note.preamble],
        [(s.name, [_item(i) for i in s.items]) for s in note.sections],
        {k: (c.ref, c.quote, c.raw) for k, c in note.footnotes.items()},
        note.newline,
        note.bom,
    )


# An entry is memctl's own, but a damaged (or planted) one must not crash a recall: every
# value is checked to be of the type a parse gives, or the note is parsed again.


_IS_STR = str.__instancecheck__  # in C: marshal makes no str subclass


def _strs(values: Any) -> bool:
    return type(values) is tuple and all(map(_IS_STR, values))


def _claim(i: Any) -> Claim | str:
    if type(i) is str:
        return i
    text, refs, inferred, lt, observed = i
    if (
        type(text) is not str
        or not _strs(refs)
        or type(inferred) is not bool
        or type(observed) is not bool
        or not (lt is None or (_strs(lt) and len(lt) == 3))
    ):
        raise TypeError("not a claim")
    return Claim(text, refs, inferred, None if lt is None else Lifetime(*lt), observed)


def _citation(c: Any) -> Citation:
    ref, quote, raw = c
    if not (ref is None or type(ref) is str) or type(quote) is not str or type(raw) is not str:
        raise TypeError("not a citation")
    return Citation(ref, quote, raw)


def _note(path: str, d: Any) -> Note:
    meta, title, preamble, sections, footnotes, newline, bom = d
    if (
        type(meta) is not dict
        or not all(type(k) is str for k in meta)
        or type(title) is not str
        or type(footnotes) is not dict
        or not all(type(k) is str for k in footnotes)
        or newline not in ("\n", "\r\n")
        or type(bom) is not bool
    ):
        raise TypeError("not a note")
    parts: list[Section] = []
    for name, items in sections:
        if type(name) is not str:
            raise TypeError("not a section")
        parts.append(Section(name, [_claim(i) for i in items]))
    return Note(
        path,
        meta,
        title,
        [_claim(i) for i in preamble],
        parts,
        {k: _citation(c) for k, c in footnotes.items()},
        newline,
        bom,
    )
