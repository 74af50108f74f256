"""Rendering packed memories as md, xml or json: the text that reaches the model.

Every piece (header, group heading, item, sources, footer) is rendered on its own so the
packer can count what each addition costs before making it.
"""

from __future__ import annotations

import json
import re
import unicodedata
from dataclasses import replace

from memctl.core.plaintext import hidden, one_line, unlabelled
from memctl.core.raw import short_digest
from memctl.recall.results import Memory
from memctl.results import DATA_NOTE, INSTRUCTIONS_NOTE

_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_HIDDEN_CATEGORIES = frozenset(("Cc", "Cf", "Co", "Cs"))


def as_data(text: str) -> str:
    """A raw turn as recall shows it: HTML comments (where injected instructions hide from
    a reader) and invisible or control characters removed, whitespace runs squashed."""
    text = _COMMENT.sub(" ", text) if "<!--" in text else text
    if not text.isascii():
        text = "".join(
            c for c in text if c.isspace() or unicodedata.category(c) not in _HIDDEN_CATEGORIES
        )
    elif _ASCII_HIDDEN.search(text):
        text = "".join(c for c in text if c.isprintable() or c.isspace())
    return " ".join(text.split())


# The ASCII characters that are neither printable nor whitespace (C0 controls but the
# whitespace ones, and DEL): most turns hold none, and then nothing is removed char by char.
_ASCII_HIDDEN = re.compile("[\x00-\x08\x0e-\x1b\x7f]")


# The packer asks for the same memory as shown two or three times (its cost, then its
# place in the packed list, then the rendering): the last ones are kept with the memory
# they came from, so an id is never taken for another object's while its entry stands.
_SHOWN: dict[int, tuple[Memory, Memory]] = {}
SHOWN_KEPT = 512


def shown(m: Memory) -> Memory:
    """`m` as a reader may see it: no control, bidi or zero-width character in any of its
    words. Notes are cleaned when memctl writes them, but a person can type anything."""
    got = _SHOWN.get(id(m))
    if got is not None and got[0] is m:
        return got[1]
    out = _shown(m)
    if len(_SHOWN) >= SHOWN_KEPT:
        _SHOWN.clear()
    _SHOWN[id(m)] = (m, out)
    return out


def _shown(m: Memory) -> Memory:
    if m.kind != "turn":  # a turn is quoted whole; a claim must not carry its own label
        text, title = unlabelled(m.text), unlabelled(m.title) if m.title else m.title
        if (text, title) != (m.text, m.title):
            m = replace(m, text=text, title=title)
    words = [m.text, m.title or "", m.speaker or ""]
    for c in m.citations:
        words += [c.speaker or "", c.quote]
    if not any(hidden(w) for w in words):
        return m

    def clean(w: str | None) -> str | None:
        return one_line(w) if w else w

    cites = tuple(
        replace(c, speaker=clean(c.speaker), quote=one_line(c.quote)) for c in m.citations
    )
    return replace(
        m, text=one_line(m.text), title=clean(m.title), speaker=clean(m.speaker), citations=cites
    )


# ---- rendering ----------------------------------------------------------------------------


def _esc(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


def _session_key(path: str) -> str:
    """The short name a session goes by in md output: 6 hex of the digest its file name
    ends with (the same the notes' footnote labels use), or the whole path when it has none."""
    return short_digest(path) or path


def _short_ref(ref: str) -> str:
    path, sep, turn = ref.partition("#")
    return f"{_session_key(path)}{sep}{turn}"


def sessions_of(m: Memory) -> list[str]:
    paths = [c.ref.split("#", 1)[0] for c in m.citations]
    if m.kind == "turn":
        paths.insert(0, m.ref.split("#", 1)[0])
    return list(dict.fromkeys(paths))


def _cite_md(m: Memory) -> str:
    if m.kind == "turn":
        bits = [m.speaker or "", m.date or "", _short_ref(m.ref)]
        if m.basis == "rewound":  # said, on a branch the user went back from
            bits.insert(0, "rewound")
        return " · ".join(b for b in bits if b)
    if not m.citations:
        return f"{m.basis} · {m.ref}"
    cites = "; ".join(
        " ".join(b for b in (c.speaker or "", c.date or "", _short_ref(c.ref)) if b)
        for c in m.citations
    )
    return f"{m.basis} · {cites}"


class Renderer:
    """Header, per-note group, per-item, sources and footer text for one output format.

    Markdown cites turns as `<session>#t<n>`, where <session> is the 6-hex digest the raw
    file's name ends with, and maps each session to its file once, under "Sources": a full
    `raw/...md` path costs ~30 tokens, and a recall cites the same few sessions many times.
    XML and JSON always carry the full refs.
    """

    def __init__(self, fmt: str, title: str, attrs: dict[str, str]) -> None:
        self.fmt = fmt
        self.title = title
        self.attrs = attrs

    def head(self) -> str:
        if self.fmt == "md":
            return (
                f"# {self.title}\n"
                "Long-term memory (memctl). Each line cites its turn as <session>#t<n> (see "
                "Sources): stated = said there, inferred = read from it, observed = what the agent "
                "did or found there; human = by a person, "
                "agent = the agent's own note. "
                f"{INSTRUCTIONS_NOTE} {DATA_NOTE}\n"
            )
        if self.fmt == "xml":
            a = " ".join(f'{k}="{_esc(v)}"' for k, v in self.attrs.items())
            note = INSTRUCTIONS_NOTE.replace(
                "Lines under an instructions/ heading", "Claims of instructions/ notes"
            )
            return f"<memory {a}>\n<!-- {note} {DATA_NOTE} -->\n"
        return ""

    def group(self, m: Memory) -> str:
        m = shown(m)
        if self.fmt == "md":
            if m.kind == "turn":
                return "\n## Turns\n"
            return f"\n## {m.title} ({m.ref})\n"
        return ""

    def sources_head(self) -> str:
        return "\n## Sources\n" if self.fmt == "md" else ""

    def source(self, path: str) -> str:
        return f"- {_session_key(path)} = {path}\n" if self.fmt == "md" else ""

    def item(self, m: Memory) -> str:
        m = shown(m)
        if self.fmt == "md":
            if m.kind == "turn":
                # quoted, so where the speaker's words end is never in doubt
                body = json.dumps(" ".join(m.text.split()), ensure_ascii=False)
                return f"{self.turn_head(m)} {body}\n"
            return f"- {m.text} [{_cite_md(m)}]\n"
        if self.fmt == "xml":
            cites = " ".join(
                f'ref="{_esc(c.ref)}"' + (f' speaker="{_esc(c.speaker)}"' if c.speaker else "")
                for c in m.citations[:1]
            )
            more = "".join(f'\n  <cite ref="{_esc(c.ref)}"/>' for c in m.citations[1:])
            date = f' date="{m.date}"' if m.date else ""
            if m.kind == "turn":
                sp = f' speaker="{_esc(m.speaker)}"' if m.speaker else ""
                left = ' basis="rewound"' if m.basis == "rewound" else ""
                return f'<turn ref="{_esc(m.ref)}"{sp}{date}{left}>{_esc(m.text)}</turn>\n'
            return (
                f'<claim note="{_esc(m.ref)}" title="{_esc(m.title or "")}" store="{m.store}" '
                f'scope="{m.scope}" basis="{m.basis}"{date} {cites}>{_esc(m.text)}{more}</claim>\n'
            )
        return json.dumps(m.to_json(), ensure_ascii=False) + "\n"

    def turn_head(self, m: Memory) -> str:
        """What a md turn item says before its quoted body (prompt._turn_floor counts it)."""
        return f"- [{_cite_md(m)}]"

    def tail(self) -> str:
        return "</memory>\n" if self.fmt == "xml" else ""

    def render(self, items: list[Memory]) -> str:
        if not items:
            return ""
        if self.fmt == "json":
            return json.dumps([shown(m).to_json() for m in items], ensure_ascii=False, indent=1)
        parts = [self.head()]
        groups: dict[str, list[Memory]] = {}
        for m in items:
            key = "\0turns" if m.kind == "turn" else m.ref
            groups.setdefault(key, []).append(m)
        for members in groups.values():
            parts.append(self.group(members[0]))
            parts.extend(self.item(m) for m in members)
        paths = list(dict.fromkeys(p for m in items for p in sessions_of(m)))
        if paths and self.fmt == "md":
            parts.append(self.sources_head())
            parts.extend(self.source(p) for p in sorted(paths, key=_session_key))
        parts.append(self.tail())
        return "".join(parts)
