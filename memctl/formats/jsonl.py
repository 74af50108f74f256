"""memctl's own JSONL: one message per line, the format `memctl export` writes back.

Round-tripping is the contract, so string fields are kept exactly as given and unknown keys
ride along in `Message.meta`. This is the bulk-ingest path, hence the lean per-line loop.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any, BinaryIO

from memctl.formats._common import (
    ROLE_LIST,
    Source,
    iter_lines,
    json_line_error,
)
from memctl.model import ROLES, Message, Transcript

FORMAT = "jsonl"
_KNOWN = frozenset({"role", "content", "id", "name", "timestamp", "session"})


def read(stream: BinaryIO, src: Source) -> Iterator[Transcript]:
    loads = json.loads
    messages: list[Message] = []
    session: str | None = None
    start: int | None = None
    for lineno, text in iter_lines(stream, src):
        if not text or text.isspace():
            continue
        try:
            obj = loads(text)
        except json.JSONDecodeError as exc:
            raise json_line_error(src, exc, lineno) from None
        if type(obj) is not dict:
            raise src.error(
                f"expected a JSON object per line, got {type(obj).__name__}", lineno
            )
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
        meta = {k: v for k, v in obj.items() if k not in _KNOWN} if len(obj) > 2 else {}
        messages.append(
            Message(
                role,
                content,
                _opt_str(obj, "id", src, lineno),
                _opt_str(obj, "name", src, lineno),
                _opt_str(obj, "timestamp", src, lineno),
                meta,
            )
        )
    if messages:
        yield _transcript(messages, session, start, src)


def _opt_str(obj: dict[str, Any], key: str, src: Source, lineno: int) -> str | None:
    value = obj.get(key)
    if value is None or type(value) is str:
        return value
    raise src.error(f"'{key}' must be a string, got {type(value).__name__}", lineno)


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
