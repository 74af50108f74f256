"""The project note's Commands, Layout and Stack lines on sessions shaped like real ones nobody
tuned on: a run that only lists or describes is no way to run the suite; a run narrowed to one
file never stands for the suite; commands are whole and balanced; one tool run through a runner
(`uv run`, `python -m`, `npx`) is one tool; and Layout/Stack lines, which cite tool calls'
paths and commands, pass the engine's citation check and `memctl verify`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ccsession import Session
from test_curate import memctl, new_vault

from memctl.core.model import Message
from memctl.core.raw import RawHeader
from memctl.curate.builtin.coding import commands
from memctl.curate.builtin.coding.structure import read
from memctl.curate.model import Batch

CWD = "/home/sam/src/tally"
Turn = tuple[str, Any]


class _Script:
    """A coding session written turn by turn: the human's words, the agent's tool calls and
    their results, as Claude Code records them."""

    def __init__(self, ask: str = "Please make the totals round to cents.") -> None:
        self.turns: list[Turn] = [("user", ask)]
        self.n = 0

    def call(self, name: str, inp: dict[str, Any], out: str, error: bool = False) -> _Script:
        self.n += 1
        cid = f"c{self.n}"
        self.turns.append(("assistant", [{"type": "tool_use", "id": cid, "name": name,
                                          "input": inp}]))  # fmt: skip
        self.turns.append(("user", [{"type": "tool_result", "tool_use_id": cid,
                                     "content": out, "is_error": error}]))  # fmt: skip
        return self

    def bash(self, command: str, out: str = "", error: bool = False) -> _Script:
        return self.call("Bash", {"command": command, "description": "run it"}, out, error)

    def edit(self, rel: str) -> _Script:
        path = f"{CWD}/{rel}"
        return self.call("Edit", {"file_path": path, "old_string": "a", "new_string": "b"},
                         f"The file {path} has been updated.")  # fmt: skip

    def read_file(self, rel: str, out: str = "x = 1") -> _Script:
        return self.call("Read", {"file_path": f"{CWD}/{rel}"}, out)

    def say(self, text: str) -> _Script:
        self.turns.append(("assistant", [{"type": "text", "text": text}]))
        return self

    def jsonl(self, path: Path, sid: str = "5a1b2c3d-5e6f-4a70-8b91-0c2d3e4f5a6b") -> Path:
        s = Session(cwd=CWD, sid=sid)
        for role, content in self.turns:
            s.turn(role, content)
        return s.write_to(path)

    def commands(self, known: list[str] | None = None) -> list[tuple[str, str]]:
        """What `commands.read` makes of the session: (kind, line)."""
        return [(c.kind, c.text) for c in self.read(known)]

    def read(self, known: list[str] | None = None) -> list[commands.Command]:
        """`commands.read` on the session, the note holding `known`."""
        msgs: list[Message] = []
        for role, content in self.turns:
            if isinstance(content, str):
                msgs.append(Message(role, content))
            elif content[0]["type"] == "text":
                msgs.append(Message(role, content[0]["text"], None, None, None,
                                    {"model": "claude-opus-4-6"}))  # fmt: skip
            elif content[0]["type"] == "tool_use":
                calls = [{k: p[k] for k in ("id", "name", "input")} for p in content]
                msgs.append(Message("assistant", "", None, None, None, {"tool_calls": calls}))
            else:
                r = content[0]
                msgs.append(Message("tool", r["content"], None, None, None,
                                    {"tool_use_id": r["tool_use_id"],
                                     "is_error": r["is_error"]}))  # fmt: skip
        header = RawHeader("s", "t", "claude_code", "x", "sam", "team", None, None,
                           ("user", "assistant"), len(msgs), "",
                           (("source_meta", {"cwd": CWD}),))  # fmt: skip
        batch = Batch("raw/s.md", header, msgs, 1, {}, None, "2026-01-01")  # type: ignore[arg-type]
        return commands.read(read(batch), known)


PASSED = "===== 12 passed in 0.31s ====="


# --- (3a) a run that only lists or describes is not how the suite runs ----------------------


def test_a_diagnostic_run_is_no_way_to_run_the_suite() -> None:
    s = _Script()
    s.bash("uv run pytest --markers", "@pytest.mark.slow: slow\n@pytest.mark.skip(reason=None)")
    s.bash("pytest --collect-only -q", "tests/test_totals.py::test_round\n\n1 test collected")
    s.bash("pytest --co", "<Module tests/test_totals.py>\n  <Function test_round>")
    s.bash("pytest --fixtures", "tmp_path -- .../_pytest/tmpdir.py:255\n    Return a temporary")
    s.bash("python -m pytest --help", "usage: pytest [options] [file_or_dir] ...")
    s.bash("uv run pytest --version", "pytest 8.3.2")
    s.bash("ruff rule E501", "# line-too-long (E501)\n\nDerived from the pycodestyle linter.")
    s.bash("uv run ruff check --show-settings", "Resolved settings for: tally/totals.py")
    s.bash("mypy --version", "mypy 1.11.1 (compiled: yes)")
    s.bash("act -l", "Stage  Job ID  Job name  Workflow name\n0      test    test      CI")
    got = s.commands()
    assert got == [], got
    # `-l` lists for `act`; for pytest it shows locals in a real run
    s.bash("pytest -l", PASSED)
    assert s.commands() == [("test", "Tests run with `pytest -l`.")]


def test_a_run_whose_output_only_lists_tests_is_no_way_to_run_them() -> None:
    """Decided by the output's shape, whatever the flag: tests collected, none run."""
    s = _Script()
    s.bash("pytest --setup-plan -p no:randomly", "collected 4 items\n\ntests/test_totals.py \n"
           "        SETUP    F tmp_path\n        tests/test_totals.py::test_round")  # fmt: skip
    got = s.commands()
    assert got == [], got
    # the real run after it is the way
    s.bash("pytest -p no:randomly", "collected 4 items\n\ntests/test_totals.py ....\n" + PASSED)
    assert s.commands() == [("test", "Tests run with `pytest -p no:randomly`.")]


# --- (3b) one file's run never stands for the suite ----------------------------------------


def test_one_files_run_does_not_join_the_suites_run() -> None:
    s = _Script()
    s.bash("uv run pytest -q", PASSED)
    s.edit("tally/totals.py")
    s.bash("pytest tests/test_totals.py", "===== 3 passed in 0.05s =====")
    got = [t for k, t in s.commands() if k == "test"]
    assert got == ["Tests run with `uv run pytest -q`."], got


def test_one_files_run_adds_nothing_when_the_note_knows_the_suites_run() -> None:
    s = _Script()
    s.bash("pytest tests/test_totals.py", "===== 3 passed in 0.05s =====")
    known = ["Tests run with `uv run pytest -q`.", "Linting runs with `ruff check`."]
    got = [t for k, t in s.commands(known) if k == "test"]
    assert got == [], got


def test_one_files_run_alone_says_which_file_it_runs() -> None:
    s = _Script()
    s.bash("pytest tests/test_totals.py -q", "===== 3 passed in 0.05s =====")
    got = [t for k, t in s.commands() if k == "test"]
    assert len(got) == 1 and "`pytest tests/test_totals.py -q`" in got[0], got
    assert not got[0].startswith("Tests run with"), got  # not THE way to run the tests
    assert "`tests/test_totals.py`" in got[0].split("`pytest")[0], got
    # a later session that runs the whole suite replaces it
    s2 = _Script()
    s2.bash("pytest", PASSED)
    later = s2.commands(got)
    assert later == [("test", "Tests run with `pytest`.")], later
    # and a marker's run says which marker
    s3 = _Script()
    s3.bash("uv run pytest -m browser -v", "===== 3 passed, 9 deselected in 2.1s =====")
    marked = [t for _, t in s3.commands()]
    assert len(marked) == 1 and "`browser`" in marked[0].split("`uv run")[0], marked
    # a file an option reads is no narrowing: the build still builds it all
    s4 = _Script()
    s4.bash("pnpm vite build --config vite.config.ts", "built in 1.2s")
    assert s4.commands() == [("build", "The build runs with `pnpm vite build --config "
                                       "vite.config.ts`.")]  # fmt: skip


# --- (3c) commands are whole and balanced ---------------------------------------------------


def _balanced(cmd: str) -> bool:
    depth = 0
    for ch in cmd:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0 and cmd.count("'") % 2 == 0 and cmd.count('"') % 2 == 0 and (
        cmd.count("`") == 0) and not cmd.rstrip().endswith(("|", "&", ";"))


def test_commands_are_balanced_and_complete() -> None:
    s = _Script()
    s.bash("(cd web && npm test)", "Tests: 4 passed, 4 total")
    s.bash("uv run pytest -q 2>&1 | tail -5", PASSED)
    s.bash("cd web && (npx tsc --noEmit; echo done)", "done")
    s.bash("ruff check $(git ls-files '*.py' && echo setup.py)", "All checks passed!")
    got = s.commands()
    cmds = [t.split("`")[1] for _, t in got]
    assert all(_balanced(c) for c in cmds), cmds
    assert ("test", "Tests run with `npm test`.") in got, got
    assert ("test", "Tests run with `uv run pytest -q`.") in got, got
    assert ("typecheck", "Type checking runs with `npx tsc --noEmit`.") in got, got


# --- (3d) one tool through a runner is one tool; the session's last checker stays -----------


def test_a_later_plain_form_of_one_tool_replaces_its_runner_form() -> None:
    s = _Script()
    s.bash("uv run ruff format", "3 files left unchanged")
    s.bash("python -m pytest", PASSED)
    s.bash("npx tsc --noEmit", "")
    s.edit("tally/totals.py")
    s.bash("ruff format", "1 file reformatted")
    s.bash("pytest", PASSED)
    s.bash("tsc --noEmit", "")
    got = s.commands()
    assert sorted(got) == [("format", "Formatting runs with `ruff format`."),
                           ("test", "Tests run with `pytest`."),
                           ("typecheck", "Type checking runs with `tsc --noEmit`.")], (
        got)  # fmt: skip


def test_a_plain_form_supersedes_the_notes_runner_form() -> None:
    s = _Script()
    s.bash("ruff format", "1 file reformatted")
    s.bash("pytest", PASSED)
    known = ["Formatting runs with `uv run ruff format`.", "Tests run with `python -m pytest`."]
    got = sorted((c.text, c.replaces) for c in s.read(known))
    assert got == [("Formatting runs with `ruff format`.", known[0]),
                   ("Tests run with `pytest`.", known[1])], got  # fmt: skip


def test_the_type_checker_the_session_ended_with_is_kept() -> None:
    s = _Script()
    s.bash("uv run mypy tally", "Success: no issues found in 4 source files")
    s.edit("tally/totals.py")
    s.bash("uv run pyright", "0 errors, 0 warnings, 0 informations")
    got = [t for k, t in s.commands() if k == "typecheck"]
    assert got == ["Type checking runs with `uv run pyright`."], got
    # both run at the end: both stay
    s.bash("uv run mypy tally", "Success: no issues found in 4 source files")
    s.bash("uv run pyright", "0 errors, 0 warnings, 0 informations")
    both = sorted(t for k, t in s.commands() if k == "typecheck")
    assert both == ["Type checking runs with `uv run mypy tally`.",
                    "Type checking runs with `uv run pyright`."], both  # fmt: skip


def test_two_test_runners_of_a_monorepo_both_stay() -> None:
    """The tests are the one kind where two tools are two suites, not one replacing another."""
    s = _Script()
    s.bash("pytest", PASSED)
    s.bash("pnpm vitest run", "Test Files  3 passed (3)")
    got = sorted(t for k, t in s.commands() if k == "test")
    assert got == ["Tests run with `pnpm vitest run`.", "Tests run with `pytest`."], got


# --- (8) Layout and Stack lines pass the citation check and reach the note ------------------


def _curate(tmp_path: Path, *scripts: _Script) -> tuple[Path, list[dict[str, Any]]]:
    root = new_vault(tmp_path / "v")
    rejected: list[dict[str, Any]] = []
    for i, s in enumerate(scripts):
        sid = f"5a1b2c3d-5e6f-4a70-8b91-0c2d3e4f5a6{i}"
        memctl(root, "ingest", str(s.jsonl(tmp_path / f"s{i}.jsonl", sid)), "--scope", "team",
               "--user", "sam")  # fmt: skip
        out = json.loads(memctl(root, "curate", "--json").stdout)
        rejected += out["rejected"]
    return root, rejected


def _section(note: str, name: str) -> list[str]:
    body = note.split(f"\n## {name}\n", 1)[1] if f"\n## {name}\n" in note else ""
    return [line for line in body.split("\n## ", 1)[0].splitlines() if line.startswith("- ")]


def test_layout_stack_and_short_commands_reach_the_note(tmp_path: Path) -> None:
    s = _Script()
    s.read_file("pyproject.toml", "[project]\nname = 'tally'")
    s.bash("uv sync", "Resolved 12 packages in 3ms")
    s.edit("tally/totals.py").say("Now the helper it uses.").edit("tally/money.py")
    s.edit("tests/test_totals.py").edit("tests/test_money.py")
    s.bash("pytest", PASSED)
    root, rejected = _curate(tmp_path, s)
    assert [r for r in rejected if r["store"] == "projects"] == [], rejected
    note = (root / "projects" / "tally.md").read_text("utf-8")
    layout = _section(note, "Layout")
    assert len(layout) == 1 and "`tally/` holds Python code" in layout[0], note
    assert "`tests/` holds the tests" in layout[0], layout
    stack = _section(note, "Stack")
    assert len(stack) == 1 and stack[0].startswith("- Stack: Python"), note
    assert "uv" in stack[0] and "pytest" in stack[0], stack
    assert "- Tests run with `pytest`. #observed" in note, note
    assert "- Dependencies install with `uv sync`. #observed" in note, note
    verify = memctl(root, "verify", "--json", check=False)
    assert json.loads(verify.stdout)["problems"] == [], verify.stdout


def test_a_stack_of_languages_alone_reaches_the_note(tmp_path: Path) -> None:
    """No element's name is a word of its quote (`Python` from `totals.py`): the line says
    what it was read from, so its quotes support it, and a later session's new element too."""
    s = _Script()
    s.edit("tally/totals.py").edit("web/src/App.tsx")
    later = _Script("Add the Go worker.")
    later.edit("worker/main.go").bash("go vet ./...", "")
    root, rejected = _curate(tmp_path, s, later)
    assert [r for r in rejected if r["store"] == "projects"] == [], rejected
    note = (root / "projects" / "tally.md").read_text("utf-8")
    stack = _section(note, "Stack")
    assert len(stack) == 1, note
    for lang in ("Python", "TypeScript", "Go"):
        assert lang in stack[0], stack
    verify = memctl(root, "verify", "--json", check=False)
    assert json.loads(verify.stdout)["problems"] == [], verify.stdout


def test_a_short_quote_counts_only_as_a_whole_part_of_a_tool_calls_argument() -> None:
    """`pytest` is the whole command the agent ran: exact, however short. The same six
    letters picked out of prose, or out of the middle of a word, prove nothing."""
    from memctl.core.provenance import tool_argument

    call = Message("assistant", "I ran pytest again", None, None, None, {"tool_calls": [
        {"id": "1", "name": "Bash", "input": {"command": "cd web && pytest -q | tail -3"}},
        {"id": "2", "name": "Read", "input": {"file_path": "/x/uv.lock"}}]})
    assert tool_argument("pytest -q", call) and tool_argument("/x/uv.lock", call)
    assert tool_argument("pytest", call)
    assert not tool_argument("ran pytest", call)  # the agent's prose
    assert not tool_argument("test", call)  # part of a word
    assert not tool_argument("uv", call)  # part of a path
    prose = Message("user", "pytest", None, None, None, {})
    assert not tool_argument("pytest", prose)  # a person's words keep the length rule


def test_a_quoted_marker_expression_is_named_whole() -> None:
    from memctl.curate.builtin.coding.commands import line_for

    got = line_for("test", 'uv run pytest -m "not (tui or browser)" -v')
    assert got.startswith("For tests marked `not (tui or browser)` only, "), got
