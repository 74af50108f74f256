"""Mask credentials in transcript text before it is written to the vault.

Transcripts are stored verbatim and pushed to git, where history makes a leaked secret
permanent, so masking happens in memory on the way in. Two constraints shape the design:

* Ingest must sustain >= 20k turns/s, so a secret-free turn may cost only a few
  microseconds. detect-secrets (Yelp) was measured on a 300-character turn at ~4000 us
  through its ad-hoc ``scan_line`` and ~480 us calling its plugins directly, and it reports
  secret *values*, not offsets. It is therefore not used at run time; its plugin regexes,
  entropy idea and gitleaks' rules were the source for the formats below. Here one
  prefilter regex, built so that CPython's engine can skip ahead in C to a few rare
  characters, decides which detectors run at all (~3 us on a clean turn).
* Everything that is not a secret must survive byte for byte, because the vault is a
  verbatim record with provenance. So only the secret value is replaced, never its label,
  and ambiguous prose ("password: see the vault") is left alone. Generic ``key = value``
  assignments get an extra check that the value looks like a secret and not like a
  placeholder, a variable reference or an English word.

Replacement markers (``[REDACTED:kind]``) are shaped so that no detector matches them,
which makes :func:`redact` idempotent.
"""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass

__all__ = ["KINDS", "MARKER_RE", "Finding", "find_secrets", "marker", "redact"]


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
    "jwt": 10,
    "password-in-url": 20,
    "basic-auth": 21,
    "bearer-token": 22,
    "generic-secret": 30,
}

_Span = tuple[int, int, str]

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
        and not any(c.isspace() for c in value)
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
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


def _openai_ok(token: str) -> bool:
    """'sk-' is also a plain word prefix; demand a random body rather than a hyphenated slug."""
    body = token[3:]
    return (
        _not_dummy(body)
        and any(c.isdigit() for c in body)
        and re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+){2,}", body) is None
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
        lambda t: _not_dummy(t) and any(c.isupper() for c in t[3:]),
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
    _TokenRule(
        "slack-webhook", ":", ("hooks.slack.com",),
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_/]{20,}"),
    ),
)  # fmt: skip


def _find_tokens(text: str, families: set[str]) -> Iterator[_Span]:
    for rule in _TOKEN_RULES:
        if rule.family in families and any(t in text for t in rule.triggers):
            for m in rule.pattern.finditer(text):
                start = m.start()
                if (start == 0 or text[start - 1] not in _GLUE) and rule.check(m.group()):
                    yield start, m.end(), rule.kind


# ---------------------------------------------------------------------------------------
# PEM private keys
# ---------------------------------------------------------------------------------------

_PEM_BEGIN_RE = re.compile(r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----")
# Without an END line (a truncated paste) keep going while the text still looks like key
# material, so half a key is not written out; stop at the first line of prose. Lines may
# be separated by real newlines or by JSON-escaped "\n".
_PEM_BODY_RE = re.compile(
    r"(?:(?:[ \t]*(?:\r?\n|\\r\\n|\\n))+[ \t]*"
    r"(?:[A-Za-z0-9+/=]{8,}|(?:Proc-Type|DEK-Info|Comment|Version):[^\r\n\\]*))+"
)
_PEM_MAX = 64 * 1024
_KEY_MATERIAL_RE = re.compile(r"[A-Za-z0-9+/=]{16}")


def _find_private_keys(text: str) -> Iterator[_Span]:
    pos = 0
    while (m := _PEM_BEGIN_RE.search(text, pos)) is not None:
        end_line = f"-----END {m.group(1)}-----"
        end = text.find(end_line, m.end(), m.end() + _PEM_MAX)
        if end >= 0 and _KEY_MATERIAL_RE.search(text, m.end(), end):
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
_URL_USERINFO_RE = re.compile(r"[^\s:/?#@\[\]\"'<>`]*:(?P<pw>[^\s/?#\"'<>`]+)@")


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
        pos = text.find("://", pos + 3)


_BEARER_RE = re.compile(r"\bbearer[ \t]+(?P<v>[A-Za-z0-9._~+/-]{16,}=*)", re.I | re.A)
_BASIC_RE = re.compile(
    r"\bbasic[ \t]+(?P<v>[A-Za-z0-9+/]{6,}={0,2})(?![A-Za-z0-9+/=])", re.I | re.A
)
_CURL_USER_RE = re.compile(
    r"\bcurl\b[^\n]*?[ \t](?:-u|--user)(?:[ \t]+|=)['\"]?[^\s:'\"]*:(?P<v>[^\s'\"]+)"
)


def _is_basic_credential(value: str) -> bool:
    """'Basic <b64>' only counts if it decodes to 'user:password'; 'Basic authentication' won't."""
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    return ":" in decoded and decoded.isprintable()


def _find_http_auth(text: str, hits: set[str]) -> Iterator[_Span]:
    if "bearer" in hits:
        for m in _BEARER_RE.finditer(text):
            v = m.group("v")
            if _looks_random(v) and not _is_placeholder(v):
                yield m.start("v"), m.end("v"), "bearer-token"
    if "basic" in hits:
        for m in _BASIC_RE.finditer(text):
            if _is_basic_credential(m.group("v")):
                yield m.start("v"), m.end("v"), "basic-auth"
    if "curl" in hits:
        for m in _CURL_USER_RE.finditer(text):
            v = m.group("v")
            if not _is_placeholder(v) and not v.isdigit():
                yield m.start("v"), m.end("v"), "basic-auth"


# Generic assignments are matched from the end of a keyword the prefilter found: an
# optional environment suffix, a closing quote/bracket, an operator and a value. Applied
# to the lower-cased text; the value is then read from the original.
_ASSIGNMENT = r"""
    (?P<suffix>[_-](?:prod|production|dev|development|staging|stage|test|local|live
      |value|raw|plain|b64|base64|\d+))?
    (?:\\?["'])?\]?
    (?P<op>[ \t]*(?::=|=>|=|:)[ \t]*)
    (?:
        \\"(?P<ev>[^"\\\n]*)\\"
      | "(?P<dq>(?:[^"\\\n]|\\.)*)"
      | '(?P<sq>(?:[^'\\\n]|\\.)*)'
      | (?P<uv>[^\s"'`<>,;&)\]}=][^\s"'`<>,;&)\]}]*)
    )
"""
_GENERIC_TAILS: dict[str, re.Pattern[str]] = {
    # "cont" completes the keyword the prefilter stopped at: pass -> password, ...
    word: re.compile(f"(?P<cont>{cont}){_ASSIGNMENT}", re.ASCII | re.VERBOSE)
    for word, cont in (
        ("pass", "(?:word|wd|phrase)?"),
        ("credential", "s?"),
        ("pwd", ""),
        ("token", ""),
        ("secret", ""),
        ("key", ""),
    )
}
# Labels that are credentials by themselves. A bare "token" or "secret" is too common in
# conversations about LLMs and crypto for its value to be trusted without looking random.
_STRONG_LABEL_RE = re.compile(
    r"(?:pass(?:word|wd|phrase)?|pwd|(?:secret|api|access|private|auth|account)[_-]?key|apikey"
    r"|(?:access|refresh|auth|api|bot|bearer|session|client|oauth|personal)[_-]?token"
    r"|(?:client|app|api|webhook|signing|jwt|shared)[_-]?secret)\Z"
)
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
    if _is_placeholder(value):
        return False
    if quoted:
        return _looks_random(value) if not strong else len(value.strip()) >= 3
    # Unquoted: reject what code and prose put after a label.
    if (
        _NUMBER_RE.fullmatch(value)
        or value[0] in "$%@&*!([{"
        or "://" in value
        or any(c in value for c in "([{")
        or _DOTTED_RE.fullmatch(value)
    ):
        return False
    if op == ":" and _LINE_END_RE.match(text, m.end()) is None:
        return False
    if not strong:
        return _looks_random(value)
    if env_style:
        return len(value) >= 3  # .env / shell: the right-hand side is always a literal
    if (
        _IDENT_RE.fullmatch(value)
        and _CREDENTIAL_WORD_RE.search(value)
        and ("_" in value or not any(c.isdigit() for c in value))
    ):
        return False  # password=db_password, api_key=API_KEY: a variable, not a value
    if (
        _IDENT_RE.fullmatch(value)
        and not any(c.isdigit() for c in value)
        and ("_" in value or value.islower() or value[1:].islower())
    ):
        return False  # password=hashed, password: required -- words and variables
    return len(value) >= 6 and (
        any(c.isdigit() for c in value)
        or _SYMBOL_RE.search(value) is not None
        or not value[1:].islower()
    )


def _find_generic(text: str, low: str, keywords: list[tuple[str, int]]) -> Iterator[_Span]:
    for word, kw_end in keywords:
        m = _GENERIC_TAILS[word].match(low, kw_end)
        if m is None:
            continue
        kw_start = kw_end - len(word)
        label_end = m.end("cont")
        if word == "pass" and label_end == kw_end and low[kw_start - 1 : kw_start].isalpha():
            continue  # bypass, compass, surpass
        key_start = _key_start(text, kw_start)
        key = text[key_start : m.end("suffix") if m.group("suffix") else label_end]
        label = low[key_start:label_end]
        group = m.lastgroup or "uv"  # the value alternative that matched closes last
        quoted = group != "uv"
        start, end = m.span(group)
        value = text[start:end]
        if not quoted and value.endswith(".") and len(value) > 1:
            value, end = value[:-1], end - 1  # sentence full stop, not part of the secret
        if _generic_value_ok(text, m, key, label, value, quoted):
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
_ASSIGN_AHEAD = r"""(?=[a-z0-9_-]{0,16}(?:\\?["'])?\]?[ \t]*[:=])"""
_PREFILTER = re.compile(
    r"_(?:(?<=gh[pousr]_)|(?<=github_pat_)|(?<=hf_)|(?<=npm_)|(?<=k_live_)|(?<=k_test_)"
    r"|(?<=whsec_))"
    r"|-(?:(?<=sk-)|(?<=glpat-)|(?<=xox[abposre]-)|(?<=xapp-)|(?<=pypi-)"
    r"|(?<=--)[a-z0-9-]{0,30}?(?:pass|pwd|secret|token|key))"
    r"|j(?<=eyj)|g\.(?<=sg\.)|z(?<=aiz)a|3t(?<=a3t)|sia(?<=asia)"
    rf"|k(?:ia(?<=akia)|(?<=tok)en{_ASSIGN_AHEAD}|ey{_ASSIGN_AHEAD})"
    r"|b(?:ia(?<=abia)|earer|asic)"
    rf"|c(?:ca(?<=acca)|(?<=sec)ret{_ASSIGN_AHEAD}|redential{_ASSIGN_AHEAD}|url)"
    rf"|pass{_ASSIGN_AHEAD}|pwd{_ASSIGN_AHEAD}|private key|://"
)
_TOKEN_FAMILY = {
    "_": "_", "-": "-", "j": "J", "g.": "G",
    "za": "A", "3t": "A", "sia": "A", "kia": "A", "bia": "A", "cca": "A", "://": ":",
}  # fmt: skip
_GENERIC_WORD = {
    "ken": "token", "cret": "secret", "key": "key", "pass": "pass", "pwd": "pwd",
    "credential": "credential",
}  # fmt: skip


def find_secrets(text: str) -> list[Finding]:
    """All secrets in ``text``, sorted and non-overlapping.

    Overlapping claims (``token=ghp_...`` is both a generic assignment and a GitHub token)
    are merged into one span covering both, labelled with the most specific kind, so that
    no byte of a secret survives because two detectors disagreed on its edges.
    """
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
    for m in _PREFILTER.finditer(low):
        hit = m.group()
        if (word := _GENERIC_WORD.get(hit)) is not None:
            keywords.append((word, m.end()))
        elif (family := _TOKEN_FAMILY.get(hit)) is not None:
            families.add(family)
            hits.add(hit)
        elif hit[0] == "-":
            flags.append(m.start())
        else:
            hits.add(hit)
    if not (hits or families or keywords or flags):
        return []

    spans: list[_Span] = []
    if families:
        spans.extend(_find_tokens(a, families))
    if "://" in hits:
        spans.extend(_find_url_passwords(a))
    if "private key" in hits:
        spans.extend(_find_private_keys(a))
    if not hits.isdisjoint(("bearer", "basic", "curl")):
        spans.extend(_find_http_auth(a, hits))
    if keywords:
        spans.extend(_find_generic(a, low, keywords))
    if flags:
        spans.extend(_find_flags(a, low, flags))
    if not spans:
        return []

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


def redact(text: str) -> tuple[str, list[Finding]]:
    """Replace each secret with ``[REDACTED:kind]``; spans in the findings refer to ``text``."""
    findings = find_secrets(text)
    if not findings:
        return text, findings
    parts: list[str] = []
    pos = 0
    for f in findings:
        parts.append(text[pos : f.start])
        parts.append(marker(f.kind))
        pos = f.end
    parts.append(text[pos:])
    return "".join(parts), findings
