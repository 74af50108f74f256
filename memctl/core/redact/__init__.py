"""Mask credentials in transcript text before it is written to the vault.

The package: rules.toml (kinds, their priority, the vendor token formats and the
look-alike letters, as data), base.py (findings, markers, value heuristics), tokens.py
(secrets known by their format), context.py (secrets known by their label or
surroundings), shapes.py (cookies, credential files, signed URLs, webhooks, auth schemes),
joins.py (look-alikes folded; keys split by a continuation, an invisible character or a
wrap put back together), and here the prefilter that decides which detectors run and the
public API.

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
teams trust, rewritten as data in rules.toml rather than loaded from it: its rules are Go RE2
patterns built around (?i) and \b plus a keyword pass, which in CPython's engine cost
10-25x more than literal-led patterns, no package on PyPI ships a maintained copy of them,
and memctl must run offline with nothing vendored. Each rule keeps gitleaks' prefix and body shape;
the prefilter finds it by its separator or a rare letter.

Regexes here avoid re.IGNORECASE and leading lookbehinds or ``\b`` on purpose, and work
on a lower-cased copy instead: both stop CPython's engine from skipping ahead to a literal
prefix, which measured 10-25x slower on long text.
"""

from __future__ import annotations

import json

from memctl.core.lazyre import lazy
from memctl.core.redact import joins as _joins
from memctl.core.redact import keyfiles as _keys
from memctl.core.redact import shapes as _shapes
from memctl.core.redact.base import (
    GLUED_RUN_RE,
    KINDS,
    MARKER_RE,
    Finding,
    Span,
    marker,
)
from memctl.core.redact.context import (
    find_cli_passwords,
    find_crypto_keys,
    find_flags,
    find_generic,
    find_http_auth,
    find_private_keys,
    find_prose,
    find_url_passwords,
)
from memctl.core.redact.tokens import (
    ALONE_MAX,
    alone_aws_secrets,
    aws_secrets,
    find_tokens,
)

__all__ = ["KINDS", "MARKER_RE", "Finding", "find_secrets", "marker", "redact", "redact_field"]

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
_PREFILTER = lazy(
    r"_(?:(?<=gh[pousr]_)|(?<=github_pat_)|(?<=hf_)|(?<=npm_)|(?<=k_live_)|(?<=k_test_)"
    r"|(?<=whsec_)|(?<=shp.._)|(?<=_v1_)|(?<=lin_api_)|(?<=sntry._)|(?<=glsa_)|(?<=glc_)"
    r"|(?<=pscale_)|(?<=rubygems_)|(?<=ntn_)|(?<=gsk_)|(?<=r8_)|(?<=ops_)|(?<=fo1_)"
    r"|(?<=pnu_)|(?<=clojars_)|(?<=sbp_)|(?<=figd_)|(?<=lsv2_)|(?<=pcsk_)|(?<=napi_)"
    r"|(?<=sq[pua]_)|(?<=bkua_)|(?<=aio_)|(?<=shippo_)|(?<=ccipat_)|(?<=re_)|(?<=api_)(?=org_)"
    r"|(?<=tfp_)|(?<=rdme_)|(?<=duffel_)|(?<=phx_)"
    rf"{_shapes.PREFILTER_LOOKS['_']})"
    r"|-(?:(?<=[a-z-]-)(?:(?<=sk-)|(?<=glpat-)|(?<=xox[abposre]-)|(?<=xapp-)|(?<=pypi-)|(?<=glrt-)"
    r"|(?<=gldt-)|(?<=glptt-)|(?<=glft-)|(?<=glsoat-)|(?<=glcbt-)|(?<=gloas-)|(?<=glimt-)"
    r"|(?<=glagent-)|(?<=glffct-)|(?<=key-)|(?<=pmak-)|(?<=pul-)|(?<=hrku-)|(?<=sib-)"
    r"|(?<=pplx-)|(?<=xai-)|(?<=sq0atp-)|(?<=sq0csp-)|(?<=fio-u-)|(?<=nrak-)|(?<=nrii-)"
    r"|(?<=nrjs-)"
    r"|(?<=tskey-)|(?<=cfpat-)|(?<=access-)(?=sandbox-|development-|production-)"
    r"|(?<=flwseck-)|(?<=_test-)|(?<=tk-)(?=us-)|(?<=ico-)|(?<=sdk-)(?=[0-9a-f]{8}-)"
    r"|(?<=private-)lines(?=:)"
    r"|(?<=--)(?=[a-z0-9-]{0,30}?(?:pass|pwd|secret|token|key)[a-z]{0,6}[ \t])"
    rf"{_shapes.PREFILTER_LOOKS['-']})"
    # a mailchimp key's "-us<dc>" follows a hex digit; curl's cookie flag a space
    r"|(?<=[0-9a-f]-)(?=us[0-9])|b(?=[ \t]+[\"'])|(?<=base64 -)(?:d|-decode))"
    r"|\.(?:(?<=dp\.)|(?<=dt0c01\.)|(?<=hv[sb]\.)|(?<=sk\.)(?=eyj)"
    r"|(?=[a-z0-9_-]{6}\.[a-z0-9_-]{27})|(?<=sl\.)(?=[a-z0-9_-]{100})|(?<=v1\.)(?=0-)"
    r"|(?<=ya29\.)|(?=atlasv1\.)|(?<=pat[a-z0-9]{14}\.))"
    rf"|j(?:(?<=eyj){_shapes.PREFILTER_LOOKS['j']})|g\.(?<=sg\.)|z(?:(?<=aiz)a|(?<=authoriz)ation)|3(?:t(?<=a3t)|(?<=atatt3))"
    r"|sia(?<=asia)|q(?:(?<=mysq)l|(?<=jqq)j)"
    rf"|w(?:(?<=aw)s(?![a-z]){_shapes.PREFILTER_LOOKS['w']})"
    rf"|k(?:ia(?<=akia)|(?<=tok)en{_ASSIGN_AHEAD}|(?<=tok)en{_PROSE_AHEAD}|ey{_ASSIGN_AHEAD}"
    rf"|ey{_PROSE_AHEAD}|(?<=sk)(?=[0-9a-f]{{32}})|(?<=ez[at]k)|(?<=access[ _-]k)e(?=y)"
    r"|(?<=accessk)e(?=y)"
    r"|(?<=dock)er[ \t]+login|ty(?=\\?[\"']?[ \t]*[:=])"
    rf"{_shapes.PREFILTER_LOOKS['k']})"
    r"|b(?:ia(?<=abia)|earer|asic|(?<=mariadb))"
    rf"|c(?:ca(?<=acca)|(?<=sec)ret{_ASSIGN_AHEAD}|(?<=sec)ret{_PROSE_AHEAD}"
    rf"|redential{_ASSIGN_AHEAD}|url)"
    rf"|p(?:ass{_ASSIGN_AHEAD}|wd{_ASSIGN_AHEAD}|ass(?:word|wd|phrase){_PW_AHEAD}"
    rf"|ass{_PROSE_AHEAD}|w{_PW_SAID_AHEAD}"
    r"|(?<=akcp)|i(?<=dapi)(?=[0-9a-f]{32})|(?<=sshp)ass[ \t]|rivate key|rivateexponent"
    r"|riv:(?=[ \t]*(?:\r?\n|\\n))|rime[12]:)"
    rf"|:(?://|(?<=[0-9]:)aa(?=[a-z0-9_-]{{33}}){_shapes.PREFILTER_LOOKS[':']})"
    r"|~(?<=q~)"  # an Azure AD client secret
    rf"|{_shapes.PREFILTER_BRANCHES}"
)
_TOKEN_FAMILY = {
    "_": "_", "-": "-", "~": "~", "j": "J", "g.": "G", ".": ".", "3": "3", "i": "i", "k": "k",
    "p": "p", "pi": "p", ":aa": "t", "qj": "Z",
    "za": "A", "3t": "A", "sia": "A", "kia": "A", "bia": "A", "cca": "A", "://": ":",
}  # fmt: skip
_PROSE_WORD = {
    "ken": "token", "cret": "secret", "key": "key", "pass": "password", "password": "password",
    "passwd": "password", "passphrase": "password", "pw": "password",
}  # fmt: skip
_COMMANDS = ("ql", "b", "pass ", "pass\t")
_ASSIGN_AHEAD_RE = lazy(_ASSIGN_AHEAD)
_GENERIC_WORD = {
    "ken": "token", "cret": "secret", "key": "key", "pass": "pass", "pwd": "pwd",
    "credential": "credential",
}  # fmt: skip


def _scan(text: str) -> list[Span]:
    """Every detector over ``text``; spans may overlap.

    The detectors read an ASCII projection of the same length (each non-ASCII code point
    becomes "?", a look-alike letter inside a key its ASCII twin): offsets carry over to
    ``text`` unchanged, lower() cannot change the length (it can for "\u0130"), and the
    regexes run on the cheaper 1-byte string kind. Every secret format recognised here is
    ASCII. A key split by a line continuation, an invisible character or a hard wrap is
    looked for again with the break taken out (see joins.py).
    """
    a, glued = _joins.project(text)
    spans = _scan_ascii(a)
    if ("\n" in a or glued) and (gaps := _joins.gaps(text, a, glued)):
        spans.extend(_joins.across_gaps(text, gaps, _scan_projected, spans))
    if "\\" in a[-16:] and a.rstrip().endswith("\\"):
        spans.extend(_joins.before_cut(a, _scan_ascii))
    return spans


def _scan_projected(text: str) -> list[Span]:
    return _scan_ascii(_joins.project(text)[0])


def _scan_ascii(a: str) -> list[Span]:
    """One pass of every detector the prefilter asks for over the projection ``a``."""
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
            aws_words.append(m.start())  # "aws", "access key"; see aws_secrets
        elif hit == "-" and low[m.start() - 1] == "-":
            flags.append(m.start())  # "--password VALUE"; only a lookahead, see _PREFILTER
        elif (family := _TOKEN_FAMILY.get(hit)) is not None:
            families.add(family)
            hits.add(hit)
        else:
            hits.add(hit)
    if "EAA" in a:  # a Facebook token: no rare character to find it by
        families.add("E")
    alone = alone_aws_secrets(a) if 40 <= len(a) <= ALONE_MAX else []
    if not (hits or families or keywords or flags or prose or aws_words):
        return alone
    if "LTAI" in a:  # no rare character to find it by; only looked for beside a label
        families.add("i")

    spans: list[Span] = alone
    if families:
        spans.extend(find_tokens(a, families))
    if "://" in hits:
        spans.extend(find_url_passwords(a))
    if "private key" in hits:
        spans.extend(find_private_keys(a))
    if not hits.isdisjoint(("bearer", "basic", "curl", "zation")):
        spans.extend(find_http_auth(a, low, hits))
    if keywords:
        spans.extend(find_generic(a, low, keywords))
    if flags:
        spans.extend(find_flags(a, low, flags))
    if prose:
        spans.extend(find_prose(a, low, prose))
    if "private key" in hits:
        spans.extend(find_crypto_keys(a, low))
    if any(h.startswith("ker") for h in hits) or not hits.isdisjoint(_COMMANDS):
        spans.extend(find_cli_passwords(a, low))
    if not hits.isdisjoint(_shapes.HITS):
        spans.extend(_shapes.scan(a, low, hits))
    if not hits.isdisjoint(_KEYFILE_HITS):
        spans.extend(_key_files(a, low, hits))
    if "A" in families or aws_words:
        spans.extend(list(aws_secrets(a, low, "A" in families, aws_words, spans)))
    # Token characters glued to the end of a secret ("AIza<35 chars>AKIA...") belong to
    # the same run: mask them too rather than leave a tail of it in the vault.
    return [(s, GLUED_RUN_RE.match(a, e).end(), k) for s, e, k in spans]  # type: ignore[union-attr]


_OPENSSL_HITS = frozenset(("privateexponent", "priv:", "prime1:", "prime2:"))
_KEYFILE_HITS = frozenset(("-lines", "kty", "-d", "--decode")) | _OPENSSL_HITS


def _key_files(a: str, low: str, hits: set[str]) -> list[Span]:
    """Private keys in the shapes tools print them (keyfiles.py), by the hit that found them."""
    spans: list[Span] = []
    if "-lines" in hits:
        spans.extend(_keys.find_ppk(a, low))
    if "kty" in hits:
        spans.extend(_keys.find_jwk(a, low))
    if not hits.isdisjoint(_OPENSSL_HITS):
        spans.extend(_keys.find_openssl_text(a, low))
    if "-d" in hits or "--decode" in hits:
        spans.extend(_keys.find_b64_files(a, low, _scan))
    return spans


def _merge(spans: list[Span]) -> list[Finding]:
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
