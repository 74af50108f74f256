"""Plain data that every layer shares; no I/O here so anything can import it cheaply."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

ROLES = frozenset({"user", "assistant", "system", "tool"})


@dataclass(frozen=True)
class Message:
    """One message as the source transcript gave it; `content` is kept byte for byte.

    `meta` holds whatever else the source carried that is not content (tool calls, tool
    results' ids, the model name, the parent uuid ...). It must be JSON-serialisable.
    """

    role: str
    content: str
    id: str | None = None
    name: str | None = None
    timestamp: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Transcript:
    """One conversation read from a source file, before it becomes a raw session file.

    `line` is where the conversation starts in its source (for error messages); `messages`
    is a list because a session is written as one file; streaming happens across sessions.
    """

    messages: list[Message]
    source_format: str
    origin: str
    session_id: str | None = None
    title: str | None = None
    line: int | None = None
    meta: dict[str, Any] = field(default_factory=dict)
    # the bytes of images the messages carried inline, by sha256 (their meta names it)
    attachments: dict[str, bytes] = field(default_factory=dict, repr=False)


def speakers(messages: Iterable[Message]) -> list[str]:
    """Participants in order of first appearance; stable so frontmatter diffs stay quiet."""
    seen: dict[str, None] = {}
    for m in messages:
        seen.setdefault(m.name or m.role, None)
    return list(seen)
