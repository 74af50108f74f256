"""Claude Code session logs (~/.claude/projects/<project>/<session>.jsonl).

These files mix conversation lines with bookkeeping (summaries, file snapshots, hook progress,
system notices). Only `user`/`assistant` lines are conversation; tool traffic is kept compact
in meta so the vault holds what was said without megabytes of file dumps. Each line becomes
its own message (Claude Code splits one API message over several lines); merging them would
make a growing live session rewrite turns it already ingested.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from memctl.core.model import Message, Transcript
from memctl.errors import InputError
from memctl.ingest.formats._common import (
    Source,
    check_depth,
    iter_lines,
    joined_text,
    json_line_error,
    maybe_deep,
    too_deep,
)

FORMAT = "claude_code"
_CONVERSATION = ("user", "assistant")
_KEEP_CONTEXT = ("cwd", "gitBranch", "version", "agentId")


def read(stream: BinaryIO, src: Source) -> Iterator[Transcript]:
    messages: list[Message] = []
    session_ids: list[str] = []
    context: dict[str, Any] = {}
    summaries: list[tuple[str, Any]] = []
    uuids: set[str] = set()  # every line's, so a summary is known to point into this file
    blobs: dict[str, bytes] = {}  # inline images' bytes, by sha256
    start: int | None = None
    conversation = sidechain = 0
    for lineno, text in iter_lines(stream, src):
        if not text or text.isspace():
            continue
        new: list[Message] = []
        try:
            obj = _line(text, lineno, src)
            if obj is None:
                break  # Claude Code is still writing this last line: the next run takes it
            kind = obj.get("type")
            if kind in _CONVERSATION and obj.get("isMeta") is not True:
                new = _messages(obj, kind, lineno, src, blobs)
        except InputError as exc:
            if src.bad_lines is None:
                raise
            src.bad_lines.append(exc)  # the turns before and after it still go in
            continue
        if isinstance(obj.get("uuid"), str):
            uuids.add(obj["uuid"])
        if kind == "summary" and isinstance(obj.get("summary"), str):
            summaries.append((obj["summary"], obj.get("leafUuid")))
            continue
        if kind not in _CONVERSATION or obj.get("isMeta") is True:
            continue  # system notices, snapshots, progress, queue operations, meta caveats
        conversation += 1
        if obj.get("isSidechain") is True:
            sidechain += 1
        sid = obj.get("sessionId")
        if isinstance(sid, str) and sid not in session_ids:
            session_ids.append(sid)
        for key in _KEEP_CONTEXT:
            if key not in context and obj.get(key):
                context[key] = obj[key]
        if new and start is None:
            start = lineno
        messages.extend(new)
    if not messages:
        return  # a file of only summaries/snapshots holds no conversation
    if len(session_ids) > 1:
        context["session_ids"] = session_ids
    sid = _session_id(session_ids, src, messages)
    if sidechain and sidechain == conversation and src.stem is not None and src.stem != sid:
        # A sub-agent's file (<session>/subagents/agent-<id>.jsonl) carries its parent's
        # sessionId on every line; it is a conversation of its own, linked to the parent.
        context["parent_session"] = sid
        name = _spawned_name(src.path, sid, context.get("agentId"))
        if name is not None:
            # the agent speaks under the name its team calls it by ("alice"), as a person
            # in a chat does: recall labels its lines so, and a question naming it finds them
            context["agent_name"] = name
            messages = [
                Message(m.role, m.content, m.id, name, m.timestamp, m.meta)
                if m.role == "assistant" else m
                for m in messages
            ]  # fmt: skip
        sid = f"{sid}/{src.stem}"
    yield Transcript(
        messages=messages,
        source_format=FORMAT,
        origin=src.origin,
        session_id=sid,
        title=_title(summaries, uuids),
        line=start,
        meta=context,
        attachments=blobs,
    )


_SPAWNING = ("Agent", "Task")  # the tools that start a sub-agent (Task is the older name)
_NAME_LEN = 40


# A session's spawned agents, by its file and stat: one lead can spawn dozens of agents,
# and reading its (tens of MB) log once per agent's log made a folder's ingest quadratic.
_SPAWNS: dict[tuple[str, int, int], dict[str, str]] = {}
_AGENT_ID = re.compile(r"agentId: ([0-9A-Za-z_-]+)")


def _spawned_name(path: Path | None, parent: str, agent_id: Any) -> str | None:
    """The name the parent session's spawning call gave this sub-agent ("alice"), or None.

    Claude Code keeps a sub-agent's log at <project>/<session>/subagents/agent-<id>.jsonl,
    beside the session that spawned it (<project>/<session>.jsonl). There the call's input
    holds the name, and its result the agent's id ("agentId: a4ca…"). An unreadable
    parent names nobody.
    """
    if path is None or not isinstance(agent_id, str) or not agent_id:
        return None
    parent_file = path.parent.parent.parent / f"{parent}.jsonl"
    try:
        st = parent_file.stat()
    except OSError:
        return None
    key = (str(parent_file), st.st_mtime_ns, st.st_size)
    names = _SPAWNS.get(key)
    if names is None:
        names = _spawn_names(parent_file)
        if len(_SPAWNS) >= 64:
            _SPAWNS.clear()
        _SPAWNS[key] = names
    return _clean_name(names.get(agent_id))


def _spawn_names(parent_file: Path) -> dict[str, str]:
    """Agent id -> the name its spawning call gave it, read from a lead's log. Only lines
    that hold a spawning call or an agent's id are parsed."""
    calls: dict[str, str] = {}  # spawning call id -> the name its input gave
    out: dict[str, str] = {}
    try:
        with parent_file.open("rb") as fh:
            for raw in fh:
                spawn = b'"tool_use"' in raw and any(b'"%s"' % t.encode() in raw
                                                     for t in _SPAWNING)  # fmt: skip
                if spawn or b"agentId" in raw:
                    _read_spawns(raw, calls, out)
    except OSError:
        pass  # what was read so far still names its agents
    return out


def _read_spawns(raw: bytes, calls: dict[str, str], out: dict[str, str]) -> None:
    """One line of a lead's log: the spawning calls it makes (into `calls`) and the agent
    ids their results give (into `out`). A line that is no JSON object is passed over."""
    try:
        blocks = _blocks(json.loads(raw))
    except (ValueError, RecursionError):
        return  # a line being written, or broken: the ingest of the lead reports it
    for block in blocks:
        if block.get("type") == "tool_use" and block.get("name") in _SPAWNING:
            inp = block.get("input")
            given = inp.get("name") if isinstance(inp, dict) else None
            if isinstance(given, str) and isinstance(block.get("id"), str):
                calls[block["id"]] = given
        elif block.get("type") == "tool_result":
            # only the spawning call's own result names the agent: a message sent to it
            # later names its id too
            name = calls.get(str(block.get("tool_use_id")))
            m = _AGENT_ID.search(json.dumps(block.get("content"), ensure_ascii=False))
            if name is not None and m is not None:
                out.setdefault(m.group(1), name)


def _blocks(obj: Any) -> list[dict[str, Any]]:
    msg = obj.get("message") if isinstance(obj, dict) else None
    content = msg.get("content") if isinstance(msg, dict) else None
    return [b for b in content if isinstance(b, dict)] if isinstance(content, list) else []


# A name goes into each turn's heading (`## t3 · alice (assistant) · …`), where ` · ` and
# brackets have a meaning: only letters, digits, `.`, `_`, `-` and inner spaces are taken.
_NAME = re.compile(r"\w[\w.-]*(?: [\w.-]+)*")


def _clean_name(name: str | None) -> str | None:
    """A name fit for a turn's heading: one short word or few, not a role's name."""
    if name is None:
        return None
    name = " ".join(name.split())
    if len(name) > _NAME_LEN or not _NAME.fullmatch(name):
        return None
    return None if name.lower() in ("user", "assistant", "tool") else name


def _line(text: str, lineno: int, src: Source) -> dict[str, Any] | None:
    """One line's object; None for a last line still being written."""
    try:
        obj = json.loads(text)
    except RecursionError:
        raise too_deep(src, lineno) from None
    except json.JSONDecodeError as exc:
        if not text.endswith("\n"):
            return None
        raise json_line_error(src, exc, lineno, text) from None
    if maybe_deep(text):
        check_depth(obj, src, lineno)
    if not isinstance(obj, dict):
        raise src.error(f"expected a JSON object per line, got {type(obj).__name__}", lineno)
    return obj


def _session_id(session_ids: list[str], src: Source, messages: list[Message]) -> str:
    """The file's own session; resumed sessions also carry older ids, the file name decides."""
    if src.stem is not None and src.stem in session_ids:
        return src.stem
    if session_ids:
        return session_ids[0]
    return src.fallback_id(messages)


def _title(summaries: list[tuple[str, Any]], uuids: set[str]) -> str | None:
    """The newest summary that points into this file, else none.

    Claude Code writes summaries of other sessions into a file too (their `leafUuid` is a
    line of that other session); such a summary names another conversation, not this one.
    """
    for text, leaf in reversed(summaries):
        if leaf in uuids and text.strip():
            return text
    return None


def _messages(
    obj: dict[str, Any], kind: str, lineno: int, src: Source, blobs: dict[str, bytes]
) -> list[Message]:
    msg = obj.get("message")
    if not isinstance(msg, dict):
        raise src.error(f"'{kind}' line has no 'message' object", lineno)
    role = msg.get("role")
    if role not in _CONVERSATION:
        what = "no 'role'" if role is None else f"unknown role {role!r}"
        raise src.error(f"message has {what}; expected 'user' or 'assistant'", lineno)
    uuid = obj.get("uuid") if isinstance(obj.get("uuid"), str) else None
    stamp = obj.get("timestamp") if isinstance(obj.get("timestamp"), str) else None
    meta: dict[str, Any] = {}
    if "parentUuid" in obj:
        meta["parentUuid"] = obj["parentUuid"]
    if obj.get("isSidechain") is True:
        meta["isSidechain"] = True
    if role == "assistant" and isinstance(msg.get("model"), str):
        meta["model"] = msg["model"]
    content = msg.get("content")
    if isinstance(content, str):
        # an empty line of the conversation is a placeholder, not a turn
        return [Message(role, content, uuid, None, stamp, meta)] if content.strip() else []
    if not isinstance(content, list):
        raise src.error("'message.content' must be a string or a list of content blocks", lineno)

    texts: list[str] = []
    tool_calls: list[dict[str, Any]] = []
    thinking: list[str] = []
    attachments: list[dict[str, Any]] = []
    other: list[Any] = []
    results: list[Message] = []
    for block in content:
        btype = block.get("type") if isinstance(block, dict) else None
        if btype == "text" and isinstance(block.get("text"), str):
            texts.append(block["text"])
        elif btype == "tool_use":
            tool_calls.append(
                {"id": block.get("id"), "name": block.get("name"), "input": block.get("input")}
            )
        elif btype == "thinking" and isinstance(block.get("thinking"), str):
            thinking.append(block["thinking"])
        elif btype == "redacted_thinking":
            continue  # opaque ciphertext: nothing a reader of the vault could use
        elif btype == "tool_result":
            results.append(_tool_result(block, stamp, meta, blobs))
        elif btype == "image":
            attachments.append(_attachment(block, blobs))
        else:
            other.append(block)
    if tool_calls:
        meta["tool_calls"] = tool_calls
    if thinking:
        meta["thinking"] = "\n\n".join(thinking)
    if attachments:
        meta["attachments"] = attachments
    if other:
        meta["other_blocks"] = other

    out: list[Message] = []
    words = any(t.strip() for t in texts)
    if words or tool_calls or thinking or attachments or other:
        out.append(Message(role, "\n\n".join(texts), None, None, stamp, meta))
    out.extend(results)
    # One line may yield several messages; suffixes keep their ids unique and stable.
    return [
        _with_id(m, uuid if i == 0 or uuid is None else f"{uuid}-{i}") for i, m in enumerate(out)
    ]


def _tool_result(
    block: dict[str, Any], stamp: str | None, line_meta: dict[str, Any], blobs: dict[str, bytes]
) -> Message:
    body = block.get("content")
    meta: dict[str, Any] = {
        "tool_use_id": block.get("tool_use_id"),
        "is_error": block.get("is_error") is True,
    }
    if "parentUuid" in line_meta:
        meta["parentUuid"] = line_meta["parentUuid"]
    if isinstance(body, str):
        text = body
    elif isinstance(body, list):
        text, other = joined_text(body, "\n")
        if other:
            meta["attachments"] = [
                _attachment(p, blobs) if isinstance(p, dict) and p.get("type") == "image" else p
                for p in other
            ]
    else:
        text = ""
    return Message("tool", text, None, None, stamp, meta)


def _attachment(block: dict[str, Any], blobs: dict[str, bytes]) -> dict[str, Any]:
    """Images arrive base64-inlined: the turn keeps what they were and their sha256, the
    bytes go to `blobs`, which ingest stores as a file of their own (or names as left out)."""
    source = block.get("source")
    info: dict[str, Any] = {"type": block.get("type")}
    if isinstance(source, dict):
        info.update({k: v for k, v in source.items() if k != "data"})
        data = source.get("data")
        if isinstance(data, str) and data:
            try:
                raw = base64.b64decode(data, validate=True)
            except (binascii.Error, ValueError):
                return info  # not base64: nothing to keep
            sha = hashlib.sha256(raw).hexdigest()
            blobs[sha] = raw
            info.update({"sha256": sha, "bytes": len(raw)})
    return info


def _with_id(message: Message, new_id: str | None) -> Message:
    return Message(
        message.role, message.content, new_id, message.name, message.timestamp, message.meta
    )
