"""Transcript readers: turn chat logs in the formats people actually have into `Transcript`s.

Readers are strict (an ingest is all-or-nothing, so a bad line must fail loudly with its
line number) and lossless for content (the vault promises verbatim text). Everything a
caller needs is re-exported here; the per-format modules are implementation detail.
"""

from __future__ import annotations

import io
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from memctl.core.model import Transcript
from memctl.errors import InputError
from memctl.ingest.formats import chatgpt, claude_code, jsonl, openai, text
from memctl.ingest.formats._common import Replay, Source, binary_error, utf8_error

__all__ = ["FORMATS", "detect_format", "iter_files", "read_transcripts"]

FORMATS = ("jsonl", "openai", "claude_code", "chatgpt", "text")
HEAD_SIZE = 64 * 1024
LINE_LIMIT = 512 * 1024 * 1024  # how far sniffing reads for the end of one JSONL line

_READERS: dict[str, Callable[[BinaryIO, Source], Iterator[Transcript]]] = {
    "jsonl": jsonl.read,
    "openai": openai.read,
    "claude_code": claude_code.read,
    "chatgpt": chatgpt.read,
    "text": text.read,
}
_UNKNOWN = "unknown transcript format; use --format {" + ",".join(FORMATS) + "}"
_JSONL_SUFFIXES = frozenset({".jsonl", ".ndjson"})
_TEXT_SUFFIXES = frozenset({".md", ".markdown", ".txt", ".text", ".log"})
_CLAUDE_BOOKKEEPING = frozenset(
    {"summary", "system", "file-history-snapshot", "queue-operation", "progress"}
)
# Fallbacks for a head that cuts a large first element short: key names outside strings.
_KEY_MAPPING = re.compile(r'(?<!\\)"mapping"\s*:\s*\{')
_KEY_MESSAGES = re.compile(r'(?<!\\)"messages"\s*:\s*\[')
_KEY_ROLE = re.compile(r'(?<!\\)"role"\s*:')
_DECODER = json.JSONDecoder()


def detect_format(path: Path | None, head: bytes) -> str:
    """Pick a reader from the file name and its first bytes; raise if nothing fits.

    Sniffing matters because exports arrive under arbitrary names (or on stdin), and a wrong
    guess would either fail confusingly or, worse, ingest JSON as a text transcript.
    """
    return _detect(path, head, str(path) if path is not None else "<stdin>")


def read_transcripts(
    source: Path | BinaryIO,
    fmt: str | None = None,
    *,
    name: str | None = None,
    session: str | None = None,
    bad_lines: list[InputError] | None = None,
) -> Iterator[Transcript]:
    """Yield one `Transcript` per conversation in `source`, lazily, raising `InputError` early.

    Laziness is what keeps a 200 MB ChatGPT export cheap; callers that need all-or-nothing
    semantics must consume everything before writing (an error may come after some yields).
    With `bad_lines`, a line-based reader (Claude Code's) records a line it cannot read
    there and goes on with the next one.
    """
    if fmt is not None and fmt not in _READERS:
        where = str(source) if isinstance(source, str | os.PathLike) else name or "<stdin>"
        raise InputError(f"unknown format {fmt!r}; use one of: {', '.join(FORMATS)}", where)
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        src = Source(str(path), path.stem, session, bad_lines, path)
        try:
            handle = path.open("rb")
        except FileNotFoundError:
            raise src.error("no such file") from None
        except IsADirectoryError:
            raise src.error("is a directory; pass its files (or use iter_files)") from None
        except OSError as exc:
            raise src.error(f"cannot read file: {exc.strerror}") from None
        with handle:
            yield from _read(handle, path, src, fmt)
    else:
        yield from _read(source, None, Source(name or "<stdin>", None, session, bad_lines), fmt)


def iter_files(paths: list[Path]) -> list[Path]:
    """Expand folders into their files so `memctl ingest ~/.claude/projects` just works.

    Sorted for deterministic ingest order; dot-entries are skipped because they are VCS or
    tool state (.git, .DS_Store), never transcripts. Files named explicitly are always kept.
    """
    out: list[Path] = []
    seen: set[Path] = set()
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found: list[Path] = []
            for root, dirs, files in os.walk(path):
                dirs[:] = [d for d in dirs if not d.startswith(".")]
                found.extend(Path(root, f) for f in files if not f.startswith("."))
            candidates = sorted(found, key=lambda p: p.relative_to(path).parts)
        elif path.exists():
            candidates = [path]
        else:
            raise InputError("no such file or directory", path)
        for candidate in candidates:
            if candidate not in seen:
                seen.add(candidate)
                out.append(candidate)
    return out


def _read(
    stream: BinaryIO, path: Path | None, src: Source, fmt: str | None
) -> Iterator[Transcript]:
    head, stream, whole = _peek_head(stream)
    if not head.removeprefix(b"\xef\xbb\xbf").strip():
        raise src.not_transcript("empty file; nothing to ingest", 1)
    if fmt is None:
        fmt = _detect(path, head, src.origin, whole)
    yield from _READERS[fmt](stream, src)


def _peek_head(stream: BinaryIO) -> tuple[bytes, BinaryIO, bool]:
    """Read the head for sniffing without losing it: seek back, or replay it for pipes.

    A head that starts a JSON object and holds no whole line (one 50 MB JSONL message)
    is read on to the end of its first line, up to LINE_LIMIT, so sniffing sees one
    complete record; JSON arrays are sniffed by their keys instead and never read whole.
    """
    try:
        seekable = stream.seekable()
    except (AttributeError, OSError, ValueError):
        seekable = False
    start = stream.tell() if seekable else 0
    head = stream.read(HEAD_SIZE)
    whole = len(head) < HEAD_SIZE
    if not whole and b"\n" not in head and _opens_object(head):
        parts = [head]
        size = len(head)
        while size < LINE_LIMIT:
            more = stream.read(1 << 20)
            if not more:
                whole = True
                break
            parts.append(more)
            size += len(more)
            if b"\n" in more:
                break
        head = b"".join(parts)
    if seekable:
        stream.seek(start)
        return head, stream, whole
    return head, io.BufferedReader(Replay(head, stream)), whole


def _opens_object(head: bytes) -> bool:
    return head.removeprefix(b"\xef\xbb\xbf").lstrip(b" \t\r\n")[:1] == b"{"


def _detect(path: Path | None, head: bytes, origin: str, whole: bool | None = None) -> str:
    src = Source(origin, None, None)
    content = _head_text(head, src).removeprefix("\ufeff")  # the readers drop a BOM too
    body = content.lstrip(" \t\r\n")
    if not body:
        raise src.not_transcript("empty file; nothing to ingest", 1)
    suffix = path.suffix.lower() if path is not None else ""
    whole = len(head) < HEAD_SIZE if whole is None else whole
    if suffix in _JSONL_SUFFIXES:
        found = _sniff_jsonl(content, src, whole=whole, strict=True)
        if found is None:
            raise src.not_transcript(_UNKNOWN)
        return found
    text_like = suffix in _TEXT_SUFFIXES
    if body[0] in "[{":
        found, is_json = _sniff_json(body)
        if found is None and body[0] == "{":
            found = _sniff_jsonl(content, src, whole=whole, strict=False)
        if found is None and not text_like:
            found = _sniff_json_keys(body)
        if found is not None:
            return found
        # JSON of an unknown shape must not be ingested as a text transcript; but a text
        # file may well start with "[10:02] ..." or "{{template}}".
        if suffix == ".json" or (is_json and not text_like):
            raise src.not_transcript(_UNKNOWN)
    elif suffix == ".json":
        line = content.count("\n", 0, len(content) - len(body)) + 1
        raise src.not_transcript(
            "top-level JSON value must be an array or an object; expected a chat export", line
        )
    return "text"


def _head_text(head: bytes, src: Source) -> str:
    nul = head.find(b"\x00")
    if nul >= 0:
        raise binary_error(src, head.count(b"\n", 0, nul) + 1)
    try:
        return head.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.reason == "unexpected end of data" and exc.end == len(head):
            return head[: exc.start].decode("utf-8")  # head cut a character in half
        raise utf8_error(src, exc, head.count(b"\n", 0, exc.start) + 1) from None


def _sniff_json(body: str) -> tuple[str | None, bool]:
    """Classify by the first complete JSON value; also say whether there was one."""
    try:
        value, _ = _DECODER.raw_decode(body)
    except (json.JSONDecodeError, RecursionError):
        return None, False
    if isinstance(value, list):
        first = value[0] if value else None
        if isinstance(first, dict):
            if "mapping" in first:
                return "chatgpt", True
            if "role" in first:
                return "openai", True
    elif isinstance(value, dict):
        if "mapping" in value:
            return "chatgpt", True
        if "messages" in value:
            return "openai", True
    return None, True


def _sniff_json_keys(body: str) -> str | None:
    """Head too short for the first value (or malformed): go by which keys appear."""
    if _KEY_MAPPING.search(body):
        return "chatgpt"
    if body[0] == "[" and _KEY_ROLE.search(body):
        return "openai"
    if body[0] == "{" and _KEY_MESSAGES.search(body):
        return "openai"
    return None


def _sniff_jsonl(content: str, src: Source, *, whole: bool, strict: bool) -> str | None:
    """Claude Code lines carry `sessionId`/`type`; memctl lines carry `role` at top level."""
    lines = content.split("\n")
    for lineno, line in enumerate(lines, 1):
        stripped = line.strip()
        if not stripped:
            continue
        try:
            obj = json.loads(stripped)
        except RecursionError:
            raise src.error("JSON nested too deeply; not a chat transcript", lineno) from None
        except json.JSONDecodeError as exc:
            if lineno == len(lines) and not whole:
                return None  # the head cut this line short
            if strict:
                raise src.error(
                    f"malformed JSON: {exc.msg} at column {exc.colno}; "
                    "each line must be one JSON object",
                    lineno,
                ) from None
            return None
        if not isinstance(obj, dict):
            if strict:
                raise src.error(
                    f"expected a JSON object per line, got {type(obj).__name__}", lineno
                )
            return None
        if "role" in obj:
            return "jsonl"
        kind = obj.get("type")
        if not isinstance(kind, str):
            kind = None
        if "sessionId" in obj or kind in _CLAUDE_BOOKKEEPING:
            return "claude_code"
        if kind in ("user", "assistant") and "message" in obj:
            return "claude_code"
    return None
