"""Tool calls as words: what an agent's turn did, for the index and for recall to show.

A coding agent's turn often says nothing and only calls a tool: `Bash` with `uv run ty
check`, `Edit` of `.github/workflows/ci.yml`. The call is what a later question asks about
("how do we run the type checker?", "where is the CI workflow?"), so its name and the
strings of its input are indexed with the turn's content and shown for a turn that has no
text. The raw file keeps the call as the source gave it (the turn's metadata); this is a
derived view, cut to CALL_CHARS per value so a file written whole does not drown the turn.
"""

from __future__ import annotations

import contextlib
import json
from typing import Any

CALL_CHARS = 300  # characters of each string of a call's input


def _one(call: dict[str, Any], named: bool = True, cut: int | None = CALL_CHARS) -> str:
    fn = call.get("function")
    name = call.get("name") or (fn.get("name") if isinstance(fn, dict) else None) or "tool"
    args: Any = call.get("input")
    if args is None and isinstance(fn, dict):
        args = fn.get("arguments")  # OpenAI's shape: a JSON string
    if isinstance(args, str):
        with contextlib.suppress(ValueError):
            args = json.loads(args)
    if isinstance(args, dict):
        # the strings say what was done (a command, a path, an edit); numbers are settings
        vals = [v for v in args.values() if isinstance(v, str)]
    elif isinstance(args, str):
        vals = [args]
    else:
        vals = []
    body = " · ".join(v[:cut] for v in vals if v.strip())
    return f"[{name}] {body}".rstrip() if named else body


def calls_text(calls: Any, named: bool = True) -> str:
    """A turn's tool calls as one line each; "" when it made none (or they are unreadable).

    `named=False` leaves the tools' names out: the index takes only what a call was given.
    "Write", "Read", "Edit" are common words, and "write a haiku about autumn" found every
    file an agent wrote; the name is still shown where recall quotes the call."""
    if not isinstance(calls, list):
        return ""
    return "\n".join(_one(c, named) for c in calls if isinstance(c, dict))


def turn_text(content: str, meta: Any) -> str:
    """A turn as a person reads it: its text, then each tool call it made, whole.

    A turn that only ran a command has no text; its call lives in the raw file's turn
    comment, which Obsidian hides, so `show`, MCP `read` and the viewer would show nothing
    where a citation points. Nothing is cut here: a reader asked for this one turn."""
    calls = meta.get("tool_calls") if isinstance(meta, dict) else None
    if not isinstance(calls, list):
        return content
    made = "\n".join(_one(c, cut=None) for c in calls if isinstance(c, dict))
    if not made:
        return content
    return f"{content.rstrip()}\n\n{made}" if content.strip() else made
