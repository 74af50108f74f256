"""What the search index holds: its tantivy schema, analyzers, and the documents built
from turns, notes and claim lines. Bump SCHEMA_VERSION when any of it changes.
"""


from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import Any

import tantivy

from memctl.core.branches import rewound
from memctl.core.model import Message
from memctl.core.raw import RawHeader, parse_time
from memctl.errors import MemctlError

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
# 10: turns carry a `kinds` field: the WordNet kinds of their words (memctl.index.kinds).
# 11: turns carry a `dated` fast field: a time word in the turn or the two before it.
# 12: a session's first turn stores its turns' token counts (`fb`, recall's feedback).
# 13: without `fb` again: the kept counts slowed every search more than they sped recall.
# 14: a turn's tool calls (name and input strings, index.toolcalls) are searchable with it.
# 15: without the tools' names: "Write", "Read", "Edit" matched any prompt using the word.
# 16: a turn on a branch the user rewound carries `rewound`, the turn that replaced it.
# 18: a numbered speaker ("alice2", a sub-agent's second spawn) is its name's speaker too.
SCHEMA_VERSION = 18
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
BROKEN = (OSError, ValueError, KeyError, TypeError, IndexError, RuntimeError)

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


_NUMBERED = re.compile(r"([^\W\d_][\w.-]*?)[-_ ]?\d{1,3}")


def _numbered(speaker: str) -> str | None:
    """The name a numbered speaker is a spawn of ("alice2", "worker-3" -> "alice",
    "worker"): a question about alice means her second round too. None for any other."""
    m = _NUMBERED.fullmatch(speaker.lower())
    return m.group(1) if m is not None and m.group(1) not in ("user", "assistant", "tool") else None

def analyze(text: str) -> list[str]:
    """Tokens exactly as the stemmed fields index them (lowercase, English stemming)."""
    return list(_ANALYZER.analyze(text))


def analyzer_id() -> str:
    """Which tantivy build `analyze` runs on: what it gives may change with it (a cache of
    analyzed words, memctl.recall.termcache, keys on this)."""
    return str(getattr(tantivy, "__version__", "?"))


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


def is_broken(exc: BaseException) -> bool:
    # pyo3 surfaces Rust panics as PanicException, a BaseException subclass
    return isinstance(exc, BROKEN) or type(exc).__name__ == "PanicException"


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
    # percent of a turn's sentences that are questions (memctl.index.search.W_ASK)
    sb.add_unsigned_field("asks", fast=True)
    # a turn's number in its session: the turn after a question is found among the candidates
    sb.add_unsigned_field("pos", fast=True)
    # 1 when the turn or one of the two before it has a time word (memctl.index.search.W_DATED)
    sb.add_unsigned_field("dated", fast=True)
    return sb.build()


SCHEMA = _schema()


def register_analyzers(index: tantivy.Index) -> None:
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


def session_docs(
    rel: str, data: bytes, header: RawHeader, messages: list[Message], st: tuple[int, int]
) -> Iterator[tantivy.Document]:
    """One document per turn, made lazily so a 100k-turn session never exists twice in RAM."""
    from memctl.index.kinds import kinds_text  # the table is read only by a process that indexes
    from memctl.index.toolcalls import calls_text

    left = rewound(messages)
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
        # what a turn did is searchable with what it said ("uv run ty check" is the answer
        # to "how do we run the type checker?"); the stored text stays the content alone
        calls = calls_text(m.meta.get("tool_calls"), named=False) if m.meta else ""
        said_text = f"{m.content}\n{calls}" if calls else m.content
        line = f"{speaker}: {said_text}"
        ts = parse_time(m.timestamp) or ts  # untimed turns take the time of the one before
        d = tantivy.Document()
        d.add_text(KEY, "kind:turn")
        d.add_text(KEY, path_key)
        d.add_text(KEY, "status:active")
        d.add_text(KEY, user_key)
        d.add_text(KEY, scope_key)
        d.add_text(KEY, "role:" + m.role)
        d.add_text(KEY, "speaker:" + speaker.lower())
        if (base := _numbered(speaker)) is not None:
            d.add_text(KEY, "speaker:" + base)
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
        if (n - 1) in left:  # on a branch the user went back from (memctl.core.branches)
            blob += f',"rewound":{left[n - 1]}'
        d.add_bytes("doc", (blob + "}").encode("utf-8", "surrogatepass"))
        d.add_text(BODY, speaker)
        d.add_text(BODY, said_text)
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


# What the index takes of a frontmatter list (aliases, tags) and of each value: a note's
# metadata names it, so a few short words suffice; the bound keeps a nested structure a
# person (or a pull) wrote from being turned into megabytes of text.
_MAX_ITEMS = 64
_MAX_VALUE_CHARS = 300


def _one(value: Any) -> str | None:
    """A scalar as text, cut to the bound; a list or mapping is no name: None."""
    if value is None or isinstance(value, list | tuple | dict | set):
        return None
    return str(value)[:_MAX_VALUE_CHARS]


def _strs(value: Any) -> list[str]:
    items = value[:_MAX_ITEMS] if isinstance(value, list | tuple) else [value]
    return [s for s in map(_one, items) if s is not None]


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
        from memctl.core.notes import read_frontmatter  # yaml: only when a note is indexed

        with contextlib.suppress(MemctlError):
            meta, body = read_frontmatter(text, rel)
    top = rel.split("/", 1)[0] if "/" in rel else ""
    heading = _HEADING1.search(body)
    meta = {k: _one(v) if k not in ("aliases", "tags") else v for k, v in meta.items()}
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
        # the code base the note's work was done in (memctl.recall.project), "" for none
        "project": str(meta.get("project") or meta.get("project_id") or ""),
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


def note_doc(
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
        "project": f.get("project", ""),
    }
    if f.get("project"):
        d.add_text(KEY, f"project:{f['project']}")
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
    so a question phrased like the claim finds the turn through it (memctl.index.search), and
    recall reads a note's standing lines (goals, decisions, preferences) without opening
    the file. Lines without a citation, and History, are no keys: they point at no turn.
    """
    from memctl.core.notes import parse_note, strip_links

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
    if f.get("project"):
        keys.append(f"project:{f['project']}")
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
            "observed": c.observed,
            "cites": [r for r, _ in cites],
            "quotes": [q for _, q in cites],
            "timestamp": when.date().isoformat() if when is not None else "",
            "project": f.get("project", ""),
        }
        d.add_bytes("doc", _dumps(stored))
        d.add_text(BODY, body)
        d.add_text(WINDOW, body)
        if when is not None:
            d.add_integer("ts", int(when.timestamp()))
        d.add_unsigned("sess", sess)
        d.add_unsigned("live", live)
        yield d
