"""Writers: a stored session's messages back out in a format memctl also reads.

`memctl export` promises what comes out reads back in as the same messages: jsonl exactly
(every key, byte for byte), openai as a chat `messages` array, claude_code as a Claude Code
session log, text as `**Speaker**:` lines. ChatGPT's export is a tree of a whole account's
conversations, not one session's file, so it is read but not written.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from memctl.core.model import Message
from memctl.errors import InputError

WRITES = ("jsonl", "openai", "claude_code", "text")


# an attachment's bytes by the file its turn names (None: not kept)
Loader = Callable[[str], bytes | None]


def write(
    messages: Iterable[Message], fmt: str, *, session: str = "", load: Loader | None = None
) -> Iterator[str]:
    """The lines of `messages` written as `fmt` (each without its newline); `load` gives
    back the images the vault kept, which a Claude Code log carries inline."""
    if fmt == "jsonl":
        return (_dump(_record(m)) for m in messages)
    if fmt == "openai":
        return _openai(messages)
    if fmt == "claude_code":
        return _claude_code(messages, session, load or (lambda _rel: None))
    if fmt == "text":
        return _text(messages)
    raise InputError(f"unknown export format {fmt!r}: use {', '.join(WRITES)}")


def _dump(rec: dict[str, Any]) -> str:
    return json.dumps(rec, ensure_ascii=False)


def _record(m: Message) -> dict[str, Any]:
    """A message as memctl JSONL (and OpenAI) carry it: the source's own keys, in order."""
    rec: dict[str, Any] = {}
    if m.id is not None:
        rec["id"] = m.id
    rec["role"] = m.role
    rec["content"] = m.content
    if m.name is not None:
        rec["name"] = m.name
    if m.timestamp is not None:
        rec["timestamp"] = m.timestamp
    for k, v in m.meta.items():
        rec.setdefault(k, v)
    return rec


def _openai(messages: Iterable[Message]) -> Iterator[str]:
    """One JSON array, a message per line, so a long session streams out."""
    first = True
    for m in messages:
        rec = _record(m)
        # the reader mapped newer roles (developer, function) onto memctl's four; undo that
        original = rec.pop("original_role", None)
        if isinstance(original, str):
            rec["role"] = original
        yield ("[" if first else ",") + _dump(rec)
        first = False
    yield "[]" if first else "]"


def _images(m: Message, load: Loader) -> list[dict[str, Any]]:
    """The image blocks of a turn whose files the vault kept, as Claude Code wrote them."""
    blocks = []
    for info in m.meta.get("attachments") or []:
        if not isinstance(info, dict) or not isinstance(info.get("file"), str):
            continue
        data = load(info["file"])
        if data is None:
            continue
        source = {k: v for k, v in info.items() if k not in ("sha256", "bytes", "file", "left_out")}
        kind = source.pop("type", "base64")
        source = {"type": kind, **source, "data": base64.b64encode(data).decode("ascii")}
        blocks.append({"type": "image", "source": source})
    return blocks


def _claude_code(messages: Iterable[Message], session: str, load: Loader) -> Iterator[str]:
    for i, m in enumerate(messages, 1):
        line: dict[str, Any] = {"type": "user" if m.role == "tool" else m.role}
        if m.role not in ("user", "assistant", "tool"):
            raise InputError(
                f"t{i} is a {m.role} message, which a Claude Code session log cannot hold; "
                "export it as jsonl or openai"
            )
        if "parentUuid" in m.meta:
            line["parentUuid"] = m.meta["parentUuid"]
        if m.meta.get("isSidechain") is True:
            line["isSidechain"] = True
        line["sessionId"] = session
        if m.id is not None:
            line["uuid"] = m.id
        if m.timestamp is not None:
            line["timestamp"] = m.timestamp
        msg: dict[str, Any] = {"role": "user" if m.role == "tool" else m.role}
        images = _images(m, load)
        if m.role == "tool":
            content: Any = m.content
            if images:
                content = [*([{"type": "text", "text": m.content}] if m.content else []), *images]
            block = {"type": "tool_result", "tool_use_id": m.meta.get("tool_use_id"),
                     "content": content}  # fmt: skip
            if m.meta.get("is_error") is True:
                block["is_error"] = True
            msg["content"] = [block]
        elif m.meta.get("tool_calls") or m.meta.get("thinking") or images:
            blocks: list[dict[str, Any]] = []
            if isinstance(m.meta.get("thinking"), str):
                blocks.append({"type": "thinking", "thinking": m.meta["thinking"]})
            if m.content:
                blocks.append({"type": "text", "text": m.content})
            for call in m.meta.get("tool_calls") or []:
                blocks.append({"type": "tool_use", **call})
            msg["content"] = blocks + images
        else:
            msg["content"] = m.content
        if m.role == "assistant" and isinstance(m.meta.get("model"), str):
            msg["model"] = m.meta["model"]
        line["message"] = msg
        yield _dump(line)


_SPEAKERS = {"user": "User", "assistant": "Assistant", "system": "System", "tool": "Tool"}


def _text(messages: Iterable[Message]) -> Iterator[str]:
    """`**Speaker**:` on its own line, then the message, then a blank line."""
    first = True
    for m in messages:
        if not first:
            yield ""
        first = False
        yield f"**{m.name or _SPEAKERS.get(m.role, m.role.title())}**:"
        yield ""
        yield from m.content.split("\n")
