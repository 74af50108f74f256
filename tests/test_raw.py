"""Raw session files must give back every message exactly, whatever its text looks like."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memctl.core.model import Message
from memctl.core.raw import make_header, parse_session, render_session, render_turn
from memctl.errors import MemctlError

tricky = st.sampled_from(
    [
        "## t1 · user · 2026-01-01 10:00",
        "\\## t2 · x",
        "---",
        "<!-- memctl:turn {} -->",
        "```python\nprint('x')\n```",
        "\r\n",
        "\n\n\n",
        "# title",
        "-->",
        "é 😀 漢字 \u200b",
        "",
    ]
)
text = st.lists(st.one_of(st.text(), tricky), max_size=6).map("\n".join)
json_scalar = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=20))
message = st.builds(
    Message,
    role=st.sampled_from(["user", "assistant", "system", "tool"]),
    content=text,
    id=st.one_of(st.none(), st.text(max_size=20)),
    name=st.one_of(st.none(), st.text(max_size=20)),
    timestamp=st.one_of(st.none(), st.text(max_size=25), st.just("2026-11-29T10:04:00Z")),
    meta=st.dictionaries(st.text(max_size=10), json_scalar, max_size=3),
)


def test_header_values_with_yaml_line_breaks_round_trip() -> None:
    m = Message("user", "x", timestamp="\x85 \u2028 \u2029 é")
    header = make_header("s\x85", "T\u2028itle é", "jsonl", "o\u2029", "u", "team", [m])
    h2, back = parse_session(render_session(header, [m]), "raw/x.md")
    assert h2 == header and back == [m]


@settings(max_examples=200, deadline=None)
@given(st.lists(message, min_size=1, max_size=6))
def test_render_parse_round_trip(messages: list[Message]) -> None:
    header = make_header("s", "T", "jsonl", "x.jsonl", "u", "team", messages)
    text = render_session(header, messages)
    h2, back = parse_session(text, "raw/x.md")
    assert back == messages
    assert h2 == header


def test_heading_lookalike_is_escaped_and_restored() -> None:
    m = Message("user", "before\n## t2 · assistant · 2026-01-01 10:00\nafter")
    section = render_turn(1, m)
    assert "\n\\## t2 · assistant" in section
    text = render_session(make_header("s", "T", "jsonl", "o", "u", "team", [m]), [m])
    assert parse_session(text, "p")[1] == [m]


def test_damaged_file_names_path_and_line() -> None:
    m = Message("user", "hi")
    text = render_session(make_header("s", "T", "jsonl", "o", "u", "team", [m]), [m])
    broken = text.replace("<!-- memctl:turn", "<!-- oops", 1)
    with pytest.raises(MemctlError) as exc:
        parse_session(broken, "raw/a.md")
    assert str(exc.value).startswith("raw/a.md:")
    assert exc.value.line == text.splitlines().index("## t1 · user") + 2


# ---- the fast paths spell exactly what the general code would --------------------------

_texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=20)
_stamps = st.one_of(
    st.none(),
    _texts,
    st.datetimes(timezones=st.none() | st.timezones()).map(lambda d: d.isoformat()),
    st.datetimes().map(lambda d: d.isoformat(sep=" ", timespec="minutes")),
    st.datetimes().map(lambda d: " " + d.strftime("%Y-%m-%dT%H:%M:%SZ") + "\n"),
    st.sampled_from(["0999-01-01T10:00", "2023-05-24", "20230524T061555", "2023-W21-3T10:00"]),
)


@settings(max_examples=400, deadline=None)
@given(stamp=_stamps)
def test_heading_time_matches_strftime(stamp: str | None) -> None:
    from memctl.core.raw import _heading_time, parse_time

    ts = parse_time(stamp)
    assert _heading_time(stamp) == (f" · {ts:%Y-%m-%d %H:%M}" if ts else "")


@settings(max_examples=400, deadline=None)
@given(
    role=_texts,
    mid=st.none() | _texts,
    name=st.none() | _texts,
    stamp=st.none() | _texts,
    meta=st.dictionaries(_texts, st.integers() | _texts, max_size=2),
)
def test_record_json_matches_json_dumps(
    role: str, mid: str | None, name: str | None, stamp: str | None, meta: dict
) -> None:
    import json

    from memctl.core.raw import _record_json, _sorted_record_json, message_record

    m = Message(role, "content", mid, name, stamp, meta)
    rec = message_record(m)
    assert _record_json(m) == json.dumps(rec, ensure_ascii=False)
    assert _sorted_record_json(m) == json.dumps(rec, ensure_ascii=False, sort_keys=True)
