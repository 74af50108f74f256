"""`memctl mcp` through the official SDK's own stdio client: tools, scope, paths, remember."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters
from test_recall import NOTES, SESSIONS, build_vault
from util import ROOT, git

from memctl.core.raw import short_digest
from memctl.errors import InputError
from memctl.faces.mcp import Tools
from memctl.recall import recall
from memctl.vault import Vault


@pytest.fixture
def acme(tmp_path: Path) -> tuple[Vault, dict]:
    return build_vault(tmp_path / "vault", SESSIONS, NOTES)


def _server(vault: Path, user: str) -> StdioServerParameters:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCTL_")}
    env["PYTHONPATH"] = str(ROOT)
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "memctl", "--vault", str(vault), "mcp", "--as", user],
        env=env,
        cwd=str(ROOT),
    )


def _session(vault: Path, user: str, steps: Any) -> Any:
    async def main() -> Any:
        async with Client(_server(vault, user), read_timeout_seconds=60) as client:
            return await steps(client)

    return anyio.run(main)


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def _data(result: Any) -> Any:
    if result.structured_content is not None:
        return result.structured_content
    return json.loads(_text(result))


def test_stdio_server_lists_and_runs_every_tool(acme: tuple[Vault, dict]) -> None:
    vault, paths = acme

    async def steps(c: Client) -> dict[str, Any]:
        out: dict[str, Any] = {}
        out["tools"] = sorted(t.name for t in (await c.list_tools()).tools)
        out["recall"] = await c.call_tool("recall", {"query": "Datadog or Grafana?"})
        out["context"] = await c.call_tool("context", {"budget": 400})
        out["search"] = await c.call_tool("search", {"query": "Grafana", "limit": 5})
        out["read"] = await c.call_tool("read", {"ref": f"{paths['s-egress']}#t1"})
        out["list"] = await c.call_tool("list", {"store": "decisions"})
        out["stores"] = await c.call_tool("list", {})
        return out

    out = _session(vault.root, "marco", steps)
    assert out["tools"] == ["context", "list", "read", "recall", "remember", "search"]
    assert "Acme is trying to cut its egress costs this quarter." in _text(out["recall"])
    digest = short_digest(paths["s-egress"])
    assert f"{digest}#t1" in _text(out["recall"])
    assert f"{digest} = {paths['s-egress']}" in _text(out["recall"])
    assert "Acme decided to go with Grafana Cloud." in _text(out["context"])
    hits = _data(out["search"])["hits"]
    assert hits and all(h["ref"] for h in hits)
    turn = _data(out["read"])
    assert turn["kind"] == "turn" and "cut our egress costs" in turn["text"]
    notes = _data(out["list"])["notes"]
    assert [n["path"] for n in notes] == ["decisions/grafana.md"]
    assert "knowledge" in _data(out["stores"])["stores"]


def test_a_user_never_sees_another_users_private_memory(acme: tuple[Vault, dict]) -> None:
    vault, paths = acme

    async def steps(c: Client) -> dict[str, Any]:
        return {
            "search": await c.call_tool("search", {"query": "Pulumi bluefalcon Lisbon"}),
            "read_note": await c.call_tool("read", {"ref": "profile/dana.md"}),
            "read_turn": await c.call_tool("read", {"ref": f"{paths['s-priya']}#t1"}),
            "list": await c.call_tool("list", {"store": "profile"}),
            "index": await c.call_tool("read", {"ref": "INDEX.md"}),
            "raw_index": await c.call_tool("read", {"ref": "raw/INDEX.md"}),
        }

    out = _session(vault.root, "marco", steps)
    assert _data(out["search"])["hits"] == []
    assert out["read_note"].is_error and "not visible to marco" in _text(out["read_note"])
    assert out["read_turn"].is_error
    assert _data(out["list"])["notes"] == []
    for key in ("index", "raw_index"):
        text = _data(out[key])["text"]
        assert "Lisbon" not in text and "Pulumi" not in text and "codename" not in text
    assert "datadog-or-grafana" in _data(out["raw_index"])["text"]


def test_a_shared_note_quoting_a_private_turn_is_read_without_that_claim(
    acme: tuple[Vault, dict],
) -> None:
    vault, _ = acme
    text = Tools(vault, "marco").read("knowledge/leak.md")["text"]
    assert "bluefalcon" not in text and "Acme's egress cost work lives in the infra repo." in text
    assert "1 claim(s) citing turns outside your scope" in text
    assert "bluefalcon" in Tools(vault, "dana").read("knowledge/leak.md")["text"]
    assert Tools(vault, "marco").search("bluefalcon codename")["hits"] == []


@pytest.mark.parametrize(
    "ref",
    [
        "../../../../etc/passwd",
        "/etc/passwd",
        "raw/../../outside.md",
        ".git/config",
        ".memctl/config.toml",
        "knowledge/../../x.md",
        "",
        "no-such-note.md",
    ],
)
def test_paths_can_never_leave_the_vault(acme: tuple[Vault, dict], ref: str) -> None:
    vault, _ = acme
    with pytest.raises(InputError):
        Tools(vault, "marco").read(ref)


def test_a_symlink_out_of_the_vault_is_refused(acme: tuple[Vault, dict], tmp_path: Path) -> None:
    vault, _ = acme
    secret = tmp_path / "secret.md"
    secret.write_text("---\nscope: team\n---\nthe secret\n")
    (vault.root / "knowledge" / "link.md").symlink_to(secret)
    with pytest.raises(InputError, match="outside the vault"):
        Tools(vault, "marco").read("knowledge/link.md")


def test_remember_with_a_verified_quote_is_recalled_with_its_citation(
    acme: tuple[Vault, dict],
) -> None:
    vault, paths = acme
    ref = f"{paths['s-vendor']}#t4"

    async def steps(c: Client) -> dict[str, Any]:
        return {
            "bad": await c.call_tool(
                "remember",
                {
                    "claim": "GC replaces Prometheus.",
                    "source": ref,
                    "quote": "GC will replace Thanos",
                },
            ),
            "good": await c.call_tool(
                "remember",
                {
                    "claim": "Grafana Cloud replaces the self-hosted Prometheus next month.",
                    "source": ref,
                    "quote": "GC will replace the self-hosted Prometheus next month.",
                    "scope": "team",
                    "note": "Observability",
                },
            ),
        }

    out = _session(vault.root, "marco", steps)
    assert out["bad"].is_error and "not verbatim" in _text(out["bad"])
    good = _data(out["good"])
    assert good["action"] == "added" and good["basis"] == "stated"
    assert good["path"].startswith("knowledge/") and good["citations"][0]["ref"] == ref
    assert "remember: Grafana Cloud replaces" in git(vault.root, "log", "-1", "--format=%s")
    assert git(vault.root, "status", "--porcelain").strip() == ""
    note = (vault.root / good["path"]).read_text()
    assert f'{ref} "GC will replace the self-hosted Prometheus next month."' in note
    assert "Observability" in (vault.root / "knowledge" / "INDEX.md").read_text()
    res = recall(vault, "self-hosted Prometheus next month", user="dana")
    m = next(m for m in res.memories if m.text.startswith("Grafana Cloud replaces"))
    assert m.basis == "stated" and m.citations[0].ref == ref


def test_remember_as_the_agents_own_is_marked_and_private_by_default(
    acme: tuple[Vault, dict],
) -> None:
    vault, _ = acme
    tools = Tools(vault, "marco")
    res = tools.remember("Marco likes short answers with the cost math first.", own=True)
    assert res.basis == "agent" and res.citations == []
    note = (vault.root / res.path).read_text()
    assert "scope: user:marco" in note and "cost math first. #agent" in note
    mine = recall(vault, "short answers cost math", user="marco")
    m = next(m for m in mine.memories if m.text.startswith("Marco likes short answers"))
    assert m.basis == "agent"
    other = recall(vault, "short answers cost math", user="dana")
    assert all("short answers" not in m.text for m in other.memories)


def test_remember_refuses_what_it_cannot_back(acme: tuple[Vault, dict]) -> None:
    vault, paths = acme
    tools = Tools(vault, "marco")
    private = f"{paths['s-dana-private']}#t1"
    with pytest.raises(InputError, match="cite where this comes from"):
        tools.remember("Something.")
    with pytest.raises(InputError, match="not visible to marco"):
        tools.remember("Dana likes Terraform.", source=private, quote="I prefer Terraform")
    dana = Tools(vault, "dana")
    with pytest.raises(InputError, match="cannot be team"):
        dana.remember(
            "Dana likes Terraform.", source=private, quote="I prefer Terraform", scope="team"
        )
    with pytest.raises(InputError, match="assistant turn"):
        tools.remember("x y z", source=f"{paths['s-vendor']}#t2", quote="Grafana Cloud prices")
    with pytest.raises(InputError, match="no store"):
        tools.remember("x", own=True, store="nope")
    with pytest.raises(InputError, match="footnote"):
        tools.remember("x [^1]", own=True)
    with pytest.raises(InputError, match="outside the vault"):
        tools.remember("x", source="../../etc/passwd.md", quote="something long")


def test_remember_from_a_note_keeps_the_raw_citation(acme: tuple[Vault, dict]) -> None:
    vault, paths = acme
    tools = Tools(vault, "marco")
    res = tools.remember(
        "The egress goal frames vendor choices.",
        source="knowledge/acme.md",
        quote="cut its egress costs this quarter",
        scope="team",
    )
    assert res.basis == "stated"
    assert res.citations[0]["ref"] == f"{paths['s-egress']}#t1"


def test_remember_into_instructions_is_only_a_proposal(acme: tuple[Vault, dict]) -> None:
    vault, _ = acme
    res = Tools(vault, "marco").remember(
        "Always show the cost math first.", own=True, store="instructions", scope="team"
    )
    assert res.action == "proposed" and res.path.endswith(".proposed.md")
    assert "status: proposed" in (vault.root / res.path).read_text()


def test_read_accepts_every_form_show_accepts(acme: tuple[Vault, dict]) -> None:
    vault, paths = acme
    rel = paths["s-vendor"]
    digest = short_digest(rel)
    forms = {
        "session id": ("s-vendor", "session", rel),
        "id prefix": ("s-vend", "session", rel),
        "digest#tN": (f"{digest}#t4", "turn", f"{rel}#t4"),
        "id#tN": ("s-vendor#t4", "turn", f"{rel}#t4"),
        "raw path#tN": (f"{rel}#t4", "turn", f"{rel}#t4"),
        "note id": ("decisions/grafana", "note", "decisions/grafana.md"),
        "note path": ("decisions/grafana.md", "note", "decisions/grafana.md"),
    }

    async def steps(c: Client) -> dict[str, Any]:
        return {k: await c.call_tool("read", {"ref": ref}) for k, (ref, _, _) in forms.items()}

    out = _session(vault.root, "marco", steps)
    for key, (ref, kind, canonical) in forms.items():
        assert not out[key].is_error, (key, _text(out[key]))
        data = _data(out[key])
        assert (data["kind"], data["ref"]) == (kind, canonical), key
        assert data["ref"] == vault.show(ref).ref
