"""OpenAI chat-completions message lists, as people dump them from API calls and agent logs.

Accepts a bare array of messages or an object with a `messages` array (other top-level keys
become transcript meta). Read through the streaming cursor so errors can name the line where
the offending message starts, which a whole-document `json.loads` cannot tell us.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

from memctl.core.model import Message, Transcript
from memctl.ingest.formats._common import JsonStream, Source, check_role, joined_text

FORMAT = "openai"
# Newer API roles with a faithful equivalent in memctl's four; the original is kept in meta.
_ALIASES = {"developer": "system", "function": "tool"}
_STRINGS = ("id", "name", "timestamp")


def read(stream: BinaryIO, src: Source) -> Iterator[Transcript]:
    js = JsonStream(stream, src)
    messages: list[Message] = []
    meta: dict[str, Any] = {}
    start: int | None = None
    first = js.peek()
    if first == "[":
        for item, line in js.array():
            start = start or line
            messages.append(_message(item, line, src))
    elif first == "{":
        found = False
        for key, _line in js.members():
            if key == "messages":
                found = True
                if js.peek() != "[":
                    raise js.fail("'messages' must be an array of chat messages")
                for item, item_line in js.array():
                    start = start or item_line
                    messages.append(_message(item, item_line, src))
            else:
                meta[key], _ = js.value()
        if not found:
            raise src.error("JSON object has no 'messages' array; expected OpenAI chat messages", 1)
    else:
        raise js.fail(
            "top-level JSON value must be an array of messages or an object with 'messages'"
        )
    js.finish()
    if not messages:
        raise src.error("no messages in the file; nothing to ingest", 1)
    title = meta.pop("title", None)
    yield Transcript(
        messages=messages,
        source_format=FORMAT,
        origin=src.origin,
        session_id=src.fallback_id(messages),
        title=title if isinstance(title, str) else None,
        line=start,
        meta=meta,
    )


def _message(item: Any, line: int, src: Source) -> Message:
    if not isinstance(item, dict):
        raise src.error(f"expected a message object, got {type(item).__name__}", line)
    # Non-string id/name/timestamp are odd but not wrong: keep them in meta rather than lose them.
    meta: dict[str, Any] = {
        k: v
        for k, v in item.items()
        if k not in ("role", "content") and not (k in _STRINGS and isinstance(v, str))
    }
    role = item.get("role")
    if isinstance(role, str) and role in _ALIASES:
        meta["original_role"] = role
        role = _ALIASES[role]
    role = check_role(src, role, line)
    content = item.get("content")
    if content is None:
        text = ""
    elif isinstance(content, str):
        text = content
    elif isinstance(content, list):
        text, other = joined_text(content, "\n")
        if other:
            meta["content_parts"] = other
    else:
        raise src.error(
            f"'content' must be a string, null or a list of parts, got {type(content).__name__}",
            line,
        )
    return Message(
        role=role,
        content=text,
        id=_str_or_none(item.get("id")),
        name=_str_or_none(item.get("name")),
        timestamp=_str_or_none(item.get("timestamp")),
        meta=meta,
    )


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None
