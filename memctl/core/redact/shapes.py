"""Secrets known by where they sit rather than by a vendor prefix.

Each finder takes the ASCII projection of a turn (``text``) and its lower-cased copy
(``low``) and yields ``(start, end, kind)`` spans of secret values. Each first asks a cheap
question in C (``in``, or a regex led by a rare literal) so a clean turn pays a fraction
of a microsecond for it.

* Session cookies and ids, by name: ``Cookie:``/``Set-Cookie:`` headers, ``curl -b``, a
  Netscape cookie jar line, and ``<name>=<value>`` glued the way cookies and query
  strings write them, where the name says session, sid or auth.
* Credential files by shape: a ``.pgpass`` line (host:port:db:user:password); the others
  (.netrc, docker and kube configs) are caught by the labels they use, listed in
  ``_NAMED_FIELDS``.
* Signed URLs (Azure SAS ``sig=``, S3 and GCS signatures, security tokens in a query),
  webhook URLs that carry their secret in the path (Discord, Teams), any Authorization
  scheme (Okta ``SSWS``, ``Klaviyo-API-Key``, ...), and a PEM private key base64-encoded
  once more (kubeconfig ``client-key-data``, a Kubernetes TLS Secret).
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator

from memctl.core.lazyre import lazy
from memctl.core.redact.base import Span, is_placeholder, looks_random
from memctl.core.redact.context import is_basic_credential

# ---------------------------------------------------------------------------------------
# Session cookies and ids
# ---------------------------------------------------------------------------------------

# A cookie or parameter name that says it carries a session or an authentication.
_SESSION_NAME_RE = lazy(
    r"sess|sid(?![a-z])|auth|token|jwt|remember|login|csrf|xsrf|credential|secret"
    r"|api[_-]?key|access[_-]?key|clearance"
)
# Set-Cookie attributes: never cookie names.
_COOKIE_ATTRS = frozenset(
    "path domain expires max-age samesite secure httponly priority partitioned version "
    "comment".split()
)
_COOKIE_VALUE_CHARS = r"[A-Za-z0-9%._~+/=:!*@$-]"
_COOKIE_PAIR_RE = lazy(
    rf"[ \t]*(?P<name>[A-Za-z0-9_.$\-]{{1,64}})=(?P<q>\"?)(?P<v>{_COOKIE_VALUE_CHARS}*)(?P=q)"
    r"[ \t]*(?:;|(?=[\r\n\"'`]|\\n|$))"
)
# Where a cookie string starts: a header, curl's -b/--cookie, document.cookie.
_COOKIE_START_RE = lazy(
    r"cookie(?P<hdr>[\"']?[ \t]*:[ \t]*[\"']?|[\"']?[ \t]+=[ \t]+[\"'`]|[ \t]+[\"']"
    r"|[ \t]*=[ \t]*[\"'`])"
)
_CURL_COOKIE_RE = lazy(r"(?:^|[ \t])-b[ \t]+[\"']")
# Netscape cookie jar: domain, include-subdomains, path, secure, expiry, name, value; a
# line may be quoted, listed or commented ("#HttpOnly_").
_JAR_RE = lazy(
    r"(?<![a-z0-9._-])(?:httponly_)?\.?[a-z0-9._-]+\t(?:true|false)\t\S*\t(?:true|false)\t\d+\t"
    r"(?P<name>[^\t\n]+)\t(?P<v>[^\t\r\n]+)"
)
# name=value glued, as in a cookie or query string; found at its "=", the name read back.
_GLUED_VALUE_RE = lazy(rf"=(?P<v>{_COOKIE_VALUE_CHARS}{{16,4096}})")
_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_.-$")
_UUID_RE = lazy(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


_WORDY_SEGMENT_RE = lazy(r"[A-Za-z]+[0-9]*")


def _session_value_ok(value: str, named: bool) -> bool:
    """A cookie's value is taken when it is machine-made: not a stand-in, and not an
    identifier made of words (``session_summary=current_session_summary`` is code). A
    cookie named for a session may be percent-encoded or signed, so it needs no digit."""
    v = value.strip('"')
    if len(v) < 16 or is_placeholder(v):
        return False
    parts = re.split(r"[_.]", v)
    if len(parts) > 1 and all(_WORDY_SEGMENT_RE.fullmatch(p) for p in parts):
        return False
    if named and ("%" in v or "--" in v):
        return len(set(v)) >= 8
    return looks_random(v)


def _cookie_pairs(text: str, low: str, pos: int, first_only: bool) -> Iterator[Span]:
    while (m := _COOKIE_PAIR_RE.match(text, pos)) is not None:
        name = low[m.start("name") : m.end("name")]
        if name in _COOKIE_ATTRS:
            pos = m.end()
            continue
        start, end = m.span("v")
        named = _SESSION_NAME_RE.search(name) is not None
        if _session_value_ok(text[start:end], named):
            yield start, end, "session-cookie"
        if first_only:
            return
        pos = m.end()


# {"sessionid": "..."}, cookies.set("sessionid", "..."), a HAR entry's "name": "sessionid",
# "value": "...": a session cookie handed to an HTTP client or exported from a browser.
_DICT_SESSION_RE = lazy(
    rf"[\"'](?P<name>[a-z0-9_.$-]*(?:sess|sid)[a-z0-9_.$-]*)[\"'][ \t]*[:,][ \t]*"
    rf"(?:[\"']value[\"'][ \t]*:[ \t]*)?[\"'](?P<v>{_COOKIE_VALUE_CHARS}{{16,4096}})[\"']"
)


def find_cookies(text: str, low: str) -> Iterator[Span]:
    if "cookie" in low:
        for m in _COOKIE_START_RE.finditer(low):
            first_only = low[max(0, m.start() - 4) : m.start()] == "set-"
            yield from _cookie_pairs(text, low, m.end(), first_only)
    if "-b" in low:
        for m in _CURL_COOKIE_RE.finditer(low):
            yield from _cookie_pairs(text, low, m.end(), False)
    if "\t" in low and ("\ttrue\t" in low or "\tfalse\t" in low):
        for m in _JAR_RE.finditer(low):
            start, end = m.span("v")
            named = _SESSION_NAME_RE.search(m.group("name")) is not None
            if _session_value_ok(text[start:end], named):
                yield start, end, "session-cookie"
    if "sess" in low or "sid" in low:
        for m in _DICT_SESSION_RE.finditer(low):
            start, end = m.span("v")
            if not _UUID_RE.fullmatch(low[start:end]) and _session_value_ok(text[start:end], True):
                yield start, end, "session-cookie"
    if "sess" in low or "sid=" in low or "auth" in low:
        for m in _GLUED_VALUE_RE.finditer(low):
            eq = m.start()
            i = eq
            while i > 0 and low[i - 1] in _NAME_CHARS:
                i -= 1
            name = low[i:eq]
            if "sess" not in name and "sid" not in name and "auth" not in name:
                continue
            start, end = m.span("v")
            value = text[start:end].rstrip(".,")
            if _UUID_RE.fullmatch(value.lower()):
                continue  # session_id=<uuid> in a log is an identifier, not a cookie
            if _session_value_ok(value, True):
                yield start, start + len(value), "session-cookie"


# ---------------------------------------------------------------------------------------
# Credential files by shape
# ---------------------------------------------------------------------------------------

# hostname:port:database:username:password, one entry per line; "*" is a wildcard and
# "\:" an escaped colon. Found at its ":port:" so a clean turn costs one skip-ahead search.
_PGPASS_HINT_RE = lazy(r":(?:[0-9]{1,5}|\*):[^:\s]+:[^:\s]+:[^\s:]")
_PGPASS_RE = lazy(
    r"(?:^|(?<=[\s'\"`]))(?P<host>\*|[A-Za-z0-9][A-Za-z0-9.-]*|\[[0-9A-Fa-f:]+\])"
    r":(?:[0-9]{1,5}|\*):(?:[^:\s\\]|\\.)+:(?:[^:\s\\]|\\.)+:(?P<pw>(?:[^:\s\\'\"`]|\\.)+)"
    r"(?=[ \t]*(?:$|[\r\n'\"`]|\\n))",
    re.MULTILINE,
)
_HOST_LETTER_RE = lazy(r"[A-Za-z*]|\d+\.\d+\.\d+\.\d+")


def find_pgpass(text: str, low: str) -> Iterator[Span]:
    if _PGPASS_HINT_RE.search(text) is None:
        return
    for m in _PGPASS_RE.finditer(text):
        pw = m.group("pw")
        if (
            _HOST_LETTER_RE.search(m.group("host")) is not None
            and len(pw) >= 6
            and not is_placeholder(pw)
            and not pw.isdigit()
            and not (pw.isalpha() and pw.islower() and len(pw) < 12)
        ):
            yield m.start("pw"), m.end("pw"), "generic-secret"


# Labels whose value is a credential whatever its shape, in the files that use them:
# GCP service-account JSON, kubeconfig, docker/podman auth.json, .npmrc. A value that is
# not a stand-in and long enough for key material is taken.
_NAMED_FIELDS_RE = lazy(
    r"(?:^|(?<=[\s\"'{,;/.]))(?P<label>private_key_id|client[-_]key[-_]data|identitytoken"
    r"|registrytoken|_auth|auth)[\"']?(?P<op>[ \t]*[:=][ \t]*|[ \t]+(?=[a-z0-9+/]{16}))"
    r"[\"']?(?P<v>[a-z0-9+/=._~-]{16,8192})"
)
_FIELD_HINTS = ("key_id", "key-data", "key_data", "token", "auth")


def find_named_fields(text: str, low: str) -> Iterator[Span]:
    if not any(h in low for h in _FIELD_HINTS):
        return
    for m in _NAMED_FIELDS_RE.finditer(low):
        start, end = m.span("v")
        value = text[start:end]
        label = m.group("label")
        if is_placeholder(value) or len(set(value)) < 8:
            continue
        if label in ("auth", "_auth") and not (is_basic_credential(value) or looks_random(value)):
            continue  # "auth": "oauth2" and other words
        yield start, end, "generic-secret"


# ---------------------------------------------------------------------------------------
# URLs: signatures and tokens in a query, secrets in a webhook's path
# ---------------------------------------------------------------------------------------

_QUERY_SECRET_RE = lazy(
    r"(?:^|(?<=[?&;\s\"'`]))(?P<name>sig|signature|x-amz-signature|x-goog-signature"
    r"|x-amz-security-token|x-goog-security-token|access_token|id_token|refresh_token"
    r"|client_secret|auth_token|token)=(?P<v>[^&#\s\"'<>`]{16,4096})"
)


def find_query_secrets(text: str, low: str) -> Iterator[Span]:
    if "sig" not in low and "token=" not in low and "secret=" not in low:
        return
    for m in _QUERY_SECRET_RE.finditer(low):
        start, end = m.span("v")
        value = text[start:end]
        if not is_placeholder(value) and len(set(value)) >= 8:
            yield start, end, "signed-url"


_WEBHOOK_RES = (
    (
        "discord-webhook",
        lazy(
            r"https?://(?:(?:ptb|canary)\.)?discord(?:app)?\.com/api/(?:v\d+/)?webhooks/"
            r"[0-9]{15,21}/(?P<v>[A-Za-z0-9_-]{60,100})"
        ),
    ),
    (
        "teams-webhook",
        lazy(
            r"https://[a-z0-9-]+\.webhook\.office\.com/webhookb2/[0-9a-f-]{36}@[0-9a-f-]{36}"
            r"/IncomingWebhook/(?P<v>[0-9a-f]{32}/[0-9a-f-]{36}(?:/[A-Za-z0-9_-]+)?)"
        ),
    ),
)


def find_webhooks(text: str, low: str) -> Iterator[Span]:
    if "webhook" not in low:
        return
    for kind, pattern in _WEBHOOK_RES:
        for m in pattern.finditer(text):
            if not is_placeholder(m.group("v")):
                yield m.start("v"), m.end("v"), kind


# ---------------------------------------------------------------------------------------
# Authorization schemes and base64-wrapped PEM keys
# ---------------------------------------------------------------------------------------

# Any scheme word between "Authorization:" and a machine-made credential (Okta's SSWS,
# Splunk, GenieKey, Klaviyo-API-Key, ...); Basic and Bearer have their own checks.
_AUTH_SCHEME_RE = lazy(
    r"authorization[\"']?[ \t]*[:=][ \t]*[\"']?[a-z][a-z0-9_.-]{1,30}[ \t]+"
    r"(?P<v>[a-z0-9._~+/=-]{16,})"
)
_SSWS_RE = lazy(r"ssws[ \t]+(?P<v>[a-z0-9_-]{20,})")


def find_auth_schemes(text: str, low: str) -> Iterator[Span]:
    if "authorization" in low:
        for m in _AUTH_SCHEME_RE.finditer(low):
            start, end = m.span("v")
            value = text[start:end]
            if looks_random(value) and not is_placeholder(value):
                yield start, end, "bearer-token"
    if "ssws" in low:
        for m in _SSWS_RE.finditer(low):
            start, end = m.span("v")
            value = text[start:end]
            if looks_random(value) and not is_placeholder(value):
                yield start, end, "okta-token"


# base64 of "-----BEGIN" (every PEM header starts so); decoded, the header must name a
# private key, so a base64 certificate (kubeconfig certificate-authority-data) stays.
_B64_PEM_RE = lazy(r"LS0tLS1CRUdJTi[A-Za-z0-9+/]{8,}={0,2}")


def find_b64_private_keys(text: str, low: str) -> Iterator[Span]:
    if "LS0tLS1CRUdJTi" not in text:
        return
    for m in _B64_PEM_RE.finditer(text):
        head = m.group()[:96]
        try:
            decoded = base64.b64decode(head[: len(head) // 4 * 4]).decode("ascii", "replace")
        except (binascii.Error, ValueError):
            continue
        if "PRIVATE KEY" in decoded.split("\n", 1)[0]:
            yield m.start(), m.end(), "private-key"


# Branches for redact's prefilter, one per thing the finders above key on. Each starts
# with a literal character (most shared with the prefilter's own branches, so a clean
# turn pays almost nothing) and consumes text no other branch does, so the hit names the
# finders to run.
PREFILTER_LOOKS = {
    # after the anchor character, inside the prefilter's group for it
    "k": r"|(?<=cook)ies?(?=[\"']?[ \t]*[:=]|[ \t]+[\"'`])|(?<=webhook)[sb]",
    "_": r"|(?<=private_)key_id|(?<=client_)key_data|auth(?=[\"']?[ \t]*[:=])",
    "-": r"|(?<=client-)key-data",
    ":": r"|(?=(?:[0-9]{1,5}|\*):[^:\s]+:[^:\s]+:[^\s:])|(?<=auth:)",
    "w": r"|(?<=ssw)s[ \t]",
    "j": r"|(?<=ls0tls1crudj)ti",
}
# anchors the prefilter has no group for (curl's "-b" is in its "-" group)
PREFILTER_BRANCHES = (
    r"\t(?:true|false)\t"
    r"|=(?:(?<=sig=)|(?<=ture=)|(?<=ken=)|(?<=cret=)|(?<=sid=)|(?<=nid=)|(?<=ion=)"
    r"|(?<=auth=))(?=[^\s&\"'<>]{16})"
    r"|\"(?:(?<=auth\")|(?<=sid\")|(?<=nid\")|(?<=ion\"))(?=[ \t]*[:,])"
    r"|'(?:(?<=auth')|(?<=sid')|(?<=nid')|(?<=ion'))(?=[ \t]*[:,])"
)
_DISPATCH: dict[str, tuple[Callable[[str, str], Iterator[Span]], ...]] = {
    "kie": (find_cookies,),
    "kies": (find_cookies,),
    '"': (find_cookies, find_named_fields),
    "'": (find_cookies, find_named_fields),
    "-b": (find_cookies,),
    "\ttrue\t": (find_cookies,),
    "\tfalse\t": (find_cookies,),
    "=": (find_cookies, find_query_secrets, find_named_fields),
    ":": (find_pgpass, find_named_fields),
    "_key_id": (find_named_fields,),
    "_key_data": (find_named_fields,),
    "-key-data": (find_named_fields,),
    "_auth": (find_named_fields,),
    "ks": (find_webhooks,),
    "kb": (find_webhooks,),
    "zation": (find_auth_schemes,),
    "ws ": (find_auth_schemes,),
    "ws\t": (find_auth_schemes,),
    "jti": (find_b64_private_keys,),
}
HITS = frozenset(_DISPATCH)


def scan(text: str, low: str, hits: set[str]) -> list[Span]:
    """Run each finder some prefilter hit asked for, once."""
    spans: list[Span] = []
    done: set[Callable[[str, str], Iterator[Span]]] = set()
    for hit in hits & HITS:
        for finder in _DISPATCH[hit]:
            if finder not in done:
                done.add(finder)
                spans.extend(finder(text, low))
    return spans
