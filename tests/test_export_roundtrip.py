"""Property: whatever messages go in through ingest come back out of export unchanged."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memctl import Vault

lines = st.sampled_from(
    ["## t1 · user · 2026-01-01 10:00", "\\## t2 · x", "---", "```", "<!-- memctl:turn {} -->",
     "\r", "# heading", "-->", "   ", "é 😀 漢字", "User: hi", "**Bob**: yo"]
)
content = st.lists(st.one_of(st.text(max_size=40), lines), max_size=5).map("\n".join)
optional_text = st.one_of(st.none(), st.text(max_size=15))
message = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "system", "tool"]), "content": content},
    optional={"id": st.text(max_size=12), "name": st.text(max_size=12),
              "timestamp": st.one_of(st.text(max_size=25), st.just("2026-11-29T10:04:00Z")),
              "extra": st.dictionaries(st.text(max_size=5), st.integers(), max_size=2)},
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(message, min_size=1, max_size=5))
def test_ingest_then_export_is_identity(messages: list[dict]) -> None:
    tmp = Path(tempfile.mkdtemp())
    try:
        vault, _ = Vault.init(tmp / "v", env={})
        src = tmp / "t.jsonl"
        src.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
        res = vault.ingest([src], fmt="jsonl", user="u", session="s", redact=False)
        assert res.turns_added == len(messages)
        back = [json.loads(line) for line in vault.export("s")]
        assert back == messages
        # Byte for byte: the content strings are identical, not merely equal after decoding.
        assert [m["content"].encode() for m in back] == [m["content"].encode() for m in messages]
        # And ingesting the same file again finds nothing new.
        assert vault.ingest([src], fmt="jsonl", user="u", session="s", redact=False).commit is None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        os.environ.pop("MEMCTL_VAULT", None)
