"""Kinds of nouns, from WordNet 3.0: "spain" -> european country nation state land ...

A list-shaped question names a kind ("What European countries has Maria been to?") and the
turn that answers names an instance ("Spain"), so the two share no word. The index gives each
turn a field of its words' kinds (memctl.index.KINDS) that only the kind noun of such a
question queries (memctl.index.search.list_kind). The table is memctl/data/kinds.txt, made by
scripts/gen_kinds.py (WordNet's license is beside it).

The table is sorted and read by binary search over a memory map, not loaded into a dict: a
hook that indexes three new turns looks up a few dozen words (well under a millisecond),
where parsing the 4.6 MB table would cost every such process tens of milliseconds. Nothing
imports this module until turns are indexed.
"""

from __future__ import annotations

import mmap
import re
from functools import lru_cache
from pathlib import Path

TABLE = Path(__file__).resolve().parent.parent / "data" / "kinds.txt"
_WORD = re.compile(r"[a-z]+")
# regular plural endings, tried in order when a word is not a noun of its own (WordNet's own
# morphology, after its list of irregular forms, which the table already holds)
_SUFFIXES = (("ies", "y"), ("ses", "s"), ("xes", "x"), ("ches", "ch"), ("shes", "sh"), ("s", ""))
_map: mmap.mmap | None = None


def _table() -> mmap.mmap:
    global _map
    if _map is None:
        with TABLE.open("rb") as f:
            _map = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    return _map


def _line(word: bytes) -> bytes | None:
    """The table's line for `word`, or None: a binary search over the sorted lines."""
    buf = _table()
    lo, hi = 0, len(buf)
    while lo < hi:
        mid = (lo + hi) // 2
        start = buf.rfind(b"\n", lo, mid) + 1 if mid > lo else lo
        if start < lo:
            start = lo
        end = buf.find(b"\n", start, hi)
        if end < 0:
            end = hi
        sp = buf.find(b" ", start, end)
        key = buf[start : sp if sp >= 0 else end]
        if key == word:
            return buf[start:end]
        if key < word:
            lo = end + 1
        else:
            hi = start
    return None


@lru_cache(maxsize=65536)
def kinds(word: str) -> tuple[str, ...]:
    """The kind words of a lowercase word taken as a noun: () if WordNet has no such noun."""
    if len(word) < 3 or not _WORD.fullmatch(word):
        return ()
    line = _line(word.encode("ascii"))
    if line is None:
        for suffix, repl in _SUFFIXES:
            if word.endswith(suffix):
                line = _line((word[: -len(suffix)] + repl).encode("ascii"))
                if line is not None:
                    break
    return tuple(line.decode("ascii").split()[1:]) if line else ()


def kinds_text(text: str) -> str:
    """The kinds of every word in `text`, each kind once: what a turn's KINDS field holds."""
    seen: dict[str, None] = {}
    for w in _WORD.findall(text.lower()):
        for k in kinds(w):
            seen[k] = None
    return " ".join(seen)
