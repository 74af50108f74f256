"""Tests for memctl.core.redact: secrets never reach the vault, nothing else changes.

The corpus under tests/data/secrets/ is the contract: every positive must be masked with
the expected kind and *only* the secret replaced; every negative must come back
byte-for-byte. Property tests cover what a corpus cannot: idempotence, the marker never
being re-flagged, and offsets staying right on non-ASCII text.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from secret_corpus import SECRETS as CORPUS

from memctl.core.redact import (
    KINDS,
    MARKER_RE,
    Finding,
    find_secrets,
    marker,
    redact,
    redact_field,
)

DATA = Path(__file__).parent / "data" / "secrets"


def _lines(name: str) -> list[str]:
    text = (DATA / name).read_text(encoding="utf-8")
    return [ln for ln in text.splitlines() if ln and not ln.startswith("# ")]


POSITIVES: list[tuple[str, str, str]] = [
    (kind, secret, line)
    for kind, secret, line in (ln.split("\t") for ln in _lines("positives.txt"))
]
NEGATIVES: list[str] = _lines("negatives.txt")
PEM = (DATA / "private_key.pem").read_text(encoding="utf-8").rstrip("\n")


# ---------------------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------------------


def test_corpus_is_big_enough_and_covers_every_kind() -> None:
    assert len(POSITIVES) >= 30
    assert len(NEGATIVES) >= 30
    kinds = {kind for kind, _, _ in POSITIVES}
    # the vendor formats added later have their samples in tests/secret_corpus.py
    kinds |= {f.kind for _, _, line in CORPUS for f in find_secrets(line)}
    assert kinds == set(KINDS), f"kinds without a positive sample: {set(KINDS) - kinds}"


@pytest.mark.parametrize(("kind", "secret", "line"), POSITIVES, ids=lambda v: v[:40])
def test_positive_is_redacted_with_its_kind(kind: str, secret: str, line: str) -> None:
    out, findings = redact(line)
    assert secret not in out
    assert out == line.replace(secret, marker(kind))
    assert [f.kind for f in findings] == [kind] * line.count(secret)


@pytest.mark.parametrize("line", NEGATIVES, ids=lambda v: v[:40])
def test_negative_is_untouched(line: str) -> None:
    assert find_secrets(line) == []
    assert redact(line) == (line, [])


def test_all_positives_in_one_transcript() -> None:
    """Detectors must not interfere with each other when secrets share a turn."""
    text = "\n".join(line for _, _, line in POSITIVES)
    out, findings = redact(text)
    assert len(findings) == len(POSITIVES)
    for _, secret, _ in POSITIVES:
        assert secret not in out
    assert out == "\n".join(line.replace(s, marker(k)) for k, s, line in POSITIVES)


# ---------------------------------------------------------------------------------------
# Specific behaviour
# ---------------------------------------------------------------------------------------


def test_brief_examples() -> None:
    assert redact("password=hunter2secret")[0] == "password=[REDACTED:generic-secret]"
    assert (
        redact("https://bob:s3cr3tpw@db.example.com")[0]
        == "https://bob:[REDACTED:password-in-url]@db.example.com"
    )
    assert (
        redact('api_key = "a8f5f167f44f4964e6c998dee827110c"')[0]
        == 'api_key = "[REDACTED:generic-secret]"'
    )
    assert redact("password: see the vault")[0] == "password: see the vault"


def test_pem_block_is_replaced_whole_and_only_it() -> None:
    text = f"Here is the deploy key:\n\n{PEM}\n\nPlease rotate it after."
    out, findings = redact(text)
    assert out == "Here is the deploy key:\n\n[REDACTED:private-key]\n\nPlease rotate it after."
    assert [f.kind for f in findings] == ["private-key"]
    assert text[findings[0].start : findings[0].end] == PEM


def test_truncated_pem_is_still_masked_up_to_the_prose() -> None:
    """A paste cut off before END must not leak its key lines; the prose after survives."""
    body = PEM.splitlines()[:4]
    text = "\n".join(["look:", *body, "that's all I have"])
    assert redact(text)[0] == "look:\n[REDACTED:private-key]\nthat's all I have"


def test_pem_with_crlf_line_endings() -> None:
    text = PEM.replace("\n", "\r\n")
    assert redact(f"a\r\n{text}\r\nb")[0] == "a\r\n[REDACTED:private-key]\r\nb"


def test_public_material_is_not_a_private_key() -> None:
    cert = PEM.replace("OPENSSH PRIVATE KEY", "CERTIFICATE")
    assert redact(cert)[0] == cert


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("token=ghp_" + "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5", "token=[REDACTED:github-token]"),
        (
            "https://oauth2:glpat-Zq8Rt2Vx9Lm4Np6Bc1Dk@gitlab.com/g/r.git",
            "https://oauth2:[REDACTED:gitlab-token]@gitlab.com/g/r.git",
        ),
    ],
)
def test_overlapping_detectors_merge_into_the_most_specific_kind(text: str, expected: str) -> None:
    out, findings = redact(text)
    assert out == expected
    assert len(findings) == 1


def test_flag_with_space_separated_value() -> None:
    assert (
        redact("docker login --password s3cr3tPa55 registry")[0]
        == "docker login --password [REDACTED:generic-secret] registry"
    )
    assert redact("--max-tokens 4096 --api-key $KEY")[0] == "--max-tokens 4096 --api-key $KEY"


@pytest.mark.parametrize("prefix", ["", "Привет! ", "İİİ ", "日本語のテキスト…", "emoji 🔑🔑 "])
def test_offsets_survive_non_ascii_text(prefix: str) -> None:
    """Detection runs on an ASCII projection; offsets must still index the original."""
    secret = "AKIA" + "Q7XK2M4PLR8TZW3N"
    text = f"{prefix}key id {secret} — ok ✓"
    out, [f] = redact(text)
    assert text[f.start : f.end] == secret
    assert out == text.replace(secret, marker("aws-access-key"))


def test_finding_is_frozen_and_sorted() -> None:
    text = "a: AKIAQ7XK2M4PLR8TZW3N\npassword=hunter2secret\nhttps://u:pw123456@h"
    findings = find_secrets(text)
    assert findings == sorted(findings, key=lambda f: f.start)
    with pytest.raises(AttributeError):
        findings[0].kind = "x"  # type: ignore[misc]
    assert isinstance(findings[0], Finding)


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_marker_is_never_reflagged(kind: str) -> None:
    m = marker(kind)
    for ctx in (
        m,
        f"password={m}",
        f'"token": "{m}"',
        f"API_KEY={m}",
        f"https://u:{m}@host",
        f"Authorization: Bearer {m}",
        f"Authorization: Basic {m}",
        f"secret: {m}",
        f"--password {m}",
        f"{m}: {m}",
    ):
        assert find_secrets(ctx) == [], ctx


def test_empty_and_trivial_inputs() -> None:
    assert redact("") == ("", [])
    assert redact("\n\n") == ("\n\n", [])
    assert find_secrets("password") == []


@pytest.mark.parametrize(
    ("key", "value", "expected"),
    [
        ("password", "hunter2", "[REDACTED:generic-secret]"),
        ("PASSWORD", 'p"q\\x1\nz', "[REDACTED:generic-secret]"),
        ("client_secret", "a8f5f167f44f4964e6c998dee827110c", "[REDACTED:generic-secret]"),
        ("token", "hello", "hello"),
        ("api_key", "", ""),
        ("password", "[REDACTED:generic-secret]", "[REDACTED:generic-secret]"),
        ("content", "password: see the vault", "password: see the vault"),
        (
            "command",
            "psql postgres://app:s3cretpw@db/app",
            "psql postgres://app:[REDACTED:password-in-url]@db/app",
        ),
    ],
)
def test_redact_field_uses_the_key_as_label(key: str, value: str, expected: str) -> None:
    """Tool inputs arrive as dicts; the key is the only thing that marks "hunter2" secret."""
    out, findings = redact_field(key, value)
    assert out == expected
    assert all(0 <= f.start < f.end <= len(value) for f in findings)
    assert redact_field(key, out)[0] == out


# ---------------------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------------------

_benign_fragment = st.one_of(
    st.sampled_from(NEGATIVES),
    st.text(max_size=80),
    st.text(alphabet="abcdefghijklmnopqrstuvwxyz ABCDEFG0123456789.,:;=-_/\"'", max_size=80),
    st.from_regex(r"[0-9a-f]{40}", fullmatch=True),  # git SHAs
    st.uuids().map(str),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_benign_fragment, max_size=12))
def test_text_without_secrets_is_unchanged(fragments: list[str]) -> None:
    text = "\n".join(fragments)
    assert redact(text) == (text, [])


_any_fragment = st.one_of(
    _benign_fragment,
    st.sampled_from([line for _, _, line in POSITIVES]),
    st.sampled_from([secret for _, secret, _ in POSITIVES]),
    st.sampled_from([marker(k) for k in KINDS]),
    st.sampled_from(["password", "token", "=", ":", "://", "@", '"', "Bearer ", "--", "_"]),
)
_separator = st.sampled_from(["", "\n", " ", "\t", ", ", "; ", "=", ":"])


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_any_fragment, _separator), max_size=10))
def test_redact_is_idempotent_and_only_touches_findings(
    parts: list[tuple[str, str]],
) -> None:
    text = "".join(frag + sep for frag, sep in parts)
    out, findings = redact(text)

    # Findings are sorted, in bounds, non-empty and non-overlapping, and the output is
    # exactly the input with those spans swapped for markers: nothing else moved.
    pos = 0
    rebuilt = []
    for f in findings:
        assert pos <= f.start < f.end <= len(text)
        assert f.kind in KINDS
        rebuilt += [text[pos : f.start], marker(f.kind)]
        pos = f.end
    rebuilt.append(text[pos:])
    assert out == "".join(rebuilt)

    # Idempotent, and markers are never what a second pass finds.
    again, second = redact(out)
    assert again == out
    assert second == []


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(POSITIVES), min_size=1, max_size=6), st.text(max_size=40))
def test_secrets_on_their_own_lines_never_survive(
    picks: list[tuple[str, str, str]], noise: str
) -> None:
    noise = noise.replace("\r", " ").replace("\n", " ")
    lines = [noise, *(line for _, _, line in picks), noise]
    out, _ = redact("\n".join(lines))
    for _, secret, _ in picks:
        assert secret not in out
    assert MARKER_RE.search(out)


# ---------------------------------------------------------------------------------------
# Found in review: an AWS secret access key away from its id, word-only passwords
# ---------------------------------------------------------------------------------------

_AWS_KEY = "q8Zf3Lr0Vx+T2mWk9bN/aY7uHc1pJd4sEe6gRiO5"  # random, shaped like a secret access key
_PROSE = "We went over the rollout plan, the cache warm-up and who is on call next week. " * 4


@pytest.mark.parametrize(
    "template",
    [
        "AWS Secret Access Key [None]: {k}",
        "Use {k} as the secret access key",
        "{k} is the aws secret",
        "AWS secret (don't share): {k}",
        "the access key id is AKIAQ7XK2M4PLR8TZW3N. " + _PROSE + "The other half: {k}",
        "{k}\n" + _PROSE + "\n(it goes with AKIAQ7XK2M4PLR8TZW3N)",
        "[default]\\naws_access_key_id = AKIAQ7XK2M4PLR8TZW3N\\n" + _PROSE + "\\n{k}",
        "note\\n{k}\\nthanks",
    ],
)
def test_aws_secret_key_is_known_by_its_words_or_its_id_anywhere(template: str) -> None:
    text = template.format(k=_AWS_KEY)
    out = redact(text)[0]
    assert _AWS_KEY not in out
    assert marker("aws-secret-key") in out
    assert out.replace("[REDACTED:aws-access-key]", "AKIAQ7XK2M4PLR8TZW3N") == text.replace(
        _AWS_KEY, marker("aws-secret-key")
    )


@pytest.mark.parametrize(
    "text",
    [
        # no evidence at all: in a long text a lone 40-character run may be any base64
        _PROSE + "\n" + _AWS_KEY + "\n" + _PROSE,
        # evidence, but shaped like a path, a hex digest or a blob's short last line
        "aws s3 cp ./Build2024/Release7/Assets3/Images/Icons ./out",
        "aws codecommit: commit 1788e087dd06a9d437e5ee03146cf9285ae57956",
        "aws kms decrypt:\n" + "Zm9vYmFyYmF6cXV4" * 4 + "\n" + _AWS_KEY,
        # "laws", "draws": not the word aws
        "the draws were random: " + _AWS_KEY,
        "outlaws: " + _AWS_KEY,
    ],
)
def test_forty_base64_characters_without_evidence_are_left_alone(text: str) -> None:
    assert redact(text) == (text, [])


def test_a_token_another_detector_claims_keeps_its_own_kind() -> None:
    bearer = "Zk3pQ9rT2vX8mN4bL6cH1dJ7fG5sW0yA3eK9uR2i"
    text = f"id AKIAQ7XK2M4PLR8TZW3N; then Authorization: Bearer {bearer}"
    assert [f.kind for f in find_secrets(text)] == ["aws-access-key", "bearer-token"]


@pytest.mark.parametrize(
    "text",
    [
        "the password is correct-horse-battery",
        "my passphrase was lemon-ember-orbit-hazel, don't tell",
        "pw: maple-ember-hazel-falcon",
        "password: copper-timber-tundra",
        "my password is hunter2-Blue",
        "the wifi password is BlueSky-Falcon",
        "PW is oyster87_Violet",
    ],
)
def test_word_only_passwords_said_in_prose_are_redacted(text: str) -> None:
    value = text.split()[-1] if "," not in text else text.split(",")[0].split()[-1]
    out = redact(text)[0]
    assert value not in out
    assert out == text.replace(value, marker("generic-secret"))


@pytest.mark.parametrize(
    "text",
    [
        "my password is too short",
        "the password is stored in the vault",
        "password is required",
        "my password is the same as before",
        "the password is case-sensitive",
        "the password is hard-to-guess, which is the point",
        "the password is end-to-end encrypted",
        "the password is hashed-and-salted",
        "password reset-link-sent is the event name",  # not said to be the value
        "npw: 3 items",  # "pw" inside a word
    ],
)
def test_prose_about_passwords_is_left_alone(text: str) -> None:
    assert redact(text) == (text, [])
