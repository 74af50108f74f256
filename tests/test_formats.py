"""Transcript readers: exact contents of real-looking samples, detection, errors, streaming."""

from __future__ import annotations

import base64
import hashlib
import io
import json
import tracemalloc
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memctl.core.model import Message
from memctl.errors import InputError
from memctl.ingest.formats import FORMATS, detect_format, iter_files, read_transcripts
from memctl.ingest.formats._common import JsonStream, Source

DATA = Path(__file__).parent / "data" / "formats"
BAD = DATA / "bad"


def read_all(source, fmt=None, **kw):
    return list(read_transcripts(source, fmt, **kw))


class Pipe(io.RawIOBase):
    """A non-seekable stream, like stdin fed by a pipe."""

    def __init__(self, data: bytes) -> None:
        self._data = io.BytesIO(data)

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return False

    def readinto(self, b) -> int:
        chunk = self._data.read(min(len(b), 5000))  # pipes deliver short reads
        b[: len(chunk)] = chunk
        return len(chunk)


# --- memctl JSONL ---------------------------------------------------------------------------


def test_memctl_jsonl_exact():
    [t] = read_all(DATA / "memctl.jsonl")
    assert t.source_format == "jsonl"
    assert t.origin == str(DATA / "memctl.jsonl")
    assert t.session_id == "memctl"
    assert t.line == 1
    assert t.messages == [
        Message(
            "system", "You are a careful pair programmer.", "m-001", None, "2024-05-01T10:00:00Z"
        ),
        Message(
            "user",
            "Why does `make test` hang on CI but not locally?",
            "m-002",
            "dana",
            "2024-05-01 10:00:07+02:00",
        ),
        Message(
            "assistant",
            "Usually a test waits on stdin. CI has no TTY, so:\n\n```sh\n"
            "pytest -p no:cacheprovider < /dev/null\n```\n\nshould surface it.",
            "m-003",
            None,
            "1714557607",
            {"model": "gpt-4o", "tokens": {"in": 41, "out": 38}},
        ),
        Message(
            "user",
            "That was it — the fixture called input(). Thanks!  ",
            "m-004",
            "dana",
            "2024-05-01T10:01:30.250Z",
        ),
        Message("tool", '{"exit": 0}', meta={"tool_call_id": "call_7"}),
    ]


def test_memctl_jsonl_session_key_splits_consecutive_runs():
    ts = read_all(DATA / "memctl_sessions.jsonl")
    assert [(t.session_id, t.line, [m.content for m in t.messages]) for t in ts] == [
        ("memctl_sessions", 1, ["first file-level message"]),
        ("alpha", 2, ["hello alpha", "hi from alpha", "still alpha (no session key)"]),
        ("beta", 5, ["hello beta"]),
    ]
    assert all(m.meta == {} for t in ts for m in t.messages)  # `session` is consumed


def test_session_argument_names_a_single_conversation():
    [t] = read_all(DATA / "memctl.jsonl", session="my-session")
    assert t.session_id == "my-session"
    # An intrinsic id wins: the vault must not fork a Claude session under a second name.
    [c] = read_all(DATA / "claude_code.jsonl", session="other")
    assert c.session_id == "3f1c9a2e-7b4d-4e0a-9c61-2d8e5f0b7a14"


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "role": st.sampled_from(["user", "assistant", "system", "tool"]),
                "content": st.text(),
            },
            optional={
                "id": st.text(),
                "name": st.text(),
                "timestamp": st.text(),
                "extra": st.integers() | st.text(),
            },
        ),
        min_size=1,
        max_size=5,
    )
)
def test_memctl_jsonl_round_trips_fields_exactly(lines):
    data = "".join(json.dumps(line) + "\n" for line in lines).encode()
    [t] = read_all(io.BytesIO(data), "jsonl", session="s")
    for line, m in zip(lines, t.messages, strict=True):
        assert (m.role, m.content) == (line["role"], line["content"])
        assert (m.id, m.name, m.timestamp) == (
            line.get("id"),
            line.get("name"),
            line.get("timestamp"),
        )
        assert m.meta == ({"extra": line["extra"]} if "extra" in line else {})


def test_memctl_jsonl_large_file_reads_every_line(tmp_path):
    # Speed is measured in bench/ingest.py, not asserted here: this checks the big-file path.
    line = json.dumps({"role": "user", "content": "x" * 200, "id": "abc", "timestamp": "t"})
    path = tmp_path / "big.jsonl"
    path.write_text((line + "\n") * 50_000)
    [t] = read_all(path)
    assert len(t.messages) == 50_000
    assert t.messages[-1] == Message("user", "x" * 200, id="abc", timestamp="t")


# --- OpenAI ---------------------------------------------------------------------------------


def test_openai_object_with_tool_calls_exact():
    [t] = read_all(DATA / "openai.json")
    assert (t.source_format, t.session_id, t.title, t.line) == (
        "openai",
        "openai",
        "Weather lookup",
        5,
    )
    assert t.meta == {"model": "gpt-4o-2024-08-06"}
    assert t.messages == [
        Message("system", "You are a helpful assistant. Use tools when needed."),
        Message(
            "user",
            "What's the weather in Lisbon right now?\nMetric units please.",
            name="dana",
            meta={
                "content_parts": [
                    {
                        "type": "image_url",
                        "image_url": {"url": "https://example.com/sky.jpg", "detail": "low"},
                    }
                ]
            },
        ),
        Message(
            "assistant",
            "",
            meta={
                "tool_calls": [
                    {
                        "id": "call_Qx81",
                        "type": "function",
                        "function": {
                            "name": "get_weather",
                            "arguments": '{"city": "Lisbon", "units": "metric"}',
                        },
                    }
                ]
            },
        ),
        Message("tool", '{"temp_c": 21.5, "sky": "clear"}', meta={"tool_call_id": "call_Qx81"}),
        Message("assistant", "It's 21.5 °C and clear in Lisbon.", meta={"refusal": None}),
    ]


def test_openai_bare_array_maps_developer_to_system():
    [t] = read_all(DATA / "openai_array.json")
    assert [(m.role, m.content) for m in t.messages] == [
        ("system", "Answer briefly."),
        ("user", "2+2?"),
        ("assistant", "4"),
    ]
    assert t.messages[0].meta == {"original_role": "developer"}
    assert t.line == 2


# --- Claude Code ----------------------------------------------------------------------------


def test_claude_code_exact():
    [t] = read_all(DATA / "claude_code.jsonl")
    u = "0a1b2c3d-0000-4000-8000-0000000000{:02d}".format
    model = "claude-sonnet-4-20250514"
    assert t.source_format == "claude_code"
    assert t.session_id == "3f1c9a2e-7b4d-4e0a-9c61-2d8e5f0b7a14"
    assert t.title == "Fix flaky retry test in httpkit"
    assert t.line == 4  # summary, snapshot and the isMeta caveat come first
    assert t.meta == {
        "cwd": "/home/dana/src/httpkit",
        "gitBranch": "fix/retry-flake",
        "version": "1.0.83",
    }
    assert t.messages == [
        Message(
            "user",
            "test_retry_backoff fails about 1 in 20 runs on CI. Can you find out "
            "why?\nIt passes locally.",
            u(1),
            None,
            "2025-08-14T09:12:03.114Z",
            {"parentUuid": u(0)},
        ),
        Message(
            "assistant",
            "Let me look at the test first.",
            u(2),
            None,
            "2025-08-14T09:12:07.530Z",
            {
                "parentUuid": u(1),
                "model": model,
                "tool_calls": [
                    {
                        "id": "toolu_01AbCdEf",
                        "name": "Read",
                        "input": {"file_path": "/home/dana/src/httpkit/tests/test_retry.py"},
                    }
                ],
                "thinking": "Flaky timing test; probably real sleeps vs a fake clock.",
            },
        ),
        Message(
            "tool",
            "     1\timport time\n     2\t\n     3\tdef test_retry_backoff(client):\n"
            '     4\t    start = time.monotonic()\n     5\t    client.get("/flaky")\n'
            "     6\t    assert time.monotonic() - start < 0.35\n",
            u(3),
            None,
            "2025-08-14T09:12:07.601Z",
            {"tool_use_id": "toolu_01AbCdEf", "is_error": False, "parentUuid": u(2)},
        ),
        Message(
            "assistant",
            "",
            u(5),
            None,
            "2025-08-14T09:12:11.918Z",
            {
                "parentUuid": u(4),
                "model": model,
                "tool_calls": [
                    {
                        "id": "toolu_01GhIjKl",
                        "name": "Bash",
                        "input": {
                            "command": "uv run pytest tests/test_retry.py -x -q --count 20",
                            "description": "Run the flaky test 20 times",
                        },
                    }
                ],
            },
        ),
        Message(
            "tool",
            "FAILED tests/test_retry.py::test_retry_backoff[7-20] - assert 0.4012 "
            "< 0.35\n1 failed, 6 passed in 2.41s",
            u(6),
            None,
            "2025-08-14T09:12:15.044Z",
            {"tool_use_id": "toolu_01GhIjKl", "is_error": True, "parentUuid": u(5)},
        ),
        Message(
            "assistant",
            "The test measures wall-clock time, so a slow CI runner pushes it "
            "past 0.35 s.\n\nInject the clock instead:\n\n```python\n"
            'def test_retry_backoff(client, fake_clock):\n    client.get("/flaky")\n'
            "    assert fake_clock.slept == [0.1, 0.2]\n```",
            u(7),
            None,
            "2025-08-14T09:12:22.387Z",
            {"parentUuid": u(6), "model": model},
        ),
        Message(
            "user",
            "Makes sense, thanks.",
            u(8),
            None,
            "2025-08-14T09:13:40.001Z",
            {"parentUuid": u(7)},
        ),
        Message(
            "assistant",
            "You're welcome!",
            u(9),
            None,
            "2025-08-14T09:13:41.250Z",
            {"parentUuid": u(8), "model": model},
        ),
    ]


def test_claude_code_mixed_blocks_and_bookkeeping_only_files(tmp_path):
    line = {
        "type": "user",
        "sessionId": "s-9",
        "uuid": "u-1",
        "timestamp": "T",
        "message": {
            "role": "user",
            "content": [
                {"type": "text", "text": "see screenshot"},
                {
                    "type": "image",
                    "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
                },
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"},
            ],
        },
    }
    path = tmp_path / "s-9.jsonl"
    path.write_text(json.dumps(line) + "\n")
    [t] = read_all(path)
    assert [(m.role, m.content, m.id) for m in t.messages] == [
        ("user", "see screenshot", "u-1"),
        ("tool", "ok", "u-1-1"),
    ]
    png = base64.b64decode("iVBORw0KGgo=")
    sha = hashlib.sha256(png).hexdigest()
    assert t.messages[0].meta["attachments"] == [
        {"type": "base64", "media_type": "image/png", "sha256": sha, "bytes": len(png)}
    ]  # the bytes stay out of the raw session: ingest keeps them as a file of their own
    assert t.attachments == {sha: png}
    only_summary = tmp_path / "x.jsonl"
    only_summary.write_text('{"type":"summary","summary":"old","leafUuid":"u"}\n')
    assert read_all(only_summary) == []


# --- ChatGPT --------------------------------------------------------------------------------


def test_chatgpt_export_follows_current_branch():
    first, second = read_all(DATA / "chatgpt_conversations.json")
    assert (first.session_id, first.title, first.line) == (
        "6632a1b0-1111-4c2d-9e8f-000000000001",
        "Sourdough hydration",
        2,
    )
    assert first.meta == {
        "create_time": "2024-05-01T10:00:00Z",
        "update_time": "2024-05-01T10:10:00Z",
        "default_model_slug": "gpt-4o",
    }
    # The hidden system root and the abandoned "80%" regeneration are not part of it.
    assert first.messages == [
        Message(
            "user",
            "What hydration should I use for a first sourdough loaf?",
            "u-1",
            None,
            "2024-05-01T10:04:05Z",
        ),
        Message(
            "assistant",
            "Start around 70% hydration:\nit is easier to shape.",
            "a-2",
            None,
            "2024-05-01T10:05:00Z",
            {"model": "gpt-4o"},
        ),
        Message("user", "And the salt?", "u-2", None, "2024-05-01T10:06:00Z"),
        Message(
            "assistant",
            "About 2% of the flour weight.",
            "a-3",
            None,
            "2024-05-01T10:06:05Z",
            {"model": "gpt-4o"},
        ),
    ]
    assert (second.session_id, second.title, second.line) == (
        "6632a1b0-2222-4c2d-9e8f-000000000002",
        "Plot CSV",
        207,
    )
    assert second.messages == [
        Message(
            "user",
            "What does this chart show?",
            "u-10",
            None,
            "2024-05-02T10:00:01Z",
            {
                "content_type": "multimodal_text",
                "parts": [
                    {
                        "content_type": "image_asset_pointer",
                        "asset_pointer": "file-service://file-9Zk2",
                        "size_bytes": 48213,
                        "width": 800,
                        "height": 600,
                    }
                ],
            },
        ),
        Message(
            "assistant",
            "import pandas as pd\ndf = pd.read_csv('data.csv')\ndf.describe()",
            "a-10",
            None,
            "2024-05-02T10:00:05Z",
            {"content_type": "code", "model": "gpt-4o", "recipient": "python"},
        ),
        Message(
            "tool",
            "       value\ncount  12.0",
            "t-10",
            "python",
            "2024-05-02T10:00:07Z",
            {"content_type": "execution_output"},
        ),
        Message("assistant", "Monthly sales; 12 rows.", "a-11", None, None, {"model": "gpt-4o"}),
    ]


def _conversation(cid: str | None, n_messages: int, text: str, current: bool = True) -> dict:
    mapping: dict = {"root": {"id": "root", "message": None, "parent": None, "children": ["n0"]}}
    parent = "root"
    for i in range(n_messages):
        node = f"n{i}"
        mapping[node] = {
            "id": node,
            "message": {
                "id": f"{cid}-{i}",
                "author": {"role": ("user", "assistant")[i % 2]},
                "create_time": 1714557845.5 + i,
                "content": {"content_type": "text", "parts": [f"{i}: {text}"]},
            },
            "parent": parent,
            "children": [f"n{i + 1}"] if i + 1 < n_messages else [],
        }
        parent = node
    conv = {"title": f"T {cid}", "create_time": 1714557845.0, "mapping": mapping}
    if cid is not None:
        conv["conversation_id"] = cid
    if current:
        conv["current_node"] = parent
    return conv


def test_chatgpt_single_object_and_missing_current_node(tmp_path):
    path = tmp_path / "one.json"
    path.write_text(json.dumps(_conversation(None, 3, "hi", current=False)))
    [t] = read_all(path)
    assert t.source_format == "chatgpt"
    assert t.session_id == "one"
    assert [m.content for m in t.messages] == ["0: hi", "1: hi", "2: hi"]
    assert t.messages[0].timestamp == "2024-05-01T10:04:05Z"


def test_chatgpt_reads_across_tiny_chunks(monkeypatch):
    """Values cut at every possible place (mid-string, mid-number, mid-UTF-8) still parse."""
    expected = read_all(DATA / "chatgpt_conversations.json")
    original = JsonStream.__init__

    for size in (1, 2, 3, 5, 7, 64, 1000):

        def tiny(self, stream, src, chunk_size=size):
            original(self, stream, src, chunk_size)

        monkeypatch.setattr(JsonStream, "__init__", tiny)
        assert read_all(DATA / "chatgpt_conversations.json") == expected
        assert (
            read_all(Pipe((DATA / "openai.json").read_bytes()), "openai")[0].messages
            == read_all(DATA / "openai.json")[0].messages
        )


def test_json_stream_numbers_and_multibyte_at_chunk_edges():
    doc = json.dumps([12345678, "héllo ☃ 𝄞", [1.5e10, None, True], {"k": "ü"}]).encode()
    for size in range(1, 12):
        js = JsonStream(io.BytesIO(doc), Source("x", None, None), chunk_size=size)
        assert [v for v, _ in js.array()] == json.loads(doc)
        js.finish()


def test_chatgpt_streams_in_bounded_memory(tmp_path):
    """A 30 MB export must not be loaded whole: peak memory stays far below the file size."""
    path = tmp_path / "conversations.json"
    filler = "lorem ipsum dolor sit amet " * 150
    with path.open("w") as f:
        f.write("[")
        for n in range(2000):
            f.write(("," if n else "") + json.dumps(_conversation(f"c{n}", 4, filler)))
        f.write("]")
    size = path.stat().st_size
    assert size > 30_000_000
    count = 0
    tracemalloc.start()
    try:
        for t in read_transcripts(path):
            count += 1
            assert len(t.messages) == 4
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 2000
    assert peak < size / 3, f"peak {peak} for a {size}-byte file"


# --- text / markdown ------------------------------------------------------------------------


def test_markdown_transcript_exact():
    [t] = read_all(DATA / "transcript.md")
    assert (t.source_format, t.session_id, t.title, t.line) == (
        "text",
        "transcript",
        "Debugging the cache layer",
        3,
    )
    assert t.meta == {"preamble": "# Debugging the cache layer"}
    assert t.messages == [
        Message("user", "Why does the cache return stale entries after a deploy?", name="Dana"),
        Message(
            "assistant",
            "Most likely the cache key does not include the build id.\n"
            "Note: this only bites when two builds share one Redis.\n\n```python\n"
            'key = f"{build_id}:{path}"\nUser: x\n```\n\nFix the key and flush once.',
        ),
        Message(
            "user", "  Got it. Second question:\n\n    indented block stays as is", name="Dana"
        ),
        Message("assistant", "Go ahead."),
        Message("user", "What TTL do you recommend?", name="Dana"),
        Message("assistant", "One hour is a good default.   "),
    ]


def test_text_speaker_rules():
    doc = (
        b"Alice: hi\n"  # unknown name, but it opens the document
        b"Todo: not a speaker\n"  # unknown, never seen: stays prose
        b"Claude:no space\n"  # product name: assistant, name kept
        b"~~~\nHuman: fenced\n~~~\n"
        b"human: lower-case role words count\n"
        b"**Note:** bold-inside colon is prose unless known\n"
        b"Alice: again\n"
    )
    [t] = read_all(io.BytesIO(doc), "text", name="chat.txt")
    assert [(m.role, m.name, m.content) for m in t.messages] == [
        ("user", "Alice", "hi\nTodo: not a speaker"),
        ("assistant", "Claude", "no space\n~~~\nHuman: fenced\n~~~"),
        (
            "user",
            None,
            "lower-case role words count\n**Note:** bold-inside colon is prose unless known",
        ),
        ("user", "Alice", "again"),
    ]
    assert t.origin == "chat.txt"


# --- streams, ids, detection ----------------------------------------------------------------


def test_stdin_ids_are_content_derived_and_stable():
    data = b'{"role": "user", "content": "hi"}\n{"role": "assistant", "content": "yo"}\n'
    expected = "stdin-" + hashlib.sha256(b"userhi").hexdigest()[:12]
    for stream in (io.BytesIO(data), io.BufferedReader(Pipe(data))):
        [t] = read_all(stream)
        assert (t.origin, t.session_id, t.source_format) == ("<stdin>", expected, "jsonl")
    [t] = read_all(io.BytesIO(data), session="given")
    assert t.session_id == "given"


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("memctl.jsonl", "jsonl"),
        ("memctl_sessions.jsonl", "jsonl"),
        ("openai.json", "openai"),
        ("openai_array.json", "openai"),
        ("claude_code.jsonl", "claude_code"),
        ("chatgpt_conversations.json", "chatgpt"),
        ("transcript.md", "text"),
    ],
)
def test_detection_by_name_and_by_content_alone(name, fmt):
    head = (DATA / name).read_bytes()
    assert detect_format(DATA / name, head) == fmt
    assert detect_format(None, head) == fmt  # stdin: no name to go by
    [first, *_] = read_all(io.BufferedReader(Pipe(head)))
    assert first.source_format == fmt


def test_detection_from_truncated_heads():
    chatgpt = (DATA / "chatgpt_conversations.json").read_bytes()[:300]
    assert detect_format(Path("export.json"), chatgpt) == "chatgpt"
    claude = b'{"type":"file-history-snapshot","messageId":"x","snapshot":{}}\n{"parentU'
    assert detect_format(Path("a.jsonl"), claude) == "claude_code"
    assert detect_format(Path("a.txt"), "Usér: héllo".encode()[:-1]) == "text"


def test_detection_text_that_looks_like_json_and_json_that_is_no_transcript():
    assert detect_format(None, b"[10:02] User: hi\nAssistant: yo\n") == "text"
    assert detect_format(Path("chat.log"), b'{"level": "info"}\n') == "text"
    for path, head in [(None, b'{"level": "info"}\n'), (Path("x.json"), b"[10:02] User: hi")]:
        with pytest.raises(InputError, match="unknown transcript format"):
            detect_format(path, head)
    assert set(FORMATS) == {"jsonl", "openai", "claude_code", "chatgpt", "text"}


def test_iter_files_expands_folders_sorted_without_dot_entries(tmp_path):
    for rel in ["b/2.jsonl", "b/10.jsonl", "a.md", ".hidden.md", ".git/x.jsonl", "c/.d/y.md"]:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    explicit = tmp_path / ".hidden.md"
    assert iter_files([tmp_path, explicit, tmp_path / "a.md"]) == [
        tmp_path / "a.md",
        tmp_path / "b/10.jsonl",
        tmp_path / "b/2.jsonl",
        explicit,
    ]
    with pytest.raises(InputError, match="no such file"):
        iter_files([tmp_path / "missing"])


# --- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "fmt", "line", "needle"),
    [
        ("malformed.jsonl", None, 3, "malformed JSON: Unterminated string"),
        ("malformed.json", None, 3, "malformed JSON: Expecting ',' delimiter (column 24)"),
        ("empty.jsonl", None, 1, "empty file"),
        ("empty.jsonl", "chatgpt", 1, "empty file"),
        ("blank.md", None, 1, "empty file"),
        ("binary.jsonl", None, 1, "binary file"),
        ("binary.jsonl", "jsonl", 1, "binary file"),
        ("latin1.txt", None, 2, "not valid UTF-8 (byte 0xe9)"),
        ("latin1.txt", "chatgpt", 2, "not valid UTF-8"),
        ("no_role.jsonl", None, 2, "no 'role'"),
        ("unknown_role.jsonl", None, 3, "unknown role 'wizard'"),
        ("content_not_string.jsonl", None, 2, "'content' must be a string, got list"),
        ("line_not_object.jsonl", None, 2, "expected a JSON object per line, got list"),
        ("wrong_top_level.json", None, 1, "top-level JSON value must be an array or an object"),
        ("wrong_top_level.json", "chatgpt", 1, "top-level JSON value must be an array"),
        ("wrong_top_level.json", "openai", 1, "top-level JSON value must be an array"),
        ("openai.json", "chatgpt", 1, "is not an object with a 'mapping'"),
        ("unknown.json", None, None, "unknown transcript format; use --format {jsonl,"),
        ("no_speakers.md", None, 1, "no speaker lines found"),
        ("openai_bad_role.json", None, 3, "unknown role 'robot'"),
        ("claude_no_message.jsonl", None, 2, "'assistant' line has no 'message'"),
        ("chatgpt_bad_role.json", None, 3, "conversation 'c-bad': node 'n2' has unknown role"),
    ],
)
def test_errors_name_file_and_line(name, fmt, line, needle):
    path = (BAD if (BAD / name).exists() else DATA) / name
    with pytest.raises(InputError) as err:
        read_all(path, fmt)
    assert err.value.path == str(path)
    assert err.value.line == line
    assert needle in err.value.message
    assert "\n" not in str(err.value)
    prefix = f"{path}:{line}: " if line is not None else f"{path}: "
    assert str(err.value).startswith(prefix)


def test_stream_errors_use_the_given_name():
    with pytest.raises(InputError) as err:
        read_all(
            io.BytesIO(b'{"role": "user", "content": "a"}\n{"role": 1, "content": "b"}\n'),
            name="<stdin>",
        )
    assert str(err.value).startswith("<stdin>:2: unknown role 1")
    with pytest.raises(InputError, match="unknown format 'xml'"):
        read_all(DATA / "memctl.jsonl", "xml")
    with pytest.raises(InputError, match="no such file"):
        read_all(DATA / "nope.jsonl")


def test_late_errors_in_a_large_json_name_the_line(tmp_path):
    good = json.dumps(_conversation("c", 2, "x" * 5000), indent=1)
    path = tmp_path / "conversations.json"
    path.write_bytes(b"[\n" + f"{good},\n".encode() * 300 + b'{"mapping": \xff}]')
    with pytest.raises(InputError) as err:
        read_all(path)
    assert err.value.line == 1 + 300 * (good.count("\n") + 1) + 1
    assert "not valid UTF-8" in err.value.message
