"""Reading what a person typed: prose sentences only, each an exact substring of the turn."""

from __future__ import annotations

import re

from memctl.curate.builtin.classification import DISCOURSE, re_
from memctl.curate.builtin.lexicon import table

ABBREVIATIONS = table("abbreviations")

_FENCE = re_(r"^\s*(```|~~~)")
_PASTE = re_(r"^\s*-{2,}\s*\S.*?-{2,}\s*$")
_NOT_PROSE = re_(r"^(?:#|\||>|    |\t|\s*(?:[-*+]|\d+[.)])\s)")
_SPLIT = re_(r"(?<=[.!?])[)\"'”’]?\s+")
# Spans a sentence never ends inside: a code span, a markdown link (its text may hold ". "),
# an autolink or a URL. A split there cut "in [vercel." off its link.
_UNBROKEN = re_(r"`[^`\n]+`|!?\[[^\]\n]*\]\([^)\s]*\)|<[^<>\s]+>|\b[a-z][\w+.-]*://\S+")


def inside_span(line: str, at: int) -> bool:
    """Is offset `at` of `line` inside a code span, link or URL (see `_UNBROKEN`)?"""
    return any(m.start() < at < m.end() for m in _UNBROKEN.finditer(line))


# Someone else's words a person passes on: a quotation that holds a sentence break, a line
# break or a first-person word ('My colleague emailed me this: "... I prefer that agents push
# straight to main."'). Its "I" is the quoted person, never the one who pasted it. A short
# quoted term ('we call it "the relay"') is no quotation of speech and stays.
_QUOTATION = re_(r"(?<![\w\"“])[\"“](?P<q>[^\"“”]*)(?:[\"”]|$)")
_SPEECH = re_(
    r"[.!?]\s|\n|\b(?:I|I['’](?:m|ve|ll|d)|me|my|mine|we|we['’](?:re|ve|ll|d)|us|our|ours)\b",
    flags=re.I,
)


def _quoted(content: str) -> list[tuple[int, int]]:
    """Offsets of the quotations of speech in `content` (see `_QUOTATION`)."""
    if '"' not in content and "“" not in content:
        return []
    return [(m.start(), m.end()) for m in _QUOTATION.finditer(content)
            if _SPEECH.search(m.group("q"))]  # fmt: skip


def prose_sentences(content: str) -> list[str]:
    """Sentences of the prose a person typed: no code, no pastes, no HTML comments, no lists,
    no quotations of what someone else said.

    Each sentence is an exact substring of `content`, so it can be quoted verbatim.
    """
    out: list[str] = []
    in_fence = in_comment = in_paste = False
    quoted = _quoted(content)
    at = 0
    for line in content.split("\n"):
        start_of_line, at = at, at + len(line) + 1
        if in_comment:
            in_comment = "-->" not in line
            continue
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if "<!--" in line:
            in_comment = "-->" not in line.split("<!--", 1)[1]
            continue
        if _PASTE.match(line):
            in_paste = not in_paste
            continue
        if in_paste or not line.strip() or _NOT_PROSE.match(line):
            continue
        for piece in _outside(line, start_of_line, quoted):
            out.extend(_split(piece))
    return out


def _outside(line: str, offset: int, quoted: list[tuple[int, int]]) -> list[str]:
    """The parts of `line` (at `offset` in its content) outside every quotation."""
    parts, start = [], 0
    for a, b in quoted:
        a, b = a - offset, b - offset
        if b <= 0 or a >= len(line):
            continue
        if a > start:
            parts.append(line[start:a])
        start = max(start, b)
    if start < len(line):
        parts.append(line[start:])
    return parts


def _split(line: str) -> list[str]:
    out: list[str] = []
    start = 0
    for m in _SPLIT.finditer(line):
        if _abbreviation(line, m.start()) or inside_span(line, m.start()):
            continue
        piece = line[start : m.start() + 1].strip()
        if piece:
            out.append(piece)
        start = m.end()
    tail = line[start:].strip()
    if tail:
        out.append(tail)
    return out


_LAST_WORD = re_(r"(?:^|[\s(*_])([\w.]+)\.$")  # "**vs." too: emphasis is no word


def abbreviation(line: str, end: int) -> bool:
    """Does the full stop before `end` close an abbreviation or an initial ("vs.", "Dr.")?"""
    return _abbreviation(line, end)


def _abbreviation(line: str, end: int) -> bool:
    """Does the full stop before `end` close an abbreviation or an initial, not a sentence?"""
    head = line[:end].rstrip(")\"'”’ ")
    m = _LAST_WORD.search(head[-12:])
    if not m:
        return False
    word = m.group(1).lower()
    return word in ABBREVIATIONS or (len(word) == 1 and word.isalpha() and word != "i")


def core_of(sentence: str) -> str:
    """The sentence without leading discourse markers ("OK, so", "Bad news:")."""
    core = sentence
    while True:
        m = DISCOURSE.match(core)
        if not m or m.end() >= len(core):
            return core
        core = core[m.end() :]


def cap(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def end(text: str) -> str:
    text = re.sub(r"[\s,;:]+$", "", text.rstrip())
    if text.endswith((".", "!", "?", ")")) or re.search(r"[.!?][\"”]$", text):
        return text  # 'Dana said: "... cache."' ends where the quote ends
    return text + "."


def trim_so(text: str) -> str:
    """Drop a trailing consequence (", so ...", ", which ...") a claim does not need."""
    return re.split(r",\s+(?:so|which|since then)\s+", text, maxsplit=1)[0]


_LOWER_I = (
    (re_(r"^(?:Im|I m|i'm|i’m)\b"), "I'm"),
    (re_(r"^(?:Ive|i've|i’ve)\b"), "I've"),
    (re_(r"^(?:Ill|i'll|i’ll)(?= )"), "I'll"),
    (re_(r"^(?:Id|i'd|i’d)(?= )"), "I'd"),
    (re_(r"(?<=\s)i(?=\s|'|’)"), "I"),
    (re_(r"\b(do|does|did|is|are|was|were|ca|wo|have|has)nt\b"), r"\1n't"),
)


def typed_case(core: str) -> str:
    """ "Im doing an engine swap", "i think": how people type "I" when they chat."""
    for pat, rep in _LOWER_I:
        core = pat.sub(rep, core)
    return core


def topic_words(topic: str) -> frozenset[str]:
    """Content words of a decision's topic, for telling a restatement from a new decision."""
    stop = {"the", "a", "an", "to", "for", "of", "all", "our", "we", "and", "on", "in", "with"}
    return frozenset(w for w in re.findall(r"[a-z0-9]+", topic.lower()) if w not in stop)


# A subject that points outside its sentence: a bare pronoun ("It fails on CI", "These don't
# pass") or "that/these/those" before a noun ("That content is wrong"). "This" before a noun
# is the thing at hand ("This project uses pnpm"); before a verb it points back too, and
# "this way, ..." is the way just described.
_POINTS_OUTSIDE = re_(
    r"^(?:(?:it|they|he|she|them|its|their|his|her)(?:['’](?:s|re|ll|d|ve))?(?![\w'’-])|"
    r"(?:that|these|those)(?:['’](?:s|re|ll|d|ve))?(?![\w'’-])|"
    r"this(?:['’]s)?(?= (?:is|was|has|does|doesn['’]t|isn['’]t|wasn['’]t|will|won['’]t|would|"
    r"should|can|can['’]t|could|might|must|fails?|breaks?|works?|needs?|seems?|looks?|"
    r"happens?)\b)|this(?:['’]s)?[.!]?$|(?:this|that) way\b)",
    flags=re.I,
)


def points_outside(core: str) -> bool:
    """Is the sentence's subject a word that means something only with what came before it?"""
    return bool(_POINTS_OUTSIDE.match(core.strip()))
