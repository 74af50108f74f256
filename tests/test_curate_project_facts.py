"""What a coding session teaches about its project: how to test and build it (only what
succeeded), its layout, stack, environments and gotchas, and the agent's own decisions."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_curate import memctl, new_vault

from memctl.core.provenance import RawTurns
from memctl.curate.builtin.coding import choices, commands
from memctl.curate.builtin.coding.structure import Coding, read
from memctl.curate.model import Batch
from memctl.curate.specs import load_specs
from memctl.vault import Vault

DATA = Path(__file__).parent / "data" / "claude_code_project" / "ledger-session.jsonl"


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = new_vault(tmp_path_factory.mktemp("ledger") / "v")
    memctl(root, "ingest", str(DATA), "--scope", "team", "--user", "sam")
    memctl(root, "curate")
    return root


@pytest.fixture(scope="module")
def session(vault: Path) -> Coding:
    v = Vault.open(vault)
    s = v.sessions()[0]
    header, messages = RawTurns(v.root).session(s["path"])
    batch = Batch(s["path"], header, messages, 1, load_specs(v), None, "2026-04-07")  # type: ignore[arg-type]
    return read(batch)


def _project(vault: Path) -> str:
    return (vault / "projects" / "ledger.md").read_text("utf-8")


def test_only_a_run_that_succeeded_is_the_test_command(vault: Path, session: Coding) -> None:
    # the five-times run failed (1 failed): the agent may have had the command wrong; the
    # narrower passing run is a debugging step; the whole suite passing is how tests run
    got = [(c.kind, c.text) for c in commands.read(session)]
    assert ("test", "Tests run with `pytest -q`.") in got, got
    assert not any("--count" in t or "test_ledger.py" in t for _, t in got), got
    assert ("build", "The build runs with `pnpm vite build`.") in got
    note = _project(vault)
    claims = [line for line in note.splitlines() if line.startswith("- ")]
    assert "- Tests run with `pytest -q`. #observed [^6f76de-t16]" in claims
    assert "--count 5" not in note  # not even as evidence: a failed run is no command to copy
    # a later session's successful run of the same tool supersedes the note's line, unless
    # the note already knows a broader one
    known = ["Tests run with `pytest tests/test_ledger.py -x`."]
    tests = [c for c in commands.read(session, known) if c.kind == "test"]
    assert [(c.text, c.replaces) for c in tests] == [("Tests run with `pytest -q`.", known[0])]
    broader = ["Tests run with `pytest --maxfail 3`."]
    assert commands.breadth("pytest --maxfail 3") == commands.breadth("pytest -q") == 0
    assert commands.breadth("pytest tests/a.py -m slow") == -2
    assert [c.replaces for c in commands.read(session, broader) if c.kind == "test"] == broader


def _section(note: str, name: str) -> list[str]:
    body = note.split(f"\n## {name}\n", 1)[1] if f"\n## {name}\n" in note else ""
    return [line for line in body.split("\n## ", 1)[0].splitlines() if line.startswith("- ")]


def test_layout_stack_and_environments_are_filled_from_the_sessions_structure(
    vault: Path,
) -> None:
    note = _project(vault)
    layout = _section(note, "Layout")
    assert len(layout) == 1, layout  # one line a session, not one a file
    for part in ("`tests/` holds the tests (`conftest.py`)", "`ledger/` holds Python code",
                 "`web/src/` holds TypeScript (React) code (`Balance.tsx`)"):  # fmt: skip
        assert part in layout[0], layout
    stack = _section(note, "Stack")
    assert len(stack) == 1
    assert stack[0].startswith("- Stack: Python, TypeScript, pytest, pnpm, vite.")
    envs = "\n".join(_section(note, "Environments"))
    assert "the virtualenv `.venv` (`source .venv/bin/activate`)" in envs
    assert "Node.js 20 is used (`nvm use 20`)" in envs
    gotchas = "\n".join(_section(note, "Gotchas"))
    # the root cause the agent found, and the person's correction of how the project works
    assert "share the module-level `SESSION`" in gotchas and "#observed" in gotchas
    assert "- CI runs the tests against Postgres, not SQLite. [^" in gotchas  # said: stated
    # every line cites what shows it, and verifies
    assert "verify: ok" in memctl(vault, "verify").stdout


def test_a_later_session_adds_only_what_the_note_does_not_know(vault: Path, tmp_path: Path) -> None:
    """Curating the same session's project again from a second session changes nothing:
    the stack line is not repeated, the layout's folders are known."""
    import json
    import shutil

    root = tmp_path / "v"
    shutil.copytree(vault, root)
    again = tmp_path / "again.jsonl"
    rows = [json.loads(x) for x in DATA.read_text("utf-8").splitlines()]
    for r in rows:
        r["sessionId"] = "8d3f0b52-4c6e-4a71-9b2f-6e0d1c8f3a24"
        r["uuid"] = r["uuid"].replace("10000000-", "20000000-")
        r["timestamp"] = r["timestamp"].replace("2026-04-07", "2026-04-09")
    again.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    before = "\n".join(_section(_project(root), "Commands"))
    memctl(root, "ingest", str(again), "--scope", "team", "--user", "sam")
    memctl(root, "curate")
    note = _project(root)
    assert len(_section(note, "Stack")) == 1 and len(_section(note, "Layout")) == 1
    assert len(_section(note, "Commands")) == 2
    # the same commands run again: no new line, but each cites the later run too, so a
    # question about the later session finds its own turn behind the answer
    after = "\n".join(_section(note, "Commands"))
    assert after.count("[^") > before.count("[^"), (before, after)


def test_the_agents_decisions_keep_their_reason_and_the_option_turned_down(vault: Path) -> None:
    text = "\n".join(p.read_text("utf-8") for p in (vault / "decisions").glob("*.md"))
    assert (
        "- Claude went with a per-test transaction that rolls back, rather than recreating the "
        "database for each test, because recreating it takes two seconds per test. #observed [^"
    ) in text
    titles = [p.name for p in (vault / "decisions").glob("*.md") if p.name != "INDEX.md"]
    assert titles == ["a-per-test-transaction-that-rolls-back.md"], titles
    # narration and a plan without reason or alternative are no decision
    assert "Let me look" not in text and "get_session" not in text


@pytest.mark.parametrize(
    ("said", "kept"),
    [
        ("I'll use `patch.object()` instead of assigning to `browser.query_one` directly.",
         "Claude chose to use `patch.object()` instead of assigning to `browser.query_one` "
         "directly."),
        ("I decided to keep the old API, because two services still call it.",
         "Claude decided to keep the old API, because two services still call it."),
        ("Let me check the config instead of guessing the port.", None),
        ("I'll add the sidechain class after the command message check.", None),
        ("I went with the second option.", None),  # neither a reason nor what was turned down
    ],
)
def test_what_counts_as_the_agents_decision(said: str, kept: str | None) -> None:
    s = Coding([], [(2, said)], [], [], set(), False, "Claude", None, None, None, 1)
    got = [c.text for c in choices.read(s, "Sam")]
    assert got == ([kept] if kept else []), got


def _discussion(path: Path) -> Path:
    """A session in which the agent reads one file and only answers: no change, no run."""
    cwd, sid = "/home/sam/notes", "4a1b2c3d-5e6f-4a70-8b91-0c2d3e4f5a6b"
    turns: list[tuple[str, object]] = [
        ("user", "I like the idea in this folder. Can you list the pros of this proposal?"),
        ("assistant", [{"type": "tool_use", "id": "t1", "name": "Read",
                        "input": {"file_path": f"{cwd}/idea.md"}}]),
        ("user", [{"type": "tool_result", "tool_use_id": "t1",
                   "content": "# docs/ vs work/\n- docs/ = reference\n- work/ = tasks"}]),
        ("assistant", [{"type": "text", "text":
            "- **Clear separation** — `docs/` never mixes with `work/` items.\n\n"
            "- **Cheap to adopt** — it is just two folders, so `idea.md` needs no tooling.\n\n"
            "- **Easy archiving** — finished `work/` items move to an archive folder."}]),
        ("user", "OK, to be fair, maybe also list the cons."),
        ("assistant", [{"type": "text", "text":
            "- **Blurry boundary** — a design doc in `work/` often becomes reference.\n"
            "- **Triage overhead** — someone must move files between `docs/` and `work/`.\n"
            "- **Drift** — nothing enforces the split described in `idea.md`."}]),
        ("user", "Can you write a balanced opinion on it? Keep it short."),
        ("assistant", [{"type": "text", "text":
            "The split between `docs/` and `work/` helps when documents have a clear purpose. "
            "It costs little to try.\n\nIn short: use it as a naming convention rather than a "
            "rigid directory tree."}]),
    ]  # fmt: skip
    import json

    rows, parent = [], None
    for i, (role, content) in enumerate(turns, 1):
        uid = f"30000000-0000-4000-8000-{i:012d}"
        msg: dict[str, object] = {"role": role, "content": content}
        if role == "assistant":
            msg["model"] = "claude-opus-4-6"
        rows.append({"parentUuid": parent, "isSidechain": False, "userType": "external",
                     "cwd": cwd, "sessionId": sid, "version": "2.1.42", "type": role,
                     "message": msg, "uuid": uid,
                     "timestamp": f"2026-02-16T18:{i:02d}:00.000Z"})  # fmt: skip
        parent = uid
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    return path


def test_a_discussion_keeps_each_answer_once_and_files_no_opinion_as_project_fact(
    tmp_path: Path,
) -> None:
    """The agent changed and ran nothing: its answers are opinions. Each is kept once, as
    what it listed or concluded in reply to what was asked, citing both turns; the asks it
    answers are not requests of their own; nothing of it becomes a project fact."""
    root = new_vault(tmp_path / "v")
    memctl(root, "ingest", str(_discussion(tmp_path / "talk.jsonl")), "--scope", "team",
           "--user", "sam")  # fmt: skip
    memctl(root, "curate")
    projects = [p for p in (root / "projects").glob("*.md") if p.name != "INDEX.md"]
    facts = [ln for p in projects for ln in p.read_text("utf-8").splitlines()
             if ln.startswith("- ")]  # fmt: skip
    assert facts == [], facts
    note = next(p for p in (root / "sessions").glob("*.md") if p.name != "INDEX.md")
    lines = [ln for ln in note.read_text("utf-8").splitlines() if ln.startswith("- ")]
    body = "\n".join(lines)
    assert (
        "- Claude listed pros: Clear separation; Cheap to adopt; Easy archiving. #observed "
        "[^" in body
    ), body
    assert "- Claude listed cons: Blurry boundary; Triage overhead; Drift. #observed [^" in body
    assert (
        "- Claude answered: Use it as a naming convention rather than a rigid directory tree."
    ) in body
    pros = next(ln for ln in lines if "listed pros" in ln)
    assert pros.count("[^") == 2  # the answer and the ask it answers
    everything = "\n".join(p.read_text("utf-8") for p in root.glob("*/*.md"))
    assert "Sam likes the idea in this folder." in everything  # the person's own view stays
    assert "asked Claude to also list the cons" not in body and "Keep it short" not in body
    assert not any("`docs/` never mixes" in ln for ln in lines)  # no answer sentence alone
    assert "verify: ok" in memctl(root, "verify").stdout


def test_an_answers_heads_are_kept_as_written_and_links_are_no_answer() -> None:
    from memctl.curate.builtin.coding import discussion
    from memctl.curate.builtin.coding.structure import Human

    files = "Here are the modules:\n- cli.py\n- tui.py\n- parser.py"
    links = "- [Docs](https://example.org/a)\n- [CLI](https://example.org/b)\n- [API](https://x.io)"
    humans = [Human(1, ["Which modules are there?"]), Human(3, ["And the docs?"])]
    texts = [(2, files), (4, links)]
    s = Coding(humans, texts, [], [], set(), False, "Claude", None, None, None, 1)
    got = [a.text for a in discussion.read(s)]
    assert got == ["Claude listed the modules: cli.py; tui.py; parser.py."], got


def test_an_ask_with_an_aside_after_its_verb_is_still_an_ask() -> None:
    from memctl.curate.builtin.coding import requests
    from memctl.curate.builtin.coding.structure import Human

    said = "Can you list, in 5 bullet points, what are the strengths of this proposal?"
    s = Coding([Human(1, [said])], [], [], [], set(), False, "Claude", None, None, None, 1)
    got = [(r.kind, r.text) for r in requests.read(s, "Sam")]
    assert got == [
        ("request", "Sam asked Claude to list, in 5 bullet points, what are the strengths of "
         "this proposal."),
    ], got


def _moved(tmp_path: Path, name: str, cwd: str, sid: str, test_cmd: str) -> Path:
    """The ledger session, as if it had run in another folder, under another session id."""
    text = DATA.read_text("utf-8")
    text = text.replace("/home/sam/src/ledger", cwd).replace(
        "7c2e9a41-3b5d-4f60-8a1e-5d9c0b7e2f13", sid
    )
    text = text.replace("activate && pytest -q\"", f"activate && {test_cmd}\"")
    path = tmp_path / name
    path.write_text(text, "utf-8")
    return path


def test_two_projects_with_one_folder_name_keep_two_notes(tmp_path: Path) -> None:
    """~/src/ledger and ~/oss/ledger are two code bases (no remote tells them apart): each
    gets its own note, a later session of one never supersedes the other's commands, and
    a prompt in either folder is given its own project's note."""
    from memctl.curate.builtin.coding.project import find_project_note

    root = new_vault(tmp_path / "v")
    memctl(root, "ingest", str(DATA), "--scope", "team", "--user", "sam")
    other = _moved(tmp_path, "oss.jsonl", "/home/sam/oss/ledger",
                   "11111111-3b5d-4f60-8a1e-5d9c0b7e2f13", "pytest -q -p xdist")  # fmt: skip
    memctl(root, "ingest", str(other), "--scope", "team", "--user", "sam")
    memctl(root, "curate")
    notes = sorted(p for p in (root / "projects").glob("*.md") if p.name != "INDEX.md")
    assert len(notes) == 2, [p.name for p in notes]
    texts = {p.name: p.read_text("utf-8") for p in notes}
    src = next(t for t in texts.values() if "\ncwd: ~/src/ledger\n" in t)
    oss = next(t for t in texts.values() if "\ncwd: ~/oss/ledger\n" in t)
    assert "- Tests run with `pytest -q`. #observed" in src
    assert "pytest -q -p xdist" not in src and "superseded" not in src
    assert "- Tests run with `pytest -q -p xdist`. #observed" in oss
    home = Path("/home/sam")
    found = {find_project_note(root, f"/home/sam/{d}/ledger", home=home) for d in ("src", "oss")}
    assert found == {f"projects/{p.name}" for p in notes}
    # the same folder again is the same project: its note, not a third
    again = _moved(tmp_path, "again.jsonl", "/home/sam/oss/ledger",
                   "22222222-3b5d-4f60-8a1e-5d9c0b7e2f13", "pytest -q -p xdist")  # fmt: skip
    memctl(root, "ingest", str(again), "--scope", "team", "--user", "sam")
    memctl(root, "curate")
    assert len([p for p in (root / "projects").glob("*.md") if p.name != "INDEX.md"]) == 2


def test_a_language_and_its_tool_of_one_name_are_one_stack_element() -> None:
    """redteam20: a Go session's stack line read "Stack: Go, go." (the language of the edited
    file and the `go` tool), which the engine then refused as sharing no word with its quotes."""
    from memctl.core.model import Message
    from memctl.core.raw import RawHeader
    from memctl.curate.builtin.coding import shape
    from memctl.curate.builtin.coding.structure import read as read_session
    from memctl.curate.model import Batch

    edit = {"id": "e1", "name": "Edit", "input": {
        "file_path": "/src/orbit/api/limiter.go", "old_string": "a", "new_string": "b"}}
    run = {"id": "b1", "name": "Bash", "input": {"command": "go test ./..."}}
    msgs = [
        Message("user", "make the limiter configurable", "u1"),
        Message("assistant", "", "a1", None, None, {"tool_calls": [edit]}),
        Message("tool", "The file /src/orbit/api/limiter.go has been updated.", "t1", None,
                None, {"tool_use_id": "e1", "is_error": False}),
        Message("assistant", "", "a2", None, None, {"tool_calls": [run]}),
        Message("tool", "ok  \torbit/api\t0.4s", "t2", None, None,
                {"tool_use_id": "b1", "is_error": False}),
    ]
    header = RawHeader("s", "t", "claude_code", "x", "kai", "user:kai", None, None,
                       ("user", "assistant"), len(msgs), "",
                       (("source_meta", {"cwd": "/src/orbit"}),))
    batch = Batch("raw/s.md", header, msgs, 1, {}, None, "2026-01-01")  # type: ignore[arg-type]
    stacks = [s.text for s in shape.read(read_session(batch)) if s.kind == "stack"]
    assert not any("Go, go" in t or t.lower().count("go") > 1 for t in stacks), stacks
