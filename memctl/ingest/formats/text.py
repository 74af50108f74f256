"""Plain-text and Markdown transcripts with speaker lines (`User:`, `**Alice**:` ...).

Text is ambiguous, so the reader is deliberately conservative: a `Word:` line inside a message
("Note: ...") must not start a new message. A plain `Name:` only counts when the name is a
known role word, was already used as a speaker, or opens the document; `**Name**:` always
counts. Lines inside code fences are never speaker lines. Message bodies are kept verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import BinaryIO

from memctl.core.model import Message, Transcript
from memctl.ingest.formats._common import Source, read_text

FORMAT = "text"

# word -> (role, keep the name?). Generic words say nothing beyond the role; product names do.
_ROLE_WORDS: dict[str, tuple[str, bool]] = {
    "user": ("user", False),
    "human": ("user", False),
    "me": ("user", False),
    "assistant": ("assistant", False),
    "ai": ("assistant", False),
    "bot": ("assistant", False),
    "claude": ("assistant", True),
    "chatgpt": ("assistant", True),
    "gpt": ("assistant", True),
    "system": ("system", False),
}
_BOLD_OUT = re.compile(r"\*\*([^*:\n]{1,40})\*\*:(.*)\Z")  # **Name**: always a speaker
_BOLD_IN = re.compile(r"\*\*([^*:\n]{1,40}):\*\*(.*)\Z")  # **Name:** is also common prose
_PLAIN = re.compile(r"([^\W\d_][\w'.-]*(?: [^\W_][\w'.-]*){0,2}):(.*)\Z")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


@dataclass
class _Turn:
    role: str
    name: str | None
    line: int
    inline: bool  # text followed the colon on the speaker line itself
    body: list[str] = field(default_factory=list)


def read(stream: BinaryIO, src: Source) -> Iterator[Transcript]:
    text = read_text(stream, src).replace("\r\n", "\n")
    turns: list[_Turn] = []
    preamble: list[str] = []
    seen: set[str] = set()
    fence: str | None = None
    only_headings = True  # nothing but Markdown headings so far: a `Name:` line may open
    for lineno, line in enumerate(text.split("\n"), 1):
        sink = turns[-1].body if turns else preamble
        if fence is not None:
            sink.append(line)
            closing = _FENCE.match(line)
            if closing and closing.group(1).startswith(fence) and not line[closing.end() :].strip():
                fence = None
            continue
        turn = _speaker(line, lineno, seen, opening=not turns and only_headings)
        if turn is not None:
            turns.append(turn)
            continue
        opening = _FENCE.match(line)
        if opening:
            fence = opening.group(1)
        sink.append(line)
        if not turns and line.strip() and not line.lstrip().startswith("#"):
            only_headings = False
    if not turns:
        raise src.not_transcript(
            "no speaker lines found (like 'User: ...' or '**Alice**: ...'); "
            "if this is not a text transcript, pass --format",
            1,
        )
    messages = [Message(t.role, _body(t), name=t.name) for t in turns]
    meta: dict[str, str] = {}
    title = None
    intro = "\n".join(_trim(preamble, leading=True))
    if intro:
        meta["preamble"] = intro
        heading = next((ln for ln in preamble if ln.startswith("#")), "")
        title = heading.lstrip("#").strip() or None
    yield Transcript(
        messages=messages,
        source_format=FORMAT,
        origin=src.origin,
        session_id=src.fallback_id(messages),
        title=title,
        line=turns[0].line,
        meta=meta,
    )


def _speaker(line: str, lineno: int, seen: set[str], *, opening: bool) -> _Turn | None:
    match = _BOLD_OUT.match(line)
    forced = match is not None
    if match is None:
        match = _BOLD_IN.match(line) or _PLAIN.match(line)
        if match is None:
            return None
    name = match.group(1).strip()
    key = name.lower()
    if not name or not (forced or key in _ROLE_WORDS or key in seen or opening):
        return None
    if not forced and key not in _ROLE_WORDS and not _capitalised(name):
        return None
    seen.add(key)
    rest = match.group(2)
    rest = rest.removeprefix(" ")
    role, keep = _ROLE_WORDS.get(key, ("user", True))
    turn = _Turn(role, name if keep else None, lineno, inline=bool(rest))
    if rest:
        turn.body.append(rest)
    return turn


def _capitalised(name: str) -> bool:
    return all(word[0].isupper() or word[0].isdigit() for word in name.split(" "))


def _body(turn: _Turn) -> str:
    return "\n".join(_trim(turn.body, leading=not turn.inline))


def _trim(lines: list[str], *, leading: bool) -> list[str]:
    """Blank lines between messages are layout, not content."""
    end = len(lines)
    while end and not lines[end - 1].strip():
        end -= 1
    start = 0
    if leading:
        while start < end and not lines[start].strip():
            start += 1
    return lines[start:end]
