"""The MCP surface a model meets, through the official SDK client over stdio: every tool and
parameter described, closed sets as enums, annotations, resources with templates, a prompt,
structured answers, plain argument errors, honest empty answers, and remember's support check."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from test_mcp import _data, _session, _text
from test_recall import NOTES, SESSIONS, build_vault
from util import ROOT

from memctl.core.raw import short_digest
from memctl.core.refs import digest_of
from memctl.vault import Vault

READ_ONLY = {"search", "recall", "context", "read", "list"}


@pytest.fixture(scope="module")
def acme(tmp_path_factory: pytest.TempPathFactory) -> tuple[Vault, dict]:
    return build_vault(tmp_path_factory.mktemp("surface") / "vault", SESSIONS, NOTES)


def test_every_tool_and_parameter_is_described_with_enums_and_annotations(
    acme: tuple[Vault, dict],
) -> None:
    vault, _ = acme

    async def steps(c: Client) -> Any:
        return (await c.list_tools()).tools

    tools = {t.name: t for t in _session(vault.root, "marco", steps)}
    assert set(tools) == READ_ONLY | {"remember"}
    for name, t in tools.items():
        assert t.title and t.description and len(t.description) > 40, name
        assert t.input_schema["title"] == f"{name}Arguments", t.input_schema["title"]
        for pname, p in t.input_schema["properties"].items():
            assert p.get("description"), f"{name}.{pname} has no description"
        assert t.output_schema, f"{name} has no structured output"
        a = t.annotations
        assert a is not None and a.open_world_hint is False, name
        assert a.read_only_hint is (name in READ_ONLY), name
        assert a.destructive_hint is False, name

    def enum(tool: str, param: str) -> list[str]:
        p = tools[tool].input_schema["properties"][param]
        for t in p.get("anyOf", [p]):
            if "enum" in t:
                return list(t["enum"])
        raise AssertionError(f"{tool}.{param} is a free string")

    stores = list(vault.config.stores)
    assert enum("search", "kind") == ["turn", "note", "claim"]
    assert enum("search", "store") == stores
    assert enum("list", "store") == stores
    assert enum("remember", "store") == stores
    assert enum("remember", "scope") == ["user", "team", "global"]
    limit = tools["search"].input_schema["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"]) == (1, 50)


def test_argument_errors_are_one_plain_sentence(acme: tuple[Vault, dict]) -> None:
    vault, _ = acme
    calls = {
        "negative limit": ("search", {"query": "Grafana", "limit": -5}),
        "unknown store": ("search", {"query": "Grafana", "store": "nosuch"}),
        "unknown kind": ("search", {"query": "Grafana", "kind": "turns"}),
        "list unknown store": ("list", {"store": "nosuch"}),
        "missing query": ("recall", {}),
        "bad scope": ("remember", {"claim": "x y z", "own": True, "scope": "everyone"}),
    }

    async def steps(c: Client) -> dict[str, Any]:
        return {k: await c.call_tool(tool, args) for k, (tool, args) in calls.items()}

    out = _session(vault.root, "marco", steps)
    for key, res in out.items():
        text = _text(res)
        assert res.is_error, (key, text)
        assert "pydantic" not in text and "http" not in text and "\n" not in text, (key, text)
        assert "Error executing tool" not in text, (key, text)
    assert _text(out["negative limit"]) == (
        "search: limit must be at least 1, not -5; see the tool's input schema."
    )
    assert "store must be 'profile'" in _text(out["unknown store"])
    assert "not 'nosuch'" in _text(out["list unknown store"])
    assert _text(out["missing query"]).startswith("recall: query is required")


def test_a_budget_too_small_says_so_instead_of_empty_memory(acme: tuple[Vault, dict]) -> None:
    vault, _ = acme

    async def steps(c: Client) -> dict[str, Any]:
        return {
            "recall": await c.call_tool("recall", {"query": "Datadog or Grafana?", "budget": 5}),
            "context": await c.call_tool("context", {"budget": 0}),
        }

    out = _session(vault.root, "marco", steps)
    for key in ("recall", "context"):
        text = _data(out[key])["result"]
        assert "matched, but none fits in a budget of" in text, (key, text)
        assert "nothing in memory" not in text and "empty" not in text


def test_an_empty_memory_says_so(tmp_path: Path) -> None:
    from memctl.faces.mcp import Tools

    tools = Tools(Vault.init(tmp_path / "empty", env={})[0], "dana")
    assert tools.recall("zebra crossing xylophone") == "(nothing in memory matches this)"
    assert tools.context() == "(memory holds nothing for dana yet)"


def test_resources_templates_and_the_prompt(acme: tuple[Vault, dict]) -> None:
    vault, paths = acme
    digest = short_digest(paths["s-vendor"])

    async def steps(c: Client) -> dict[str, Any]:
        return {
            "resources": (await c.list_resources()).resources,
            "templates": (await c.list_resource_templates()).resource_templates,
            "front": await c.read_resource("memctl://index"),
            "note": await c.read_resource("memctl://note/decisions/grafana.md"),
            "turn": await c.read_resource(f"memctl://session/{digest}/t/3"),
            "session": await c.read_resource("memctl://session/s-vendor"),
            "prompts": (await c.list_prompts()).prompts,
            "prompt": await c.get_prompt("use-memory", {"task": "pick a log vendor"}),
        }

    out = _session(vault.root, "marco", steps)
    uris = {str(r.uri) for r in out["resources"]}
    assert "memctl://index" in uris and "memctl://note/decisions/grafana.md" in uris
    # a session resource goes by the whole digest its file name ends with (unambiguous)
    assert f"memctl://session/{digest_of(paths['s-vendor'])}" in uris
    assert "memctl://note/profile/dana.md" not in uris  # dana's private profile
    assert {t.uri_template for t in out["templates"]} == {
        "memctl://note/{+path}", "memctl://session/{session}", "memctl://session/{session}/t/{n}"
    }
    text = {k: out[k].contents[0].text for k in ("front", "note", "turn", "session")}
    assert "Grafana" in text["note"] and "We decided to go with Grafana Cloud" in text["turn"]
    assert text["session"].startswith("---\ntype: raw-session")
    assert [p.name for p in out["prompts"]] == ["use-memory"]
    said = out["prompt"].messages[0].content.text
    assert "call `recall`" in said and "pick a log vendor" in said and "marco" in said
    # the same words as the block's header: which lines to follow, which are data
    from memctl.results import DATA_NOTE, INSTRUCTIONS_NOTE

    assert INSTRUCTIONS_NOTE in said and DATA_NOTE in said


def test_remember_needs_a_quote_that_supports_the_claim(acme: tuple[Vault, dict]) -> None:
    vault, paths = acme
    digest = short_digest(paths["s-vendor"])
    quote = "We decided to go with Grafana Cloud"

    async def steps(c: Client) -> dict[str, Any]:
        return {
            "unsupported": await c.call_tool("remember", {
                "claim": "Marco's team prefers Splunk for every log pipeline.",
                "source": f"{digest}#t3", "quote": quote}),
            "supported": await c.call_tool("remember", {
                "claim": "Marco's team decided to go with Grafana Cloud.",
                "source": f"{digest}#t3", "quote": quote}),
        }

    out = _session(vault.root, "marco", steps)
    bad, good = _data(out["unsupported"]), _data(out["supported"])
    assert bad["basis"] == "agent" and bad["citations"] == []
    assert "does not support the claim" in bad["notice"]
    assert good["basis"] == "stated" and good["notice"] is None
    assert good["citations"] == [{"ref": f"{paths['s-vendor']}#t3", "quote": quote}]
    text = (vault.root / bad["path"]).read_text()
    splunk = next(line for line in text.splitlines() if "Splunk" in line)
    assert "#agent" in splunk and "[^" not in splunk


def test_docs_mcp_md_is_generated_from_the_server() -> None:
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_mcp_docs.py"), "--check"],
                       capture_output=True, text=True, check=False, cwd=ROOT)
    assert r.returncode == 0, r.stderr
    doc = (ROOT / "docs" / "mcp.md").read_text()
    for name in (*READ_ONLY, "remember", "use-memory", "memctl://note/{+path}"):
        assert f"`{name}`" in doc


def test_recall_through_the_cli_says_when_the_budget_was_too_small(
    acme: tuple[Vault, dict], tmp_path: Path
) -> None:
    from util import memctl

    r = memctl("--vault", acme[0].root, "recall", "Datadog or Grafana?", "--budget", "5",
               "--user", "marco")
    assert r.code == 0 and r.out == ""
    assert "none fits in a budget of 5 tokens" in r.err
