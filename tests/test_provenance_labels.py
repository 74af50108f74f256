"""Agent, human and source are told apart everywhere a line's origin is shown: diff, verify
and recall. An #agent line is the agent's own, not a person's."""

from __future__ import annotations

from pathlib import Path

from util import git, new_vault, ok

from memctl.faces.mcp import Tools
from memctl.vault import Vault


def test_agent_human_and_sourced_lines_are_labelled_apart(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    ok("--vault", v, "ingest", "-", "--format", "jsonl", "--session", "s1", "--user", "dana",
       input='{"role": "user", "content": "We run the zanzibar cluster on quokka hosts."}\n')
    vault = Vault.open(v, env={})
    tools = Tools(vault, "dana")
    raw = vault.resolve("s1#t1").text
    tools.remember("Dana runs the zanzibar cluster on quokka hosts.", source=raw,
                   quote="We run the zanzibar cluster on quokka hosts.", note="Infra")
    own = tools.remember("Dana probably wants zanzibar alerts in the morning.", own=True,
                         note="Infra")
    note = v / own.path
    note.write_text(note.read_text().replace(
        "## Facts\n\n", "## Facts\n\n- The zanzibar runbook is on the wiki.\n"))
    git(v, "add", "-A")
    git(v, "-c", "user.name=Dana", "-c", "user.email=d@x", "commit", "-qm", "hand edit")

    diff = ok("--vault", v, "diff", "--since", "1d").out
    lines = diff.splitlines()

    def after(claim: str) -> str:
        i = next(i for i, line in enumerate(lines) if claim in line)
        return "\n".join(lines[i + 1 : i + 3])

    assert "the agent's own note (#agent)" in after("probably wants zanzibar alerts")
    assert "human-authored" not in after("probably wants zanzibar alerts")
    assert "(no source: human-authored)" in after("runbook is on the wiki")
    assert "quokka hosts.” raw/" in after("Dana runs the zanzibar cluster")
    js = ok("--vault", v, "diff", "--since", "1d", "--json").json()
    bases = {c["plain"]: c["basis"] for notes in js["stores"].values() for n in notes
             for c in n["changes"]}
    assert bases["Dana runs the zanzibar cluster on quokka hosts."] == "source"
    assert bases["Dana probably wants zanzibar alerts in the morning. #agent"] == "agent"
    assert bases["The zanzibar runbook is on the wiki."] == "human"

    ver = ok("--vault", v, "verify", "--json").json()
    assert (ver["claims"], ver["agent_lines"], ver["human_lines"]) == (1, 1, 1)
    assert "1 agent line, 1 human line" in ok("--vault", v, "verify").out

    rec = ok("--vault", v, "recall", "zanzibar", "--user", "dana", "--json").json()
    basis = {m["text"]: m["basis"] for m in rec["memories"] if m["kind"] == "claim"}
    assert basis["Dana probably wants zanzibar alerts in the morning."] == "agent"
    assert basis["The zanzibar runbook is on the wiki."] == "human"
    assert basis["Dana runs the zanzibar cluster on quokka hosts."] == "stated"
