"""Plain text for what recall shows: one-line titles and claims with no hidden characters.

A note's title and each claim reach an agent's context word for word (recall, the hooks,
MCP). A newline in a title becomes a heading of its own in the note, so an agent could
write a section that reads as a person's; an ESC sequence, a bidi override or a
zero-width character shows a reader one text and a model another. Every writer of titles
and claims cleans them here, and the recall renderer cleans whatever it shows once more,
because a person (or a merge) can put anything into a note by hand.
"""

from __future__ import annotations

import re
import unicodedata

# control, format (bidi marks and overrides, zero-width), private-use and surrogate code
# points: none of them is a character a reader sees
_HIDDEN = frozenset(("Cc", "Cf", "Co", "Cs"))
_ASCII_HIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

MAX_TITLE_CHARS = 200
MAX_NAME_CHARS = 100  # a user name: it names a profile note and a scope
MAX_REF_CHARS = 1024  # a whole reference (raw paths run to ~120 characters)
MAX_PART_BYTES = 255  # one path component: what a file system takes

# A claim may not end in (or hold) what recall prints after a claim: "[stated · Dana
# 2026-09-01 fe2916#t5]", "[human · knowledge/acme.md]", or a note's own markers.
_LABEL = re.compile(r"\[\s*(?:stated|inferred|agent|human|standing)\s*·", re.IGNORECASE)
_MARKER_TAIL = re.compile(r"(?:^|\s)#(?:agent|inferred)\s*$", re.IGNORECASE)


def hidden(text: str) -> bool:
    """Does `text` hold a character no reader sees (whitespace aside)?"""
    if text.isascii():
        return _ASCII_HIDDEN.search(text) is not None
    return any(not c.isspace() and unicodedata.category(c) in _HIDDEN for c in text)


def visible(text: str) -> str:
    """`text` with its hidden characters removed; line breaks and other whitespace kept."""
    if not hidden(text):
        return text
    return "".join(c for c in text if c.isspace() or unicodedata.category(c) not in _HIDDEN)


def one_line(text: str) -> str:
    """`text` as one line: hidden characters removed, every whitespace run one space."""
    return " ".join(visible(text).split())


def title(text: str) -> str:
    """A note's title: one line, and never itself a heading's markup."""
    return one_line(text).lstrip("#").strip()


def label_shaped(text: str) -> bool:
    """Does the claim carry what recall prints as provenance (a label or a note marker)?"""
    return _LABEL.search(text) is not None or _MARKER_TAIL.search(text) is not None


def too_long_ref(ref: str) -> str | None:
    """Why `ref` is too long to name anything in a vault, or None."""
    if len(ref) > MAX_REF_CHARS:
        return f"reference too long ({len(ref)} characters, at most {MAX_REF_CHARS})"
    path = ref.split("#", 1)[0]
    for part in path.split("/"):
        if len(part.encode("utf-8", "surrogatepass")) > MAX_PART_BYTES:
            return (
                f"reference too long: {part[:40]!r}… is {len(part)} characters, and no file "
                f"name is over {MAX_PART_BYTES} bytes"
            )
    return None
