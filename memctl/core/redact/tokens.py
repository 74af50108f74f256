"""Secrets whose format is the evidence: vendor tokens (rules in rules.toml), Telegram bot
tokens, and AWS secret keys taken only with evidence beside them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from memctl.core.lazyre import lazy
from memctl.core.redact.base import (
    DIGIT_RE,
    PATH_SEGMENT_RE,
    RULES,
    UPPER_RE,
    Span,
    entropy,
    not_dummy,
)

# ---------------------------------------------------------------------------------------
# Prefixed tokens: the format itself is the evidence
# ---------------------------------------------------------------------------------------

# A token must not be glued to a preceding base64/base64url/identifier character, so a
# token-shaped run inside a data: URI or a longer identifier is not taken for a token.
# Checked in Python rather than as a leading regex lookbehind, which would stop the engine
# from skipping ahead to the literal prefix.
_GLUE = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-")


@dataclass(frozen=True)
class _TokenRule:
    kind: str
    family: str  # which prefilter hit makes this rule worth running
    triggers: tuple[str, ...]  # cheap case-sensitive confirmation before the regex
    pattern: re.Pattern[str]
    check: Callable[[str], bool] = not_dummy


_SLUG_RE = lazy(r"[a-z0-9]+(?:-[a-z0-9]+){2,}")


def _openai_ok(token: str) -> bool:
    """'sk-' is also a plain word prefix; demand a random body rather than a hyphenated slug."""
    body = token[3:]
    return (
        not_dummy(body) and DIGIT_RE.search(body) is not None and _SLUG_RE.fullmatch(body) is None
    )


CHECKS: dict[str, Callable[[str], bool]] = {
    "not_dummy": not_dummy,
    "openai": _openai_ok,
    "huggingface": lambda t: not_dummy(t) and UPPER_RE.search(t, 3) is not None,
    "always": lambda t: True,
}

TOKEN_RULES: tuple[_TokenRule, ...] = tuple(
    _TokenRule(
        r["kind"], r["family"], tuple(r["triggers"]), lazy(r["pattern"]),
        CHECKS[r.get("check", "not_dummy")],
    )
    for r in RULES["token"]
)  # fmt: skip


def _unglued(text: str, start: int) -> bool:
    """Nothing token-like directly before `start`, or only a URL's "//" (git clone
    https://ghp_...@github.com) or a Telegram API path's "bot"."""
    return (
        start == 0
        or text[start - 1] not in _GLUE
        or text.startswith("//", start - 2)
        or (start >= 2 and text[start - 2] == "\\" and text[start - 1] in "nrt")  # JSON "\n"
        or (text.startswith("bot", start - 3) and text[start].isdigit())
    )


def find_tokens(text: str, families: set[str]) -> Iterator[Span]:
    for rule in TOKEN_RULES:
        if rule.family in families and any(t in text for t in rule.triggers):
            for m in rule.pattern.finditer(text):
                start = m.start()
                if _unglued(text, start) and rule.check(m.group()):
                    yield start, m.end(), rule.kind
    if "t" in families:
        for m in _TELEGRAM_RE.finditer(text):
            if _unglued(text, m.start()) and not_dummy(m.group()):
                yield m.start(), m.end(), "telegram-token"


# A Telegram bot token: the bot's numeric id, a colon, then "AA" and 33 more characters.
_TELEGRAM_RE = lazy(r"[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])")
# An AWS secret access key has no prefix of its own: 40 base64 characters, which on their
# own could be any other base64. So it is only taken with evidence beside it: an access
# key id anywhere in the same text (the two are pasted together, but a chat may put a
# page of prose between them), the words that name it ("aws", "secret access key")
# nearby, or a short line of its own in a short text. And only when it mixes cases and
# digits like generated key material and is not shaped like a path or a blob's last line.
_AWS_ID_RE = lazy(r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}")
# "=" may come before ("aws_secret_access_key=..."), not after: then it is padded base64.
# A JSON-escaped line break ("\\n") before it is a line break, not an "n" glued to it.
_AWS_SECRET_RE = lazy(
    r"(?:(?<![A-Za-z0-9+/])|(?<=\\[nrt]))[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])"
)
# Whole base64 runs of 40 or more, measured in Python. Led by the character before the
# run, so that inside a word the engine fails at once instead of re-reading the word from
# each of its letters (~3x faster than a lookbehind or a bare run pattern).
_B64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_B64_RUN_RE = lazy(r"[^A-Za-z0-9+/]([A-Za-z0-9+/]{40,})")
_B64_RUN_AT_RE = lazy(r"[A-Za-z0-9+/]{40,}")
# How far from the naming words a key is still theirs: "Use <key> as the secret access
# key" puts it before them, "AWS secret (don't share): <key>" after.
_AWS_BEFORE = 160
_AWS_AFTER = 200
_LOWER_RE = lazy(r"[a-z]")
# The line above is a full line of base64 (a blob wrapped at 64 or 76 characters), so
# this one is the blob's short last line.
_BLOB_ABOVE_RE = lazy(r"[A-Za-z0-9+/=]{60}[ \t]*(?:\r?\n|(?:\\r)?\\n)[ \t]*\Z")


def aws_secret_ok(value: str) -> bool:
    return (
        UPPER_RE.search(value) is not None
        and _LOWER_RE.search(value) is not None
        and DIGIT_RE.search(value) is not None
        and not_dummy(value)
        and entropy(value) >= 4.0
        and not (
            value.count("/") >= 2
            and all(PATH_SEGMENT_RE.fullmatch(seg) for seg in value.split("/") if seg)
        )
    )


def _aws_candidate(text: str, start: int, end: int) -> bool:
    return aws_secret_ok(text[start:end]) and not _BLOB_ABOVE_RE.search(
        text, max(0, start - 80), start
    )


def _b64_runs(text: str, pos: int) -> Iterator[tuple[int, int]]:
    """Spans of the whole base64 runs that start at or after ``pos``. No endpos: a
    window's edge must never look like the end of a longer run."""
    if (pos == 0 or text[pos - 1] not in _B64_CHARS) and (
        m := _B64_RUN_AT_RE.match(text, pos)
    ) is not None:
        yield m.span()
    for m in _B64_RUN_RE.finditer(text, pos):
        yield m.span(1)


def _in_marker(low: str, pos: int) -> bool:
    i = low.rfind("[redacted:", max(0, pos - 32), pos)
    return i >= 0 and "]" not in low[i:pos]


def aws_secrets(
    text: str, low: str, any_id: bool, words: list[int], taken: list[Span]
) -> Iterator[Span]:
    """Keys with evidence beside them; ``taken`` are other detectors' spans, which win:
    a 40-character bearer token in a text that also holds an access key id is a bearer
    token. ``words`` are where the prefilter saw "aws" or "access key"; the kind inside
    our own marker ("[REDACTED:aws-access-key]") is no evidence, since whatever it stood
    for was looked at when the id itself was still there."""
    if any_id and _AWS_ID_RE.search(text) is not None:
        windows = [(0, len(text))]
    else:
        windows = []
        for pos in words:
            if (low[pos] == "w" and pos > 1 and low[pos - 2].isalpha()) or _in_marker(low, pos):
                continue  # "laws", "draws"
            lo, hi = max(0, pos - _AWS_BEFORE), pos + _AWS_AFTER
            if windows and lo <= windows[-1][1]:
                windows[-1] = (windows[-1][0], hi)
            else:
                windows.append((lo, hi))
    for lo, hi in windows:
        for start, end in _b64_runs(text, lo):
            if start >= hi:
                break
            if end - start == 41 and text[start] in "nrt" and text[start - 1 : start] == "\\":
                start += 1  # after a JSON-escaped line break
            if (
                end - start == 40
                and text[end : end + 1] != "="
                and _aws_candidate(text, start, end)
                and not any(s < end and start < e for s, e, _ in taken)
            ):
                yield start, end, "aws-secret-key"


_LINE_SPLIT_RE = lazy(r"\r?\n|(?:\\r)?\\n")
ALONE_MAX = 256


def alone_aws_secrets(text: str) -> list[Span]:
    """Lines of a short text (a title, a preamble, a one-line reply) that are nothing but a
    pasted secret access key, perhaps behind a heading or list marker."""
    out: list[Span] = []
    pos = 0
    if "\n" not in text and "\\n" not in text:
        s = text.lstrip("#>*- \t").rstrip()
        if len(s) != 40:
            return out
    for m in [*_LINE_SPLIT_RE.finditer(text), None]:
        end = m.start() if m is not None else len(text)
        line = text[pos:end]
        s = line.lstrip("#>*- \t").rstrip()
        if len(s) == 40 and _AWS_SECRET_RE.fullmatch(s):
            start = pos + line.index(s)
            if _aws_candidate(text, start, start + 40):
                out.append((start, start + 40, "aws-secret-key"))
        if m is not None:
            pos = m.end()
    return out


