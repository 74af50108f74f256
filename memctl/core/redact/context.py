"""Secrets recognised by their context: PEM private keys, passwords in URLs, HTTP auth,
`key = value` assignments, command-line flags, prose ("my password is …") and crypto keys.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator

from memctl.core.lazyre import lazy
from memctl.core.redact.base import (
    ALPHA_RE,
    CREDENTIAL_WORD_RE,
    DIGIT_RE,
    DOTTED_RE,
    IDENT_RE,
    NUMBER_RE,
    SYMBOL_RE,
    UPPER_RE,
    Span,
    is_placeholder,
    looks_random,
)

# ---------------------------------------------------------------------------------------
# PEM private keys
# ---------------------------------------------------------------------------------------

_PEM_BEGIN_RE = lazy(r"-----BEGIN ((?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?)-----")
# Without an END line (a truncated paste) keep going while the text still looks like key
# material, so half a key is not written out; stop at the first line of prose. Lines may
# be separated by real newlines or by JSON-escaped "\n".
_PEM_BODY_RE = lazy(
    r"(?:(?:[ \t]*(?:\r?\n|\\r\\n|\\n))+[ \t]*"
    r"(?:[A-Za-z0-9+/=]{8,}|(?:Proc-Type|DEK-Info|Comment|Version):[^\r\n\\]*)"
    r"[ \t]*(?=\r?\n|\\r|\\n|\Z))+"
)
_PEM_MAX = 64 * 1024
_KEY_MATERIAL_RE = lazy(r"[A-Za-z0-9+/=]{16}")


def find_private_keys(text: str) -> Iterator[Span]:
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
_URL_USERINFO_RE = lazy(r"[^\s:/?#@\[\]\"'<>`]{0,256}:(?P<pw>[^\s/?\"'<>`]{1,256})@")
# A userinfo that is one token and no password (a Sentry DSN's key, a token as user name).
_URL_TOKEN_RE = lazy(r"(?P<tok>[A-Za-z0-9_-]{16,256})@")


def find_url_passwords(text: str) -> Iterator[Span]:
    pos = text.find("://")
    while pos >= 0:
        if pos > 0 and text[pos - 1].isalnum():  # a scheme, not a stray "://"
            m = _URL_USERINFO_RE.match(text, pos + 3)
            if m is not None:
                pw = m.group("pw")
                # A bare short number is a port in "host:8080@...", not a password.
                if not is_placeholder(pw) and not (pw.isdigit() and len(pw) <= 5):
                    yield m.start("pw"), m.end("pw"), "password-in-url"
            else:
                t = _URL_TOKEN_RE.match(text, pos + 3)
                if t is not None and looks_random(t.group("tok")):
                    yield t.start("tok"), t.end("tok"), "password-in-url"
        pos = text.find("://", pos + 3)


# These run on the lower-cased text (values are then read from the original) and start
# with a literal, with the word boundary checked in Python: re.IGNORECASE or a leading \b
# stops the engine from skipping ahead to the literal and made them ~25x slower.
_BEARER_RE = lazy(r"bearer[ \t]+(?P<v>[a-z0-9._~+/-]{16,}=*)")
_BASIC_RE = lazy(r"basic[ \t]+(?P<v>[a-z0-9+/]{6,}={0,2})(?![a-z0-9+/=])")
_AUTH_HEADER_RE = lazy(
    r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"(?:(?:token|apikey|api-key|key|sso-key|otp)[ \t]+)?(?P<v>[a-z0-9._~+/=-]{16,})"
)
_CURL_USER_RE = lazy(
    r"curl\b[^\n]{0,512}?[ \t](?:-u|--user)(?:[ \t]+|=)['\"]?[^\s:'\"]*:(?P<v>[^\s'\"]+)"
)


def is_basic_credential(value: str) -> bool:
    """'Basic <b64>' only counts if it decodes to 'user:password'; 'Basic authentication' won't."""
    try:
        raw = base64.b64decode(value + "=" * (-len(value) % 4), validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return False
    return ":" in decoded and decoded.isprintable()


def find_http_auth(text: str, low: str, hits: set[str]) -> Iterator[Span]:
    checks: list[tuple[str, re.Pattern[str], Callable[[str], bool], str]] = [
        ("bearer", _BEARER_RE, _random_credential, "bearer-token"),
        ("basic", _BASIC_RE, is_basic_credential, "basic-auth"),
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
    return looks_random(value) and not is_placeholder(value)


def _curl_password(value: str) -> bool:
    return not is_placeholder(value) and not value.isdigit()


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
_UNQUOTED_REST_RE = lazy(r"[^\s\"'`<>,;&)\]}]*")
# How a keyword found by the prefilter may continue and still be the label's end.
_COMPLETIONS = {"pass": "(?:word|wd|phrase)?", "credential": "s?"}
# <password>value</password> (Maven settings.xml, app.config ...): the closing tag must
# repeat the label, which rules out prose that merely contains "password>".
_XML_TAIL_RE = lazy(
    r"(?P<cont>[a-z0-9_.:-]{0,16})>(?P<xv>[^<\n]{1,4096})</(?P<close>[a-z0-9_.:-]{1,64})>"
)
_GENERIC_TAILS: dict[str, re.Pattern[str]] = {
    # "cont" completes the keyword the prefilter stopped at: pass -> password, ...
    word: lazy(f"(?P<cont>{_COMPLETIONS.get(word, '')}){_ASSIGNMENT}", re.ASCII | re.VERBOSE)
    for word in ("pass", "credential", "pwd", "token", "secret", "key")
}
# Labels that are credentials by themselves. A bare "token" or "secret" is too common in
# conversations about LLMs and crypto for its value to be trusted without looking random.
_STRONG_LABEL_RE = lazy(
    r"(?:pass(?:word|wd|phrase)?|pwd|(?:secret|api|access|private|auth|account)[_-]?key|apikey"
    r"|(?:access|refresh|auth|api|bot|bearer|session|client|oauth|personal)[_-]?token"
    r"|(?:client|app|api|webhook|signing|jwt|shared)[_-]?secret)\Z"
)
_PASSWORD_LABEL_RE = lazy(r"(?:pass(?:word|wd|phrase)?|pwd?)\Z")
_KEY_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
# After an unquoted "key: value" there must be nothing else on the line, otherwise it is
# prose ("password: see the vault") rather than a YAML/header-style assignment.
_LINE_END_RE = lazy(r"[ \t]*(?:$|[\r\n\"'`,;})\]#]|\\n)")


# A cache key or build id: words, versions and platform names joined by "-", ending in a
# digest (GitHub Actions' "setup-uv-1-x86_64-unknown-linux-gnu-0.7.13-<sha256>"). Its
# digest names file contents, not a credential.
_SLUG_PART_RE = lazy(r"[A-Za-z]+[0-9]{0,2}|[0-9]+(?:\.[0-9]+)*|[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+")
_SLUG_WORD_RE = lazy(r"[A-Za-z]{2,}")
_DIGEST_RE = lazy(r"[0-9a-f]{8,128}")


def _slug_with_digest(value: str) -> bool:
    parts = value.split("-")
    head = parts[:-1]
    return (
        len(head) >= 3
        and _DIGEST_RE.fullmatch(parts[-1]) is not None
        and all(_SLUG_PART_RE.fullmatch(p) for p in head)
        and sum(_SLUG_WORD_RE.fullmatch(p) is not None for p in head) >= 2
    )


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
    if _PASSWORD_LABEL_RE.search(label) is None and _slug_with_digest(value.strip()):
        return False
    if quoted:
        if not strong:
            return looks_random(value) and not is_placeholder(value)
        return len(value.strip()) >= 3 and not is_placeholder(value)
    # Unquoted: reject what code and prose put after a label (cheapest tests first).
    if op == ":" and _LINE_END_RE.match(text, m.end()) is None:
        return False
    if (
        value[0] in "$%@&*!([{"
        or "://" in value
        or any(c in value for c in "([{")
        or NUMBER_RE.fullmatch(value)
        or DOTTED_RE.fullmatch(value)
    ):
        return False
    if not strong:
        return looks_random(value) and not is_placeholder(value)
    if is_placeholder(value):
        return False
    if env_style:
        return len(value) >= 3  # .env / shell: the right-hand side is always a literal
    if (
        IDENT_RE.fullmatch(value)
        and CREDENTIAL_WORD_RE.search(value)
        and ("_" in value or DIGIT_RE.search(value) is None)
    ):
        return False  # password=db_password, api_key=API_KEY: a variable, not a value
    if (
        IDENT_RE.fullmatch(value)
        and DIGIT_RE.search(value) is None
        and ("_" in value or value.islower() or value[1:].islower())
    ):
        return False  # password=hashed, password: required -- words and variables
    return len(value) >= 6 and (
        DIGIT_RE.search(value) is not None
        or SYMBOL_RE.search(value) is not None
        or not value[1:].islower()
        or (_PASSWORD_LABEL_RE.search(label) is not None and _passphrase_like(value))
    )


def _xml_element(text: str, low: str, word: str, kw_end: int) -> Span | None:
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
    ok = len(value.strip()) >= 3 if strong else looks_random(value)
    return (start, end, "generic-secret") if ok and not is_placeholder(value) else None


def find_generic(text: str, low: str, keywords: list[tuple[str, int]]) -> Iterator[Span]:
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
_FLAG_RE = lazy(
    r"-[a-z0-9-]*?(?P<kw>password|passwd|passphrase|pass|pwd|secret|token|api-key|apikey|key)"
    r"[ \t]+(?:\"(?P<dq>[^\"\n]*)\"|'(?P<sq>[^'\n]*)'|(?P<uv>[^\s\"'`;|&<>]+))"
)


def find_flags(text: str, low: str, starts: list[int]) -> Iterator[Span]:
    for pos in starts:
        m = _FLAG_RE.match(low, pos)
        if m is None:
            continue
        group = m.lastgroup or "uv"
        start, end = m.span(group)
        value = text[start:end]
        if is_placeholder(value) or value[0] in "$%-":
            continue
        label = low[pos + 1 : m.end("kw")]
        if len(value) >= 4 if _STRONG_LABEL_RE.search(label) else looks_random(value):
            yield start, end, "generic-secret"


# "my password is X", "twilio auth token X", "machine h login u password X": the label is
# followed by a space (and maybe "is"/"was") instead of an operator, so the value carries
# the evidence: a password must look like one (digits, symbols or mixed case, no word, or
# a passphrase of joined content words where the text says the password *is* it),
# anything else must look machine-made.
_PROSE_VALUE_RE = lazy(
    r"(?P<said>[ \t]+(?:is|was)|[ \t]*:)?[ \t]*:?[ \t]+"
    r"(?:\"(?P<dq>[^\"\s]{4,128})\"|'(?P<sq>[^'\s]{4,128})'|(?P<uv>[^\s\"'`<>,;()\[\]{}]{4,256}))"
)
_HEXISH_RE = lazy(r"[0-9a-f]+|[0-9A-F]+|[0-9a-f]{8}-[0-9a-f-]{27}")
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
_PASSPHRASE_RE = lazy(r"[A-Za-z]{2,}(?:-[A-Za-z]{2,}){2,}")
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
        and not is_placeholder(value)
        and not any(
            w in _FUNCTION_WORDS or w in _CREDENTIAL_WORDS for w in value.lower().split("-")
        )
    )


def _password_like(value: str) -> bool:
    return (
        len(value) >= 6
        and not is_placeholder(value)
        and DOTTED_RE.fullmatch(value) is None
        and NUMBER_RE.fullmatch(value) is None
        and (
            SYMBOL_RE.search(value) is not None
            or (DIGIT_RE.search(value) is not None and ALPHA_RE.search(value) is not None)
            or (UPPER_RE.search(value, 1) is not None and not value.isupper())
        )
    )


def find_prose(text: str, low: str, found: list[tuple[str, int]]) -> Iterator[Span]:
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
                looks_random(value)
                and not is_placeholder(value)
                and (strong is not None or _HEXISH_RE.fullmatch(value) is None)
                and not _slug_with_digest(value)
            )
        if ok:
            yield start, end, "generic-secret"


# An Ethereum-style private key named as one: 64 hex digits after "private key".
_CRYPTO_KEY_RE = lazy(
    r"private key(?:[ \t]+(?:is|was))?[ \t]*[:=]?[ \t]*[\"']?(?P<v>(?:0x)?[0-9a-f]{64})(?![0-9a-z])"
)


def find_crypto_keys(text: str, low: str) -> Iterator[Span]:
    for m in _CRYPTO_KEY_RE.finditer(low):
        yield m.start("v"), m.end("v"), "private-key"


# Passwords given on a command line: docker login -p X, mysql -pX, sshpass -p X.
_CLI_RES = (
    lazy(r"docker[ \t]+login\b[^\n]{0,256}?[ \t]-p(?:[ \t]+|=)(?P<uv>[^\s\"'`;|&<>]+)"),
    lazy(
        r"(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]{0,256}?[ \t]-p"
        r"(?P<uv>[^\s\"'`;|&<>-][^\s\"'`;|&<>]*)"
    ),
    lazy(
        r"sshpass[ \t]+-p[ \t]*(?:'(?P<sq>[^'\n]+)'|\"(?P<dq>[^\"\n]+)\"|(?P<uv>[^\s\"'`;|&<>]+))"
    ),
)


def find_cli_passwords(text: str, low: str) -> Iterator[Span]:
    for pattern in _CLI_RES:
        for m in pattern.finditer(low):
            group = m.lastgroup or "uv"
            start, end = m.span(group)
            value = text[start:end]
            if (
                len(value) >= 4
                and value[0] not in "$%<{"
                and not is_placeholder(value)
                and not (value.isalpha() and value.islower())
            ):
                yield start, end, "generic-secret"


