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
# Brackets and dots that read as recall's own, in any width or script: a spoofed
# "［stated · …］" or "【human・Dana】" reads the same to a model.
_OPEN = "[\\[\uff3b\u3010\u3014\u3016\u301a\u27e6\u2e22\u2045\u298b\u298d\u298f]"
_CLOSE = "[\\]\uff3d\u3011\u3015\u3017\u301b\u27e7\u2e23\u2046\u298c\u298e\u2990]"
_DOT = "[\u00b7\u30fb\uff65\u2022\u2219\u22c5\u2027\u16eb\u0387\u2e31|]"
_BASES = "stated|inferred|observed|agent|human|standing|unverified|history|accepted|rewound|source"
_LABEL = re.compile(rf"{_OPEN}\s*(?:{_BASES})\s*{_DOT}", re.IGNORECASE)
_LABEL_SPAN = re.compile(rf"{_OPEN}\s*(?:{_BASES})\s*{_DOT}[^\n]*?(?:{_CLOSE}|$)", re.IGNORECASE)
_MARKER_TAIL = re.compile(r"(?:^|\s)[#\uff03](?:agent|inferred|observed)\s*$", re.IGNORECASE)
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)|-->", re.DOTALL)


def hidden(text: str) -> bool:
    """Does `text` hold a character no reader sees (whitespace aside)?"""
    if text.isascii():
        return _ASCII_HIDDEN.search(text) is not None
    # isprintable is False only for whitespace, separators and the categories above plus
    # unassigned code points: with whitespace split off, True clears the text at C speed
    # (recall checks every word it shows, on every prompt)
    if "".join(text.split()).isprintable():
        return False
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


def unlabelled(text: str) -> str:
    """A claim as recall may show it: no text shaped like the provenance label recall
    prints after it (in any bracket width), no HTML comment (where a payload hides from a
    reader of the rendered note), no trailing note marker. memctl writes none of these into
    a claim; a line a person or a pull wrote may hold them, and a model reads a spoofed
    `[human · Dana …]` as the real label."""
    if "<!--" in text or "-->" in text:
        text = _COMMENT.sub(" ", text)
    if _LABEL.search(text):
        text = _LABEL_SPAN.sub(" ", text)
    # a marker needs its hash sign: without one, no search tries the tail at every blank
    while ("#" in text or "\uff03" in text) and _MARKER_TAIL.search(text):
        text = _MARKER_TAIL.sub("", text)
    return " ".join(text.split())


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
