"""Mask credentials in transcript text before it is written to the vault.

Transcripts are stored verbatim and pushed to git, where history makes a leaked secret
permanent, so masking happens in memory on the way in. Two constraints shape the design:

* Ingest must sustain >= 20k turns/s, so a secret-free turn may cost only a few
  microseconds. detect-secrets (Yelp) was measured on a 300-character turn at ~4500 us
  through its ad-hoc ``scan_line`` and ~480 us calling its plugins directly, and it reports
  secret *values*, not offsets. It is therefore not used at run time; its plugin regexes,
  entropy idea and gitleaks' rules were the source for the formats below. Here one
  prefilter regex, built so that CPython's engine can skip ahead in C to a few rare
  characters, decides which detectors run at all (~3 us of the ~5 us a clean turn costs).
* Everything that is not a secret must survive byte for byte, because the vault is a
  verbatim record with provenance. So only the secret value is replaced, never its label,
  and ambiguous prose ("password: see the vault") is left alone. Generic ``key = value``
  assignments get an extra check that the value looks like a secret and not like a
  placeholder, a variable reference or an English word.

Re-ingesting a vault must not change it, so :func:`redact` is idempotent: markers
(``[REDACTED:kind]``) are shaped so that no detector matches them, and
:func:`find_secrets` rescans its own output until nothing new turns up.

The vendor formats follow gitleaks' rule set (config/gitleaks.toml), the catalogue most
teams trust, rewritten here rather than loaded: its rules are Go RE2 patterns built around
(?i) and \b plus a keyword pass, which in CPython's engine cost 10-25x more than the
literal-led patterns below, no package on PyPI ships a maintained copy of them, and memctl
must run offline with nothing vendored. Each rule keeps gitleaks' prefix and body shape;
the prefilter finds it by its separator or a rare letter.

Regexes here avoid re.IGNORECASE and leading lookbehinds or ``\b`` on purpose, and work
on a lower-cased copy instead: both stop CPython's engine from skipping ahead to a literal
prefix, which measured 10-25x slower on long text.
"""

from __future__ import annotations

import base64
import binascii
import json
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["KINDS", "MARKER_RE", "Finding", "find_secrets", "marker", "redact", "redact_field"]


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


MARKER_RE = re.compile(r"\[REDACTED:[a-z0-9-]+\]")

# Lower number wins when two detectors claim overlapping text: a vendor-specific format
# says more about what leaked (and which key to rotate) than "generic-secret" does.
KINDS: dict[str, int] = {
    "private-key": 0,
    "anthropic-key": 1,
    "openai-key": 2,
    "github-token": 3,
    "gitlab-token": 3,
    "aws-access-key": 3,
    "slack-webhook": 3,
    "slack-token": 3,
    "stripe-key": 3,
    "google-api-key": 3,
    "huggingface-token": 3,
    "npm-token": 3,
    "pypi-token": 3,
    "sendgrid-key": 3,
    "aws-secret-key": 3,
    "twilio-key": 3,
    "discord-token": 3,
    "mailgun-key": 3,
    "shopify-token": 3,
    "digitalocean-token": 3,
    "linear-key": 3,
    "atlassian-token": 3,
    "telegram-token": 3,
    "age-key": 3,
    "postman-key": 3,
    "doppler-token": 3,
    "sentry-token": 3,
    "databricks-token": 3,
    "pulumi-token": 3,
    "grafana-token": 3,
    "heroku-key": 3,
    "planetscale-token": 3,
    "rubygems-token": 3,
    "notion-token": 3,
    "dynatrace-token": 3,
    "brevo-key": 3,
    "perplexity-key": 3,
    "vault-token": 3,
    "groq-key": 3,
    "square-token": 3,
    "mapbox-token": 3,
    "1password-token": 3,
    "flyio-token": 3,
    "prefect-key": 3,
    "easypost-key": 3,
    "frameio-token": 3,
    "alibaba-key": 3,
    "clojars-token": 3,
    "newrelic-key": 3,
    "xai-key": 3,
    "replicate-token": 3,
    "artifactory-key": 3,
    "jwt": 10,
    "password-in-url": 20,
    "basic-auth": 21,
    "bearer-token": 22,
    "generic-secret": 30,
}

_Span = tuple[int, int, str]
_GLUED_RUN_RE = re.compile(r"[A-Za-z0-9_-]*")

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

_PLACEHOLDER_RE = re.compile(
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
_PLACEHOLDER_SUBSTR_RE = re.compile(
    r"your|example|x{4,}|\*{3,}|\.{3}|[_-]here\b|replace[_-]?me|changeme",
    re.IGNORECASE | re.ASCII,
)
_NUMBER_RE = re.compile(r"[-+]?\d+(?:[.,]\d+)*")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DOTTED_RE = re.compile(r"[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+\.?", re.ASCII)
_CREDENTIAL_WORD_RE = re.compile(r"pass|pwd|secret|token|key|cred|auth", re.IGNORECASE)
_SYMBOL_RE = re.compile(r"[!@#$%^&*+=~?/\\|]")
_RUN_RE = re.compile(r"(.)\1{5}")
# Character-class tests as compiled searches: on long values a Python-level
# any(c.isdigit() for c in v) costs more than everything else in a rejection.
_DIGIT_RE = re.compile(r"[0-9]")
_ALPHA_RE = re.compile(r"[A-Za-z]")
_UPPER_RE = re.compile(r"[A-Z]")
_SPACE_RE = re.compile(r"\s")


def _is_placeholder(value: str) -> bool:
    """True for documentation stand-ins; redacting those would only add noise."""
    v = value.strip()
    return (
        not v
        or v.lower() in _PLACEHOLDER_WORDS
        or _PLACEHOLDER_RE.fullmatch(v) is not None
        or _PLACEHOLDER_SUBSTR_RE.search(v) is not None
    )


def _entropy(value: str) -> float:
    """Shannon entropy per character; random tokens score well above prose or slugs."""
    n = len(value)
    return -sum(c / n * math.log2(c / n) for c in Counter(value).values())


def _looks_random(value: str) -> bool:
    """Machine-generated credential shape: long, no spaces, letters and digits, high entropy.

    Used when the label alone ("token", "secret") is too common in LLM conversations to
    be trusted, so the value has to carry the evidence.
    """
    return (
        len(value) >= 16
        and _SPACE_RE.search(value) is None
        and _DIGIT_RE.search(value) is not None
        and _ALPHA_RE.search(value) is not None
        and _RUN_RE.search(value) is None
        and _entropy(value) >= 3.0
    )


def _not_dummy(token: str) -> bool:
    """Reject 'ghp_xxxxxxxx...' style stand-ins; a random token has no 6-char runs."""
    return _RUN_RE.search(token) is None and "EXAMPLE" not in token


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
    check: Callable[[str], bool] = _not_dummy


_SLUG_RE = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+){2,}")


def _openai_ok(token: str) -> bool:
    """'sk-' is also a plain word prefix; demand a random body rather than a hyphenated slug."""
    body = token[3:]
    return (
        _not_dummy(body) and _DIGIT_RE.search(body) is not None and _SLUG_RE.fullmatch(body) is None
    )


_TOKEN_RULES: tuple[_TokenRule, ...] = (
    _TokenRule(
        "anthropic-key", "-", ("sk-ant-",),
        re.compile(r"sk-ant-[a-z]{2,10}\d{0,3}-[A-Za-z0-9_-]{20,}"),
    ),
    _TokenRule(
        "openai-key", "-", ("sk-",), re.compile(r"sk-(?!ant-)[A-Za-z0-9_-]{32,}"), _openai_ok,
    ),
    _TokenRule("gitlab-token", "-", ("glpat-",), re.compile(r"glpat-[A-Za-z0-9_-]{20,}")),
    _TokenRule(
        "slack-token", "-", ("xox", "xapp-"),
        re.compile(r"xox[abposre]-[A-Za-z0-9-]{10,}|xapp-\d-[A-Za-z0-9-]{20,}"),
    ),
    _TokenRule("pypi-token", "-", ("pypi-AgE",), re.compile(r"pypi-AgE[A-Za-z0-9_-]{50,}")),
    _TokenRule(
        "github-token", "_", ("gh", "github_pat_"),
        re.compile(r"gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,}"),
    ),
    _TokenRule(
        "stripe-key", "_", ("k_live_", "k_test_", "whsec_"),
        re.compile(r"[sr]k_(?:live|test)_[A-Za-z0-9]{16,}|whsec_[A-Za-z0-9]{24,}"),
    ),
    _TokenRule(
        "huggingface-token", "_", ("hf_",), re.compile(r"hf_[A-Za-z]{30,}(?![A-Za-z0-9_])"),
        lambda t: _not_dummy(t) and _UPPER_RE.search(t, 3) is not None,
    ),
    _TokenRule("npm-token", "_", ("npm_",), re.compile(r"npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])")),
    _TokenRule(
        "aws-access-key", "A", ("KIA", "SIA", "BIA", "CCA", "A3T"),
        re.compile(r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z0-9]{16}(?![A-Za-z0-9])"),
    ),
    _TokenRule("google-api-key", "A", ("AIza",), re.compile(r"AIza[A-Za-z0-9_-]{35}")),
    _TokenRule(
        "sendgrid-key", "G", ("SG.",),
        re.compile(r"SG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}"),
    ),
    _TokenRule(
        # Header and payload are base64url JSON objects, hence "eyJ" and "ey"/"ew".
        "jwt", "J", ("eyJ",),
        re.compile(r"eyJ[A-Za-z0-9_-]{8,}\.e[yw][A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]*"),
        lambda t: True,
    ),
    # Vendor formats after gitleaks' rules (config/gitleaks.toml): prefix and body shape.
    _TokenRule(
        "gitlab-token", "-",
        ("glrt-", "gldt-", "glptt-", "glft-", "glsoat-", "glcbt-", "gloas-", "glimt-", "glagent-",
         "glffct-"),
        re.compile(r"gl(?:rt|dt|ptt|ft|soat|cbt|oas|imt|agent|ffct)-[A-Za-z0-9_-]{20,}"),
    ),
    _TokenRule("twilio-key", "k", ("SK",), re.compile(r"SK[0-9a-fA-F]{32}(?![A-Za-z0-9])")),
    _TokenRule("mailgun-key", "-", ("key-",), re.compile(r"key-[0-9a-f]{32}(?![A-Za-z0-9])")),
    _TokenRule("shopify-token", "_", ("shp",), re.compile(r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}")),
    _TokenRule("digitalocean-token", "_", ("_v1_",), re.compile(r"do[opr]_v1_[a-f0-9]{64}")),
    _TokenRule("linear-key", "_", ("lin_api_",), re.compile(r"lin_api_[A-Za-z0-9]{40}")),
    _TokenRule("atlassian-token", "3", ("ATATT3",), re.compile(r"ATATT3[A-Za-z0-9_\-=]{100,}")),
    _TokenRule(
        "age-key", "-", ("AGE-SECRET-KEY-1",),
        re.compile(r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}"), lambda t: True,
    ),
    _TokenRule("postman-key", "-", ("PMAK-",), re.compile(r"PMAK-[a-fA-F0-9]{24}-[a-fA-F0-9]{34}")),
    _TokenRule(
        "doppler-token", ".", ("dp.",),
        re.compile(r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}"),
    ),
    _TokenRule(
        "sentry-token", "_", ("sntry",),
        re.compile(r"sntryu_[a-f0-9]{64}|sntrys_eyJ[A-Za-z0-9+/=_]{40,}"),
    ),
    _TokenRule(
        "databricks-token", "p", ("dapi",), re.compile(r"dapi[a-f0-9]{32}(?:-\d)?(?![A-Za-z0-9])"),
    ),
    _TokenRule("pulumi-token", "-", ("pul-",), re.compile(r"pul-[a-f0-9]{40}(?![A-Za-z0-9])")),
    _TokenRule(
        "grafana-token", "_", ("glsa_", "glc_"),
        re.compile(r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,3}"),
    ),
    _TokenRule("heroku-key", "-", ("HRKU-",), re.compile(r"HRKU-AA[0-9a-zA-Z_-]{58}")),
    _TokenRule(
        "planetscale-token", "_", ("pscale_",),
        re.compile(r"pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_=.-]{32,64}"),
    ),
    _TokenRule("rubygems-token", "_", ("rubygems_",), re.compile(r"rubygems_[a-f0-9]{48}")),
    _TokenRule("notion-token", "_", ("ntn_",), re.compile(r"ntn_[0-9]{11}[A-Za-z0-9]{35}")),
    _TokenRule(
        "dynatrace-token", ".", ("dt0c01.",),
        re.compile(r"dt0c01\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{64}"),
    ),
    _TokenRule(
        "brevo-key", "-", ("xkeysib-", "xsmtpsib-"),
        re.compile(r"x(?:keysib|smtpsib)-[a-f0-9]{64}-[A-Za-z0-9]{16}"),
    ),
    _TokenRule("perplexity-key", "-", ("pplx-",), re.compile(r"pplx-[A-Za-z0-9]{48}")),
    _TokenRule("vault-token", ".", ("hvs.", "hvb."), re.compile(r"hv[sb]\.[A-Za-z0-9_-]{24,}")),
    _TokenRule("groq-key", "_", ("gsk_",), re.compile(r"gsk_[A-Za-z0-9]{48,}")),
    _TokenRule("xai-key", "-", ("xai-",), re.compile(r"xai-[A-Za-z0-9]{60,}")),
    _TokenRule(
        "replicate-token", "_", ("r8_",), re.compile(r"r8_[A-Za-z0-9]{37}(?![A-Za-z0-9])"),
    ),
    _TokenRule("square-token", "-", ("sq0",), re.compile(r"sq0(?:atp|csp)-[A-Za-z0-9_-]{22,60}")),
    _TokenRule(
        "mapbox-token", ".", ("sk.eyJ",),
        re.compile(r"sk\.eyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}"),
    ),
    _TokenRule(
        "1password-token", "_", ("ops_eyJ",), re.compile(r"ops_eyJ[A-Za-z0-9+/]{100,}={0,3}"),
    ),
    _TokenRule("flyio-token", "_", ("fo1_",), re.compile(r"fo1_[A-Za-z0-9_-]{43}")),
    _TokenRule("prefect-key", "_", ("pnu_",), re.compile(r"pnu_[A-Za-z0-9]{36}")),
    _TokenRule("easypost-key", "k", ("EZAK", "EZTK"), re.compile(r"EZ[AT]K[A-Za-z0-9]{54}")),
    _TokenRule("frameio-token", "-", ("fio-u-",), re.compile(r"fio-u-[A-Za-z0-9_=-]{64}")),
    _TokenRule("alibaba-key", "i", ("LTAI",), re.compile(r"LTAI[A-Za-z0-9]{20}(?![A-Za-z0-9])")),
    _TokenRule("clojars-token", "_", ("CLOJARS_",), re.compile(r"CLOJARS_[a-z0-9]{60}")),
    _TokenRule(
        "newrelic-key", "-", ("NRAK-", "NRII-", "NRJS-"),
        re.compile(r"NR(?:AK|II|JS)-[A-Za-z0-9-]{19,40}"),
    ),
    _TokenRule("artifactory-key", "p", ("AKCp",), re.compile(r"AKCp[A-Za-z0-9]{69}")),
    _TokenRule(
        # the base64 of a Discord user id, a timestamp and an HMAC, dot-joined
        "discord-token", ".", ("M", "N", "O"),
        re.compile(r"[MNO][A-Za-z0-9_-]{23,27}\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}"),
    ),
    _TokenRule(
        "slack-webhook", ":", ("hooks.slack.com",),
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/]{20,}"),
    ),
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


def _find_tokens(text: str, families: set[str]) -> Iterator[_Span]:
    for rule in _TOKEN_RULES:
        if rule.family in families and any(t in text for t in rule.triggers):
            for m in rule.pattern.finditer(text):
                start = m.start()
                if _unglued(text, start) and rule.check(m.group()):
                    yield start, m.end(), rule.kind
    if "t" in families:
        for m in _TELEGRAM_RE.finditer(text):
            if _unglued(text, m.start()) and _not_dummy(m.group()):
                yield m.start(), m.end(), "telegram-token"


# A Telegram bot token: the bot's numeric id, a colon, then "AA" and 33 more characters.
_TELEGRAM_RE = re.compile(r"[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])")
# An AWS secret access key has no prefix of its own: 40 base64 characters, which on their
# own could be any other base64. So it is only taken with evidence beside it: an access
# key id anywhere in the same text (the two are pasted together, but a chat may put a
# page of prose between them), the words that name it ("aws", "secret access key")
# nearby, or a short line of its own in a short text. And only when it mixes cases and
# digits like generated key material and is not shaped like a path or a blob's last line.
_AWS_ID_RE = re.compile(r"(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}")
# "=" may come before ("aws_secret_access_key=..."), not after: then it is padded base64.
# A JSON-escaped line break ("\\n") before it is a line break, not an "n" glued to it.
_AWS_SECRET_RE = re.compile(
    r"(?:(?<![A-Za-z0-9+/])|(?<=\\[nrt]))[A-Za-z0-9+/]{40}(?![A-Za-z0-9+/=])"
)
# Whole base64 runs of 40 or more, measured in Python. Led by the character before the
# run, so that inside a word the engine fails at once instead of re-reading the word from
# each of its letters (~3x faster than a lookbehind or a bare run pattern).
_B64_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
_B64_RUN_RE = re.compile(r"[^A-Za-z0-9+/]([A-Za-z0-9+/]{40,})")
_B64_RUN_AT_RE = re.compile(r"[A-Za-z0-9+/]{40,}")
# How far from the naming words a key is still theirs: "Use <key> as the secret access
# key" puts it before them, "AWS secret (don't share): <key>" after.
_AWS_BEFORE = 160
_AWS_AFTER = 200
_LOWER_RE = re.compile(r"[a-z]")
# A path segment reads as a word or a number ("Projects", "v2", "2024"); random key
# material almost never splits into those at every "/".
_PATH_SEGMENT_RE = re.compile(r"[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+")
# The line above is a full line of base64 (a blob wrapped at 64 or 76 characters), so
# this one is the blob's short last line.
_BLOB_ABOVE_RE = re.compile(r"[A-Za-z0-9+/=]{60}[ \t]*(?:\r?\n|(?:\\r)?\\n)[ \t]*\Z")


def _aws_secret_ok(value: str) -> bool:
    return (
        _UPPER_RE.search(value) is not None
        and _LOWER_RE.search(value) is not None
        and _DIGIT_RE.search(value) is not None
        and _not_dummy(value)
        and _entropy(value) >= 4.0
        and not (
            value.count("/") >= 2
            and all(_PATH_SEGMENT_RE.fullmatch(seg) for seg in value.split("/") if seg)
        )
    )


def _aws_candidate(text: str, start: int, end: int) -> bool:
    return _aws_secret_ok(text[start:end]) and not _BLOB_ABOVE_RE.search(
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


def _aws_secrets(
    text: str, low: str, any_id: bool, words: list[int], taken: list[_Span]
) -> Iterator[_Span]:
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


_LINE_SPLIT_RE = re.compile(r"\r?\n|(?:\\r)?\\n")
_ALONE_MAX = 256


def _alone_aws_secrets(text: str) -> list[_Span]:
    """Lines of a short text (a title, a preamble, a one-line reply) that are nothing but a
    pasted secret access key, perhaps behind a heading or list marker."""
    out: list[_Span] = []
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


# ---------------------------------------------------------------------------------------
# PEM private keys
# ---------------------------------------------------------------------------------------

_PEM_BEGIN_RE = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----")
# Without an END line (a truncated paste) keep going while the text still looks like key
# material, so half a key is not written out; stop at the first line of prose. Lines may
# be separated by real newlines or by JSON-escaped "\n".
_PEM_BODY_RE = re.compile(
    r"(?:(?:[ \t]*(?:\r?\n|\\r\\n|\\n))+[ \t]*"
    r"(?:[A-Za-z0-9+/=]{8,}|(?:Proc-Type|DEK-Info|Comment|Version):[^\r\n\\]*)"
    r"[ \t]*(?=\r?\n|\\r|\\n|\Z))+"
)
_PEM_MAX = 64 * 1024
_KEY_MATERIAL_RE = re.compile(r"[A-Za-z0-9+/=]{16}")


def _find_private_keys(text: str) -> Iterator[_Span]:
    # Where the next END line of each key type is (-1: none left), so a text full of
    # BEGIN lines without END costs one search per type, not one per header.
    next_end: dict[str, int] = {}
    pos = 0
    while (m := _PEM_BEGIN_RE.search(text, pos)) is not None:
        end_line = f"-----END {m.group(1)}-----"
        end = next_end.get(end_line, 0)
        if 0 <= end < m.end():
            end = next_end[end_line] = text.find(end_line, m.end())
        if end >= 0 and end - m.end() <= _PEM_MAX and _KEY_MATERIAL_RE.search(text, m.end(), end):
            end += len(end_line)
        elif body := _PEM_BODY_RE.match(text, m.end()):
            end = body.end()
        else:
            pos = m.end()  # a header quoted in prose: nothing secret follows it
            continue
        yield m.start(), end, "private-key"
        pos = end


# ---------------------------------------------------------------------------------------
# Credentials recognised by their context
# ---------------------------------------------------------------------------------------

# Matched from just after "://" (found with str.find) so prose with many URLs stays cheap.
# Bounded so that a long line packed with URLs cannot make this quadratic.
_URL_USERINFO_RE = re.compile(r"[^\s:/?#@\[\]\"'<>`]{0,256}:(?P<pw>[^\s/?\"'<>`]{1,256})@")
# A userinfo that is one token and no password (a Sentry DSN's key, a token as user name).
_URL_TOKEN_RE = re.compile(r"(?P<tok>[A-Za-z0-9_-]{16,256})@")


def _find_url_passwords(text: str) -> Iterator[_Span]:
    pos = text.find("://")
    while pos >= 0:
        if pos > 0 and text[pos - 1].isalnum():  # a scheme, not a stray "://"
            m = _URL_USERINFO_RE.match(text, pos + 3)
            if m is not None:
                pw = m.group("pw")
                # A bare short number is a port in "host:8080@...", not a password.
                if not _is_placeholder(pw) and not (pw.isdigit() and len(pw) <= 5):
                    yield m.start("pw"), m.end("pw"), "password-in-url"
            else:
                t = _URL_TOKEN_RE.match(text, pos + 3)
                if t is not None and _looks_random(t.group("tok")):
                    yield t.start("tok"), t.end("tok"), "password-in-url"
        pos = text.find("://", pos + 3)


# These run on the lower-cased text (values are then read from the original) and start
# with a literal, with the word boundary checked in Python: re.IGNORECASE or a leading \b
# stops the engine from skipping ahead to the literal and made them ~25x slower.
_BEARER_RE = re.compile(r"bearer[ \t]+(?P<v>[a-z0-9._~+/-]{16,}=*)")
_BASIC_RE = re.compile(r"basic[ \t]+(?P<v>[a-z0-9+/]{6,}={0,2})(?![a-z0-9+/=])")
_AUTH_HEADER_RE = re.compile(
    r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"(?:(?:token|apikey|api-key|key|sso-key|otp)[ \t]+)?(?P<v>[a-z0-9._~+/=-]{16,})"
)
_CURL_USER_RE = re.compile(
    r"curl\b[^\n]{0,512}?[ \t](?:-u|--user)(?:[ \t]+|=)['\"]?[^\s:'\"]*:(?P<v>[^\s'\"]+)"
)


def _is_basic_credential(value: str) -> bool:
    """'Basic <b64>' only counts if it decodes to 'user:password'; 'Basic authentication' won't."""
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    return ":" in decoded and decoded.isprintable()


def _find_http_auth(text: str, low: str, hits: set[str]) -> Iterator[_Span]:
    checks: list[tuple[str, re.Pattern[str], Callable[[str], bool], str]] = [
        ("bearer", _BEARER_RE, _random_credential, "bearer-token"),
        ("basic", _BASIC_RE, _is_basic_credential, "basic-auth"),
        # "Authorization: Token ..." and the other non-Bearer schemes
        ("zation", _AUTH_HEADER_RE, _random_credential, "bearer-token"),
        ("curl", _CURL_USER_RE, _curl_password, "basic-auth"),
    ]
    for hit, pattern, accept, kind in checks:
        if hit in hits:
            for m in pattern.finditer(low):
                if m.start() > 0 and low[m.start() - 1].isalnum():
                    continue  # "xbearer", "sbasic": part of a longer word
                start, end = m.span("v")
                if accept(text[start:end]):
                    yield start, end, kind


def _random_credential(value: str) -> bool:
    return _looks_random(value) and not _is_placeholder(value)


def _curl_password(value: str) -> bool:
    return not _is_placeholder(value) and not value.isdigit()


# Generic assignments are matched from the end of a keyword the prefilter found: an
# optional environment suffix, a closing quote/bracket, an operator and a value. Applied
# to the lower-cased text; the value is then read from the original.
_ASSIGNMENT = r"""
    (?P<suffix>[_-](?:prod|production|dev|development|staging|stage|test|local|live
      |value|raw|plain|b64|base64|\d+))?
    (?:\\?["'])?\]?
    (?P<op>[ \t]*(?::=|=>|=|:)[ \t]*)
    (?:
        \\"(?P<ev>[^"\\\n]{0,4096})\\"
      | "(?P<dq>(?:[^"\\\n]|\\.){0,4096})"
      | '(?P<sq>(?:[^'\\\n]|\\.){0,4096})'
      | (?P<uv>[^\s"'`<>,;&)\]}=][^\s"'`<>,;&)\]}]{0,255})
    )
"""
# Unquoted values are capped above so a long run packed with keywords stays linear; an
# accepted value is then extended to the end of its run so no tail of it survives.
_UNQUOTED_REST_RE = re.compile(r"[^\s\"'`<>,;&)\]}]*")
# How a keyword found by the prefilter may continue and still be the label's end.
_COMPLETIONS = {"pass": "(?:word|wd|phrase)?", "credential": "s?"}
# <password>value</password> (Maven settings.xml, app.config ...): the closing tag must
# repeat the label, which rules out prose that merely contains "password>".
_XML_TAIL_RE = re.compile(
    r"(?P<cont>[a-z0-9_.:-]{0,16})>(?P<xv>[^<\n]{1,4096})</(?P<close>[a-z0-9_.:-]{1,64})>"
)
_GENERIC_TAILS: dict[str, re.Pattern[str]] = {
    # "cont" completes the keyword the prefilter stopped at: pass -> password, ...
    word: re.compile(f"(?P<cont>{_COMPLETIONS.get(word, '')}){_ASSIGNMENT}", re.ASCII | re.VERBOSE)
    for word in ("pass", "credential", "pwd", "token", "secret", "key")
}
# Labels that are credentials by themselves. A bare "token" or "secret" is too common in
# conversations about LLMs and crypto for its value to be trusted without looking random.
_STRONG_LABEL_RE = re.compile(
    r"(?:pass(?:word|wd|phrase)?|pwd|(?:secret|api|access|private|auth|account)[_-]?key|apikey"
    r"|(?:access|refresh|auth|api|bot|bearer|session|client|oauth|personal)[_-]?token"
    r"|(?:client|app|api|webhook|signing|jwt|shared)[_-]?secret)\Z"
)
_PASSWORD_LABEL_RE = re.compile(r"(?:pass(?:word|wd|phrase)?|pwd?)\Z")
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
# After an unquoted "key: value" there must be nothing else on the line, otherwise it is
# prose ("password: see the vault") rather than a YAML/header-style assignment.
_LINE_END_RE = re.compile(r"[ \t]*(?:$|[\r\n\"'`,;})\]#]|\\n)")


def _key_start(text: str, kw_start: int) -> int:
    i = kw_start
    while i > 0 and text[i - 1] in _KEY_CHARS:
        i -= 1
    return i


def _generic_value_ok(
    text: str, m: re.Match[str], key: str, label: str, value: str, quoted: bool
) -> bool:
    """Decide whether an assignment to a credential-looking label holds a real secret.

    ``key`` is the label as written (case matters for .env detection), ``label`` the same
    without an environment suffix and lower-cased.
    """
    op = m.group("op").strip()
    env_style = m.group("op") == "=" and key == key.upper() and key[:1].isalpha()
    strong = env_style or _STRONG_LABEL_RE.search(label) is not None
    if quoted:
        if not strong:
            return _looks_random(value) and not _is_placeholder(value)
        return len(value.strip()) >= 3 and not _is_placeholder(value)
    # Unquoted: reject what code and prose put after a label (cheapest tests first).
    if op == ":" and _LINE_END_RE.match(text, m.end()) is None:
        return False
    if (
        value[0] in "$%@&*!([{"
        or "://" in value
        or any(c in value for c in "([{")
        or _NUMBER_RE.fullmatch(value)
        or _DOTTED_RE.fullmatch(value)
    ):
        return False
    if not strong:
        return _looks_random(value) and not _is_placeholder(value)
    if _is_placeholder(value):
        return False
    if env_style:
        return len(value) >= 3  # .env / shell: the right-hand side is always a literal
    if (
        _IDENT_RE.fullmatch(value)
        and _CREDENTIAL_WORD_RE.search(value)
        and ("_" in value or _DIGIT_RE.search(value) is None)
    ):
        return False  # password=db_password, api_key=API_KEY: a variable, not a value
    if (
        _IDENT_RE.fullmatch(value)
        and _DIGIT_RE.search(value) is None
        and ("_" in value or value.islower() or value[1:].islower())
    ):
        return False  # password=hashed, password: required -- words and variables
    return len(value) >= 6 and (
        _DIGIT_RE.search(value) is not None
        or _SYMBOL_RE.search(value) is not None
        or not value[1:].islower()
        or (_PASSWORD_LABEL_RE.search(label) is not None and _passphrase_like(value))
    )


def _xml_element(text: str, low: str, word: str, kw_end: int) -> _Span | None:
    m = _XML_TAIL_RE.match(low, kw_end)
    if m is None or not re.fullmatch(_COMPLETIONS.get(word, ""), m.group("cont")):
        return None
    key_start = _key_start(low, kw_end - len(word))
    label = low[key_start : m.end("cont")]
    if low[key_start - 1 : key_start] != "<" or m.group("close") != label:
        return None
    start, end = m.span("xv")
    value = text[start:end]
    strong = _STRONG_LABEL_RE.search(label) is not None
    ok = len(value.strip()) >= 3 if strong else _looks_random(value)
    return (start, end, "generic-secret") if ok and not _is_placeholder(value) else None


def _find_generic(text: str, low: str, keywords: list[tuple[str, int]]) -> Iterator[_Span]:
    covered = 0
    for word, kw_end in keywords:
        if kw_end <= covered:
            continue  # inside a value already taken ("password=password=...")
        m = _GENERIC_TAILS[word].match(low, kw_end)
        if m is None:
            if (xml := _xml_element(text, low, word, kw_end)) is not None:
                covered = xml[1]
                yield xml
            continue
        kw_start = kw_end - len(word)
        label_end = m.end("cont")
        if word == "pass" and label_end == kw_end and text[kw_start - 1 : kw_start].islower():
            continue  # bypass, compass, surpass (but DBPASS, DB_PASS are labels)
        key_start = _key_start(text, kw_start)
        if text.startswith("[REDACTED:", key_start - 10):
            continue  # the kind inside our own marker ("...:aws-access-key]=") is no label
        key = text[key_start : m.end("suffix") if m.group("suffix") else label_end]
        label = low[key_start:label_end]
        group = m.lastgroup or "uv"  # the value alternative that matched closes last
        quoted = group != "uv"
        start, end = m.span(group)
        value = text[start:end]
        if not quoted and value.endswith(".") and len(value) > 1:
            value, end = value[:-1], end - 1  # sentence full stop, not part of the secret
        if _generic_value_ok(text, m, key, label, value, quoted):
            if not quoted and end == m.end(group):
                end = _UNQUOTED_REST_RE.match(text, end).end()  # type: ignore[union-attr]
            covered = end
            yield start, end, "generic-secret"


# "--password VALUE": the one place where a space is the assignment operator.
_FLAG_RE = re.compile(
    r"-[a-z0-9-]*?(?P<kw>password|passwd|passphrase|pass|pwd|secret|token|api-key|apikey|key)"
    r"[ \t]+(?:\"(?P<dq>[^\"\n]*)\"|'(?P<sq>[^'\n]*)'|(?P<uv>[^\s\"'`;|&<>]+))"
)


def _find_flags(text: str, low: str, starts: list[int]) -> Iterator[_Span]:
    for pos in starts:
        m = _FLAG_RE.match(low, pos)
        if m is None:
            continue
        group = m.lastgroup or "uv"
        start, end = m.span(group)
        value = text[start:end]
        if _is_placeholder(value) or value[0] in "$%-":
            continue
        label = low[pos + 1 : m.end("kw")]
        if len(value) >= 4 if _STRONG_LABEL_RE.search(label) else _looks_random(value):
            yield start, end, "generic-secret"


# "my password is X", "twilio auth token X", "machine h login u password X": the label is
# followed by a space (and maybe "is"/"was") instead of an operator, so the value carries
# the evidence: a password must look like one (digits, symbols or mixed case, no word, or
# a passphrase of joined content words where the text says the password *is* it),
# anything else must look machine-made.
_PROSE_VALUE_RE = re.compile(
    r"(?P<said>[ \t]+(?:is|was)|[ \t]*:)?[ \t]*:?[ \t]+"
    r"(?:\"(?P<dq>[^\"\s]{4,128})\"|'(?P<sq>[^'\s]{4,128})'|(?P<uv>[^\s\"'`<>,;()\[\]{}]{4,256}))"
)
_HEXISH_RE = re.compile(r"[0-9a-f]+|[0-9A-F]+|[0-9a-f]{8}-[0-9a-f-]{27}")
_PROSE_LABEL_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")


def _prose_label(low: str, kw_start: int) -> str:
    """The word before the keyword as well ("auth token", "api secret"), joined by "_"."""
    i = kw_start
    while i > 0 and low[i - 1] in _PROSE_LABEL_CHARS:
        i -= 1
    label = low[i:kw_start]
    if i > 1 and low[i - 1] == " ":
        j = i - 1
        while j > 0 and low[j - 1] in _PROSE_LABEL_CHARS:
            j -= 1
        label = low[j : i - 1] + "_" + label
    return label


# English closed-class words (articles, prepositions, conjunctions, pronouns, numerals)
# and the prefixes of compound adjectives. A hyphenated phrase built with one of them
# ("up-to-date", "hard-to-guess", "hashed-and-salted", "self-hosted-only") modifies the
# sentence; a passphrase is a run of content words ("correct-horse-battery").
_FUNCTION_WORDS = frozenset(
    """a an the and or but nor so yet for of to in on at by up off out over under with
    without from into onto upon as per via vs not no all any each every some both either
    neither one two three four five first last next is be are was were been being it its
    me my you your we our he his she her they them their this that these those than then
    if too very well just only also ever never more most less least much many such own
    same other else non self pre post anti co re de un semi multi auto sub cross inter ex
    end how what who when where why which""".split()
)  # fmt: skip
_PASSPHRASE_RE = re.compile(r"[A-Za-z]{2,}(?:-[A-Za-z]{2,}){2,}")
_CREDENTIAL_WORDS = frozenset(
    "password passwd passphrase pass pwd pw secret token key auth credential".split()
)


def _passphrase_like(value: str) -> bool:
    """Three or more hyphen-joined content words: "correct-horse-battery-staple".

    Only taken where the text says the password *is* this value ("password is ...",
    "password: ..."); underscores are left out on purpose, since a snake_case word after
    "password" is far more often a variable than a passphrase.
    """
    return (
        _PASSPHRASE_RE.fullmatch(value) is not None
        and not _is_placeholder(value)
        and not any(
            w in _FUNCTION_WORDS or w in _CREDENTIAL_WORDS for w in value.lower().split("-")
        )
    )


def _password_like(value: str) -> bool:
    return (
        len(value) >= 6
        and not _is_placeholder(value)
        and _DOTTED_RE.fullmatch(value) is None
        and _NUMBER_RE.fullmatch(value) is None
        and (
            _SYMBOL_RE.search(value) is not None
            or (_DIGIT_RE.search(value) is not None and _ALPHA_RE.search(value) is not None)
            or (_UPPER_RE.search(value, 1) is not None and not value.isupper())
        )
    )


def _find_prose(text: str, low: str, found: list[tuple[str, int]]) -> Iterator[_Span]:
    for word, kw_end in found:
        m = _PROSE_VALUE_RE.match(text, kw_end)
        if m is None:
            continue
        group = m.lastgroup or "uv"
        start, end = m.span(group)
        value = text[start:end]
        if group == "uv":
            while value and value[-1] in ".,:?":
                value, end = value[:-1], end - 1
        if not value or value[0] in "$%@&*![{<" or "://" in value or "[REDACTED:" in value:
            continue
        if word == "password":
            ok = _password_like(value) or (m.group("said") is not None and _passphrase_like(value))
        else:
            label = _prose_label(low, kw_end - len(word) if word != "token" else kw_end - 5)
            strong = _STRONG_LABEL_RE.search(label + ("" if label.endswith(word) else word))
            ok = (
                _looks_random(value)
                and not _is_placeholder(value)
                and (strong is not None or _HEXISH_RE.fullmatch(value) is None)
            )
        if ok:
            yield start, end, "generic-secret"


# An Ethereum-style private key named as one: 64 hex digits after "private key".
_CRYPTO_KEY_RE = re.compile(
    r"private key(?:[ \t]+(?:is|was))?[ \t]*[:=]?[ \t]*[\"']?(?P<v>(?:0x)?[0-9a-f]{64})(?![0-9a-z])"
)


def _find_crypto_keys(text: str, low: str) -> Iterator[_Span]:
    for m in _CRYPTO_KEY_RE.finditer(low):
        yield m.start("v"), m.end("v"), "private-key"


# Passwords given on a command line: docker login -p X, mysql -pX, sshpass -p X.
_CLI_RES = (
    re.compile(r"docker[ \t]+login\b[^\n]{0,256}?[ \t]-p(?:[ \t]+|=)(?P<uv>[^\s\"'`;|&<>]+)"),
    re.compile(
        r"(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]{0,256}?[ \t]-p"
        r"(?P<uv>[^\s\"'`;|&<>-][^\s\"'`;|&<>]*)"
    ),
    re.compile(
        r"sshpass[ \t]+-p[ \t]*(?:'(?P<sq>[^'\n]+)'|\"(?P<dq>[^\"\n]+)\"|(?P<uv>[^\s\"'`;|&<>]+))"
    ),
)


def _find_cli_passwords(text: str, low: str) -> Iterator[_Span]:
    for pattern in _CLI_RES:
        for m in pattern.finditer(low):
            group = m.lastgroup or "uv"
            start, end = m.span(group)
            value = text[start:end]
            if (
                len(value) >= 4
                and value[0] not in "$%<{"
                and not _is_placeholder(value)
                and not (value.isalpha() and value.islower())
            ):
                yield start, end, "generic-secret"


# ---------------------------------------------------------------------------------------
# Prefilter and public API
# ---------------------------------------------------------------------------------------

# One pass over the lower-cased text finds every string some detector keys on. Each
# branch starts with a literal character that is rare in prose ("token" is found at its
# "k", "secret" at its "c", "ghp_" at its "_") and checks the rest with a lookbehind, so
# CPython's engine can skip between candidate characters in C. Named groups would say
# directly which branch matched but disable that skip (~60 us instead of ~3 us); the
# matched text is mapped back to a detector instead.
# A credential keyword only matters when an assignment operator follows within a few
# characters ("api_key =", "PASSWORD:", '"token": '); checking that here, in C, keeps
# prose about keys and tokens from reaching the Python-level checks.
_ASSIGN_AHEAD = r"""(?=[a-z0-9_-]{0,16}(?:(?:\\?["'])?\]?[ \t]*[:=]|>))"""
# "password is X", "auth token X": a label, then a space where an operator would be.
# The value must hold a digit or a symbol, checked here in C so that prose about keys and
# tokens ("the API key via the environment") never reaches the Python-level checks.
_PROSE_AHEAD = r"(?=[ \t]+(?:(?:is|was)[ \t]+)?[\"']?[^\s\"'`<>,;()\[\]{}]{0,128}?[0-9!@#$%^&*+=~])"
# After the word "password" itself any value is worth a look, since a word-only password
# ("hunter-Blue", "correct-horse-battery") has no digit or symbol to find it by here;
# "password" is rare enough in conversation for the Python-level check to be cheap.
# "pw" only counts when the text says it *is* the value ("pw: ...", "pw is ...").
_PW_AHEAD = r"(?=(?:[ \t]+(?:is|was))?[ \t]*:?[ \t]+[\"']?[^\s\"'`<>,;()\[\]{}]{6})"
_PW_SAID_AHEAD = r"(?=[ \t]*:[ \t]|[ \t]+(?:is|was)[ \t])"
# Vendor prefixes (after gitleaks' rule set) are found at their separator ("_", "-", ".")
# or at a rare letter, each checked by a lookbehind so the engine still skips ahead in C.
_PREFILTER = re.compile(
    r"_(?:(?<=gh[pousr]_)|(?<=github_pat_)|(?<=hf_)|(?<=npm_)|(?<=k_live_)|(?<=k_test_)"
    r"|(?<=whsec_)|(?<=shp.._)|(?<=_v1_)|(?<=lin_api_)|(?<=sntry._)|(?<=glsa_)|(?<=glc_)"
    r"|(?<=pscale_)|(?<=rubygems_)|(?<=ntn_)|(?<=gsk_)|(?<=r8_)|(?<=ops_)|(?<=fo1_)"
    r"|(?<=pnu_)|(?<=clojars_))"
    r"|-(?<=[a-z-]-)(?:(?<=sk-)|(?<=glpat-)|(?<=xox[abposre]-)|(?<=xapp-)|(?<=pypi-)|(?<=glrt-)"
    r"|(?<=gldt-)|(?<=glptt-)|(?<=glft-)|(?<=glsoat-)|(?<=glcbt-)|(?<=gloas-)|(?<=glimt-)"
    r"|(?<=glagent-)|(?<=glffct-)|(?<=key-)|(?<=pmak-)|(?<=pul-)|(?<=hrku-)|(?<=sib-)"
    r"|(?<=pplx-)|(?<=xai-)|(?<=sq0atp-)|(?<=sq0csp-)|(?<=fio-u-)|(?<=nrak-)|(?<=nrii-)"
    r"|(?<=nrjs-)"
    r"|(?<=--)(?=[a-z0-9-]{0,30}?(?:pass|pwd|secret|token|key)[a-z]{0,6}[ \t]))"
    r"|\.(?:(?<=dp\.)|(?<=dt0c01\.)|(?<=hv[sb]\.)|(?<=sk\.)(?=eyj)"
    r"|(?=[a-z0-9_-]{6}\.[a-z0-9_-]{27}))"
    r"|j(?<=eyj)|g\.(?<=sg\.)|z(?:(?<=aiz)a|(?<=authoriz)ation)|3(?:t(?<=a3t)|(?<=atatt3))"
    r"|sia(?<=asia)|q(?<=mysq)l|w(?<=aw)s(?![a-z])"
    rf"|k(?:ia(?<=akia)|(?<=tok)en{_ASSIGN_AHEAD}|(?<=tok)en{_PROSE_AHEAD}|ey{_ASSIGN_AHEAD}"
    rf"|ey{_PROSE_AHEAD}|(?<=sk)(?=[0-9a-f]{{32}})|(?<=ez[at]k)|(?<=access[ _-]k)e(?=y)"
    r"|(?<=accessk)e(?=y)"
    r"|(?<=dock)er[ \t]+login)"
    r"|b(?:ia(?<=abia)|earer|asic|(?<=mariadb))"
    rf"|c(?:ca(?<=acca)|(?<=sec)ret{_ASSIGN_AHEAD}|(?<=sec)ret{_PROSE_AHEAD}"
    rf"|redential{_ASSIGN_AHEAD}|url)"
    rf"|p(?:ass{_ASSIGN_AHEAD}|wd{_ASSIGN_AHEAD}|ass(?:word|wd|phrase){_PW_AHEAD}"
    rf"|ass{_PROSE_AHEAD}|w{_PW_SAID_AHEAD}"
    r"|(?<=akcp)|i(?<=dapi)(?=[0-9a-f]{32})|(?<=sshp)ass[ \t]|rivate key)"
    r"|:(?://|(?<=[0-9]:)aa(?=[a-z0-9_-]{33}))"
)
_TOKEN_FAMILY = {
    "_": "_", "-": "-", "j": "J", "g.": "G", ".": ".", "3": "3", "i": "i", "k": "k",
    "p": "p", "pi": "p", ":aa": "t",
    "za": "A", "3t": "A", "sia": "A", "kia": "A", "bia": "A", "cca": "A", "://": ":",
}  # fmt: skip
_PROSE_WORD = {
    "ken": "token", "cret": "secret", "key": "key", "pass": "password", "password": "password",
    "passwd": "password", "passphrase": "password", "pw": "password",
}  # fmt: skip
_COMMANDS = ("ql", "b", "pass ", "pass\t")
_ASSIGN_AHEAD_RE = re.compile(_ASSIGN_AHEAD)
_GENERIC_WORD = {
    "ken": "token", "cret": "secret", "key": "key", "pass": "pass", "pwd": "pwd",
    "credential": "credential",
}  # fmt: skip


def _scan(text: str) -> list[_Span]:
    """One pass of every detector the prefilter asks for; spans may overlap."""
    # Work on an ASCII projection of the same length (each non-ASCII code point becomes
    # "?"): offsets carry over to ``text`` unchanged, lower() cannot change the length (it
    # can for "\u0130"), and the regexes run on the cheaper 1-byte string kind. Every
    # secret format recognised here is ASCII.
    a = text if text.isascii() else text.encode("ascii", "replace").decode("ascii")
    low = a.lower()
    families: set[str] = set()
    hits: set[str] = set()
    keywords: list[tuple[str, int]] = []
    flags: list[int] = []
    prose: list[tuple[str, int]] = []
    aws_words: list[int] = []
    for m in _PREFILTER.finditer(low):
        hit = m.group()
        if (word := _GENERIC_WORD.get(hit)) is not None and _ASSIGN_AHEAD_RE.match(low, m.end()):
            keywords.append((word, m.end()))
        elif (word := _PROSE_WORD.get(hit)) is not None:
            if hit != "pw" or m.start() == 0 or not low[m.start() - 1].isalnum():
                prose.append((word, m.end()))
        elif hit == "ws" or hit == "ke":
            aws_words.append(m.start())  # "aws", "access key"; see _aws_secrets
        elif hit == "-" and low[m.start() - 1] == "-":
            flags.append(m.start())  # "--password VALUE"; only a lookahead, see _PREFILTER
        elif (family := _TOKEN_FAMILY.get(hit)) is not None:
            families.add(family)
            hits.add(hit)
        else:
            hits.add(hit)
    alone = _alone_aws_secrets(a) if 40 <= len(a) <= _ALONE_MAX else []
    if not (hits or families or keywords or flags or prose or aws_words):
        return alone
    if "LTAI" in a:  # no rare character to find it by; only looked for beside a label
        families.add("i")

    spans: list[_Span] = alone
    if families:
        spans.extend(_find_tokens(a, families))
    if "://" in hits:
        spans.extend(_find_url_passwords(a))
    if "private key" in hits:
        spans.extend(_find_private_keys(a))
    if not hits.isdisjoint(("bearer", "basic", "curl", "zation")):
        spans.extend(_find_http_auth(a, low, hits))
    if keywords:
        spans.extend(_find_generic(a, low, keywords))
    if flags:
        spans.extend(_find_flags(a, low, flags))
    if prose:
        spans.extend(_find_prose(a, low, prose))
    if "private key" in hits:
        spans.extend(_find_crypto_keys(a, low))
    if any(h.startswith("ker") for h in hits) or not hits.isdisjoint(_COMMANDS):
        spans.extend(_find_cli_passwords(a, low))
    if "A" in families or aws_words:
        spans.extend(list(_aws_secrets(a, low, "A" in families, aws_words, spans)))
    # Token characters glued to the end of a secret ("AIza<35 chars>AKIA...") belong to
    # the same run: mask them too rather than leave a tail of it in the vault.
    return [(s, _GLUED_RUN_RE.match(a, e).end(), k) for s, e, k in spans]  # type: ignore[union-attr]


def _merge(spans: list[_Span]) -> list[Finding]:
    """Overlapping claims become one span labelled with the most specific kind."""
    spans.sort(key=lambda s: (s[0], KINDS[s[2]]))
    merged: list[Finding] = []
    for start, end, kind in spans:
        if merged and start < merged[-1].end:
            last = merged[-1]
            best = kind if KINDS[kind] < KINDS[last.kind] else last.kind
            merged[-1] = Finding(best, last.start, max(last.end, end))
        else:
            merged.append(Finding(kind, start, end))
    return merged


# (start, end) of a marker in the redacted text and of the secret it replaced.
_Placed = tuple[int, int, int, int]


def _apply(text: str, findings: list[Finding]) -> tuple[str, list[_Placed]]:
    parts: list[str] = []
    placed: list[_Placed] = []
    pos = out_len = 0
    for f in findings:
        parts.append(text[pos : f.start])
        out_len += f.start - pos
        mark = marker(f.kind)
        parts.append(mark)
        placed.append((out_len, out_len + len(mark), f.start, f.end))
        out_len += len(mark)
        pos = f.end
    parts.append(text[pos:])
    return "".join(parts), placed


def _to_original(pos: int, placed: list[_Placed], is_end: bool) -> int:
    """Map an offset in redacted text back to ``text``; inside a marker means its secret."""
    delta = 0
    for out_start, out_end, start, end in placed:
        if pos < out_start or (is_end and pos == out_start):
            break
        if pos < out_end or (is_end and pos == out_end):
            return end if is_end else start
        delta = end - out_end
    return pos + delta


_MAX_PASSES = 8


def find_secrets(text: str) -> list[Finding]:
    """All secrets in ``text``, sorted and non-overlapping.

    Overlapping claims (``token=ghp_...`` is both a generic assignment and a GitHub token)
    are merged into one span covering both, labelled with the most specific kind, so that
    no byte of a secret survives because two detectors disagreed on its edges.

    Detectors look at context (a preceding label, the characters around a token), and
    replacing one secret changes the context of its neighbours: a Basic credential
    directly followed by a key only stands alone once the key is a marker. So the
    redacted text is scanned again and anything new is mapped back and added, until a
    pass finds nothing. That makes ``redact`` idempotent by construction; the extra pass
    only runs for text that had secrets in the first place.
    """
    findings = _merge(_scan(text))
    for _ in range(_MAX_PASSES):
        if not findings:
            break
        out, placed = _apply(text, findings)
        extra = _scan(out)
        if not extra:
            break
        spans = [(f.start, f.end, f.kind) for f in findings]
        spans += [
            (_to_original(s, placed, False), _to_original(e, placed, True), k) for s, e, k in extra
        ]
        grown = _merge(spans)
        if grown == findings:
            break
        findings = grown
    return findings


def redact(text: str) -> tuple[str, list[Finding]]:
    """Replace each secret with ``[REDACTED:kind]``; spans in the findings refer to ``text``."""
    findings = find_secrets(text)
    if not findings:
        return text, findings
    return _apply(text, findings)[0], findings


def redact_field(key: str, value: str) -> tuple[str, list[Finding]]:
    """Redact a string stored under ``key`` in structured data, such as a tool call's input.

    ``redact(value)`` alone cannot see the label: ``{"password": "hunter2"}`` arrives as
    the bare string "hunter2". So the pair is judged as the JSON it came from, and if the
    label makes the whole value a secret, the whole value is replaced. Otherwise the value
    is redacted on its own merits. Findings refer to ``value``.
    """
    probe = json.dumps({key: value}, ensure_ascii=False)
    value_start = len(json.dumps({key: ""}, ensure_ascii=False)) - 2  # just inside the quotes
    value_end = len(probe) - 2
    for f in find_secrets(probe):
        if f.start <= value_start and f.end >= value_end:
            whole = Finding(f.kind, 0, len(value))
            return marker(f.kind), [whole]
    return redact(value)
