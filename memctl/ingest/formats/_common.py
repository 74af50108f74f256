"""Plumbing shared by the readers: error construction, id fallbacks and a streaming JSON cursor.

Every reader raises `InputError` with the origin and a line number, so the CLI can print one
actionable line; keeping that logic here keeps the messages uniform across formats.
"""

from __future__ import annotations

import codecs
import hashlib
import io
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

from memctl.core.model import ROLES, Message
from memctl.errors import InputError, NotATranscriptError

ROLE_LIST = ", ".join(sorted(ROLES))


class NameId(str):
    """A session id made from the file name because the transcript carries none.

    Two folders may both hold a `chat.jsonl`; the vault tells such ids apart by the file they
    came from (see `Vault._write_transcript`), which it can only do knowing which ids these are.
    """

    __slots__ = ()


@dataclass(frozen=True)
class Source:
    """Where a transcript comes from; readers only need this to name errors and derive ids."""

    origin: str
    stem: str | None
    session: str | None
    # Where a reader that may skip a bad line (the Stop hook's, which must not lose a live
    # session to one corrupt line) records it instead of raising; None: raise.
    bad_lines: list[InputError] | None = field(default=None, compare=False)
    # The file itself, when there is one: a Claude Code sub-agent's log names its agent only
    # in the parent session's file beside it.
    path: Path | None = field(default=None, compare=False)

    def error(self, message: str, line: int | None = None) -> InputError:
        return InputError(message, self.origin, line)

    def not_transcript(self, message: str, line: int | None = None) -> InputError:
        return NotATranscriptError(message, self.origin, line)

    def fallback_id(self, messages: list[Message]) -> str:
        """Id for a conversation whose source has none; must not change between re-reads."""
        if self.session:
            return self.session
        if self.stem is not None:
            return NameId(self.stem)
        return stream_id(messages)


def stream_id(messages: list[Message]) -> str:
    """Content-derived id so piping the same transcript twice lands in the same session."""
    first = messages[0] if messages else None
    seed = (first.role + first.content) if first else ""
    return "stdin-" + hashlib.sha256(seed.encode("utf-8")).hexdigest()[:12]


def iso_utc(epoch: Any) -> str | None:
    """ChatGPT stores float epochs; the vault wants readable, sortable UTC strings."""
    if isinstance(epoch, bool) or not isinstance(epoch, int | float):
        return None
    return datetime.fromtimestamp(int(epoch), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def binary_error(src: Source, line: int) -> InputError:
    return src.not_transcript("binary file (NUL byte); expected a UTF-8 text transcript", line)


# Deeper than this, a transcript line is not a chat message but an attack on the parser
# (Python's JSON decoder and every recursive walk after it stop near 1,000 levels).
MAX_DEPTH = 100


def too_deep(src: Source, line: int | None) -> InputError:
    return src.error(f"JSON nested more than {MAX_DEPTH} levels deep; not a chat transcript", line)


def check_depth(value: Any, src: Source, line: int | None) -> None:
    """Refuse values nested deeper than MAX_DEPTH, without recursing to find out."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, d = stack.pop()
        if d > MAX_DEPTH:
            raise too_deep(src, line)
        if isinstance(v, dict):
            stack.extend((x, d + 1) for x in v.values() if isinstance(x, dict | list))
        elif isinstance(v, list):
            stack.extend((x, d + 1) for x in v if isinstance(x, dict | list))


def maybe_deep(text: str) -> bool:
    """Cheap pre-check: only text with this many brackets can nest too deep."""
    return text.count("[") + text.count("{") > MAX_DEPTH


def utf8_error(src: Source, exc: UnicodeDecodeError, line: int) -> InputError:
    bad = exc.object[exc.start : exc.start + 1].hex()
    return src.error(f"not valid UTF-8 (byte 0x{bad}); re-save the file as UTF-8", line)


def check_role(src: Source, role: Any, line: int | None, what: str = "message") -> str:
    if role is None:
        raise src.error(f"{what} has no 'role'; expected one of {ROLE_LIST}", line)
    if not isinstance(role, str) or role not in ROLES:
        raise src.error(f"{what} has unknown role {role!r}; expected one of {ROLE_LIST}", line)
    return str(role)


def iter_lines(stream: BinaryIO, src: Source) -> Iterator[tuple[int, str]]:
    """Decoded lines with 1-based numbers; decoding per line lets errors name the exact line."""
    for lineno, raw in enumerate(stream, 1):
        if b"\x00" in raw:
            if src.bad_lines is None:
                raise binary_error(src, lineno)
            src.bad_lines.append(binary_error(src, lineno))  # a crash's zero-filled block
            continue
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            if not raw.endswith(b"\n"):
                return  # a last line cut mid-character while being written: the next run's
            if src.bad_lines is None:
                raise utf8_error(src, exc, lineno) from None
            src.bad_lines.append(utf8_error(src, exc, lineno))
            continue
        if lineno == 1 and text.startswith("\ufeff"):
            text = text[1:]
        yield lineno, text


def json_line_error(
    src: Source, exc: json.JSONDecodeError, line: int, text: str | None = None
) -> InputError:
    """`text` lets us re-parse without the newline, which turns a confusing "invalid control
    character" for an unclosed string into "unterminated string"."""
    if text is not None:
        try:
            json.loads(text.rstrip("\r\n"))
        except json.JSONDecodeError as again:
            exc = again
    return src.error(
        f"malformed JSON: {exc.msg} (column {exc.colno}); each line must be one JSON object",
        line,
    )


def read_text(stream: BinaryIO, src: Source) -> str:
    """Whole-file decode for formats that are small and need look-around (plain text)."""
    data = stream.read()
    nul = data.find(b"\x00")
    if nul >= 0:
        raise binary_error(src, data.count(b"\n", 0, nul) + 1)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise utf8_error(src, exc, data.count(b"\n", 0, exc.start) + 1) from None
    return text.removeprefix("\ufeff")


class Replay(io.RawIOBase):
    """Serves already-sniffed head bytes again, because stdin cannot seek back."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        super().__init__()
        self._head = memoryview(head)
        self._rest = rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        if self._head:
            n = min(len(view), len(self._head))
            view[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        read1 = getattr(self._rest, "read1", None)
        data = read1(len(view)) if read1 is not None else self._rest.read(len(view))
        n = len(data)
        view[:n] = data
        return n


_WS = re.compile(r"[ \t\n\r]*")
# A decode failure this close to the end of the buffer may just mean "not read yet".
_NEAR_END = 64
# How much of the current line to keep when compacting, so errors can still give a column.
_KEEP_LINE = 4096


class JsonStream:
    """A cursor over one JSON document read in chunks, so huge exports use bounded memory.

    Values are decoded with the C `raw_decode`; when a value is cut off by the end of the
    buffer we read more (at least doubling) and retry, which keeps the work linear. Only one
    top-level element plus one chunk is ever held, however large the file is.
    """

    def __init__(self, stream: BinaryIO, src: Source, chunk_size: int = 1 << 20) -> None:
        self._stream = stream
        self._src = src
        self._chunk = chunk_size
        self._utf8 = codecs.getincrementaldecoder("utf-8")()
        self._json = json.JSONDecoder()
        self.buf = ""
        self.pos = 0
        self.eof = False
        self._counted = 0  # buf index up to which newlines are folded into _line
        self._line = 1
        self._started = False
        self._mid_line = False  # buf[0] is not the start of a line

    def line_at(self, pos: int) -> int:
        if pos > self._counted:
            self._line += self.buf.count("\n", self._counted, pos)
            self._counted = pos
        return self._line

    def _fill(self, want: int = 0) -> None:
        if self.eof:
            return
        self.line_at(self.pos)
        # Keep the start of the current line (if short) so error columns stay exact.
        cut = self.buf.rfind("\n", 0, self.pos) + 1
        if cut:
            self._mid_line = False
        if self.pos - cut > _KEEP_LINE:
            cut = self.pos
            self._mid_line = True
        if cut:
            self.buf = self.buf[cut:]
            self._counted -= cut
            self.pos -= cut
        data = self._stream.read(max(want, self._chunk))
        if not self._started:
            self._started = True
            data = data.removeprefix(codecs.BOM_UTF8)
        pending = len(self._utf8.getstate()[0])
        if not data:
            self.eof = True
        nul = data.find(b"\x00")
        if nul >= 0:
            raise binary_error(self._src, self._byte_line(data, nul))
        try:
            self.buf += self._utf8.decode(data, final=self.eof)
        except UnicodeDecodeError as exc:
            at = max(exc.start - pending, 0)
            raise utf8_error(self._src, exc, self._byte_line(data, at)) from None

    def _byte_line(self, data: bytes, index: int) -> int:
        return self.line_at(len(self.buf)) + data.count(b"\n", 0, index)

    def peek(self) -> str:
        """Next non-whitespace character, or "" at end of input."""
        while True:
            end = _WS.match(self.buf, self.pos)
            assert end is not None
            self.pos = end.end()
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if self.eof:
                return ""
            self._fill()

    def fail(self, message: str) -> InputError:
        return self._src.error(message, self.line_at(self.pos))

    def _column(self, pos: int) -> str:
        newline = self.buf.rfind("\n", 0, pos)
        if newline < 0 and self._mid_line:
            return ""  # a very long line began in text already discarded
        return f" (column {pos - newline})"

    def value(self) -> tuple[Any, int]:
        """Decode the value at the cursor; returns it with the line it starts on."""
        self.peek()
        while True:
            try:
                val, end = self._json.raw_decode(self.buf, self.pos)
            except RecursionError:
                raise too_deep(self._src, self.line_at(self.pos)) from None
            except json.JSONDecodeError as exc:
                cut = exc.msg.startswith("Unterminated string") or (
                    exc.pos >= len(self.buf) - _NEAR_END
                )
                if cut and not self.eof:
                    self._fill(len(self.buf) - self.pos)
                    continue
                raise self._src.error(
                    f"malformed JSON: {exc.msg}{self._column(exc.pos)}; "
                    "fix the file or export it again",
                    self.line_at(exc.pos),
                ) from None
            if end >= len(self.buf) and not self.eof and not isinstance(val, dict | list | str):
                self._fill(len(self.buf) - self.pos)  # a number may continue past the buffer
                continue
            line = self.line_at(self.pos)
            if isinstance(val, dict | list) and maybe_deep(self.buf[self.pos : end]):
                check_depth(val, self._src, line)
            self.pos = end
            return val, line

    def array(self) -> Iterator[tuple[Any, int]]:
        """Elements of the array at the cursor, one at a time."""
        if self.peek() != "[":
            raise self.fail("expected a JSON array")
        self.pos += 1
        if self.peek() == "]":
            self.pos += 1
            return
        while True:
            yield self.value()
            c = self.peek()
            self.pos += 1
            if c == "]":
                return
            if c != ",":
                self.pos -= 1
                raise self.fail("malformed JSON: expected ',' or ']' after an array element")

    def members(self) -> Iterator[tuple[str, int]]:
        """Keys of the object at the cursor; the caller must consume each value before resuming."""
        if self.peek() != "{":
            raise self.fail("expected a JSON object")
        self.pos += 1
        c = self.peek()
        if c == "}":
            self.pos += 1
            return
        while True:
            if c != '"':
                raise self.fail("malformed JSON: expected a property name in double quotes")
            key, line = self.value()
            if self.peek() != ":":
                raise self.fail("malformed JSON: expected ':' after a property name")
            self.pos += 1
            yield key, line
            c = self.peek()
            self.pos += 1
            if c == "}":
                return
            if c != ",":
                self.pos -= 1
                raise self.fail("malformed JSON: expected ',' or '}' after an object member")
            c = self.peek()

    def finish(self) -> None:
        """Reject trailing garbage, which would otherwise hide a concatenated second document."""
        if self.peek() != "":
            raise self.fail("malformed JSON: extra data after the top-level value")


def joined_text(parts: Iterable[Any], sep: str) -> tuple[str, list[Any]]:
    """Split content parts into joined text and the rest, so non-text parts survive in meta."""
    texts: list[str] = []
    other: list[Any] = []
    for part in parts:
        if (
            isinstance(part, dict)
            and part.get("type") in _TEXT_TYPES
            and isinstance(part.get("text"), str)
        ):
            texts.append(part["text"])
        else:
            other.append(part)
    return sep.join(texts), other


_TEXT_TYPES = frozenset({"text", "input_text", "output_text"})
