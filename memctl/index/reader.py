"""Querying the index: filters and query plans to tantivy queries, hits back with their
turn text read from the raw file and a snippet.
"""


from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import tantivy

from memctl.core.raw import parse_session
from memctl.errors import MemctlError
from memctl.index.freshness import (
    Generation,
    current_generation,
    index_home,
)
from memctl.index.host import IndexedVault
from memctl.index.schema import (
    BODY,
    KEY,
    SCHEMA,
    IndexBroken,
    is_broken,
)

# ---- querying -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Filters:
    """Restrictions on hits; an empty tuple means any value."""

    kinds: tuple[str, ...] = ()
    stores: tuple[str, ...] = ()
    users: tuple[str, ...] = ()
    scopes: tuple[str, ...] = ()
    speakers: tuple[str, ...] = ()  # lowercased
    statuses: tuple[str, ...] = ()
    sections: tuple[str, ...] = ()  # claims only: casefolded section names
    cites: tuple[str, ...] = ()  # claims citing any of these turn refs
    links: tuple[str, ...] = ()  # notes linking to any of these note paths
    since: int | None = None  # epoch seconds, inclusive
    until: int | None = None  # epoch seconds, exclusive


@dataclass(frozen=True)
class Plan:
    """A query in index terms: weighted optional terms, required phrases, filters."""

    should: tuple[tuple[str, str, float], ...]  # (field, token, boost)
    phrases: tuple[tuple[str, ...], ...]  # analyzed tokens; each phrase must match in BODY
    filters: Filters = Filters()
    # phrases that score in BODY when present but are not required, with their boost
    near: tuple[tuple[tuple[str, ...], float], ...] = ()

    @property
    def empty(self) -> bool:
        return not self.should and not self.phrases


@dataclass(frozen=True)
class Candidate:
    """A matching document before it is loaded: enough to rank it."""

    score: float
    sess: int  # same value for every turn of one session
    addr: Any


@dataclass(frozen=True)
class Doc:
    """A loaded hit: what was stored for it plus a snippet with highlighted char ranges."""

    fields: dict[str, Any]
    snippet: str
    highlights: tuple[tuple[int, int], ...]


def _any_of(name: str, values: Sequence[str]) -> tantivy.Query:
    """Documents with any of these key values: the same set a term set query matches.

    A term set query gathers every document of each value into a bit set before the
    search starts: `scope:team` is most of the vault, and that cost ~0.3 ms of every
    filtered search (a recall makes six). A disjunction of term queries is walked lazily,
    only where the query's own terms lead it; it stays the faster form up to hundreds of
    values (bench on a 100k-turn vault), and a list past ANY_OF_TERMS keeps the set query.
    """
    keys = [f"{name}:{v}" for v in values]
    if len(keys) == 1:
        return tantivy.Query.term_query(SCHEMA, KEY, keys[0], index_option="basic")
    if len(keys) > ANY_OF_TERMS:
        return tantivy.Query.term_set_query(SCHEMA, KEY, keys)
    return tantivy.Query.boolean_query(
        [
            (tantivy.Occur.Should, tantivy.Query.term_query(SCHEMA, KEY, k, index_option="basic"))
            for k in keys
        ]
    )


ANY_OF_TERMS = 512  # filter values asked as one disjunction at most


def _key(value: str) -> tantivy.Query:
    return tantivy.Query.term_query(SCHEMA, KEY, value, index_option="basic")


@dataclass(frozen=True)
class _Not:
    """A filter that excludes what it matches."""

    query: tantivy.Query


_NOT_CLAIM = _Not(_key("kind:claim"))


def _filter_queries(f: Filters) -> list[tantivy.Query]:
    out = []
    for name, values in (
        ("kind", f.kinds),
        ("store", f.stores),
        ("user", f.users),
        ("scope", f.scopes),
        ("speaker", f.speakers),
        ("status", f.statuses),
        ("section", f.sections),
        ("cite", f.cites),
        ("link", f.links),
    ):
        if values:
            out.append(_any_of(name, values))
    if f.since is not None or f.until is not None:
        out.append(
            tantivy.Query.range_query(
                SCHEMA,
                "ts",
                tantivy.FieldType.Integer,
                lower_bound=f.since,
                upper_bound=f.until,
                include_upper=f.until is None,
            )
        )
    return out


def _phrase(tokens: Sequence[str]) -> tantivy.Query:
    if len(tokens) > 1:
        return tantivy.Query.phrase_query(SCHEMA, BODY, list(tokens))
    return tantivy.Query.term_query(SCHEMA, BODY, tokens[0])


def _text_query(plan: Plan, fields: tuple[str, ...] | None = None) -> tantivy.Query | None:
    should = [
        tantivy.Query.boost_query(tantivy.Query.term_query(SCHEMA, fld, tok), boost)
        if boost != 1.0
        else tantivy.Query.term_query(SCHEMA, fld, tok)
        for fld, tok, boost in plan.should
        if fields is None or fld in fields
    ]
    if fields is None or BODY in fields:
        should += [tantivy.Query.boost_query(_phrase(p), boost) for p, boost in plan.near]
    phrases = [_phrase(p) for p in plan.phrases]
    if not phrases:
        if not should:
            return None
        return tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in should])
    clauses = [(tantivy.Occur.Must, q) for q in phrases]
    if should:
        disj = tantivy.Query.boolean_query([(tantivy.Occur.Should, q) for q in should])
        clauses.append((tantivy.Occur.Should, disj))
    return tantivy.Query.boolean_query(clauses)


_OPEN: dict[str, tuple[tantivy.Index, tuple[int, int]]] = {}  # generation dir -> index, meta stat
# vault root -> the index built in memory when the disk had no room for a generation
IN_MEMORY: dict[str, tantivy.Index] = {}

# What a snapshot stored for a document, and how many documents hold a term, do not change
# while the snapshot is the live one. A resident process (memctl serve) recalls prompt after
# prompt over the same few hundred documents, and decoding their stored JSON was a twentieth
# of each recall. Keyed by the snapshot (generation dir and meta.json stat), so a commit
# starts afresh; bounded, so a long-lived process does not grow with the vault. The snapshot
# is part of each key, so a thread still reading an older one never fills in for the new.
_SNAPSHOT: list[object] = [None]
_DOCS: dict[tuple[object, int, int], dict[str, Any]] = {}
_DFS: dict[tuple[object, str, str], int] = {}
_CACHE_MAX = 20_000


def _same_snapshot(epoch: object) -> bool:
    """Is `epoch` the snapshot the caches hold? Moves them to it when it is not."""
    if epoch is None:
        return False
    if _SNAPSHOT[0] != epoch:
        _SNAPSHOT[0] = epoch
        _DOCS.clear()
        _DFS.clear()
    return True


def _open_cached(gen: Generation) -> tantivy.Index:
    """One tantivy Index per generation per process; reloaded when its meta.json moves."""
    st = (gen.dir / "meta.json").stat()
    key = str(gen.dir)
    stamp = (st.st_mtime_ns, st.st_size)
    hit = _OPEN.get(key)
    if hit is not None:
        if hit[1] != stamp:
            hit[0].reload()
            _OPEN[key] = (hit[0], stamp)
        return hit[0]
    idx = gen.open()
    _OPEN.clear()  # older generations are gone from disk; do not keep their files open
    _OPEN[key] = (idx, stamp)
    return idx


def view(vault: IndexedVault) -> tuple[str, int, int, int] | None:
    """What a search would see now: the live generation and its last commit (tantivy
    replaces meta.json by rename on every commit), or None when that cannot be told.

    Equal views give equal answers to the same query, so a caller may keep an answer
    that does not depend on the prompt (recall's newest standing lines) while it holds.
    """
    gen, _ = current_generation(index_home(vault))
    if gen is None:
        return None
    try:
        st = (gen.dir / "meta.json").stat()
    except OSError:
        return None
    return str(gen.dir), st.st_ino, st.st_mtime_ns, st.st_size


class Reader:
    """A snapshot of the live index for one search: candidates, then the few docs shown."""

    def __init__(self, vault: IndexedVault) -> None:
        self.root = Path(vault.root)
        # raw sessions found changed in place (their stat moved since indexed)
        self.moved: set[str] = set()
        self.epoch: object = None  # the snapshot searched (None: one held in memory)
        last: BaseException | None = None
        for attempt in range(4):
            # A writer in another process may retire segment files (or a whole generation)
            # between reading current.json and opening them: read again and retry.
            gen, why = current_generation(index_home(vault))
            if gen is None:
                if self._held(vault):
                    return
                raise IndexBroken(why)
            try:
                self.searcher = _open_cached(gen).searcher()
                self.epoch = (str(gen.dir), _OPEN[str(gen.dir)][1])
                IN_MEMORY.pop(str(vault.root), None)  # built on disk again: the copy goes
                return
            except BaseException as exc:
                if not is_broken(exc):
                    raise
                _OPEN.pop(str(gen.dir), None)
                last = exc
                time.sleep(0.02 * (attempt + 1))
        if self._held(vault):  # a broken generation, and no room on disk to build another
            return
        raise IndexBroken(str(last))

    def _held(self, vault: IndexedVault) -> bool:
        """Search the index built in memory (writer.in_memory), if this process holds one."""
        held = IN_MEMORY.get(str(vault.root))
        if held is not None:
            self.searcher = held.searcher()
        return held is not None

    def candidates(self, plan: Plan, n: int) -> list[Candidate]:
        """The top `n` matches by BM25, or the newest `n` when the plan has no terms."""
        try:
            f = plan.filters
            if f.statuses == ("active",) and not plan.empty:
                # Nearly everything is active: filter the top hits, and only if too many of
                # them were not, ask tantivy to filter the whole query.
                loose = replace(plan, filters=replace(f, statuses=()))
                hits: list[tuple[float, Any]] | None = self._search(loose, n)
                if hits:
                    live = self.searcher.fast_field_values("live", [a for _, a in hits])
                    kept = [h for h, ok in zip(hits, live, strict=True) if ok != 0]
                    hits = kept if len(kept) == len(hits) or len(hits) < n else None
                if hits is None:
                    hits = self._search(plan, n)
            else:
                hits = self._search(plan, n)
            if not hits:
                return []
            sess = self.searcher.fast_field_values("sess", [a for _, a in hits])
            return [
                Candidate(float(s), int(k or 0), a) for (s, a), k in zip(hits, sess, strict=True)
            ]
        except BaseException as exc:
            if is_broken(exc):
                raise IndexBroken(str(exc)) from None
            raise

    def _search(self, plan: Plan, n: int) -> list[tuple[float, Any]]:
        text = _text_query(plan)
        filters: list[tantivy.Query | _Not] = list(_filter_queries(plan.filters))
        if not plan.filters.kinds:
            # claim lines are keys to the turns they cite, never hits of their own
            filters.append(_NOT_CLAIM)
        clauses = [
            (tantivy.Occur.MustNot, f.query)
            if isinstance(f, _Not)
            else (tantivy.Occur.Must, tantivy.Query.const_score_query(f, 0.0))
            for f in filters
        ]
        if text is None:
            if not plan.empty:
                return []
            q = tantivy.Query.boolean_query(
                [(tantivy.Occur.Must, tantivy.Query.all_query()), *clauses]
            )
            hits = self.searcher.search(q, limit=n, count=False, order_by_field="ts").hits
            return [(0.0, a) for _, a in hits]
        text = tantivy.Query.boolean_query([(tantivy.Occur.Must, text), *clauses])
        return list(self.searcher.search(text, limit=n, count=False).hits)

    def asks(self, addrs: Sequence[Any]) -> list[int]:
        """Each document's `asks` share (0 for notes and claims)."""
        return self._fast("asks", addrs)

    def dated(self, addrs: Sequence[Any]) -> list[int]:
        """1 for each turn whose window has a time word (`index.dated`), else 0."""
        return self._fast("dated", addrs)

    def positions(self, addrs: Sequence[Any]) -> list[int]:
        """Each turn's number in its session (0 for notes and claims)."""
        return self._fast("pos", addrs)

    def _fast(self, name: str, addrs: Sequence[Any]) -> list[int]:
        if not addrs:
            return []
        try:
            return [int(v or 0) for v in self.searcher.fast_field_values(name, list(addrs))]
        except BaseException as exc:
            if is_broken(exc):
                raise IndexBroken(str(exc)) from None
            raise

    def is_speaker(self, name: str) -> bool:
        """Whether any turn in the index was said by `name` (lowercased)."""
        try:
            return self.searcher.doc_freq(KEY, f"speaker:{name}") > 0
        except BaseException as exc:
            if is_broken(exc):
                raise IndexBroken(str(exc)) from None
            raise

    def turns_at(self, refs: Sequence[str], filters: Filters) -> dict[str, Candidate]:
        """The turns at these refs (`raw/...md#tN`) that pass `filters`, by ref."""
        pairs = []
        for ref in refs:
            path, _, n = ref.partition("#t")
            if n.isdigit():
                pairs.append((path, int(n)))
        if not pairs:
            return {}
        try:
            any_of = tantivy.Query.boolean_query(
                [
                    (
                        tantivy.Occur.Should,
                        tantivy.Query.boolean_query(
                            [
                                (tantivy.Occur.Must, _key(f"path:{p}")),
                                (tantivy.Occur.Must, _key(f"turn:{n}")),
                            ]
                        ),
                    )
                    for p, n in pairs
                ]
            )
            clauses = [(tantivy.Occur.Must, any_of), (tantivy.Occur.Must, _key("kind:turn"))]
            clauses += [(tantivy.Occur.Must, q) for q in _filter_queries(filters)]
            q = tantivy.Query.boolean_query(clauses)
            hits = self.searcher.search(q, limit=len(pairs), count=False).hits
            if not hits:
                return {}
            sess = self.searcher.fast_field_values("sess", [a for _, a in hits])
            out: dict[str, Candidate] = {}
            for (_, a), k in zip(hits, sess, strict=True):
                ref = str(self._fields_at(a).get("ref", ""))
                out[ref] = Candidate(0.0, int(k or 0), a)
            return out
        except BaseException as exc:
            if is_broken(exc):
                raise IndexBroken(str(exc)) from None
            raise

    def stored(self, addr: Any) -> dict[str, Any]:
        """What was stored for the document at `addr`."""
        return self._fields_at(addr)

    def _fields_at(self, addr: Any) -> dict[str, Any]:
        # a copy: callers add the turn's text to what they get
        cached = _same_snapshot(self.epoch)
        key = (self.epoch, addr.segment_ord, addr.doc)
        if cached and (got := _DOCS.get(key)) is not None:
            return dict(got)
        blob = self.searcher.doc(addr).get_first("doc")
        fields = json.loads(blob.decode("utf-8", "surrogatepass")) if blob else {}
        if cached:
            if len(_DOCS) >= _CACHE_MAX:
                _DOCS.clear()
            _DOCS[key] = dict(fields)
        return fields

    def doc_freqs(self, field: str, terms: Sequence[str]) -> dict[str, int]:
        """How many documents of this snapshot hold each term of `field`."""
        if not _same_snapshot(self.epoch):
            return {t: self.searcher.doc_freq(field, t) for t in terms}
        out: dict[str, int] = {}
        for t in terms:
            k = _DFS.get((self.epoch, field, t))
            if k is None:
                k = self.searcher.doc_freq(field, t)
                if len(_DFS) >= _CACHE_MAX:
                    _DFS.clear()
                _DFS[(self.epoch, field, t)] = k
            out[t] = k
        return out

    def load(
        self, cands: Sequence[Candidate], plan: Plan, width: int = 200, snippets: bool = True
    ) -> list[Doc | None]:
        """Stored fields, the text and a highlighted snippet for each candidate, in order.

        A turn whose raw file is gone is left out (only possible when the caller skipped
        the sync, or a writer held the lock). Without `snippets` every snippet is empty.
        """
        try:
            gen = None
            snip_q = _text_query(plan, (BODY,)) if snippets else None
            if snip_q is not None:
                gen = tantivy.SnippetGenerator.create(self.searcher, snip_q, SCHEMA, BODY)
                gen.set_max_num_chars(width)
            fields = [self._fields(c) for c in cands]
        except BaseException as exc:
            if is_broken(exc):
                raise IndexBroken(str(exc)) from None
            raise
        texts = _turn_texts(self.root, fields, self.moved)
        out: list[Doc | None] = []
        for f, text in zip(fields, texts, strict=True):
            if text is None:
                out.append(None)
                continue
            f["text"] = text
            if not snippets:
                out.append(Doc(f, "", ()))
                continue
            snippet, marks = _snippet(gen, text, width)
            title = str(f.get("title") or "")
            if title and f.get("kind") == "note":
                # a note that matched more on its title than its body leads with the title,
                # so the snippet shows why it ranked
                head, head_marks = _snippet(gen, title, width)
                if len(head_marks) > len(marks):
                    lead = f"{head} — "
                    snippet = (lead + snippet)[:width]
                    shifted = ((a + len(lead), b + len(lead)) for a, b in marks)
                    marks = head_marks + tuple(m for m in shifted if m[1] <= len(snippet))
            out.append(Doc(f, snippet, marks))
        return out

    def _fields(self, c: Candidate) -> dict[str, Any]:
        return self._fields_at(c.addr)


_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)
               | getattr(os, "O_NONBLOCK", 0))  # a pipe planted for a session: no wait


def _turn_texts(root: Path, fields: list[dict[str, Any]], moved: set[str]) -> list[str | None]:
    """Each hit's text: stored for notes, read from the raw file by byte span for turns.

    A raw file whose stat moved since it was indexed is read the slow way and named in
    `moved`, for the caller to have it re-indexed.
    """
    out: list[str | None] = []
    parsed: dict[str, list[str] | None] = {}
    base = str(root)  # plain strings: pathlib's joins were a tenth of a search
    for f in fields:
        span = f.pop("span", None)
        ref = str(f.get("ref", ""))
        rel, _, anchor = ref.partition("#t")
        if span is None:
            gone = f.get("kind") == "turn" and not os.path.isfile(f"{base}/{rel}")  # noqa: PTH113
            out.append(None if gone else str(f.get("text", "")))
            continue
        try:
            # a file descriptor and one pread, not a buffered file object: ten hits a search
            fd = os.open(f"{base}/{rel}", _READ_FLAGS)
            try:
                st = os.fstat(fd)
                if (st.st_mtime_ns, st.st_size) == (span[2], span[3]):
                    data = os.pread(fd, span[1] - span[0], span[0])  # short only at EOF
                    out.append(data.decode("utf-8", "surrogatepass"))
                    continue
            finally:
                os.close(fd)
        except (OSError, UnicodeDecodeError):
            pass
        # the file moved on since it was indexed: read the turn the slow way
        moved.add(rel)
        if rel not in parsed:
            try:
                text = (root / rel).read_bytes().decode("utf-8")  # exact: no newline mapping
                _, messages = parse_session(text, rel)
                parsed[rel] = [m.content for m in messages]
            except (OSError, MemctlError, UnicodeDecodeError):
                parsed[rel] = None
        contents = parsed[rel]
        n = int(anchor) if anchor.isdigit() else 0
        out.append(contents[n - 1] if contents is not None and 0 < n <= len(contents) else None)
    return out


_FLAT = {ord(c): " " for c in "\n\r\t\v\f"}  # one char for one: highlight offsets hold


# what a fragment may grow by at either edge: punctuation glued to its first or last word
_EDGE_AFTER = re.compile(r"\S{1,16}(?=\s|\Z)")
_EDGE_BEFORE = re.compile(r"(?:\A|(?<=\s))\S{1,16}\Z")


def _whole_words(
    text: str, frag: str, marks: tuple[tuple[int, int], ...]
) -> tuple[str, tuple[tuple[int, int], ...]]:
    """tantivy cuts a fragment at its first and last token, so what is glued to them is lost:
    `[REDACTED:stripe-key]` showed as `[REDACTED:stripe-key`, `repo!` as `repo`. Grow the
    fragment over those characters, up to the whitespace around it in the text."""
    at = text.find(frag)
    if at < 0:
        return frag, marks
    end = at + len(frag)
    after = _EDGE_AFTER.match(text, end)
    before = _EDGE_BEFORE.search(text, max(0, at - 16), at)
    lead = before.group() if before else ""
    if not lead and not after:
        return frag, marks
    frag = lead + frag + (after.group() if after else "")
    shift = len(lead)
    return frag, tuple((a + shift, b + shift) for a, b in marks)


def _snippet(gen: Any, text: str, width: int) -> tuple[str, tuple[tuple[int, int], ...]]:
    """A window of `text` around the matches, with char ranges to highlight."""
    if gen is not None and text:
        doc = tantivy.Document()
        doc.add_text(BODY, text)
        sn = gen.snippet_from_doc(doc)
        frag = sn.fragment()
        ranges = sn.highlighted()
        if frag and ranges:
            if frag.isascii():  # a byte is a char: the offsets are the ranges themselves
                n = len(frag)
                marks = tuple((min(r.start, n), min(r.end, n)) for r in ranges)
            else:
                raw = frag.encode("utf-8")
                marks = tuple(
                    (
                        len(raw[: r.start].decode("utf-8", "ignore")),
                        len(raw[: r.end].decode("utf-8", "ignore")),
                    )
                    for r in ranges
                )
            frag, marks = _whole_words(text, frag, marks)
            if not frag.isprintable():  # else it holds none of _FLAT's characters
                frag = frag.translate(_FLAT)
            return frag, marks
    flat = " ".join(text.split())
    return (flat[: width - 1] + "…" if len(flat) > width else flat), ()
