"""The first hour of a new user (issue 24): commands that agree with each other and with
what they did. Each test here failed on the main of 2026-12-01."""

from __future__ import annotations

import json
from pathlib import Path

from memctl import Vault


def _jsonl(path: Path, *messages: tuple[str, str]) -> Path:
    path.write_text("".join(json.dumps({"role": r, "content": c}) + "\n" for r, c in messages),
                    encoding="utf-8")
    return path


def test_search_snippets_keep_what_is_glued_to_their_edges(tmp_path: Path) -> None:
    """tantivy ends a fragment at its last token: `[REDACTED:stripe-key]` lost its `]`."""
    vault, _ = Vault.init(tmp_path / "v", env={})
    src = _jsonl(tmp_path / "t.jsonl",
                 ("user", "We rotated the payments key today (it was "
                          "sk_live_4eC39HqLyjWDarjtT1zdp7dc)"),
                 ("assistant", "Good. Store the new key in Vault, not in the repo!"))
    vault.ingest([src], user="dana", scope="team")
    hits = vault.search("payments").hits
    assert hits and hits[0].snippet.endswith("[REDACTED:stripe-key])")
    assert [hits[0].snippet[a:b] for a, b in hits[0].highlights] == ["payments"]
    hit = vault.search("repo").hits[0]
    assert hit.snippet.endswith("the repo!")
    assert [hit.snippet[a:b] for a, b in hit.highlights] == ["repo"]
