"""Standing context: what one engineer told the agent reaches the next one's unrelated question.

The learning-machines essay, in its own words: Engineer A tells the agent "we're trying to
cut down on egress costs"; days later Engineer B, in a new conversation, asks "I'm deciding
between Datadog and Grafana, any recommendations?". No word is shared. B's answer must
carry A's goal with its citation through all four ways memory reaches an agent (the
`memctl recall` CLI, the UserPromptSubmit hook, MCP `recall`, `LearningMachine.recall`),
and never A's private profile. The vault is built the way a user builds it: `memctl
ingest` of each transcript and `memctl curate` with the builtin curator.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from test_mcp import _server
from util import memctl, ok

from memctl.core.notes import strip_links
from memctl.core.raw import short_digest
from memctl.faces.learning import LearningMachine
from memctl.recall import recall
from memctl.vault import Vault

A_TURNS = [
    {
        "role": "user",
        "name": "Tom",
        "content": "Hi, I run the platform team at Northwind. "
        "We're trying to cut down on egress costs this quarter.",
        "timestamp": "2026-11-02T09:00:00Z",
    },
    {
        "role": "assistant",
        "content": "Cross-region transfer and NAT gateways are usually the biggest egress lines.",
        "timestamp": "2026-11-02T09:00:30Z",
    },
    {
        "role": "user",
        "name": "Tom",
        "content": "I prefer short answers with the numbers first.",
        "timestamp": "2026-11-02T09:01:00Z",
    },
]
B_TURNS = [
    {
        "role": "user",
        "name": "Ana",
        "content": "Hey, I just joined the data team at Northwind. Where do the runbooks live?",
        "timestamp": "2026-11-05T10:00:00Z",
    },
    {
        "role": "assistant",
        "content": "The runbooks are in the ops wiki under Platform.",
        "timestamp": "2026-11-05T10:00:20Z",
    },
]
QUESTION = "I'm deciding between Datadog and Grafana, any recommendations?"
PRIVATE = "short answers"  # what A said about how A wants answers: A's profile, private


@pytest.fixture(scope="module")
def essay(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The vault after A's and B's conversations and a builtin curation, and what was learned."""
    tmp = tmp_path_factory.mktemp("essay")
    vault = tmp / "vault"
    ok("init", vault)
    for name, turns, user in (("a", A_TURNS, "tom"), ("b", B_TURNS, "ana")):
        src = tmp / f"{name}.jsonl"
        src.write_text("".join(json.dumps(t) + "\n" for t in turns), encoding="utf-8")
        ok("--vault", vault, "ingest", src, "--user", user, "--scope", "team")
    ok("--vault", vault, "curate")
    # what the curator learned from A's first turn, in its own words, with its citation
    raw_a = next((vault / "raw").rglob("hi-i-run-the-platform-*.md"))
    ref = f"{raw_a.relative_to(vault).as_posix()}#t1"
    goal = None
    for note in sorted((vault / "knowledge").glob("*.md")):
        text = note.read_text(encoding="utf-8")
        labels = re.findall(rf"^\[\^([^\]]+)\]: {re.escape(ref)} ", text, re.M)
        for line in text.splitlines():
            if (
                line.startswith("- ")
                and "egress" in line
                and any(f"[^{lb}]" in line for lb in labels)
            ):
                goal = strip_links(re.sub(r"\s*\[\^[^\]]+\]", "", line[2:])).strip()
    assert goal is not None, "the curator did not learn A's goal as team knowledge"
    profile = (vault / "profile" / "tom.md").read_text(encoding="utf-8")
    assert PRIVATE in profile and "scope: user:tom" in profile
    digest = short_digest(raw_a.as_posix())  # the 6 hex recall cites a session by
    return {"vault": vault, "goal": goal, "ref": ref, "cite": f"{digest}#t1"}


def _carries_a_goal(text: str, essay: dict[str, Any]) -> None:
    line = next((ln for ln in text.splitlines() if essay["goal"] in ln), None)
    assert line is not None, text
    assert essay["cite"] in line and "Tom" in line  # cited: A's turn, said by A
    assert PRIVATE not in text


def test_recall_cli_carries_a_goal_to_b(essay: dict[str, Any]) -> None:
    r = ok("--vault", essay["vault"], "recall", "--user", "ana", "--", QUESTION)
    _carries_a_goal(r.out, essay)
    data = ok(
        "--vault", essay["vault"], "recall", "--user", "ana", "--json", "--explain", "--", QUESTION
    ).json()
    cited = [c["ref"] for m in data["memories"] for c in m["citations"]]
    assert essay["ref"] in cited
    why = [d["reason"] for d in data["explain"] if d["kept"] and essay["goal"] in d["text"]]
    assert why and why[0].startswith("standing")


def test_user_prompt_submit_hook_carries_a_goal_to_b(essay: dict[str, Any]) -> None:
    payload = {
        "session_id": "b-2",
        "transcript_path": "/nonexistent/b-2.jsonl",
        "cwd": str(essay["vault"]),
        "hook_event_name": "UserPromptSubmit",
        "prompt": QUESTION,
    }
    r = memctl(
        "--vault", essay["vault"], "hook", "user-prompt-submit", "--as", "ana",
        input=json.dumps(payload),
    )  # fmt: skip
    assert r.code == 0 and r.err == ""
    _carries_a_goal(json.loads(r.out)["hookSpecificOutput"]["additionalContext"], essay)


def test_mcp_recall_carries_a_goal_to_b(essay: dict[str, Any]) -> None:
    async def main() -> str:
        async with Client(_server(essay["vault"], "ana"), read_timeout_seconds=60) as c:
            res = await c.call_tool("recall", {"query": QUESTION})
            return "".join(getattr(x, "text", "") for x in res.content)

    _carries_a_goal(anyio.run(main), essay)


def test_learning_machine_recall_carries_a_goal_to_b(essay: dict[str, Any]) -> None:
    lm = LearningMachine(Vault.open(essay["vault"]), user="ana", background=False)
    res = lm.recall(QUESTION)
    _carries_a_goal(res.text, essay)
    m = next(m for m in res.memories if m.text == essay["goal"])
    assert m.basis == "stated" and m.citations[0].ref == essay["ref"]


def test_a_own_preferences_stand_for_a_only(essay: dict[str, Any]) -> None:
    vault = Vault.open(essay["vault"])
    mine = recall(vault, QUESTION, user="tom")
    assert PRIVATE in mine.text and essay["goal"] in mine.text
    assert PRIVATE not in recall(vault, QUESTION, user="ana").text


def test_a_prompt_about_nothing_gets_only_standing_context(essay: dict[str, Any]) -> None:
    """No turns and no topical claims for a haiku; the lines that govern every answer stay."""
    res = recall(Vault.open(essay["vault"]), "write a haiku about autumn", user="ana")
    assert res.memories, "standing context comes with every prompt"
    assert all(m.kind == "claim" and m.why.startswith("standing") for m in res.memories)
    assert essay["goal"] in res.text and PRIVATE not in res.text


def test_standing_share_zero_turns_it_off(essay: dict[str, Any], tmp_path: Path) -> None:
    vault = Vault.open(essay["vault"])
    cfg = vault.root / ".memctl" / "config.toml"
    before = cfg.read_text(encoding="utf-8")
    try:
        cfg.write_text(before.replace("standing = 0.25", "standing = 0"), encoding="utf-8")
        res = recall(Vault.open(essay["vault"]), QUESTION, user="ana")
        assert essay["goal"] not in res.text
        cfg.write_text(before.replace("standing = 0.25", "standing = 2"), encoding="utf-8")
        r = memctl("--vault", essay["vault"], "recall", "--user", "ana", "--", QUESTION)
        assert r.code == 2 and "standing" in r.err and "config.toml" in r.err
    finally:
        cfg.write_text(before, encoding="utf-8")


def test_standing_lines_never_exceed_their_share(essay: dict[str, Any]) -> None:
    vault = Vault.open(essay["vault"])
    full = recall(vault, "write a haiku about autumn", user="tom", budget=1500)
    tight = recall(vault, "write a haiku about autumn", user="tom", budget=160)
    assert len(tight.memories) < len(full.memories)
    assert tight.tokens <= 160
    dropped = [d.reason for d in tight.explain if not d.kept]
    assert any("over its share" in r for r in dropped)
