"""Private keys pasted in the shapes tools print them, other than PEM.

* A PuTTY ``.ppk`` file: the base64 lines after ``Private-Lines: N``.
* A JSON Web Key: the private members (``"d"``, and an RSA key's primes and CRT values,
  an ``oct`` key's ``"k"``), found only in an object that says ``"kty"``.
* ``openssl rsa -text`` / ``openssl ec -text``: the hex blocks under ``privateExponent``,
  ``prime1`` ... ``coefficient`` and ``priv``.
* A file handed over base64-wrapped (``echo '<b64>' | base64 -d > .env``): the blob is
  decoded and judged by what it holds, since no detector can see through base64.

Each finder takes the ASCII projection (``text``) and its lower-cased copy (``low``); the
prefilter in redact/__init__.py decides when one runs. A turn may hold text from a JSON
string, where a line break is the two characters ``\\n``; both kinds of break count.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable, Iterator

from memctl.core.lazyre import lazy
from memctl.core.redact.base import Span

_NL = r"(?:\r?\n|\\r\\n|\\n)"  # a real line break or a JSON-escaped one

# ---------------------------------------------------------------------------------------
# PuTTY .ppk
# ---------------------------------------------------------------------------------------

_PPK_LINE = r"[a-z0-9+/=]{4,}(?![a-z0-9+/=:-])"  # not the "Private-MAC:" line below
_PPK_RE = lazy(
    rf"private-lines:[ \t]*\d{{1,3}}[ \t]*{_NL}(?P<v>{_PPK_LINE}(?:{_NL}{_PPK_LINE})*)"
)


def find_ppk(text: str, low: str) -> Iterator[Span]:
    for m in _PPK_RE.finditer(low):
        yield m.start("v"), m.end("v"), "private-key"


# ---------------------------------------------------------------------------------------
# JSON Web Keys
# ---------------------------------------------------------------------------------------

# The private members of RFC 7518's key types; "kty" must be in the same text.
_JWK_PRIVATE_RE = lazy(
    r"(?<![a-z0-9_])(?P<q>\\?[\"']?)(?:d|p|q|dp|dq|qi|k)(?P=q)[ \t]*[:=][ \t]*\\?[\"']"
    r"(?P<v>[a-z0-9_-]{16,})"
)


def find_jwk(text: str, low: str) -> Iterator[Span]:
    for m in _JWK_PRIVATE_RE.finditer(low):
        yield m.start("v"), m.end("v"), "private-key"


# ---------------------------------------------------------------------------------------
# openssl -text dumps of a private key
# ---------------------------------------------------------------------------------------

_HEX_LINE = r"[ \t]*[0-9a-f]{2}(?::[0-9a-f]{2})*:?"
_OPENSSL_RE = lazy(
    rf"(?:(?<![a-z0-9])|(?<=\\n))(?:privateexponent|prime1|prime2|exponent1|exponent2|coefficient|priv)"
    rf":[ \t]*{_NL}(?P<v>{_HEX_LINE}(?:{_NL}{_HEX_LINE})*)"
)


def find_openssl_text(text: str, low: str) -> Iterator[Span]:
    for m in _OPENSSL_RE.finditer(low):
        start, end = m.span("v")
        while start < end and low[start] in " \t":
            start += 1
        yield start, end, "private-key"


# ---------------------------------------------------------------------------------------
# A file decoded from base64 on the command line
# ---------------------------------------------------------------------------------------

_B64_BLOB_RE = lazy(r"(?<![A-Za-z0-9+/=])[A-Za-z0-9+/]{16,}={0,2}(?![A-Za-z0-9+/=])")
_ENV_LINE_RE = lazy(r"(?m)^[ \t]*(?:export[ \t]+)?[A-Za-z_][A-Za-z0-9_]*[ \t]*=[ \t]*\S")
_ENV_TARGET_RE = lazy(r">[ \t]*[\"']?[^\s\"'|;&]*\.env(?:\.[a-z0-9_-]+)?(?![a-z0-9_])")
_BLOB_MAX = 64 * 1024


def find_b64_files(text: str, low: str, inner: Callable[[str], list[Span]]) -> Iterator[Span]:
    """A base64 blob on a line that decodes it: a secret if what it decodes to holds one
    (``inner`` scans the decoded text) or if it is written to a ``.env`` file as
    ``NAME=value`` lines, which are credentials by convention."""
    for line_m in re.finditer(r"[^\n]*base64[ \t]+-(?:d|-decode)[^\n]*", low):
        line_start, line_end = line_m.span()
        to_env = _ENV_TARGET_RE.search(low, line_start, line_end) is not None
        for m in _B64_BLOB_RE.finditer(text, line_start, line_end):
            blob = m.group()
            if len(blob) > _BLOB_MAX:
                continue
            decoded = _decode(blob)
            if decoded is None:
                continue
            if (to_env and _ENV_LINE_RE.search(decoded)) or inner(decoded):
                yield m.start(), m.end(), "generic-secret"


def _decode(blob: str) -> str | None:
    """The blob as text, or None when it is not base64 of printable text."""
    try:
        raw = base64.b64decode(blob + "=" * (-len(blob) % 4), validate=True)
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return None
    if not decoded or any(ord(c) < 32 and c not in "\t\r\n" for c in decoded):
        return None
    return decoded
