"""The shared pieces of redaction: findings, markers, the kinds and their priority, and
the value heuristics every detector leans on (placeholders, entropy, randomness).
"""

from __future__ import annotations

import math
import re
import tomllib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memctl.core.lazyre import lazy


@dataclass(frozen=True)
class Finding:
    """A secret's kind and its ``[start, end)`` span in the text it was found in.

    The span covers only the secret value, so a caller can show or log the surrounding
    label ("password=", "Bearer ") and still never see the secret itself.
    """

    kind: str
    start: int
    end: int


def marker(kind: str) -> str:
    """The text a secret of ``kind`` is replaced with; one place so tests and callers agree."""
    return f"[REDACTED:{kind}]"


MARKER_RE = lazy(r"\[REDACTED:[a-z0-9-]+\]")

Span = tuple[int, int, str]
GLUED_RUN_RE = lazy(r"[A-Za-z0-9_-]*")


def _load_rules() -> dict[str, Any]:
    """rules.toml beside this file: the kinds with their priority and the vendor token rules."""
    return tomllib.loads(Path(__file__).with_name("rules.toml").read_text("utf-8"))


RULES = _load_rules()
# Lower number wins when two detectors claim overlapping text (see rules.toml).
KINDS: dict[str, int] = dict(RULES["kinds"])

# ---------------------------------------------------------------------------------------
# Value heuristics shared by the context-based detectors
# ---------------------------------------------------------------------------------------

_PLACEHOLDER_WORDS = frozenset(
    {
        "none", "null", "nil", "true", "false", "undefined", "yes", "no", "on", "off",
        "string", "str", "text", "bytes", "required", "optional", "empty", "n/a", "na",
        "tbd", "todo", "password", "passwd", "pass", "pwd", "passphrase", "secret",
        "secrets", "token", "apikey", "api_key", "api-key", "key", "redacted", "hidden",
        "masked", "placeholder", "dummy", "sample", "example", "value", "changeit",
    }
)  # fmt: skip

_PLACEHOLDER_RE = lazy(
    r"""
      (.)\1*                               # one repeated character: ****, xxxx, ....
    | \$\{[^}]*\}? | \$\(.*\)? | \$[A-Za-z_]\w*   # shell / compose variable references
    | %\(?\w*\)?[sdr]? | %[A-Za-z_]\w*%    # printf-style, Windows %VAR%
    | \{\{.*\}\}? | \{[\w.]*\}             # templates, str.format fields
    | <[^>]*>?                             # <your-token>
    | \[REDACTED:.*                        # our own marker
    | (?:/|~/|\./|\.\./|[A-Za-z]:\\)[\w./\\-]*   # file paths, not secrets
    """,
    re.VERBOSE | re.ASCII | re.DOTALL,
)
_PLACEHOLDER_SUBSTR_RE = lazy(
    r"your|example|x{4,}|\*{3,}|\.{3}|[_-]here\b|replace[_-]?me|changeme",
    re.IGNORECASE | re.ASCII,
)
NUMBER_RE = lazy(r"[-+]?\d+(?:[.,]\d+)*")
IDENT_RE = lazy(r"[A-Za-z_][A-Za-z0-9_]*")
DOTTED_RE = lazy(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+\.?", re.ASCII)
CREDENTIAL_WORD_RE = lazy(r"pass|pwd|secret|token|key|cred|auth", re.IGNORECASE)
SYMBOL_RE = lazy(r"[!@#$%^&*+=~?/\\|]")
_RUN_RE = lazy(r"(.)\1{5}")
# Character-class tests as compiled searches: on long values a Python-level
# any(c.isdigit() for c in v) costs more than everything else in a rejection.
DIGIT_RE = lazy(r"[0-9]")
ALPHA_RE = lazy(r"[A-Za-z]")
UPPER_RE = lazy(r"[A-Z]")
_SPACE_RE = lazy(r"\s")
# A path segment reads as a word or a number ("Projects", "v2", "2024"); random key
# material almost never splits into those at every "/".
PATH_SEGMENT_RE = lazy(r"[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+")


def is_placeholder(value: str) -> bool:
    """True for documentation stand-ins; redacting those would only add noise."""
    v = value.strip()
    return (
        not v
        or v.lower() in _PLACEHOLDER_WORDS
        or (_PLACEHOLDER_RE.fullmatch(v) is not None and not _random_after_slash(v))
        or _PLACEHOLDER_SUBSTR_RE.search(v) is not None
    )


def _random_after_slash(v: str) -> bool:
    """"/7JMPOHxs7d8CPCxjYRX" is base64 key material that happens to start with "/": one
    segment that reads as no path segment does (a word, a number) is not a path."""
    return (
        v.startswith("/")
        and "/" not in v[1:]
        and looks_random(v[1:])
        and PATH_SEGMENT_RE.fullmatch(v[1:]) is None
    )


def entropy(value: str) -> float:
    """Shannon entropy per character; random tokens score well above prose or slugs."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def looks_random(value: str) -> bool:
    """Machine-generated credential shape: long, no spaces, letters and digits, high entropy.

    Used when the label alone ("token", "secret") is too common in LLM conversations to
    be trusted, so the value has to carry the evidence.
    """
    return (
        len(value) >= 16
        and _SPACE_RE.search(value) is None
        and DIGIT_RE.search(value) is not None
        and ALPHA_RE.search(value) is not None
        and _RUN_RE.search(value) is None
        and entropy(value) >= 3.0
    )


def not_dummy(token: str) -> bool:
    """Reject 'ghp_xxxxxxxx...' style stand-ins; a random token has no 6-char runs."""
    return _RUN_RE.search(token) is None and "EXAMPLE" not in token


