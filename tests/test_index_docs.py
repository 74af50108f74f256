"""The documents ingest gives tantivy: what a reader gets back must not depend on fast paths."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from memctl.core.model import Message
from memctl.core.raw import make_header, render_session
from memctl.index import schema

_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30)
_messages = st.lists(
    st.builds(
        Message,
        role=st.sampled_from(["user", "assistant", "system", "tool"]),
        content=_text,
        id=st.none() | _text,
        name=st.none() | _text,
        timestamp=st.none() | st.just("") | _text | st.just("2026-09-01T10:04:00+02:00"),
    ),
    min_size=1,
    max_size=6,
)


def _expected(rel: str, n: int, m: Message, span: Any, st_: tuple[int, int], h: Any) -> bytes:
    speaker = m.name or m.role
    stored: dict[str, Any] = {
        "kind": "turn",
        "ref": f"{rel}#t{n}",
        "session": h.session,
        "speaker": speaker,
        "role": m.role,
        "user": h.user,
        "scope": h.scope,
    }
    if span is not None:
        stored["span"] = [span[0], span[1], st_[0], st_[1]]
    else:
        stored["text"] = m.content
    if m.id is not None:
        stored["id"] = m.id
    if m.timestamp:
        stored["timestamp"] = m.timestamp
    return schema._dumps(stored)


@settings(max_examples=100, deadline=None)
@given(messages=_messages, session=_text, user=_text, scope=_text, rel_tail=_text)
def test_stored_turn_blob_is_the_json_of_its_fields(
    messages: list[Message], session: str, user: str, scope: str, rel_tail: str
) -> None:
    rel = f"raw/2026/09/01/{rel_tail}.md"
    h = make_header(session, "t", "jsonl", "o", user, scope, messages)
    data = render_session(h, messages).encode("utf-8")
    st_ = (1_700_000_000_123_456_789, len(data))
    spans = schema._content_spans(data, [m.content.encode() for m in messages])
    docs = list(schema.session_docs(rel, data, h, messages, st_))
    assert len(docs) == len(messages)
    for n, (d, m) in enumerate(zip(docs, messages, strict=True), 1):
        assert d.to_dict()["doc"][0] == _expected(rel, n, m, spans[n - 1], st_, h)
