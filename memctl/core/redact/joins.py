"""Keys broken up on their way into a chat, put back together before matching.

A key may arrive with a look-alike letter of another script in it (pasted from a chat
app or a PDF), split by a shell line continuation, cut by an invisible character, or
hard-wrapped by a terminal. :func:`project` folds look-alikes (the table is data, in
rules.toml) into the ASCII projection every detector reads; :func:`gaps` finds the
breaks, and :func:`across_gaps` scans the text with them taken out and maps what spans a
break back onto the text, so both halves of the key are masked.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable

from memctl.core.lazyre import lazy
from memctl.core.redact.base import RULES, Span
from memctl.core.redact.tokens import aws_secret_ok

# Letters of other scripts that render like ASCII ones (rules.toml [lookalikes]). Folded
# only inside a run that also holds ASCII letters or digits, so words of those scripts
# are never read as Latin.
_FOLD: dict[int, str] = {ord(k): v for k, v in RULES["lookalikes"].items()}
# Compatibility forms that NFKC maps to one ASCII character: fullwidth, roman numerals,
# circled letters, super- and subscripts. (Mathematical letters, outside the BMP, are
# left out: one of them would turn every string of the text into 4-byte code points.)
for _lo, _hi in ((0xFF01, 0xFF5F), (0x2160, 0x2180), (0x24B6, 0x24EA), (0x2070, 0x20A0)):
    for _cp in range(_lo, _hi):
        _nf = unicodedata.normalize("NFKC", chr(_cp))
        if len(_nf) == 1 and _nf.isascii() and (_nf.isalnum() or _nf in "_-.+/="):
            _FOLD.setdefault(_cp, _nf)
_INVISIBLES = "\u00ad\u200b\u200c\u200d\u2060\ufeff"  # soft hyphen, zero-width ones


def _char_class(codepoints: set[int]) -> str:
    """A regex class of these code points, consecutive ones as ranges."""
    cps, out, i = sorted(codepoints), [], 0
    while i < len(cps):
        j = i
        while j + 1 < len(cps) and cps[j + 1] == cps[j] + 1:
            j += 1
        out.append(re.escape(chr(cps[i])) + (f"-{re.escape(chr(cps[j]))}" if j > i else ""))
        i = j + 1
    return "[" + "".join(out) + "]"


# Any look-alike or invisible character at all: one search in C before the Python loop,
# so accented letters glued to ASCII ones (German, French) cost no more than that search.
_SUSPECT_RE = lazy(_char_class({*_FOLD, *map(ord, _INVISIBLES)}))


# "?" (a non-ASCII code point, once projected) glued to an ASCII letter or digit.
_GLUED_UNKNOWN_RE = lazy(r"\?(?:(?<=[A-Za-z0-9_-]\?)|(?=[A-Za-z0-9_-]))")
# Byte classes of the projection: token characters become "a", "?" stays, the rest " ",
# so one translate and a search led by the rare "a" tell whether anything non-ASCII is
# glued to a token in a text of another script.
_TOKEN_BYTES = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
_GLUED_CLASS_RE = lazy(rb"a(?:\?|(?<=\?a))")
_CLASSES = bytes(
    ord("a") if c in _TOKEN_BYTES else ord("?") if c == ord("?") else ord(" ") for c in range(256)
)


def project(text: str) -> tuple[str, bool]:
    """An ASCII string of the same length as ``text``, and whether a non-ASCII code
    point is glued to a token character in it.

    Look-alikes inside a run that also holds ASCII letters or digits are folded to their
    ASCII twin, every other non-ASCII code point becomes "?". Offsets carry over
    unchanged. A text whose non-ASCII words stand apart from ASCII ones (any other
    script's prose) costs a translate and one search."""
    if text.isascii():
        return text, False
    raw = text.encode("ascii", "replace")
    a = raw.decode("ascii")
    if a.count("?") <= 32:  # a few accents, dashes or quotes: look at each "?"
        if _GLUED_UNKNOWN_RE.search(a) is None:
            return a, False
    elif _GLUED_CLASS_RE.search(raw.translate(_CLASSES)) is None:
        return a, False  # another script's prose: "?" everywhere, rarely beside ASCII
    if _SUSPECT_RE.search(text) is None:
        return a, False
    chars: list[str] | None = None
    invisible = False
    for m in _GLUED_UNKNOWN_RE.finditer(a):
        i = m.start()
        if ord(text[i]) not in _FOLD:
            invisible = invisible or text[i] in _INVISIBLES
            continue
        if chars is None:
            chars = list(a)
        lo = i
        while lo > 0 and a[lo - 1] == "?" and ord(text[lo - 1]) in _FOLD:
            lo -= 1
        hi = i + 1
        while hi < len(a) and a[hi] == "?" and ord(text[hi]) in _FOLD:
            hi += 1
        for j in range(lo, hi):
            chars[j] = _FOLD[ord(text[j])]
    return (a if chars is None else "".join(chars)), invisible or chars is not None


# Gaps that may sit inside a key: a shell/Python line continuation (backslash, line
# break, indentation), an invisible character, and a hard wrap (a line that ends in a
# token run, followed by a line that is nothing but the rest of it).
_INVISIBLE_RE = lazy(f"[{_INVISIBLES}]")
_TOKEN_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-=.")
# Every line break that may sit inside a key: after a backslash (a continuation) or after
# 8 characters of key material (a hard wrap; "=" only pads a key's end, so "secret=None"
# is no first half). Led by the line break itself so the engine skips
# between line breaks in C; the indentation after it belongs to the gap.
_BREAK_RE = lazy(
    r"\n(?:(?<=\\\n)|(?<=\\\r\n)|(?<=[A-Za-z0-9+/_-]{8}\n)|(?<=[A-Za-z0-9+/_-]{8}\r\n))[ \t]*"
)
# What follows a hard wrap: the rest of the key, alone on its line or followed by prose.
_REST_RE = lazy(
    r"(?P<rest>[A-Za-z0-9+/_-]{3,}={0,2})"
    r"(?:[\"'`,;]*[ \t]*(?=\r?\n|\Z)|(?<=[A-Za-z0-9+/_=-]{8})[.,;:!?]?[ \t])"
)
_DIGIT_RE = lazy(r"[0-9]")


def _rest_looks_random(rest: str) -> bool:
    """The second line of a wrapped key: key material, not a word ("thanks", "README")."""
    return _DIGIT_RE.search(rest) is not None or (
        any(c.isupper() for c in rest[1:]) and any(c.islower() for c in rest)
    )


def gaps(text: str, a: str, glued: bool) -> list[tuple[int, int, bool]]:
    """(start, end, is_wrap) of each removable gap glued between two token characters;
    ``a`` and ``glued`` are what :func:`project` said about ``text``."""
    out: list[tuple[int, int, bool]] = []
    for m in _BREAK_RE.finditer(a):
        start, end = m.start() - (a[m.start() - 1] == "\r"), m.end()
        if a[start - 1] == "\\":  # a line continuation
            if start > 1 and a[start - 2] in _TOKEN_CHARS and a[end : end + 1] in _TOKEN_CHARS:
                out.append((start - 1, end, False))
        elif (r := _REST_RE.match(a, end)) is not None and _rest_looks_random(r.group("rest")):
            out.append((start, end, True))
    if glued:
        for m in _INVISIBLE_RE.finditer(text):
            s, e = m.span()
            if s > 0 and a[s - 1] in _TOKEN_CHARS and a[e : e + 1] in _TOKEN_CHARS:
                out.append((s, e, False))
        out.sort()
    return out


_B64_KEY_RE = lazy(r"[A-Za-z0-9+/_-]{20,}={0,2}")


def _key_material(value: str) -> bool:
    return _B64_KEY_RE.fullmatch(value) is not None and aws_secret_ok(value)


def across_gaps(
    text: str,
    found: list[tuple[int, int, bool]],
    scan: Callable[[str], list[Span]],
    spans: list[Span],
) -> list[Span]:
    """Scan ``text`` with its gaps taken out and keep what spans a gap, mapped back.

    A finding across a line continuation or an invisible character is taken whatever
    its kind. Across a hard wrap a generic ``label=value`` is taken only when its first
    line was a secret already (``spans``, the findings in ``text`` itself) or the joined
    value is one run of key material, since a value could as well end at the line break.
    """
    parts: list[str] = []
    marks: list[tuple[int, int, bool]] = []  # (position in joined, removed length, wrap)
    pos = removed = 0
    for start, end, wrap in found:
        if start < pos:
            continue
        parts.append(text[pos:start])
        marks.append((start - removed, end - start, wrap))
        removed += end - start
        pos = end
    parts.append(text[pos:])
    joined = "".join(parts)
    out: list[Span] = []
    for s, e, kind in scan(joined):
        crossed = [m for m in marks if s < m[0] < e]
        if not crossed:
            continue
        if kind == "generic-secret" and any(m[2] for m in crossed):
            first_gap = crossed[0][0] + sum(n for j, n, _ in marks if j < crossed[0][0])
            vouched = any(se == first_gap and sk == kind for _, se, sk in spans)
            if not vouched and not _key_material(joined[s:e]):
                continue
        s0 = s + sum(n for j, n, _ in marks if j <= s)
        e0 = e + sum(n for j, n, _ in marks if j < e)
        out.append((s0, e0, kind))
    return out


# A key cut off by a line continuation at the very end of a string (a title or a heading
# made of a command's first line): the rest is elsewhere, so what is here is judged as if
# key material followed.
_CUT_RE = lazy(r"[A-Za-z0-9_-]{6}\\[ \t]*\Z")
_FILLER = "Q7xK2mP9vL4wR8tZ3nB6yH1jC5dF0gS4eT8uW2aM6"


def before_cut(a: str, scan: Callable[[str], list[Span]]) -> list[Span]:
    """Findings that run into the continuation at the end of ``a``, cut back to it."""
    m = _CUT_RE.search(a)
    if m is None:
        return []
    cut = m.end() - len(m.group()) + 6
    return [(s, cut, k) for s, e, k in scan(a[:cut] + _FILLER) if s < cut < e]
