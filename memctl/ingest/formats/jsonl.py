"""memctl's own JSONL: one message per line, the format `memctl export` writes back.

Round-tripping is the contract, so string fields are kept exactly as given and unknown keys
ride along in `Message.meta`. This is the bulk-ingest path, hence the lean per-line loop.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, BinaryIO

from memctl.core.model import ROLES, Message, Transcript
from memctl.ingest.formats._common import (
    ROLE_LIST,
    Source,
    binary_error,
    check_depth,
    json_line_error,
    maybe_deep,
    too_deep,
    utf8_error,
)

FORMAT = "jsonl"
_KNOWN = frozenset({"role", "content", "id", "name", "timestamp", "session"})


def read(stream: BinaryIO, src: Source) -> Iterator[Transcript]:
    # scan_once is the C scanner behind json.loads minus two Python-level calls per line;
    # anything unusual (blank line, BOM, leading space, bad JSON) takes the careful path.
    scan = json.JSONDecoder().scan_once
    messages: list[Message] = []
    session: str | None = None
    start: int | None = None
    lineno = 0
    for raw in stream:
        lineno += 1
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            if not raw.endswith(b"\n"):
                break  # a last line still being written (cut mid-character): next run's
            raise utf8_error(src, exc, lineno) from None
        if "\x00" in text:
            raise binary_error(src, lineno)
        try:
            obj, end = scan(text, 0)
            if end != len(text) and not text[end:].isspace():
                raise StopIteration(end)
        except RecursionError:
            raise too_deep(src, lineno) from None
        except (StopIteration, json.JSONDecodeError):
            if not text.endswith("\n") and _incomplete(text):
                break  # the writer has not finished this line: the next run ingests it
            obj = _careful(text, lineno, src)
            if obj is None:
                continue
        if maybe_deep(text):
            check_depth(obj, src, lineno)
        if type(obj) is not dict:
            raise src.error(f"expected a JSON object per line, got {type(obj).__name__}", lineno)
        role = obj.get("role")
        content = obj.get("content")
        if type(role) is not str or role not in ROLES:
            raise _role_error(src, role, lineno)
        if type(content) is not str:
            raise src.error(
                "'content' must be a string"
                + (" (it is missing)" if content is None else f", got {type(content).__name__}"),
                lineno,
            )
        mid = obj.get("id")
        name = obj.get("name")
        stamp = obj.get("timestamp")
        if not (
            (mid is None or type(mid) is str)
            and (name is None or type(name) is str)
            and (stamp is None or type(stamp) is str)
        ):
            raise _not_string(obj, src, lineno)
        if "session" in obj:
            new = obj["session"]
            if type(new) is not str or not new:
                raise src.error("'session' must be a non-empty string", lineno)
            if new != session:
                if messages:
                    yield _transcript(messages, session, start, src)
                messages = []
                start = None
                session = new
        if start is None:
            start = lineno
        meta = {} if obj.keys() <= _KNOWN else {k: v for k, v in obj.items() if k not in _KNOWN}
        messages.append(Message(role, content, mid, name, stamp, meta))
    if messages:
        yield _transcript(messages, session, start, src)


def _careful(text: str, lineno: int, src: Source) -> Any:
    """None for a blank line; the object otherwise; an error naming the line if malformed."""
    if lineno == 1:
        text = text.removeprefix("\ufeff")
    if not text or text.isspace():
        return None
    try:
        return json.loads(text)
    except RecursionError:
        raise too_deep(src, lineno) from None
    except json.JSONDecodeError as exc:
        raise json_line_error(src, exc, lineno, text) from None


def _incomplete(text: str) -> bool:
    """A last line with no newline that is a cut-off JSON object (more input would fix it)."""
    body = text.removeprefix("\ufeff").strip()
    if not body.startswith("{"):
        return False
    try:
        json.loads(body)
    except json.JSONDecodeError as exc:
        return exc.pos >= len(body) - 1 or exc.msg.startswith("Unterminated string")
    except RecursionError:
        return False
    return False


def _not_string(obj: dict[str, Any], src: Source, lineno: int) -> Exception:
    for key in ("id", "name", "timestamp"):
        value = obj.get(key)
        if value is not None and type(value) is not str:
            return src.error(f"'{key}' must be a string, got {type(value).__name__}", lineno)
    raise AssertionError("unreachable")


def _role_error(src: Source, role: Any, lineno: int) -> Exception:
    if role is None:
        return src.error(f"line has no 'role'; expected one of {ROLE_LIST}", lineno)
    return src.error(f"unknown role {role!r}; expected one of {ROLE_LIST}", lineno)


def _transcript(
    messages: list[Message], session: str | None, start: int | None, src: Source
) -> Transcript:
    return Transcript(
        messages=messages,
        source_format=FORMAT,
        origin=src.origin,
        session_id=session or src.fallback_id(messages),
        line=start,
    )
