"""A team of sub-agents in one vault: each speaks under the name its lead gave it, is heard
through its report, and a project's facts stand at a prompt only when it speaks of them.

Claude Code keeps a sub-agent's log at `<session>/subagents/agent-<id>.jsonl`, beside the
session that spawned it; the spawning `Agent` call names it ("ana") and its result carries
the agent's id. Written here in that shape, ingested and recalled through the real CLI.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from util import memctl, new_vault, ok


def memctl_run(root: Path, src: Path) -> str:
    """Ingest `src`: the lead's broken line is reported (exit 2), its agents still go in."""
    r = memctl("--vault", root, "ingest", src, "--user", "dana")
    assert r.code in (0, 2), r.err
    return r.err

SID = "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
CWD = "/home/dana/src/ledger"


def _row(n: int, kind: str, content: object, side: bool, agent: str | None = None) -> str:
    row: dict[str, object] = {
        "cwd": CWD, "sessionId": SID, "version": "2.1.90", "gitBranch": "main",
        "parentUuid": None, "isSidechain": side, "type": kind,
        "uuid": f"{(agent or 'parent')[:6]:0>6}-0000-4000-9000-{n:012d}",
        "timestamp": f"2026-05-04T10:{n:02d}:00.000Z",
        "message": {"role": kind, "content": content,
                    **({"model": "claude-opus-4-7"} if kind == "assistant" else {})},
    }  # fmt: skip
    if agent:
        row["agentId"] = agent
    return json.dumps(row)


def _spawn(n: int, call: str, name: str, brief: str) -> list[str]:
    use = {"type": "tool_use", "id": call, "name": "Agent",
           "input": {"description": f"{name} research", "subagent_type": "general-purpose",
                     "name": name, "prompt": brief}}  # fmt: skip
    return [_row(n, "assistant", [use], False)]


def _spawned(n: int, call: str, agent: str) -> list[str]:
    done = {"type": "tool_result", "tool_use_id": call, "content": [
        {"type": "text", "text": f"agentId: {agent} (use SendMessage with to: '{agent}')"}]}
    return [_row(n, "user", [done], False)]


def _agent_log(folder: Path, agent: str, brief: str, work: str, report: str) -> None:
    call = {"type": "tool_use", "id": f"w-{agent}", "name": "Write",
            "input": {"file_path": f"{CWD}/work/{agent}.md", "content": work}}  # fmt: skip
    wrote = {"type": "tool_result", "tool_use_id": f"w-{agent}", "content": "File created"}
    sub = folder / SID / "subagents"
    sub.mkdir(parents=True, exist_ok=True)
    (sub / f"agent-{agent}.jsonl").write_text("\n".join([
        _row(1, "user", brief, True, agent),
        _row(2, "assistant", [{"type": "text", "text": "Reading the ledger code first."}],
             True, agent),
        _row(3, "assistant", [call], True, agent),
        _row(4, "user", [wrote], True, agent),
        _row(5, "assistant", [{"type": "text", "text": report}], True, agent),
    ]) + "\n", "utf-8")  # fmt: skip


ANA_BRIEF = ("You are **ana**, a teammate. Research how the ledger rounds currency amounts "
             "and write work/ana.md comparing banker's rounding with half-up rounding.")
ANA2_BRIEF = ("You are **ana** (round 2). Read bob's notes on the ledger and add a section "
              "to work/ana.md on how the rounding choice affects the tax export.")


def _team(folder: Path) -> Path:
    """A lead session that spawns ana, then ana again (`ana2`), and a tool that only sends
    ana a message; with both agents' logs."""
    folder.mkdir(parents=True)
    send = {"type": "tool_use", "id": "m1", "name": "SendMessage",
            "input": {"to": "a11aa11aa", "message": "status?"}}  # fmt: skip
    sent = {"type": "tool_result", "tool_use_id": "m1",
            "content": "Queued for a11aa11aa (agentId: a11aa11aa)"}  # fmt: skip
    (folder / f"{SID}.jsonl").write_text("\n".join([
        _row(1, "user", "Have a teammate look into how the ledger rounds money.", False),
        *_spawn(2, "s1", "ana", ANA_BRIEF),
        *_spawned(3, "s1", "a11aa11aa"),
        _row(4, "assistant", [send], False),
        _row(5, "user", [sent], False),
        *_spawn(6, "s2", "ana2", ANA2_BRIEF),
        *_spawned(7, "s2", "b22bb22bb"),
        _row(8, "assistant", [{"type": "text", "text": "Both rounds are in."}], False),
    ]) + "\n", "utf-8")  # fmt: skip
    _agent_log(folder, "a11aa11aa", ANA_BRIEF, "# Rounding\n\nThe ledger uses half-up.\n",
               "Done: work/ana.md says the ledger rounds half-up at every line item, and "
               "banker's rounding would move 0.4% of invoices by a cent.")
    _agent_log(folder, "b22bb22bb", ANA2_BRIEF, "## Tax export\n\nRound once, at the total.\n",
               "Round 2 done: the tax export should round once at the invoice total, never "
               "per line, or the VAT sums drift from the ledger by up to 3 cents.")
    return folder


def _raw_of(root: Path, agent: str) -> str:
    for p in (root / "raw").rglob("*.md"):
        text = p.read_text("utf-8")
        if f"\n  agentId: {agent}\n" in text:  # its own header, not a mention
            return text
    raise AssertionError(f"no raw session for {agent}")


def test_a_subagent_speaks_under_the_name_its_spawning_call_gave_it(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    ok("--vault", root, "ingest", _team(tmp_path / "src"), "--user", "dana")
    ana = _raw_of(root, "a11aa11aa")
    assert "  agent_name: ana\n" in ana
    assert "## t2 · ana (assistant) · " in ana and "## t5 · ana (assistant) · " in ana
    assert "## t1 · user · " in ana, "the brief is the lead's, not ana's"
    assert "## t4 · tool · " in ana
    assert "## t5 · ana2 (assistant) · " in _raw_of(root, "b22bb22bb")
    # recall labels her lines with her name
    got = ok("--vault", root, "recall", "--user", "dana", "--json", "--",
             "Which rounding does the ledger use per line item?").json()  # fmt: skip
    speakers = {c["speaker"] for m in got["memories"] for c in m.get("citations") or ()}
    speakers |= {m.get("speaker") for m in got["memories"] if m["kind"] == "turn"}
    assert "ana" in speakers, got["text"]


def test_a_broken_lead_line_or_a_name_with_markup_names_nobody_wrongly(tmp_path: Path) -> None:
    """A line of the lead's log that is no JSON (one being written) is passed over, the
    agents spawned after it are still named; a name that would break a turn's heading
    (` · `, brackets) is not taken, and that agent stays "assistant"."""
    src = _team(tmp_path / "src")
    lead = src / f"{SID}.jsonl"
    text = lead.read_text("utf-8")
    lead.write_text('{"type": "assistant", "message": {"content": [{"type": "tool_use"'
                    ', "name": "Agent", \n' + text.replace('"name": "ana2"',
                                                           '"name": "x \\u00b7 ana2 (lead)"'),
                    "utf-8")  # fmt: skip
    root = new_vault(tmp_path)
    r = memctl_run(root, src)
    assert "## t2 · ana (assistant) · " in _raw_of(root, "a11aa11aa"), r
    second = _raw_of(root, "b22bb22bb")
    assert "agent_name" not in second and "## t5 · assistant · " in second


def test_a_subagent_whose_lead_is_not_beside_it_is_the_assistant(tmp_path: Path) -> None:
    src = _team(tmp_path / "src")
    alone = tmp_path / "alone" / SID / "subagents"
    alone.mkdir(parents=True)
    shutil.copy(src / SID / "subagents" / "agent-a11aa11aa.jsonl", alone)
    root = new_vault(tmp_path)
    ok("--vault", root, "ingest", alone / "agent-a11aa11aa.jsonl", "--user", "dana")
    ana = _raw_of(root, "a11aa11aa")
    assert "agent_name" not in ana
    assert "## t2 · assistant · " in ana


def test_a_subagent_stored_before_it_was_named_reads_again_as_it_was(tmp_path: Path) -> None:
    """A sub-agent's session stored as "assistant" (by older memctl, or before its lead's
    file was there) is the record: read again beside its lead it is unchanged, not a
    conflict, and turns it grows by go on as it began."""
    src = _team(tmp_path / "src")
    log = src / SID / "subagents" / "agent-a11aa11aa.jsonl"
    alone = tmp_path / "alone" / SID / "subagents"
    alone.mkdir(parents=True)
    shutil.copy(log, alone)
    root = new_vault(tmp_path)
    ok("--vault", root, "ingest", alone / "agent-a11aa11aa.jsonl", "--user", "dana")
    again = ok("--vault", root, "ingest", log, "--user", "dana", "--json").json()
    assert [c["action"] for c in again["sessions"]] == ["unchanged"], again
    more = {"type": "text", "text": "One more check: half-up holds for refunds too."}
    with log.open("a", encoding="utf-8") as fh:
        fh.write(_row(6, "assistant", [more], True, "a11aa11aa") + "\n")
    grown = ok("--vault", root, "ingest", log, "--user", "dana", "--json").json()
    assert [c["action"] for c in grown["sessions"]] == ["appended"], grown
    ana = _raw_of(root, "a11aa11aa")
    assert "## t6 · assistant · " in ana and "agent_name" not in ana


def test_a_question_naming_an_agent_finds_her_numbered_spawn_too(tmp_path: Path) -> None:
    root = new_vault(tmp_path)
    ok("--vault", root, "ingest", _team(tmp_path / "src"), "--user", "dana")
    got = ok("--vault", root, "search", "--json", "--speaker", "ana", "-n", "20", "--",
             "rounding").json()  # fmt: skip
    who = {h["speaker"] for h in got["hits"]}
    assert who == {"ana", "ana2"}, who
    got = ok("--vault", root, "search", "--json", "--speaker", "ana2", "-n", "20", "--",
             "rounding").json()  # fmt: skip
    assert {h["speaker"] for h in got["hits"]} == {"ana2"}


def test_a_subagent_session_is_heard_through_its_report(tmp_path: Path) -> None:
    """The session note of a sub-agent is titled after its brief, which its lead wrote:
    recall offers the session's report (its last words) where it offered the brief."""
    from memctl.recall import prompt
    from memctl.recall.graph import Reader
    from memctl.recall.rank import NoteCand
    from memctl.vault import Vault

    root = new_vault(tmp_path)
    ok("--vault", root, "ingest", _team(tmp_path / "src"), "--user", "dana")
    ok("--vault", root, "curate")
    raws = {a: next(p.relative_to(root).as_posix() for p in (root / "raw").rglob("*.md")
                    if f"\n  agentId: {a}\n" in p.read_text("utf-8"))
            for a in ("a11aa11aa", "b22bb22bb")}  # fmt: skip
    lead = next(p.relative_to(root).as_posix() for p in (root / "raw").rglob("*.md")
                if p.name != "INDEX.md" and "agentId: b22bb22bb (use" in p.read_text("utf-8"))
    r = Reader(Vault.open(root), "dana", None)
    assert r.report(raws["b22bb22bb"]) == raws["b22bb22bb"] + "#t5"
    assert r.report(lead) is None, "a session no agent spawned has no report"
    note = next(p.relative_to(root).as_posix() for p in (root / "sessions").glob("*.md")
                if raws["b22bb22bb"].split("/")[-1][:-3][-40:] in p.read_text("utf-8"))
    offered = prompt._openings(r, {note: NoteCand(note, 1.0, "found")})
    assert [(ref, why.split(" ")[0]) for ref, _, why in offered] == [
        (raws["b22bb22bb"] + "#t5", "reports")
    ]
    got = ok("--vault", root, "recall", "--user", "dana", "--",
             "How should the tax export round the VAT?").out  # fmt: skip
    assert "round once at the invoice total" in got, got


# ---- a project's facts stand at a prompt only when it speaks of them ---------------------


def _project_vault(tmp_path: Path) -> tuple[Path, Path]:
    root = new_vault(tmp_path)
    src = tmp_path / "s.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in [
        {"role": "user", "content": "How do we run the ledger tests?", "session": "l1"},
        {"role": "assistant", "content": "Run them with make check, it wraps pytest.",
         "session": "l1"},
        {"role": "user", "content": "The staging database was moved to Frankfurt last week.",
         "session": "l1"},
        {"role": "user", "content": "Invoices over 10k need a second approver.",
         "session": "l1"},
    ]) + "\n", "utf-8")  # fmt: skip
    ok("--vault", root, "ingest", src, "--user", "dana", "--scope", "team")
    raw = next(p for p in (root / "raw").rglob("*.md") if p.name != "INDEX.md")
    ref = raw.relative_to(root).as_posix()
    work = tmp_path / "work" / "ledger"
    work.mkdir(parents=True)
    (root / "projects").mkdir(exist_ok=True)
    (root / "projects" / "ledger.md").write_text(
        "---\nid: ledger\nstore: projects\ntitle: ledger\nscope: team\nstatus: active\n"
        "cwd: ledger\nderived_by: test\n---\n\n# ledger\n\n"
        "## Commands\n\n- Run the tests with `make check` [^c]\n\n"
        "## Facts\n\n- The staging database now runs in Frankfurt [^f]\n\n"
        f'[^c]: {ref}#t2 "Run them with make check"\n'
        f'[^f]: {ref}#t3 "The staging database was moved to Frankfurt"\n', "utf-8")  # fmt: skip
    return root, work


def test_at_a_prompt_a_project_fact_stands_only_with_the_prompts_words(
    tmp_path: Path,
) -> None:
    root, work = _project_vault(tmp_path)
    off = ok("--vault", root, "recall", "--user", "dana", "--in", work, "--",
             "Who approves large invoices?").out  # fmt: skip
    assert "make check" in off, off  # how to run the tests stands at any prompt
    assert "Frankfurt" not in off, off
    on = ok("--vault", root, "recall", "--user", "dana", "--in", work, "--",
            "Where does the staging database run?").out  # fmt: skip
    assert "The staging database now runs in Frankfurt" in on, on
    start = ok("--vault", root, "context", "--user", "dana", "--in", work).out
    assert "Frankfurt" in start and "make check" in start, start
