"""Fuzzing every transcript reader, the note parser and frontmatter: whatever the
bytes, the answer is transcripts or one `MemctlError` naming the file, never a traceback;
and an ingest that fails leaves the vault exactly as it was.

Examples per reader: MEMCTL_FUZZ_EXAMPLES (default 100; bench/crash.py --fuzz runs more).
"""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from util import git, snapshot

from memctl.errors import MemctlError
from memctl.ingest.formats import FORMATS, read_transcripts

EXAMPLES = int(os.environ.get("MEMCTL_FUZZ_EXAMPLES", "100"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# keys every reader looks for, so that generated documents get past the first checks
KEYS = ["role", "content", "id", "name", "timestamp", "session", "type", "message", "sessionId",
        "uuid", "isSidechain", "isMeta", "summary", "leafUuid", "parentUuid", "agentId",
        "mapping", "messages", "title", "conversation_id", "current_node", "children", "parent",
        "author", "parts", "content_type", "create_time", "text", "tool_calls", "tool_use",
        "tool_result", "input", "tool_use_id", "source", "data", "model", "x"]
WORDS = ["user", "assistant", "system", "tool", "text", "tool_use", "tool_result", "image",
         "thinking", "summary", "", "hello", "User: hi", "## t1 · x", "---", "\ufeff", "\r\n",
         "<!-- memctl:turn {} -->", "\x00", "\ud800"[:0] + "é", "𝕏"]

scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
                    st.sampled_from(WORDS), st.text(max_size=20))
values = st.recursive(
    scalars,
    lambda kids: st.one_of(st.lists(kids, max_size=4),
                           st.dictionaries(st.sampled_from(KEYS), kids, max_size=6)),
    max_leaves=30,
)


def _mutate(data: bytes, cut: int, junk: bytes, bom: bool, crlf: bool) -> bytes:
    if crlf:
        data = data.replace(b"\n", b"\r\n")
    if cut:
        data = data[: max(0, len(data) - cut)]
    return (b"\xef\xbb\xbf" if bom else b"") + data + junk


documents = st.builds(
    _mutate,
    st.one_of(
        st.lists(values, max_size=6).map(
            lambda vs: "".join(json.dumps(v) + "\n" for v in vs).encode()),
        values.map(lambda v: json.dumps(v).encode()),
        st.lists(st.sampled_from(WORDS) | st.text(max_size=30), max_size=8).map(
            lambda ls: "\n".join(ls).encode("utf-8", "surrogatepass")),
        st.binary(max_size=200),
    ),
    st.integers(0, 8) | st.just(0),
    st.sampled_from([b"", b"", b"{", b"\xff", b'"', b"\n{\"role\": ", b"]"]),
    st.booleans(),
    st.booleans(),
)


def _read(data: bytes, fmt: str | None) -> int:
    """Read everything; count transcripts. Only MemctlError may escape."""
    try:
        return sum(1 for _ in read_transcripts(io.BytesIO(data), fmt, name="fuzz.jsonl"))
    except MemctlError as exc:
        assert str(exc).startswith("fuzz.jsonl"), str(exc)
        assert "\n" not in exc.message or exc.message.count("\n") == 0
        return -1


@pytest.mark.parametrize("fmt", [*FORMATS, None])
@FUZZ
@given(data=documents)
def test_every_reader_answers_or_fails_in_one_line(fmt: str | None, data: bytes) -> None:
    _read(data, fmt)


@FUZZ
@given(text=st.text(max_size=400) | documents.map(lambda b: b.decode("utf-8", "replace")),
       front=st.dictionaries(st.sampled_from(KEYS), values, max_size=5))
def test_note_parser_and_frontmatter_answer_or_fail_in_one_line(text: str, front: dict) -> None:
    import yaml

    from memctl.core.notes import parse_note
    from memctl.core.raw import parse_session, read_header

    head = "---\n" + yaml.safe_dump(front, allow_unicode=True) + "---\n"
    for candidate in (text, head + text, "---\n" + text):
        for parse in (lambda t: parse_note(t, "n.md"), lambda t: read_header(t, "n.md"),
                      lambda t: parse_session(t, "raw/n.md")):
            try:
                parse(candidate)
            except MemctlError as exc:
                assert exc.path == "n.md" or exc.path == "raw/n.md", exc


@pytest.fixture(scope="module")
def fuzz_vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from memctl.vault import Vault

    root = tmp_path_factory.mktemp("fuzz") / "vault"
    vault, _ = Vault.init(root)
    src = root.parent / "seed.jsonl"
    src.write_text('{"role": "user", "content": "seed"}\n')
    vault.ingest([src])
    return root


@settings(max_examples=max(10, EXAMPLES // 6), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                 HealthCheck.data_too_large])
@given(data=documents, suffix=st.sampled_from([".jsonl", ".json", ".md", ".txt"]))
def test_a_failed_ingest_writes_nothing(fuzz_vault: Path, data: bytes, suffix: str,
                                        tmp_path_factory: pytest.TempPathFactory) -> None:
    from memctl.vault import Vault

    src = tmp_path_factory.mktemp("in") / f"t{suffix}"
    src.write_bytes(data)
    before = snapshot(fuzz_vault)
    vault = Vault.open(fuzz_vault)
    try:
        vault.ingest([src])
    except MemctlError:
        assert snapshot(fuzz_vault) == before
    assert git(fuzz_vault, "status", "--porcelain") == ""
