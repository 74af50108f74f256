"""The fake LLM is only worth having if litellm's real client path accepts it as OpenAI, so
these tests drive it through ``litellm.completion`` rather than poking the server
directly; they also pin the offline guarantees every other test relies on."""

from __future__ import annotations

import http.client
import json
import socket
from typing import Any

import pytest
from fakellm import FakeLLM, FakeLLMStartupError, NetworkBlockedError, network_guard

MODEL = "openai/gpt-4o-mini"


def _litellm() -> Any:
    """litellm on first use, not at import: it takes seconds, and every xdist worker
    collects this module while only one of them runs it."""
    import litellm

    return litellm


def _server_error() -> type[Exception]:
    from litellm.exceptions import InternalServerError

    return InternalServerError


def chat(fake: FakeLLM, content: str = "hi", **kwargs: Any) -> Any:
    return _litellm().completion(
        model=MODEL,
        api_base=fake.base_url,
        messages=[{"role": "user", "content": content}],
        **kwargs,
    )


def test_plain_reply_reports_content_usage_and_records_request(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue("Paris is the capital of France.")
    messages = [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": "What is the capital of France?"},
    ]

    resp = _litellm().completion(model=MODEL, api_base=fake_llm.base_url, messages=messages)

    assert resp.choices[0].message.content == "Paris is the capital of France."
    assert resp.choices[0].finish_reason == "stop"
    # One token per word: 2 + 6 prompt words, 6 completion words.
    assert (resp.usage.prompt_tokens, resp.usage.completion_tokens) == (8, 6)
    assert resp.usage.total_tokens == 14
    [req] = fake_llm.history
    assert (req.method, req.path) == ("POST", "/v1/chat/completions")
    assert req.body["model"] == "gpt-4o-mini"
    assert req.messages == messages
    assert req.headers["authorization"] == "Bearer sk-fake-test"
    assert req.client_host == "127.0.0.1"
    assert fake_llm.pending == 0


def test_replies_are_served_in_order_with_custom_usage(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue("first", {"content": "second", "usage": {"prompt_tokens": 100}})

    first, second = chat(fake_llm), chat(fake_llm)

    assert first.choices[0].message.content == "first"
    assert second.choices[0].message.content == "second"
    assert (second.usage.prompt_tokens, second.usage.total_tokens) == (100, 101)


def test_response_format_json_object_is_passed_through(fake_llm: FakeLLM) -> None:
    payload = {"facts": ["the user prefers tabs"]}
    fake_llm.enqueue({"json": payload})

    resp = chat(fake_llm, "extract facts", response_format={"type": "json_object"})

    assert json.loads(resp.choices[0].message.content) == payload
    assert fake_llm.last_request.body["response_format"] == {"type": "json_object"}


def test_streaming_yields_sse_chunks(fake_llm: FakeLLM) -> None:
    fake_llm.enqueue("one two three")

    chunks = list(chat(fake_llm, stream=True, stream_options={"include_usage": True}))

    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "one two three"
    assert any(c.choices and c.choices[0].finish_reason == "stop" for c in chunks)
    usage = [c.usage for c in chunks if getattr(c, "usage", None)]
    assert usage and usage[-1].completion_tokens == 3
    assert fake_llm.last_request.body["stream"] is True


def test_enqueued_500_surfaces_as_litellm_exception(fake_llm: FakeLLM) -> None:
    error = {"error": {"message": "upstream exploded", "type": "server_error", "code": None}}
    fake_llm.enqueue({"status": 500, "body": error})

    with pytest.raises(_server_error(), match="upstream exploded"):
        chat(fake_llm)

    # x-should-retry: false keeps the openai SDK from retrying into the (now empty) queue.
    assert len(fake_llm.history) == 1


def test_empty_queue_fails_loudly(fake_llm: FakeLLM) -> None:
    with pytest.raises(_server_error(), match="FakeLLM queue is empty"):
        chat(fake_llm)
    assert len(fake_llm.history) == 1


def test_env_vars_alone_route_litellm_to_the_fake(fake_llm: FakeLLM) -> None:
    """memctl code will not pass api_base in tests; the fixture's env must be enough."""
    fake_llm.enqueue("via env")

    resp = _litellm().completion(model=MODEL, messages=[{"role": "user", "content": "hi"}])

    assert resp.choices[0].message.content == "via env"
    assert fake_llm.last_request.headers["authorization"] == "Bearer sk-fake-test"


def test_models_endpoint_and_unknown_route(fake_llm: FakeLLM) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", fake_llm.port, timeout=5)
    try:
        conn.request("GET", "/v1/models")
        models = json.loads(conn.getresponse().read())
        conn.request("POST", "/v1/embeddings", body=b"{}")
        missing = conn.getresponse()
        missing.read()
    finally:
        conn.close()
    assert models["object"] == "list" and models["data"][0]["id"] == "gpt-4o-mini"
    assert missing.status == 404
    assert [r.path for r in fake_llm.history] == ["/v1/models", "/v1/embeddings"]


def test_enqueue_rejects_typos_where_they_are_written(fake_llm: FakeLLM) -> None:
    with pytest.raises(ValueError, match="unknown FakeLLM reply keys"):
        fake_llm.enqueue({"contnet": "oops"})


def test_startup_gives_up_at_the_deadline() -> None:
    with pytest.raises(FakeLLMStartupError, match="did not answer"):
        FakeLLM(startup_timeout=0).start()


def test_network_guard_is_live_and_blocks_off_machine_lookups() -> None:
    seen = len(network_guard.attempts)
    with pytest.raises(NetworkBlockedError):
        socket.getaddrinfo("example.invalid", 443)
    assert network_guard.attempts[seen:] == ["socket.getaddrinfo 'example.invalid'"]
    del network_guard.attempts[seen:]  # deliberate; keep the session record clean


def test_nothing_but_loopback_was_contacted(fake_llm: FakeLLM) -> None:
    """The guard has watched since conftest loaded, i.e. before litellm's import, so an
    empty record covers litellm's import-time fetches as well as our calls."""
    fake_llm.enqueue("ok")
    chat(fake_llm)

    assert network_guard.installed and network_guard.block
    assert network_guard.attempts == []
    from litellm.litellm_core_utils.get_model_cost_map import get_model_cost_map_source_info

    source = get_model_cost_map_source_info()
    assert source["source"] == "local" and source["is_env_forced"] is True
    assert source["fallback_reason"] is None and source["url"] is None
    assert {r.client_host for r in fake_llm.history} == {"127.0.0.1"}
