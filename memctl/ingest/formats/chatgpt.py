"""ChatGPT data export (`conversations.json`): every conversation the account ever had.

Exports reach hundreds of megabytes, so conversations are decoded one at a time from a
chunked cursor. Each conversation is a tree (edits and regenerations branch it); what the
user last saw is the path from `current_node` to the root, and that is what we keep.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO

from memctl.core.model import Message, Transcript
from memctl.ingest.formats._common import JsonStream, Source, check_role, iso_utc, stream_id

FORMAT = "chatgpt"
CONTEXT = "user_editable_context"


def read(stream: BinaryIO, src: Source) -> Iterator[Transcript]:
    js = JsonStream(stream, src)
    first = js.peek()
    if first == "[":
        for n, (conv, line) in enumerate(js.array(), 1):
            transcript = _conversation(conv, line, n, src, single=False)
            if transcript is not None:
                yield transcript
    elif first == "{":
        conv, line = js.value()
        transcript = _conversation(conv, line, 1, src, single=True)
        if transcript is not None:
            yield transcript
    else:
        raise js.fail(
            "top-level JSON value must be an array of conversations (conversations.json) "
            "or one conversation object"
        )
    js.finish()


def _conversation(conv: Any, line: int, n: int, src: Source, *, single: bool) -> Transcript | None:
    if not isinstance(conv, dict) or not isinstance(conv.get("mapping"), dict):
        raise src.error(
            f"conversation {n} is not an object with a 'mapping'; "
            "expected a ChatGPT export (conversations.json)",
            line,
        )
    cid = conv.get("conversation_id") or conv.get("id")
    label = f"conversation {cid!r}" if isinstance(cid, str) else f"conversation {n}"
    messages: list[Message] = []
    for node_id in _current_branch(conv["mapping"], conv.get("current_node"), label, line, src):
        message = _message(conv["mapping"][node_id], node_id, label, line, src)
        if message is not None:
            messages.append(message)
    if not messages:
        return None  # an empty or all-hidden conversation has nothing to remember
    if isinstance(cid, str) and cid:
        session_id = cid
    elif single:
        session_id = src.fallback_id(messages)
    else:
        # Exports list newest first, so a position would shift; content does not.
        base = src.session or src.stem or "stdin"
        session_id = f"{base}-{stream_id(messages)[6:]}"
    meta: dict[str, Any] = {}
    for key in ("create_time", "update_time"):
        stamp = iso_utc(conv.get(key))
        if stamp is not None:
            meta[key] = stamp
    for key in ("default_model_slug", "gizmo_id"):
        if isinstance(conv.get(key), str):
            meta[key] = conv[key]
    title = conv.get("title")
    return Transcript(
        messages=messages,
        source_format=FORMAT,
        origin=src.origin,
        session_id=session_id,
        title=title if isinstance(title, str) else None,
        line=line,
        meta=meta,
    )


def _current_branch(
    mapping: dict[str, Any], current: Any, label: str, line: int, src: Source
) -> list[str]:
    if current is None:
        current = _latest_leaf(mapping)
        if current is None:
            return []
    if not isinstance(current, str) or current not in mapping:
        raise src.error(f"{label}: current_node {current!r} is not in 'mapping'", line)
    path: list[str] = []
    seen: set[str] = set()
    node_id: Any = current
    while node_id is not None:
        if node_id in seen:
            raise src.error(f"{label}: node {node_id!r} is its own ancestor (cycle)", line)
        node = mapping.get(node_id) if isinstance(node_id, str) else None
        if not isinstance(node, dict):
            raise src.error(f"{label}: parent node {node_id!r} is missing from 'mapping'", line)
        seen.add(node_id)
        path.append(node_id)
        node_id = node.get("parent")
    path.reverse()
    return path


def _latest_leaf(mapping: dict[str, Any]) -> str | None:
    """Old exports lack `current_node`; the last child at each fork is the newest branch."""
    roots = [k for k, v in mapping.items() if isinstance(v, dict) and v.get("parent") is None]
    if not roots:
        return None
    node_id = roots[0]
    seen = {node_id}
    while True:
        children = [c for c in mapping[node_id].get("children") or [] if c in mapping]
        if not children or children[-1] in seen:
            return node_id
        node_id = children[-1]
        seen.add(node_id)


def _message(
    node: dict[str, Any], node_id: str, label: str, line: int, src: Source
) -> Message | None:
    msg = node.get("message")
    if msg is None:
        return None
    if not isinstance(msg, dict):
        raise src.error(f"{label}: node {node_id!r} has a non-object 'message'", line)
    metadata = msg.get("metadata") if isinstance(msg.get("metadata"), dict) else {}
    hidden = bool(metadata.get("is_visually_hidden_from_conversation"))
    author = msg.get("author") if isinstance(msg.get("author"), dict) else {}
    role = check_role(src, author.get("role"), line, f"{label}: node {node_id!r}")
    content = msg.get("content") if isinstance(msg.get("content"), dict) else {}
    ctype = content.get("content_type")
    meta: dict[str, Any] = {}
    if isinstance(ctype, str) and ctype != "text":
        meta["content_type"] = ctype
    parts = content.get("parts")
    about = metadata.get("user_context_message_data")
    if ctype != CONTEXT and isinstance(about, dict) and _words(about):
        # Older exports keep the same settings on a hidden system message's metadata
        # ("about_user_message", "about_model_message"): the person's words, kept the same way.
        meta["content_type"] = CONTEXT
        meta["content"] = about
        meta["author_role"] = role
        return Message(
            role="user",
            content=_words(about),
            id=str(msg.get("id") or node_id),
            name=None,
            timestamp=iso_utc(msg.get("create_time")),
            meta=meta,
        )
    if ctype == CONTEXT:
        # The user's profile and custom instructions: hidden from the chat, but the person's
        # own words about themselves. Kept as a turn of its own kind, the fields verbatim.
        rest = {k: v for k, v in content.items() if k != "content_type"}
        text = "\n\n".join(v for v in rest.values() if isinstance(v, str) and v.strip())
        if not text:
            return None
        meta["content"] = rest
    elif hidden:
        return None
    elif isinstance(parts, list):
        text = "\n".join(p for p in parts if isinstance(p, str))
        other = [p for p in parts if not isinstance(p, str)]
        if other:
            meta["parts"] = other
    elif isinstance(content.get("text"), str):
        text = content["text"]  # code / execution_output / tether_quote carry `text`
    else:
        text = ""
        rest = {k: v for k, v in content.items() if k != "content_type"}
        if rest:
            meta["content"] = rest  # thoughts, reasoning recaps ...: kept, not flattened
    if not text.strip() and "parts" not in meta and "content" not in meta:
        return None  # a placeholder (the empty assistant message before an answer, a
        # blank system prompt): no words, so no turn
    if isinstance(metadata.get("model_slug"), str):
        meta["model"] = metadata["model_slug"]
    recipient = msg.get("recipient")
    if isinstance(recipient, str) and recipient != "all":
        meta["recipient"] = recipient
    name = author.get("name")
    mid = msg.get("id")
    return Message(
        role=role,
        content=text,
        id=mid if isinstance(mid, str) else node_id,
        name=name if isinstance(name, str) else None,
        timestamp=iso_utc(msg.get("create_time")),
        meta=meta,
    )


def _words(fields: dict[str, Any]) -> str:
    """The settings' text fields, in the export's order, as one turn's text."""
    return "\n\n".join(v for v in fields.values() if isinstance(v, str) and v.strip())
