"""The only tantivy user: the search index in `.memctl/index/`, always in step with the files.

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
import itertools
import json
import os
import re
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from pathlib import Path
from stat import S_ISREG
from typing import Any

import tantivy

from memctl.errors import LockTimeoutError, MemctlError
from memctl.model import Message
from memctl.raw import RawHeader, parse_session, parse_time
from memctl.store import atomic_write, stays_inside

# Bump whenever the schema or what goes into a document changes: readers then rebuild.
# 1: turns and notes; speaker in body; previous turns as window context; date words.
# 2: a `live` fast field for the default active-only filter.
# 3: filter values in one `key` field; window without frequencies; 32-bit session keys.
# 4: turn text is read from the raw file by byte span instead of being stored twice.
# 5: stat.json beside the manifest for the every-command check.
# 6: each active claim line is a document of its own (kind:claim) keyed by its citations;
#    turns carry a turn:N key so a claim can find the turns it cites.
# 7: claim lines carry cite: keys and notes link: keys (recall's citation/link graph).
# 8: turns carry an `asks` fast field: how much of the turn is questions (search ranks it).
# 9: turns carry a `pos` fast field, their number in the session (the answer lift).
# 10: turns carry a `kinds` field: the WordNet kinds of their words (memctl.kinds).
# 11: turns carry a `dated` fast field: a time word in the turn or the two before it.
# 12: a session's first turn stores its turns' token counts (`fb`, recall's feedback).
# 13: without `fb` again: the kept counts slowed every search more than they sped recall.
SCHEMA_VERSION = 13
INDEX_REL = ".memctl/index"
CURRENT = "current.json"
MANIFEST = "manifest.json"
STATS = "stat.json"  # folders and notes with their stat: all the every-command check reads
QUICK_VERSION = 2  # what stat.json holds; an older one only costs one full stat walk

# Fields a query plan may name.
BODY = "body"  # stemmed: a turn's speaker and text; a note's title, aliases, tags and body
WINDOW = "win"  # stemmed: the turn together with the turns before it (answers follow questions)
WHEN = "when"  # stemmed: date words ("May 2023 8 Monday"), so a question can name a date
EXACT = "exact"  # whole lowercased values: message/note/session ids, speakers, paths, tags
KINDS = "kinds"  # stemmed: kinds of a turn's words ("spain" -> country); list questions only

CONTEXT_TURNS = 2  # previous turns folded into a turn's window field
# A file whose mtime is this close to the scan could change again without its mtime moving
# (coarse filesystem clocks); it is hashed once more on the next sync, as git does.
RACY_NS = 50_000_000
_CITE = re.compile(r"raw/[^\s#)\]]+\.md#t\d+")
_FOOTREF = re.compile(r"\[\^[^\]\s]+\]")
_FOOTDEF = re.compile(r"^\[\^[^\]\s]+\]:.*$\n?", re.MULTILINE)
_HEADING1 = re.compile(r"^#\s+(.+)$", re.MULTILINE)
_WIKILINK = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]")
_BROKEN = (OSError, ValueError, KeyError, TypeError, IndexError, RuntimeError)

_ANALYZER = (
    tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
    .filter(tantivy.Filter.lowercase())
    .filter(tantivy.Filter.remove_long(40))
    .filter(tantivy.Filter.stemmer("english"))
    .build()
)
_EXACT_ANALYZER = (
    tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.raw()).filter(tantivy.Filter.lowercase()).build()
)


def analyze(text: str) -> list[str]:
    """Tokens exactly as the stemmed fields index them (lowercase, English stemming)."""
    return list(_ANALYZER.analyze(text))


_BREAK = "zqxjzqxjzqxj"  # a token between texts: one token, as the analyzer keeps it


def token_counts(texts: list[str]) -> Counter[str]:
    """For each token `analyze` gives, in how many of `texts` it is, with one analyzer call
    for all of them (recall's feedback counts, memctl.recall.words.turn_counts).

    Relevance feedback reads every turn of two sessions (~170 on a large vault); a call per
    turn cost a third more than one over the lot. The analyzer tokenizes, lowercases and
    stems each token on its own, so the texts joined by a break token give each text's
    tokens between the breaks. Should a text itself hold the break token, the count of
    groups shows it, and each text is analyzed alone instead.
    """
    if len(texts) < 2:
        return Counter(itertools.chain.from_iterable(set(analyze(t)) for t in texts))
    toks = analyze(f" {_BREAK} ".join(texts))
    groups: list[frozenset[str]] = []
    at = 0
    while True:  # cut at the breaks with list.index, in C, not a test per token
        try:
            end = toks.index(_BREAK, at)
        except ValueError:
            groups.append(frozenset(toks[at:]))
            break
        groups.append(frozenset(toks[at:end]))
        at = end + 1
    if len(groups) != len(texts):
        return Counter(itertools.chain.from_iterable(set(analyze(t)) for t in texts))
    return Counter(itertools.chain.from_iterable(groups))  # in C, over each text's tokens


class IndexBroken(Exception):
    """The index on disk cannot be read; the caller repairs it with `repair()`."""


def _is_broken(exc: BaseException) -> bool:
    # pyo3 surfaces Rust panics as PanicException, a BaseException subclass
    return isinstance(exc, _BROKEN) or type(exc).__name__ == "PanicException"


# ---- results ------------------------------------------------------------------------------


@dataclass
class SyncReport:
    """What a sync did; `notices` are one-liners for the CLI to print on stderr."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    rebuilt: bool = False
    busy: bool = False  # a writer holds the vault lock: the last commit was searched
    notices: list[str] = field(default_factory=list)
    turns: int = 0  # documents written
    notes: int = 0
    skipped: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class ReindexResult:
    """`memctl reindex`: what the fresh index holds and what it cost."""

    files: int
    turns: int
    notes: int
    skipped: list[str]
    seconds: float
    index_bytes: int

    def to_json(self) -> dict[str, Any]:
        return {
            "files": self.files,
            "turns": self.turns,
            "notes": self.notes,
            "skipped": self.skipped,
            "seconds": round(self.seconds, 3),
            "index_bytes": self.index_bytes,
        }


# ---- schema -------------------------------------------------------------------------------

KEY = "key"  # exact filter values, one field for all: "kind:turn", "user:dana", "path:raw/..."


def _schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    # one field for every filter value keeps one fieldnorm byte per doc instead of eight
    sb.add_text_field(KEY, tokenizer_name="raw", index_option="basic")
    # Everything shown for a hit, as one JSON blob: a text field is always indexed in tantivy,
    # while a bytes field can be stored only.
    sb.add_bytes_field("doc", stored=True)
    sb.add_text_field(BODY, tokenizer_name="en", index_option="position")
    # presence is enough in the window (same recall as with frequencies, smaller postings)
    sb.add_text_field(WINDOW, tokenizer_name="en", index_option="basic")
    sb.add_text_field(WHEN, tokenizer_name="en", index_option="basic")
    sb.add_text_field(EXACT, tokenizer_name="exact", index_option="basic")
    # each kind once per turn, so presence is all there is to record
    sb.add_text_field(KINDS, tokenizer_name="en", index_option="basic")
    sb.add_integer_field("ts", indexed=True, fast=True)
    sb.add_unsigned_field("sess", fast=True)
    # 1 for turns and active notes: the default "active only" filter is checked on the top
    # candidates instead of intersecting the query with a term every document has
    sb.add_unsigned_field("live", fast=True)
    # percent of a turn's sentences that are questions (memctl.search.W_ASK)
    sb.add_unsigned_field("asks", fast=True)
    # a turn's number in its session: the turn after a question is found among the candidates
    sb.add_unsigned_field("pos", fast=True)
    # 1 when the turn or one of the two before it has a time word (memctl.search.W_DATED)
    sb.add_unsigned_field("dated", fast=True)
    return sb.build()


SCHEMA = _schema()


def _register(index: tantivy.Index) -> None:
    index.register_tokenizer("en", _ANALYZER)
    index.register_tokenizer("exact", _EXACT_ANALYZER)


def _sess_key(path: str) -> int:
    # 32 bits bitpack to 4 bytes a doc; a collision only merges two sessions' blend scores
    return int.from_bytes(hashlib.blake2b(path.encode(), digest_size=4).digest(), "big")


_ENCODER = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # reused: 2x faster
_JSTR: Any = json.encoder.encode_basestring  # type: ignore[attr-defined]  # _ENCODER's own


def _dumps(data: dict[str, Any]) -> bytes:
    return _ENCODER.encode(data).encode("utf-8", "surrogatepass")


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December")  # fmt: skip
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def _date_words(dt: datetime) -> str:
    # strftime is locale-dependent and slow; names are spelled out for English stemming
    return f"{_MONTHS[dt.month - 1]} {dt.year} {dt.day} {_DAYS[dt.weekday()]}"


# ---- documents from files -----------------------------------------------------------------


_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def asks(text: str) -> int:
    """Percent of a turn's sentences that end in a question mark.

    "Cool! What type of music do you play?" carries the words of a question about music
    without saying anything; the turn that answers it does (and its window already holds
    the question's words), so search ranks turns that mostly ask lower.
    """
    parts = [p for p in _SENTENCE.split(text.strip()) if p]
    if not parts:
        return 0
    return round(100 * sum(p.endswith("?") for p in parts) / len(parts))


# Words that date what a turn tells: "yesterday", "last week", "two years ago", "in June".
# "may" and "march" are verbs as often as months, so they are left out.
TIME_WORDS = frozenset(
    """yesterday today tonight tomorrow ago recent recently lately week weeks weekly weekend
    weekends month months monthly year years yearly monday tuesday wednesday thursday friday
    saturday sunday mondays tuesdays wednesdays thursdays fridays saturdays sundays january
    february april june july august september october november december""".split()
)
# punctuation and digits become spaces, so "Sunday's" and "(yesterday)" split into words
_NOT_WORD = str.maketrans(dict.fromkeys("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~0123456789‘’“”…—–", " "))


def dated(text: str) -> bool:
    """Whether a turn says when: it has one of TIME_WORDS as a word of its own.

    "When did Melanie start her pottery class?" is answered by "I signed up for a pottery
    class last week", and the turns that say more about pottery without a time do not
    answer it; the index records this per turn (with the two turns before it, the same
    exchange) so search can lift those turns for a question that asks when.
    """
    return not TIME_WORDS.isdisjoint(text.lower().translate(_NOT_WORD).split())


def _content_spans(data: bytes, contents: list[bytes]) -> list[tuple[int, int] | None]:
    """Byte span of each turn's content in a raw file, or None where it cannot be trusted.

    A section is heading, metadata line, blank line, content, blank line; the next section
    starts with "## tN+1 · " at a line start, which content can never do unescaped. So a
    turn's content is the len(content) bytes before the blank line that precedes the next
    heading. Each span is checked byte for byte; escaped content is never used by span.
    """
    out: list[tuple[int, int] | None] = []
    pos = data.find(b"\n## t1 \xc2\xb7 ")
    last = len(contents)
    for n, content in enumerate(contents, 1):
        if pos < 0:
            out.append(None)
            continue
        nxt = data.find(b"\n## t%d \xc2\xb7 " % (n + 1), pos + 1) if n < last else len(data) - 1
        end = nxt - 1
        start = end - len(content)
        ok = nxt > 0 and start > pos and data[start:end] == content and b"## t" not in content
        out.append((start, end) if ok else None)
        pos = nxt
    return out


def _turn_docs(rel: str, text: str, data: bytes, st: tuple[int, int]) -> Iterator[tantivy.Document]:
    header, messages = parse_session(text, rel)
    return _session_docs(rel, data, header, messages, st)


def _session_docs(
    rel: str, data: bytes, header: RawHeader, messages: list[Message], st: tuple[int, int]
) -> Iterator[tantivy.Document]:
    """One document per turn, made lazily so a 100k-turn session never exists twice in RAM."""
    from memctl.kinds import kinds_text  # the table is read only by a process that indexes

    contents = [m.content.encode("utf-8", "surrogatepass") for m in messages]
    spans = _content_spans(data, contents)
    sess = _sess_key(rel)
    path_key, user_key, scope_key = f"path:{rel}", f"user:{header.user}", f"scope:{header.scope}"
    said: list[str] = []
    dates: list[bool] = []  # whether each turn so far has a time word of its own
    ts = parse_time(header.started) if isinstance(header.started, str) else None
    # The stored blob is `_dumps` of {kind, ref, session, speaker, role, user, scope,
    # span | text, id?, timestamp?}, spelled out from pieces that are the same for the whole
    # session: JSON-encoding a dict per turn was a tenth of ingest's indexing cost.
    ref_open = '{"kind":"turn","ref":' + _JSTR(f"{rel}#t")[:-1]
    session_j = '","session":' + _JSTR(header.session) + ',"speaker":'
    owner_j = ',"user":' + _JSTR(header.user) + ',"scope":' + _JSTR(header.scope)
    stat_j = f",{st[0]},{st[1]}]"
    enc: dict[str, str] = {}
    days: dict[date, str] = {}
    for n, m in enumerate(messages, 1):
        speaker = m.name or m.role
        line = f"{speaker}: {m.content}"
        ts = parse_time(m.timestamp) or ts  # untimed turns take the time of the one before
        d = tantivy.Document()
        d.add_text(KEY, "kind:turn")
        d.add_text(KEY, path_key)
        d.add_text(KEY, "status:active")
        d.add_text(KEY, user_key)
        d.add_text(KEY, scope_key)
        d.add_text(KEY, "role:" + m.role)
        d.add_text(KEY, "speaker:" + speaker.lower())
        d.add_text(KEY, f"turn:{n}")
        if (speaker_j := enc.get(speaker)) is None:
            speaker_j = enc[speaker] = _JSTR(speaker)
        if (role_j := enc.get("\0" + m.role)) is None:
            role_j = enc["\0" + m.role] = ',"role":' + _JSTR(m.role)
        span = spans[n - 1]
        # a span keeps the text in the raw file only (the index would otherwise hold a second
        # copy); the file's stat tells a reader whether the span still points at this turn
        body = f',"span":[{span[0]},{span[1]}{stat_j}' if span else ',"text":' + _JSTR(m.content)
        blob = f"{ref_open}{n}{session_j}{speaker_j}{role_j}{owner_j}{body}"
        if m.id is not None:
            blob += ',"id":' + _JSTR(m.id)
        if m.timestamp:
            blob += ',"timestamp":' + _JSTR(m.timestamp)
        d.add_bytes("doc", (blob + "}").encode("utf-8", "surrogatepass"))
        d.add_text(BODY, speaker)
        d.add_text(BODY, m.content)
        d.add_text(WINDOW, "\n".join([*said[-CONTEXT_TURNS:], line]))
        if kinds := kinds_text(m.content):
            d.add_text(KINDS, kinds)
        d.add_text(EXACT, speaker)
        d.add_text(EXACT, header.session)
        if m.id is not None:
            d.add_text(EXACT, m.id)
        if ts is not None:
            day = ts.date()
            if (words := days.get(day)) is None:
                words = days[day] = _date_words(ts)
            d.add_text(WHEN, words)
            d.add_integer("ts", int(ts.timestamp()))
        d.add_unsigned("sess", sess)
        d.add_unsigned("live", 1)
        d.add_unsigned("asks", asks(m.content))
        d.add_unsigned("pos", n)
        dates.append(dated(m.content))
        d.add_unsigned("dated", int(any(dates[-CONTEXT_TURNS - 1 :])))
        said.append(line)
        yield d


def _as_datetime(value: Any) -> datetime | None:
    if isinstance(value, datetime):
        return parse_time(value.isoformat())
    if isinstance(value, date):
        return parse_time(value.isoformat())
    if isinstance(value, str):
        return parse_time(value)
    return None


def _strs(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [str(v) for v in value if v is not None]
    return [str(value)]


def _drop_heading(body: str) -> str:
    stripped = body.lstrip("\n")
    if stripped.startswith("# "):
        return stripped.split("\n", 1)[1] if "\n" in stripped else ""
    return body


def note_fields(rel: str, text: str, store_folders: dict[str, str]) -> dict[str, Any]:
    """What the index keeps of a note; a file without frontmatter is a human note."""
    meta: dict[str, Any] = {}
    body = text
    if text.startswith(("---\n", "---\r\n", "\ufeff---")):
        from memctl.notes import read_frontmatter  # yaml: only when a note is indexed

        with contextlib.suppress(MemctlError):
            meta, body = read_frontmatter(text, rel)
    top = rel.split("/", 1)[0] if "/" in rel else ""
    heading = _HEADING1.search(body)
    scope = str(meta.get("scope") or "team")
    stamp = meta.get("updated") or meta.get("created")
    return {
        "store": str(meta.get("store") or store_folders.get(top, top)),
        "title": str(
            meta.get("title") or (heading.group(1).strip() if heading else Path(rel).stem)
        ),
        "scope": scope,
        "status": str(meta.get("status") or "active").strip().lower(),
        "user": scope[5:] if scope.startswith("user:") else "",
        "when": _as_datetime(stamp),
        "timestamp": "" if stamp is None else str(stamp),
        "id": str(meta.get("id") or ""),
        "aliases": _strs(meta.get("aliases")),
        "tags": _strs(meta.get("tags")),
        "cites": list(dict.fromkeys(_CITE.findall(body))),
        "links": list(dict.fromkeys(_link_path(m) for m in _WIKILINK.findall(body))),
        # what a reader wants to see: the claims, without the title heading, footnote
        # markers and footnote definitions (the title and citations are shown apart)
        "text": _FOOTREF.sub("", _FOOTDEF.sub("", _drop_heading(body))).strip(),
    }


def _link_path(target: str) -> str:
    t = target.strip()
    return t if t.endswith(".md") else t + ".md"


def _note_doc(
    rel: str, text: str, store_folders: dict[str, str], f: dict[str, Any] | None = None
) -> tantivy.Document:
    f = f or note_fields(rel, text, store_folders)
    keys = " ".join([f["title"], *f["aliases"], *f["tags"]])
    d = tantivy.Document()
    d.add_text(KEY, "kind:note")
    d.add_text(KEY, f"path:{rel}")
    d.add_text(KEY, f"store:{f['store']}")
    d.add_text(KEY, f"status:{f['status']}")
    d.add_text(KEY, f"user:{f['user']}")
    d.add_text(KEY, f"scope:{f['scope']}")
    stored = {
        "kind": "note",
        "ref": rel,
        "store": f["store"],
        "title": f["title"],
        "status": f["status"],
        "user": f["user"],
        "scope": f["scope"],
        "timestamp": f["timestamp"],
        "cites": f["cites"],
        "links": f["links"],
        "text": f["text"],
    }
    for target in f["links"]:
        d.add_text(KEY, f"link:{target}")  # backlinks: which notes link to an entity
    d.add_bytes("doc", _dumps(stored))
    d.add_text(BODY, keys)
    d.add_text(BODY, f["text"])
    d.add_text(WINDOW, keys + "\n" + f["text"])
    for v in (f["id"], rel, f["title"], *f["aliases"], *f["tags"]):
        if v:
            d.add_text(EXACT, v)
    if f["when"] is not None:
        d.add_text(WHEN, _date_words(f["when"]))
        d.add_integer("ts", int(f["when"].timestamp()))
    d.add_unsigned("sess", _sess_key(rel))
    d.add_unsigned("live", int(f["status"] == "active"))
    return d


_RAW_DAY = re.compile(r"^raw/(\d{4})/(\d{2})/(\d{2})/")


def claim_docs(rel: str, text: str, f: dict[str, Any]) -> Iterator[tantivy.Document]:
    """One document per active claim line, keyed by the turns it cites.

    A claim restates in the third person, with names and dates, what a turn said in the
    first person ("Melanie signed up for a pottery class" for "I just signed up for one!"),
    so a question phrased like the claim finds the turn through it (memctl.search), and
    recall reads a note's standing lines (goals, decisions, preferences) without opening
    the file. Lines without a citation, and History, are no keys: they point at no turn.
    """
    from memctl.notes import parse_note, strip_links

    try:
        note = parse_note(text, rel)
    except MemctlError:
        return
    keys = [
        "kind:claim",
        f"path:{rel}",
        f"store:{f['store']}",
        f"status:{f['status']}",
        f"user:{f['user']}",
        f"scope:{f['scope']}",
    ]
    sess = _sess_key(rel)
    live = int(f["status"] == "active")
    for section, c in note.active_claims():
        cites = [(cit.ref, cit.quote) for cit in note.citations(c) if cit.ref]
        body = " ".join(strip_links(c.text).split())
        if not cites or not body:
            continue
        days = sorted(m.group(0) for r, _ in cites if (m := _RAW_DAY.match(r)))
        when = f["when"]
        if days:
            when = datetime(
                int(days[-1][4:8]), int(days[-1][9:11]), int(days[-1][12:14]), tzinfo=UTC
            )
        d = tantivy.Document()
        for k in keys:
            d.add_text(KEY, k)
        d.add_text(KEY, "section:" + section.name.casefold())
        for r, _ in cites:
            d.add_text(KEY, f"cite:{r}")  # which claims cite a turn
        stored = {
            "kind": "claim",
            "ref": rel,
            "store": f["store"],
            "title": f["title"],
            "status": f["status"],
            "user": f["user"],
            "scope": f["scope"],
            "section": section.name,
            "text": body,
            "inferred": c.inferred,
            "cites": [r for r, _ in cites],
            "quotes": [q for _, q in cites],
            "timestamp": when.date().isoformat() if when is not None else "",
        }
        d.add_bytes("doc", _dumps(stored))
        d.add_text(BODY, body)
        d.add_text(WINDOW, body)
        if when is not None:
            d.add_integer("ts", int(when.timestamp()))
        d.add_unsigned("sess", sess)
        d.add_unsigned("live", live)
        yield d


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
                        out[prefix + name] = [st.st_mtime_ns, st.st_size]
                    elif e.is_dir(follow_symlinks=False):
                        if dirs is not None:
                            dirs[prefix + name] = e.stat(follow_symlinks=False).st_mtime_ns
                        stack.append((f"{prefix}{name}/", e.path))
                except OSError:
                    continue
    return out


def _by_folder(rel: str) -> bool:
    """Files the quick check leaves to their folder's mtime: raw sessions (see the top)."""
    return rel.startswith("raw/")


def _read(path: Path) -> tuple[str, bytes, tuple[int, int]] | None:
    """sha256, bytes and the (mtime_ns, size) of exactly those bytes (fstat, not a re-stat)."""
    try:
        with path.open("rb") as fh:
            st = os.fstat(fh.fileno())
            data = fh.read()
    except OSError:
        return None
    return hashlib.sha256(data).hexdigest(), data, (st.st_mtime_ns, st.st_size)


def _entry(st: tuple[int, int], sha: str, now_ns: int) -> Entry:
    return (st[0], st[1], sha, int(now_ns - st[0] < RACY_NS))


class _Gen:
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
        with contextlib.suppress(*_BROKEN):
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
        _register(idx)
        return idx

    def size(self) -> int:
        return sum(p.stat().st_size for p in self.dir.iterdir() if p.is_file())


_UNREADABLE = "search index was unreadable; rebuilt it from the files"


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


def _current(root: Path) -> tuple[_Gen | None, str]:
    """The live generation, or None and the reason the index must be rebuilt."""
    path = root / INDEX_REL / CURRENT
    try:
        # read once per process while its stat holds: a recall asks a dozen times, and
        # current.json is only ever replaced by a rename (a new inode)
        data = _read_json_once(path)
    except FileNotFoundError:
        return None, "search index missing; built it from the files"
    except (OSError, ValueError):
        return None, _UNREADABLE
    if not isinstance(data, dict) or not isinstance(data.get("gen"), str):
        return None, _UNREADABLE
    if data.get("schema") != SCHEMA_VERSION:
        return None, (
            f"search index schema changed (v{data.get('schema')} -> v{SCHEMA_VERSION}); "
            "rebuilt it from the files"
        )
    gen = data["gen"]
    if not gen.startswith("g-") or "/" in gen or "\\" in gen:
        return None, _UNREADABLE
    return _Gen(root, gen), ""


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


def _shadow_home(vault: Any) -> Path:
    base = getattr(vault.config, "cache_dir", None)
    if base is None:
        base = Path(tempfile.gettempdir()) / f"memctl-{getpass.getuser()}"
    key = hashlib.sha256(str(Path(vault.root).resolve()).encode()).hexdigest()[:16]
    return Path(base) / "index" / key


def _home(vault: Any) -> Path:
    """Where this vault's index is read and written: the vault, or its shadow home."""
    root = Path(vault.root)
    return root if _writable(root) else _shadow_home(vault)


def _lock_of(vault: Any, home: Path) -> Any:
    if home == Path(vault.root):
        return vault.lock
    lock = _SHADOW_LOCKS.get(home)
    if lock is None:
        from memctl.store import VaultLock

        (home / ".memctl").mkdir(parents=True, exist_ok=True)
        lock = _SHADOW_LOCKS[home] = VaultLock(home)
    return lock


def _seed_shadow(vault: Any, home: Path) -> str | None:
    """Copy the vault's own generation to the shadow home when it is current and not
    copied yet; the caller holds the shadow's lock. Returns the notice to show."""
    root = Path(vault.root)
    own, _ = _current(root)
    if own is None:
        return None
    try:
        if not (_unchanged(own, root) or _same_bytes(own, root)):
            return None
    except _BROKEN:
        return None
    have, _ = _current(home)
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


def _same_bytes(gen: _Gen, root: Path) -> bool:
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
        got = _read(root / rel)
        if got is None or got[0] != old[2]:
            return False
    return True


@contextlib.contextmanager
def _locked(vault: Any, wait: bool, home: Path | None = None) -> Iterator[bool]:
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


# ---- building and updating ----------------------------------------------------------------


class _Writer:
    """Adds and deletes the documents of whole files through one tantivy writer."""

    def __init__(self, vault: Any, index: tantivy.Index, bulk: bool) -> None:
        self.folders = {sc.folder.strip("/"): name for name, sc in vault.config.stores.items()}
        # tantivy buffers documents up to this many bytes before writing a segment: it bounds
        # memory for a huge ingest (a 200 MB export must not need 200 MB more RAM).
        heap = 64_000_000 if bulk else 30_000_000
        self.writer = index.writer(heap_size=heap, num_threads=0 if bulk else 1)
        self.turns = 0
        self.notes = 0
        self.skipped: list[str] = []

    def add(self, rel: str, data: bytes, st: tuple[int, int]) -> None:
        try:
            text = data.decode("utf-8")
            if rel.startswith("raw/"):
                self.add_session(rel, data, *parse_session(text, rel), st)
            else:
                f = note_fields(rel, text, self.folders)
                self.writer.add_document(_note_doc(rel, text, self.folders, f))
                for d in claim_docs(rel, text, f):
                    self.writer.add_document(d)
                self.notes += 1
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
        for d in _session_docs(rel, data, header, messages, st):
            add(d)
        self.turns += len(messages)

    def delete(self, rel: str) -> None:
        self.writer.delete_documents_by_term(KEY, f"path:{rel}")

    def commit(self) -> None:
        self.writer.commit()
        self.writer.wait_merging_threads()


def _build_locked(vault: Any, home: Path | None = None) -> tuple[_Gen, _Writer, int]:
    """A new generation from every file, made current; older generations are removed.

    The files are the vault's; the index goes to `home` (the vault unless it is a shadow).
    """
    root: Path = vault.root
    home = root if home is None else home
    base = home / INDEX_REL
    base.mkdir(parents=True, exist_ok=True)
    gen = _Gen(home, f"g-{time.time_ns():x}-{os.getpid()}")
    gen.dir.mkdir()
    index = tantivy.Index(SCHEMA, path=str(gen.dir), reuse=False)
    _register(index)
    w = _Writer(vault, index, bulk=True)
    files: dict[str, Entry] = {}
    dirs: dict[str, int] = {}
    seen_ns = time.time_ns()
    for rel in sorted(scan(root, dirs)):
        got = _read(root / rel)
        if got is not None:
            w.add(rel, got[1], got[2])
            files[rel] = _entry(got[2], got[0], time.time_ns())
    w.commit()
    gen.write_files(files, dirs, seen_ns)
    atomic_write(base / CURRENT, json.dumps({"schema": SCHEMA_VERSION, "gen": gen.name}) + "\n")
    for old in base.iterdir():
        # a reader still searching an old generation keeps its open files (POSIX unlink)
        if old.is_dir() and old.name.startswith("g-") and old.name != gen.name:
            shutil.rmtree(old, ignore_errors=True)
    return gen, w, len(files)


def _apply_locked(
    vault: Any,
    gen: _Gen,
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
        got = _read(root / rel)
        if got is None:
            continue
        if old is not None and old[2] == got[0] and rel not in force:
            restat[rel] = _entry(got[2], got[0], now)  # touched, same bytes: remember the stat
        else:
            todo.append((rel, got[1], got[2], _entry(got[2], got[0], now)))
    gone = [rel for rel in files if rel not in seen]
    if feed is not None:
        gone += [rel for rel in feed.entries if rel not in seen and rel not in files]
    w = feed.writer if feed is not None else None
    if todo or gone or w is not None:
        if w is None:
            w = _Writer(vault, gen.open(), bulk=len(todo) > 100)
        for rel in gone:
            w.delete(rel)
        for rel, data, st, _ in todo:
            w.delete(rel)
            w.add(rel, data, st)
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
    else:
        gen.write_stats(dirs, seen_ns)  # folders may have moved, or stopped being racy


_QUICK: dict[str, tuple[Any, list[str], list[int], list[str], list[tuple[int, int]]]] = {}

# A process that checks the same vault again and again (MCP server, learning loop, any
# program holding a Vault) watches its folders (memctl.fsnotify) from its first check on:
# once a check has passed with every folder watched, no event since means nothing changed,
# and the ~1 stat per folder and note is skipped. Setting the watch costs about a third of
# a check on top of it, so a one-shot command (CLI, hook: `Vault.one_shot`) checks once
# and never sets one; should it check again, it watches from its second check.
_WATCH_LOCK = threading.Lock()
_WATCH: dict[str, tuple[Any, Any]] = {}  # stat.json path -> (its Watch, the stats it vouches for)
_CHECKS: dict[str, int] = {}  # stat.json path -> checks made in this process
WATCH_AFTER = 2  # the check at which a one-shot command starts to watch (any other: the first)


def _unchanged(gen: _Gen, root: Path, after: int = WATCH_AFTER) -> bool:
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
    from memctl import fsnotify

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


def sync(vault: Any, touched: Iterable[str] = ()) -> SyncReport:
    """Bring the index in step with the files; one stat walk when nothing changed."""
    report = SyncReport()
    root: Path = vault.root
    home = _home(vault)
    shadow = home != Path(root)
    force = {t for t in touched if _indexable(t)}
    gen, why = _current(home)
    rewrite = False
    if gen is not None and not force:
        try:
            if _unchanged(gen, root, WATCH_AFTER if vault.one_shot else 1):
                return report
        except _BROKEN:
            rewrite = True  # stat.json is unreadable: the full manifest settles it below
    # Rebuilding cannot be skipped, so wait for the lock; an update can: while a writer holds
    # the lock we search its last commit, and the writer indexes what it writes itself.
    # A shadow always waits: nobody else brings it up to date.
    with _locked(vault, wait=shadow or gen is None or bool(force), home=home) as got:
        if not got:
            report.busy = True
            return report
        if shadow and (seeded := _seed_shadow(vault, home)) is not None:
            report.notices.append(seeded)
            return report
        gen, why2 = _current(home)  # another process may have done the work meanwhile
        if gen is not None:
            try:
                _apply_locked(vault, gen, force, report, rewrite)
                if shadow and (report.added or report.updated or report.removed):
                    report.notices.append(
                        f"the vault is read-only: brought its search index up to date in {home}"
                    )
                return report
            except BaseException as exc:
                if not _is_broken(exc):
                    raise
                why2 = _UNREADABLE
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

    def __init__(self, vault: Any) -> None:
        """Call with the vault lock held, before the command writes anything."""
        self.vault = vault
        self.entries: dict[str, Entry] = {}
        self.writer: _Writer | None = None
        self._gen: _Gen | None = None
        self._off = False
        self.notices: list[str] = []
        self.dropped: set[str] = set()
        try:
            gen, why = _current(vault.root)
            if gen is None:  # a new vault, or a lost index: build it from what is there now
                gen, w, _ = _build_locked(vault)
                self.notices = [why, *(f"not searchable: {s}" for s in w.skipped)]
            gen.files  # noqa: B018 - an unreadable manifest turns the feed off here
            self._gen = gen
        except BaseException as exc:
            if not _is_broken(exc):
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
            self.entries[rel] = _entry(stat, hashlib.sha256(data).hexdigest(), time.time_ns())
        except BaseException as exc:
            if not _is_broken(exc):
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
            if not (_is_broken(exc) or isinstance(exc, MemctlError)):
                raise
            self.abort()
            return after_write(self.vault, touched)
        self.writer = None
        return report


def _indexable(rel: str) -> bool:
    return rel.endswith(".md") and not rel.endswith("INDEX.md")


def after_write(vault: Any, touched: list[str]) -> SyncReport:
    """Called by the vault inside its lock after every write: index what the command wrote.

    Never raises for the index's sake: the write has been committed by now, and a derived
    index that could not follow (a full disk, a broken index) is caught up by the next sync.
    """
    try:
        return sync(vault, touched)
    except BaseException as exc:
        if not (_is_broken(exc) or isinstance(exc, MemctlError)):
            raise
        return SyncReport(notices=[f"search index not updated ({exc}); the next search retries"])


def refresh(vault: Any, rels: Iterable[str]) -> SyncReport:
    """Re-index files a reader found changed in place, unless a writer holds the lock.

    The every-command check leaves raw sessions to their folders' mtimes (see the top);
    this is how one changed in place anyway catches up, once a search meets it.
    """
    force = {r for r in rels if _indexable(r)}
    home = _home(vault)
    with _locked(vault, wait=False, home=home) as got:
        gen, _ = _current(home)
        if not got or gen is None or not force:
            return SyncReport(busy=not got)
        report = SyncReport()
        try:
            _apply_locked(vault, gen, force, report)
        except BaseException as exc:
            if not _is_broken(exc):
                raise
            report.notices.append(f"search index not updated ({exc}); the next search retries")
        return report


def repair(vault: Any) -> str:
    """Rebuild after a reader found the index unreadable; returns the notice to show."""
    home = _home(vault)
    with _locked(vault, wait=True, home=home):
        _build_locked(vault, home)
    return _UNREADABLE


def rebuild(vault: Any, paths: Iterable[str | Path] | None = None) -> ReindexResult:
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
        with _locked(vault, wait=True):
            rep = sync(vault, rels)
            gen, _ = _current(vault.root)
        return ReindexResult(
            files=rep.added + rep.updated + rep.removed,
            turns=rep.turns,
            notes=rep.notes,
            skipped=rep.skipped,
            seconds=time.perf_counter() - start,
            index_bytes=gen.size() if gen is not None else 0,
        )
    with _locked(vault, wait=True):
        gen, w, n = _build_locked(vault)
    return ReindexResult(
        files=n,
        turns=w.turns,
        notes=w.notes,
        skipped=w.skipped,
        seconds=time.perf_counter() - start,
        index_bytes=gen.size(),
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


def _open_cached(gen: _Gen) -> tantivy.Index:
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


def view(vault: Any) -> tuple[str, int, int, int] | None:
    """What a search would see now: the live generation and its last commit (tantivy
    replaces meta.json by rename on every commit), or None when that cannot be told.

    Equal views give equal answers to the same query, so a caller may keep an answer
    that does not depend on the prompt (recall's newest standing lines) while it holds.
    """
    gen, _ = _current(_home(vault))
    if gen is None:
        return None
    try:
        st = (gen.dir / "meta.json").stat()
    except OSError:
        return None
    return str(gen.dir), st.st_ino, st.st_mtime_ns, st.st_size


class Reader:
    """A snapshot of the live index for one search: candidates, then the few docs shown."""

    def __init__(self, vault: Any) -> None:
        last: BaseException | None = None
        for attempt in range(4):
            # A writer in another process may retire segment files (or a whole generation)
            # between reading current.json and opening them: read again and retry.
            gen, why = _current(_home(vault))
            if gen is None:
                raise IndexBroken(why)
            try:
                self.searcher = _open_cached(gen).searcher()
                self.root = Path(vault.root)
                # raw sessions found changed in place (their stat moved since indexed)
                self.moved: set[str] = set()
                return
            except BaseException as exc:
                if not _is_broken(exc):
                    raise
                _OPEN.pop(str(gen.dir), None)
                last = exc
                time.sleep(0.02 * (attempt + 1))
        raise IndexBroken(str(last))

    def candidates(self, plan: Plan, n: int) -> list[Candidate]:
        """The top `n` matches by BM25, or the newest `n` when the plan has no terms."""
        try:
            f = plan.filters
            if f.statuses == ("active",) and not plan.empty:
                # Nearly everything is active: filter the top hits, and only if too many of
                # them were not, ask tantivy to filter the whole query.
                loose = replace(plan, filters=replace(f, statuses=()))
                hits = self._search(loose, n)
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
            if _is_broken(exc):
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
            if _is_broken(exc):
                raise IndexBroken(str(exc)) from None
            raise

    def is_speaker(self, name: str) -> bool:
        """Whether any turn in the index was said by `name` (lowercased)."""
        try:
            return self.searcher.doc_freq(KEY, f"speaker:{name}") > 0
        except BaseException as exc:
            if _is_broken(exc):
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
            if _is_broken(exc):
                raise IndexBroken(str(exc)) from None
            raise

    def stored(self, addr: Any) -> dict[str, Any]:
        """What was stored for the document at `addr`."""
        return self._fields_at(addr)

    def _fields_at(self, addr: Any) -> dict[str, Any]:
        blob = self.searcher.doc(addr).get_first("doc")
        return json.loads(blob.decode("utf-8", "surrogatepass")) if blob else {}

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
            if _is_broken(exc):
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


_READ_FLAGS = os.O_RDONLY | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0)


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
            if not frag.isprintable():  # else it holds none of _FLAT's characters
                frag = frag.translate(_FLAT)
            return frag, marks
    flat = " ".join(text.split())
    return (flat[: width - 1] + "…" if len(flat) > width else flat), ()
