"""Raw session files: the lossless layer. Messages in, markdown out, and exactly back again.

A raw file is YAML frontmatter, a title, then one section per turn:

    ## t3 · Dana · 2026-09-01 09:14
    <!-- memctl:turn {"role": "user", "id": "m3", ...} -->

    <the message content, verbatim>

The heading gives humans and Obsidian a readable anchor; the comment carries every field
of the source message as JSON so export can give it back byte for byte. A content line that
would read as a turn heading gets one extra leading backslash (and loses it on the way back),
so no message text can forge a turn boundary.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import json
import re
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from memctl.core.model import Message, speakers
from memctl.core.pasted import without_logs
from memctl.errors import MemctlError

SCHEMA = 1
_YAML_BREAKS = ("\x85", "\u2028", "\u2029")
_HEADING = re.compile(r"^## t(\d+) · [^\n]*$", re.MULTILINE)
_ESCAPED = re.compile(r"^(\\*)(## t\d+ · )", re.MULTILINE)
_UNESCAPE = re.compile(r"^\\(\\*## t\d+ · )", re.MULTILINE)
_META_PREFIX = "<!-- memctl:turn "
_META_SUFFIX = " -->"


@cache
def _yaml() -> tuple[Any, Any, Any]:
    """PyYAML, its dumper and its loader, imported on first use.

    Importing yaml costs ~23 ms, a tenth of a CLI search, which never reads a header.
    libyaml's dumper is ~3x and its loader ~8x faster than pure Python (reindexing reads
    every header); without libyaml the pure-Python classes give the same text.
    """
    import yaml

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    return yaml, dumper, loader


def load_yaml(text: str, path: str, first_line: int) -> Any:
    """YAML frontmatter (`text`, starting at line `first_line` of `path`), with no anchor or
    alias: an alias repeats a node without repeating its bytes, so a few hundred bytes of
    nested aliases expand into gigabytes once anything walks or prints the tree. memctl never
    writes one; a note or raw header that holds one is refused, naming the line. YAML errors
    are raised as YAML raises them."""
    yaml, _, loader = _yaml()
    if "&" in text or "*" in text:  # neither can start an anchor or alias without these
        with contextlib.suppress(yaml.YAMLError):  # the load below names it
            for tok in yaml.scan(text, Loader=loader):
                if isinstance(tok, yaml.AliasToken | yaml.AnchorToken):
                    line = first_line + tok.start_mark.line
                    raise MemctlError("YAML anchors and aliases are not allowed in frontmatter "
                                      "(a few nested aliases expand into gigabytes)", path, line)
    return yaml.load(text, Loader=loader)


# json.dumps builds a new encoder whenever it gets options; ingest encodes every message
# twice (turn comment, content hash), so two encoders are made once. Messages without
# `meta` (most of them) are spelled out directly with the encoder's own string escaper:
# the same bytes, in a third of the time.
_META_JSON = json.JSONEncoder(ensure_ascii=False).encode
_HASH_JSON = json.JSONEncoder(ensure_ascii=False, sort_keys=True).encode
_JSTR: Any = json.encoder.encode_basestring  # type: ignore[attr-defined]


@dataclass(frozen=True)
class RawHeader:
    """The frontmatter of a raw session file, i.e. what is known about the whole session."""

    session: str
    title: str
    source_format: str
    origin: str
    user: str
    scope: str
    started: str | None
    ended: str | None
    participants: tuple[str, ...]
    turns: int
    content_hash: str
    extra: tuple[tuple[str, Any], ...] = ()


def parse_time(value: str | None) -> datetime | None:
    """Best-effort parse of a source timestamp; sources disagree on formats, so never raise."""
    if not value:
        return None
    try:
        dt = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt


def slugify(text: str, limit: int = 48) -> str:
    """Filesystem- and URL-safe slug; ASCII only so paths behave the same on every OS."""
    norm = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()
    slug = re.sub(r"[^a-zA-Z0-9]+", "-", norm).strip("-").lower()
    return slug[:limit].rstrip("-") or "session"


# Harness markup around what a person typed: Claude Code's <command-name>, <bash-input>,
# <local-command-stdout>, <ide_opened_file>, <system-reminder> ... (a tag with - or _ in it,
# which no prose or HTML a person writes is likely to hold), and its interruption notes.
_MARKUP = re.compile(
    r"<([a-z][a-z0-9]*(?:[-_][a-z0-9]+)+)\b[^>]*>.*?</\1\s*>"
    r"|</?[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+\b[^>]*/?>"
    r"|\[Request interrupted by user[^\]]*\]",
    re.DOTALL,
)


def spoken(text: str) -> str:
    """What a person said in a message, without the harness markup around it.

    Titles and file names are made of these words: a session that starts with `/clear`
    or an opened file is named after the first thing its person actually asked.
    """
    if "<" not in text and "[Request" not in text:
        return text
    return _MARKUP.sub(" ", text)


def first_words(messages: list[Message]) -> str:
    """The first user message's spoken words (markup-only messages are passed over).

    Neither a pasted log nor a chat app's settings node (ChatGPT's `user_editable_context`,
    its own preamble around the person's profile) is what anyone asked: titles and file names
    are never made of them.
    """
    # A sub-agent's prompt written inline (`isSidechain`) is the orchestrating agent's, not the
    # person's: it names only a transcript that is all sub-agent (the sub-agent's own file).
    for sidechain in (False, True):
        for m in messages:
            if (
                m.role == "user"
                and m.meta.get("content_type") != "user_editable_context"
                and (m.meta.get("isSidechain") is True) == sidechain
            ):
                words = without_logs(spoken(m.content))
                if words.strip():
                    return words
    return ""


def session_path(session_id: str, messages: list[Message], fallback_date: datetime) -> str:
    """Where a new session lives: derived only from what never changes when a session grows.

    The slug (the first user words) comes first so people can read the name; the whole sha1
    of the session id ends it, so no two sessions share a file. Sessions already on disk keep
    the name they were given (older vaults end in 6 hex digits): the vault finds a session by
    the id its header records, never by recomputing this.
    """
    first_ts = next((parse_time(m.timestamp) for m in messages if parse_time(m.timestamp)), None)
    day = (first_ts or fallback_date).astimezone(UTC)
    words = " ".join(first_words(messages).split()[:7])
    return f"raw/{day:%Y/%m/%d}/{slugify(words, 40)}-{name_digest(session_id)}.md"


def name_digest(session_id: str) -> str:
    """The hex digits a session's file name ends with (all 40 of the sha1)."""
    return hashlib.sha1(session_id.encode("utf-8", "surrogatepass")).hexdigest()


_NAME_DIGEST = re.compile(r"-([0-9a-f]{40}|[0-9a-f]{6})\.md$")


@lru_cache(maxsize=4096)  # recall labels each cited session's lines
def short_digest(raw_path: str) -> str | None:
    """The 6 hex digits a session goes by in labels and recall (`64628a#t11`).

    Both name shapes give the same 6 for the same id: older names end in those 6, newer
    ones in the whole sha1 that starts with them.
    """
    m = _NAME_DIGEST.search(raw_path)
    return m.group(1)[:6] if m else None


def file_name_id(stem: str, origin: str) -> str:
    """The id of a session whose transcript carries none, only its file name.

    Two folders may both hold a `chat.jsonl`; qualified by the file's real path (the whole
    sha1 of it) they never merge, and the same file read by another spelling of its path
    (relative, through a symlink) is still the same session. An id the transcript does carry
    (a Claude Code sessionId, a ChatGPT conversation id) stays as it is, so the same session
    read from another copy of its file grows in place.
    """
    return f"{stem}-{_path_hash(origin, 'sha1')}"


def legacy_file_name_ids(stem: str, origin: str) -> tuple[str, ...]:
    """Ids older memctl gave the same file-name session, newest rule first: the bare stem
    (the first folder's `chat.jsonl`), then stem-<8 hex of sha256(path)> (any later one)."""
    return (f"{stem}-{_path_hash(origin, 'sha256')[:8]}", stem)


_OTHER_HOME = re.compile(r"^/(?:var/)?(?:home/[^/]+|Users/[^/]+|root)/([^\0]+?)/?$")


def portable_path(path: str, root: Path | None, home: Path | None) -> str:
    """A path as a raw file may record it: raw files are committed and shared, so never this
    machine's absolute path. Inside the vault it is vault-relative, under the home folder
    `~/...` (Claude Code's `~/.claude/projects/<project>/...` among them), as is a path under
    another user's home folder (`/home/<name>/`, `/Users/<name>/`), elsewhere the file's
    name alone. Something that is not a file path (`<stdin>`) stays as it is."""
    if not path or path.startswith("<"):
        return path
    try:
        where = Path(path).expanduser().resolve()
    except (OSError, RuntimeError, ValueError):
        return Path(path).name or path
    for base, prefix in ((root, ""), (home, "~/")):
        if base is None:
            continue
        try:
            rel = where.relative_to(Path(base).resolve())
        except (OSError, RuntimeError, ValueError):
            continue
        return prefix + rel.as_posix()
    # Someone's home on another machine (a teammate's session, a copied transcript): its
    # path below the home is the project's identity, and the user's name is left out.
    other = _OTHER_HOME.match(path) or _OTHER_HOME.match(where.as_posix())
    if other:
        return "~/" + other.group(1)
    return where.name or path


def portable_dir(path: str, home: Path | None) -> str:
    """A working directory as shared files record it (a raw header's `source_meta.cwd`, a
    project note's `cwd`): an absolute path becomes `~/...` under the home folder, else the
    folder's name alone; one already in that form stays, so reading it back and recording
    it again gives the same string on any machine."""
    if not path or not Path(path).is_absolute():
        return path
    return portable_path(path, None, home)


def local_dir(where: str | None, paths: Iterable[str], home: Path | None) -> str | None:
    """The absolute directory a portably recorded working directory names, as the
    transcript's own absolute paths (its tool calls) spell it: `~/code/app` or `app` ->
    `/home/dana/code/app`, so the session's files read relative to it on any machine.
    Without such a path, `~/...` is taken under this home folder; a bare name stays."""
    if not where or Path(where).is_absolute():
        return where
    tail = where[2:] if where.startswith("~/") else where
    for p in paths:
        i = p.find(f"/{tail}/")
        if i >= 0 and Path(p).is_absolute():
            return p[: i + len(tail) + 1]
    if where.startswith("~/") and home is not None:
        return str(Path(home) / tail)
    return where


def _path_hash(origin: str, algorithm: str) -> str:
    where = str(Path(origin).resolve()).encode("utf-8", "surrogateescape")
    return hashlib.new(algorithm, where).hexdigest()


def message_record(m: Message) -> dict[str, Any]:
    """The JSON form of a message used in turn comments, hashes and JSONL export."""
    rec: dict[str, Any] = {"role": m.role}
    if m.id is not None:
        rec["id"] = m.id
    if m.name is not None:
        rec["name"] = m.name
    if m.timestamp is not None:
        rec["timestamp"] = m.timestamp
    if m.meta:
        rec["meta"] = m.meta
    return rec


def _record_json(m: Message) -> str:
    """`message_record(m)` as JSON, keys in insertion order (the turn comment)."""
    if m.meta:
        return _META_JSON(message_record(m))
    out = '{"role": ' + _JSTR(m.role)
    if m.id is not None:
        out += ', "id": ' + _JSTR(m.id)
    if m.name is not None:
        out += ', "name": ' + _JSTR(m.name)
    if m.timestamp is not None:
        out += ', "timestamp": ' + _JSTR(m.timestamp)
    return out + "}"


def _sorted_record_json(m: Message) -> str:
    """`message_record(m)` as JSON with sorted keys (the content hash's canonical form)."""
    if m.meta:
        return _HASH_JSON(message_record(m))
    out = "{"
    if m.id is not None:
        out += '"id": ' + _JSTR(m.id) + ", "
    if m.name is not None:
        out += '"name": ' + _JSTR(m.name) + ", "
    out += '"role": ' + _JSTR(m.role)
    if m.timestamp is not None:
        out += ', "timestamp": ' + _JSTR(m.timestamp)
    return out + "}"


def content_hash(messages: list[Message]) -> str:
    """A digest of every field of every message, so any silent change is detectable."""
    h = hashlib.sha256()
    for m in messages:
        h.update(_sorted_record_json(m).encode())
        h.update(b"\0")
        h.update(m.content.encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return "sha256:" + h.hexdigest()


def _heading(n: int, m: Message) -> str:
    speaker = (m.name or m.role).replace("\n", " ")
    when = _heading_time(m.timestamp)
    role = "" if m.name is None or m.name == m.role else f" ({m.role})"
    return f"## t{n} · {speaker}{role}{when}"


def _heading_time(value: str | None) -> str:
    """The heading's " · YYYY-MM-DD HH:MM", as the source wrote it (no zone conversion).

    Formatting the fields directly is ~4x cheaper than strftime, which glibc would also
    leave unpadded for years before 1000; those rare years keep strftime's spelling.
    """
    ts = parse_time(value)
    if ts is None:
        return ""
    v = value.strip()  # type: ignore[union-attr]  # parse_time read it, so it is a str
    if (
        ts.year >= 1000
        and len(v) >= 16
        and v[4] == "-"
        and v[7] == "-"
        and v[10] in "T "
        and v[13] == ":"
    ):
        return f" · {v[:10]} {v[11:16]}"  # the usual layout: its fields, as written
    if ts.year < 1000:
        return f" · {ts:%Y-%m-%d %H:%M}"
    return f" · {ts.year}-{ts.month:02d}-{ts.day:02d} {ts.hour:02d}:{ts.minute:02d}"


def render_turn(n: int, m: Message) -> str:
    """One turn section; content is escaped only where it could be mistaken for a heading."""
    meta = _record_json(m).replace("-->", "--\\u003e")
    body = _ESCAPED.sub(r"\\\1\2", m.content) if "## t" in m.content else m.content
    return f"{_heading(n, m)}\n{_META_PREFIX}{meta}{_META_SUFFIX}\n\n{body}\n\n"


def header_data(h: RawHeader) -> dict[str, Any]:
    """The frontmatter as a mapping, exactly what reading the rendered header gives back."""
    data: dict[str, Any] = {
        "type": "raw-session",
        "schema": SCHEMA,
        "session": h.session,
        "title": h.title,
        "source": {"format": h.source_format, "origin": h.origin},
        "user": h.user,
        "scope": h.scope,
        "started": h.started,
        "ended": h.ended,
        "participants": list(h.participants),
        "turns": h.turns,
        "content_hash": h.content_hash,
    }
    data.update(dict(h.extra))
    return data


def render_header(h: RawHeader) -> str:
    """Frontmatter with a fixed key order so `git diff` of an appended session stays small."""
    data = header_data(h)
    # YAML reads NEL and the Unicode line/paragraph separators inside a quoted scalar as
    # line breaks; escape everything in the rare header that carries one, so it round-trips.
    text = json.dumps(data, ensure_ascii=False)
    readable = not any(ch in text for ch in _YAML_BREAKS)
    yaml, dumper, _ = _yaml()
    dumped = yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=readable, width=1000)
    return f"---\n{dumped}---\n"


def make_header(
    session: str,
    title: str,
    source_format: str,
    origin: str,
    user: str,
    scope: str,
    messages: list[Message],
    extra: dict[str, Any] | None = None,
) -> RawHeader:
    """Summarise messages into a header; every derived field is recomputed, never trusted."""
    stamps = [m.timestamp for m in messages if m.timestamp]
    return RawHeader(
        session=session,
        title=title,
        source_format=source_format,
        origin=origin,
        user=user,
        scope=scope,
        started=stamps[0] if stamps else None,
        ended=stamps[-1] if stamps else None,
        participants=tuple(speakers(messages)),
        turns=len(messages),
        content_hash=content_hash(messages),
        extra=tuple(sorted((extra or {}).items())),
    )


def render_session(header: RawHeader, messages: list[Message]) -> str:
    """The whole file; turn numbers start at 1 and never change once written."""
    title = header.title.replace("\n", " ")
    parts = [render_header(header), f"\n# {title}\n\n"]
    parts.extend(render_turn(i, m) for i, m in enumerate(messages, 1))
    return "".join(parts)


def split_frontmatter(text: str, path: str) -> tuple[dict[str, Any], str]:
    """Frontmatter dict and body; a file without valid frontmatter is a clear error."""
    if not text.startswith("---\n"):
        raise MemctlError("missing frontmatter (expected '---' on line 1)", path, 1)
    end = text.find("\n---\n", 3)
    if end < 0:
        raise MemctlError("unterminated frontmatter (no closing '---')", path, 1)
    yaml, _, _ = _yaml()
    try:
        data = load_yaml(text[4 : end + 1], path, 2) or {}
    except RecursionError:
        raise MemctlError("frontmatter nested too deeply", path, 2) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 2 if mark is not None else 1
        raise MemctlError(f"invalid YAML frontmatter: {exc}".splitlines()[0], path, line) from None
    if not isinstance(data, dict):
        raise MemctlError("frontmatter is not a mapping", path, 1)
    return data, text[end + 5 :]


def header_from_dict(data: dict[str, Any], path: str = "") -> RawHeader:
    """Inverse of render_header; unknown keys survive in `extra`.

    A hand-edited header of the wrong shape (`source: 1`, `turns: many`) is an error naming
    the file, not a crash.
    """
    known = {
        "type",
        "schema",
        "session",
        "title",
        "source",
        "user",
        "scope",
        "started",
        "ended",
        "participants",
        "turns",
        "content_hash",
    }
    source = data.get("source") or {}
    participants = data.get("participants") or ()
    turns = data.get("turns", 0)
    if not isinstance(source, dict):
        raise MemctlError("header field 'source' must be a mapping (format, origin)", path, 1)
    if isinstance(participants, str | dict) or not isinstance(participants, list | tuple):
        raise MemctlError("header field 'participants' must be a list", path, 1)
    if isinstance(turns, bool) or not isinstance(turns, int | str) or not str(turns).isdigit():
        raise MemctlError("header field 'turns' must be a whole number", path, 1)
    return RawHeader(
        session=str(data.get("session", "")),
        title=str(data.get("title", "")),
        source_format=str(source.get("format", "")),
        origin=str(source.get("origin", "")),
        user=str(data.get("user", "")),
        scope=str(data.get("scope", "")),
        started=data.get("started"),
        ended=data.get("ended"),
        participants=tuple(str(p) for p in participants),
        turns=int(turns),
        content_hash=str(data.get("content_hash", "")),
        extra=tuple(sorted((k, v) for k, v in data.items() if k not in known)),
    )


# Sessions this process has just rendered, so the index does not parse what ingest wrote.
# The newest one is always kept (ingest holds its text anyway); older ones only within a
# small character budget, oldest out, so a huge multi-session export still streams.
_PARSED: dict[tuple[str, str], tuple[RawHeader, list[Message]]] = {}
_PARSED_LIMIT = 4_000_000
_parsed_chars = 0


def remember_parsed(path: str, text: str, header: RawHeader, messages: list[Message]) -> None:
    """Record that `text` at `path` parses to header/messages (it was rendered from them)."""
    global _parsed_chars
    for key in [k for k in _PARSED if k[0] == path]:
        _parsed_chars -= len(key[1])
        del _PARSED[key]
    while _PARSED and _parsed_chars + len(text) > _PARSED_LIMIT:
        oldest = next(iter(_PARSED))
        _parsed_chars -= len(oldest[1])
        del _PARSED[oldest]
    _PARSED[(path, text)] = (header, list(messages))
    _parsed_chars += len(text)


def parse_session(text: str, path: str) -> tuple[RawHeader, list[Message]]:
    """Read a raw file back into messages exactly as they were ingested."""
    hit = _PARSED.get((path, text))
    if hit is not None:
        return hit[0], list(hit[1])
    data, body = split_frontmatter(text, path)
    header = header_from_dict(data, path)
    messages: list[Message] = []
    matches = list(_HEADING.finditer(body))
    body_line0 = text[: len(text) - len(body)].count("\n") + 1
    seen_pos = seen_lines = 0  # count newlines incrementally: a session can have 10k turns
    for i, match in enumerate(matches):
        n = int(match.group(1))
        seen_lines += body.count("\n", seen_pos, match.start())
        seen_pos = match.start()
        line = body_line0 + seen_lines
        if n != i + 1:
            raise MemctlError(f"turn t{n} out of order (expected t{i + 1})", path, line)
        end = matches[i + 1].start() if i + 1 < len(matches) else len(body)
        section = body[match.end() : end]
        if not section.startswith("\n" + _META_PREFIX):
            raise MemctlError(f"turn t{n} has no memctl:turn comment", path, line + 1)
        meta_end = section.find("\n", 1)
        meta_line = section[1 + len(_META_PREFIX) : meta_end]
        if not meta_line.endswith(_META_SUFFIX):
            raise MemctlError(f"turn t{n}: malformed memctl:turn comment", path, line + 1)
        try:
            rec = json.loads(meta_line[: -len(_META_SUFFIX)])
        except json.JSONDecodeError as exc:
            raise MemctlError(f"turn t{n}: bad turn metadata: {exc.msg}", path, line + 1) from None
        except RecursionError:
            msg = f"turn t{n}: turn metadata nested too deeply"
            raise MemctlError(msg, path, line + 1) from None
        if not isinstance(rec, dict) or not isinstance(rec.get("meta") or {}, dict):
            raise MemctlError(f"turn t{n}: turn metadata is not an object", path, line + 1)
        content = section[meta_end + 2 :]
        if not section[meta_end:].startswith("\n\n") or not content.endswith("\n\n"):
            raise MemctlError(f"turn t{n}: section layout damaged", path, line)
        content = content[:-2]
        if "## t" in content:
            content = _UNESCAPE.sub(r"\1", content)
        messages.append(
            Message(
                role=rec.get("role", ""),
                content=content,
                id=rec.get("id"),
                name=rec.get("name"),
                timestamp=rec.get("timestamp"),
                meta=rec.get("meta") or {},
            )
        )
    return header, messages


def read_header(text_head: str, path: str) -> dict[str, Any]:
    """Frontmatter only, from the first bytes of a file: cheap session lookups."""
    data, _ = split_frontmatter(text_head, path)
    return data


def now_utc() -> datetime:
    """One clock for the layer so tests can reason about dates."""
    return datetime.now(UTC)


# ---- turns cut back out of a session's text ----------------------------------------------

TURN_HEAD = re.compile(r"^## t(\d+) · ([^\n]*)$", re.MULTILINE)
META_LINE = re.compile(r"<!-- memctl:turn [^\n]*-->\n\n")


def turn_heads(text: str) -> list[int]:
    """Where each turn heading line starts: `TURN_HEAD.finditer` in effect, but the
    regex is tried only on lines that begin `## t`, found with str.find (a session of
    300 turns: 0.39 -> 0.16 ms)."""
    out: list[int] = []
    start = 0
    while True:
        if text.startswith("## t", start) and TURN_HEAD.match(text, start):
            out.append(start)
        at = text.find("\n## t", start)
        if at < 0:
            return out
        start = at + 1


def session_contents(text: str) -> Iterator[str]:
    """What each turn of a session's text says, in order: cut at the turn headings, after
    each one's metadata line, without parsing the messages (recall's Reader.contents; the
    index counts recall's feedback terms over this very cut)."""
    heads = [*turn_heads(text), len(text)]
    for at, nxt in itertools.pairwise(heads):
        m = META_LINE.match(text, text.find("\n", at) + 1)
        if m is not None and m.end() <= nxt:
            yield turn_body(text, m.end(), nxt)


def turn_body(text: str, start: int, end: int) -> str:
    """A turn's content between its metadata line and the next heading, unescaped."""
    body = text[start:end]
    body = body[:-2] if body.endswith("\n\n") else body.rstrip("\n")
    return _UNESCAPE.sub(r"\1", body) if "## t" in body else body


def title_from(messages: list[Message]) -> str:
    """A session's title when its transcript gives none: the first words the user said."""
    words = first_words(messages).split()
    title = " ".join(words[:10])
    return (title[:80] + ("…" if len(words) > 10 or len(title) > 80 else "")) or "Untitled session"
