"""Coding sessions: each extractor on a small Claude Code session written for these tests
(tests/data/claude_code/), and the whole path through the real CLI (ingest, curate, verify)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from test_curate import memctl, new_vault

from memctl.core.provenance import RawTurns
from memctl.curate.builtin.coding import changes, commands, findings, requests
from memctl.curate.builtin.coding.markup import has_markup, prose
from memctl.curate.builtin.coding.project import find_project_note
from memctl.curate.builtin.coding.structure import Coding, read
from memctl.curate.builtin.coding.voice import third_person
from memctl.curate.model import Batch
from memctl.curate.specs import load_specs
from memctl.vault import Vault

DATA = Path(__file__).parent / "data" / "claude_code" / "checkout-session.jsonl"
MARKUP = re.compile(
    r"<(?:command-name|local-command-stdout|ide_opened_file|system-reminder)|Caveat:|"
    r"\[Request interrupted|Traceback|ModuleNotFoundError"
)


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = new_vault(tmp_path_factory.mktemp("coding") / "v")
    memctl(root, "ingest", str(DATA), "--scope", "team", "--user", "dana")
    return root


@pytest.fixture(scope="module")
def session(vault: Path) -> tuple[Batch, Coding]:
    v = Vault.open(vault)
    s = v.sessions()[0]
    header, messages = RawTurns(v.root).session(s["path"])
    batch = Batch(s["path"], header, messages, 1, load_specs(v), None, "2026-03-03")  # type: ignore[arg-type]
    return batch, read(batch)


def test_structure_pairs_calls_with_results_and_finds_the_humans_words(session) -> None:
    batch, s = session
    assert s.cwd == "/home/dana/src/shopfront" and s.agent == "Claude"
    tests = [c for c in s.calls if c.command == "pnpm vitest run"]
    assert tests and "4 passed" in (tests[0].result or "") and tests[0].ran()
    refused = [c for c in s.calls if c.command == "npm test"]
    assert refused and not refused[0].ran()  # a refused call never ran
    kinds = {h.kind for h in s.humans}
    assert kinds == {"prompt", "rejection", "answer"}
    rejection = next(h for h in s.humans if h.kind == "rejection")
    assert rejection.sentences == ["we use pnpm here, npm breaks the lockfile"]
    assert rejection.refused == "npm test"
    # The slash command, its output and the interruption notice are noise turns.
    for t in s.noise:
        assert has_markup(batch.messages[t - 1].content) or not batch.messages[t - 1].content


def test_markup_and_pastes_are_never_prose() -> None:
    text = (
        "<ide_opened_file>The user opened the file /x/cart.ts in the IDE.</ide_opened_file>"
        "fix the cart total please. Here it fails:\n"
        "Traceback (most recent call last):\n"
        '  File "cart.py", line 9, in total\n'
        "KeyError: 'sku'\n\n"
        "and keep the old API."
    )
    got = prose(text)
    assert got == ["fix the cart total please.", "Here it fails:", "and keep the old API."]
    assert all(s in text for s in got)  # each one quotable verbatim
    compacted = (
        "This session is being continued from a previous conversation that ran out of "
        "context. The conversation is summarized below:\nAnalysis:\nThe user asked me to "
        "fix the cart. I always run the tests first."
    )
    assert prose(compacted) == []  # the harness's summary, not the person's words


def test_voice_rewrites_pronouns_in_prose_only() -> None:
    said = "I very much like how danieldemmel.me does it, see `my_var` and me@x.io"
    assert third_person(said, "Dana", "Claude") == (
        "Dana very much likes how danieldemmel.me does it, see `my_var` and me@x.io"
    )
    assert third_person("I don't think you need my help", "Dana", "Claude") == (
        "Dana doesn't think Claude needs Dana's help"
    )


def test_requests_read_terse_lower_case_steering(session) -> None:
    _, s = session
    said = {(r.kind, r.text) for r in requests.read(s, "Dana")}
    assert (
        "request",
        "Dana asked Claude to add a discount code field to the checkout form.",
    ) in said
    assert ("request", "Dana asked Claude to use pnpm, not npm.") in said
    assert ("choose", "Dana chose vite for the dev server.") in said
    assert (
        "reject",
        "Dana refused `npm test`: Dana's team uses pnpm here, npm breaks the lockfile.",
    ) in said
    assert any(k == "choose" and "chose Server when Claude asked" in t for k, t in said)
    assert not any("error I got" in t for _, t in said)  # introduces a paste


def test_commands_keep_what_ran_and_skip_what_was_refused(session) -> None:
    _, s = session
    got = [(c.kind, c.text) for c in commands.read(s)]
    assert ("test", "Tests run with `pnpm vitest run`.") in got
    assert ("build", "The build runs with `pnpm vite build`.") in got
    assert not any("npm test" in t for _, t in got)


def test_changes_carry_commit_hash_files_and_purpose(session) -> None:
    _, s = session
    got = {(c.kind, c.text) for c in changes.read(s)}
    assert (
        "commit",
        "Committed 4f9c2ab on main: checkout: discount code field, checked on the server "
        "(`src/cart/CartContext.tsx`, `src/checkout/DiscountField.tsx`).",  # the files it holds
    ) in got
    # the file the commit holds is the commit's line, citing the write that made it: no
    # "Created" line beside it says the same again
    assert not any(k == "created" and "DiscountField.tsx" in t for k, t in got), got
    commit = next(c for c in changes.read(s) if c.kind == "commit")
    wrote = next(c for c in s.calls if c.path.endswith("DiscountField.tsx"))
    assert (wrote.turn, wrote.path) in commit.also
    assert any(
        k == "edited" and t.startswith("Changed `src/cart/CartContext.tsx` to add") for k, t in got
    )


def test_findings_keep_causes_and_summaries_never_narration(session) -> None:
    _, s = session
    got = findings.read(s)
    kinds = {f.kind for f in got}
    # a root cause found is the project's gotcha, not only one session's problem
    assert kinds == {"gotcha", "outcome"}
    problem = next(f for f in got if f.kind == "gotcha")
    assert "never reads `discountCode` because" in problem.text
    assert not any(re.match(r"(?i)(let me|i'll|perfect)", f.text) for f in got)


def test_cli_ingest_and_curate_a_coding_session(vault: Path) -> None:
    out = memctl(vault, "curate").stdout
    assert "added" in out
    notes = {
        p.relative_to(vault).as_posix(): p.read_text("utf-8")
        for p in vault.rglob("*.md")
        if not p.relative_to(vault).as_posix().startswith(("raw/", ".memctl/"))
    }
    claims = [
        line for text in notes.values() for line in text.splitlines() if line.startswith("- ")
    ]
    body = "\n".join(claims)
    assert "Tests run with `pnpm vitest run`." in notes["projects/shopfront.md"]
    # a shared note names the folder as raw headers do, never a machine's path: this
    # session ran under another user's home (/home/dana), kept below it, the name left out
    assert "\ncwd: ~/src/shopfront\n" in notes["projects/shopfront.md"]
    assert "/home/dana" not in notes["projects/shopfront.md"].split("\n---\n", 1)[0]
    assert "Committed 4f9c2ab on main" in body
    assert "Dana chose vite for the dev server." in body
    assert "Dana very much likes the way danieldemmel.me does its checkout" in body
    proposed = "\n".join(t for p, t in notes.items() if p.startswith("instructions/"))
    assert "- Use pnpm, not npm. [^" in proposed  # a standing instruction, only proposed
    # (The raw file's name and the root INDEX's raw title come from ingest.)
    learned = "\n".join(
        line
        for p, t in notes.items()
        if p != "INDEX.md"
        for line in t.splitlines()
        if line.startswith(("- ", "# "))
    )
    assert not MARKUP.search(learned), "markup or a paste became memory"
    # No session is named by harness markup.
    session_note = next(
        t for p, t in notes.items() if p.startswith("sessions/") and "INDEX" not in p
    )
    assert session_note.splitlines()[session_note.splitlines().index("---", 1) + 2].startswith(
        "# Session: hey claude, can you add"
    )
    # Claims citing the agent's turns quote them verbatim, and verify.
    assert "verify: ok" in memctl(vault, "verify").stdout
    assert find_project_note(vault, cwd="/home/dana/src/shopfront/src") == "projects/shopfront.md"
    assert find_project_note(vault, cwd="/home/dana/src/other") is None
    # An agent's worktree inside the project is the project.
    agent_tree = "/home/dana/src/shopfront/.claude/worktrees/agent-1f2e"
    assert find_project_note(vault, cwd=agent_tree) == "projects/shopfront.md"


def test_a_subagents_prompt_is_no_persons_request(tmp_path: Path) -> None:
    """A sub-agent's "user" is the agent that spawned it: what it did is kept, its prompt
    is not learned as the human's request or instruction."""
    root = new_vault(tmp_path / "v")
    memctl(root, "ingest", str(DATA.parent), "--scope", "team", "--user", "dana")
    memctl(root, "curate")
    sub_notes = [p.read_text("utf-8") for p in (root / "sessions").glob("*you-are-a-helper*.md")]
    assert len(sub_notes) == 1, sorted(p.name for p in (root / "sessions").iterdir())
    text = "\n".join(sub_notes)
    assert "Committed 7e1d0c9 on main: docs: discount codes." in text
    assert "asked Claude" not in text and "Never push" not in text
    assert "Never push" not in "\n".join(
        p.read_text("utf-8") for p in root.rglob("instructions/**/*.md")
    )


def _project_note(root: Path, name: str, status: str, cwd: str) -> None:
    f = root / "projects" / f"{name}.md"
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(
        f"---\nid: projects/{name}\nschema: 1\nstore: projects\ntitle: 'Project: {name}'\n"
        f"scope: team\nstatus: {status}\ncreated: 2026-12-02\nupdated: 2026-12-02\n"
        f"cwd: {cwd}\n---\n\n# Project: {name}\n\n## Facts\n\n- Written by hand.\n",
        "utf-8",
    )


def test_the_curators_project_lookup_is_recalls(tmp_path: Path) -> None:
    """One rule finds a project's note: the curator's lookup asks recall's, so a note recall
    would never show (retracted, superseded) is no project's note for the curator either."""
    root = tmp_path / "v"
    _project_note(root, "shop", "retracted", "/home/dana/src/shop")
    _project_note(root, "shop-v2", "active", "/home/dana/src/shop2")
    assert find_project_note(root, cwd="/home/dana/src/shop") is None
    assert find_project_note(root, cwd="/home/dana/src/shop2/web") == "projects/shop-v2.md"
    import memctl.curate.builtin.coding.project as curate_project
    import memctl.recall.project as recall_project

    assert curate_project.normal_remote is recall_project.normal_remote
    assert curate_project.project_dir is recall_project.project_dir


def test_what_the_agent_did_is_labelled_observed_never_stated(tmp_path: Path) -> None:
    """A commit or a command the agent ran is what the session shows, not what anyone said:
    the note line carries #observed, and recall, show and verify say so."""
    root = new_vault(tmp_path / "v")
    memctl(root, "ingest", str(DATA), "--scope", "team", "--user", "dana")
    memctl(root, "curate")
    note = (root / "projects" / "shopfront.md").read_text("utf-8")
    assert "- Tests run with `pnpm vitest run`. #observed [^" in note
    session = next(p for p in (root / "sessions").glob("*.md") if p.name != "INDEX.md")
    text = session.read_text("utf-8")
    commit = (
        "Committed 4f9c2ab on main: checkout: discount code field, checked on the server "
        "(`src/cart/CartContext.tsx`, `src/checkout/DiscountField.tsx`)."
    )
    assert f"{commit} #observed [^" in text
    # the person's words stay stated: no tag
    assert "Dana chose vite for the dev server. [^" in "\n".join(
        p.read_text("utf-8") for p in (root / "decisions").glob("*.md")
    )
    shown = memctl(root, "show", "projects/shopfront.md").stdout
    assert "`pnpm vitest run`. #observed" in shown
    got = memctl(root, "context", "--in", "/home/dana/src/shopfront", "--user", "dana").stdout
    assert re.search(r"Tests run with `pnpm vitest run`\. \[observed · ", got), got
    assert "[stated · assistant" not in got and "[stated · tool" not in got
    verified = memctl(root, "verify", "--json").stdout
    import json

    res = json.loads(verified)
    assert res["ok"] is True and res["observed"] >= 3


def _one_prompt(text: str) -> Coding:
    from memctl.curate.builtin.coding.structure import Human

    human = Human(1, prose(text), text=text)
    return Coding([human], [], [], [], set(), False, "Claude", None, None, None, 0)


@pytest.mark.parametrize(
    ("turn", "claim"),
    [
        (
            "The checkout tests are flaky on CI. Can you find out why?",
            "Dana asked Claude to find out why the checkout tests are flaky on CI.",
        ),
        (
            "I get a 502 from the staging proxy after every deploy. Could you look into why?",
            "Dana asked Claude to look into why Dana gets a 502 from the staging proxy"
            " after every deploy.",
        ),
        (
            "the importer drops rows with an empty sku. pls fix it",
            "Dana asked Claude to fix it: the importer drops rows with an empty sku.",
        ),
    ],
)
def test_a_request_that_points_back_carries_what_it_points_at(turn: str, claim: str) -> None:
    """'Can you find out why?' alone is no memory: the sentence before it says what 'why' is
    about, so the request names it, and its quote spans both sentences (verbatim)."""
    said = [r for r in requests.read(_one_prompt(turn), "Dana") if r.kind == "request"]
    assert [r.text for r in said] == [claim]
    assert said[0].quote in turn
    # the statement is not kept a second time as a line of its own
    assert [r.kind for r in requests.read(_one_prompt(turn), "Dana")] == ["request"]


def test_a_request_does_not_reach_back_across_a_paste() -> None:
    turn = "The build breaks on arm64.\n\n    ld: 0x1f 0x2e 0x00 @@ 0x7f\n\nCan you fix it?"
    said = requests.read(_one_prompt(turn), "Dana")
    assert ("request", "Dana asked Claude to fix it.") in {(r.kind, r.text) for r in said}


@pytest.mark.parametrize(
    ("turn", "claim"),
    [
        (
            "the ledger tests are flaky on CI, can you find out why?",
            "Dana asked Claude to find out why the ledger tests are flaky on CI.",
        ),
        (
            "test_retry_backoff fails about 1 in 20 runs on CI. Can you find out why?",
            "Dana asked Claude to find out why test_retry_backoff fails about 1 in 20 runs"
            " on CI.",
        ),
        (
            "the sidebar overlaps the footer on mobile, fix it",
            "Dana asked Claude to fix it: the sidebar overlaps the footer on mobile.",
        ),
    ],
)
def test_a_statement_and_its_ask_in_one_sentence(turn: str, claim: str) -> None:
    """Typed fast, the statement and the ask share a sentence; an identifier that opens it
    keeps its case."""
    said = requests.read(_one_prompt(turn), "Dana")
    assert [(r.kind, r.text) for r in said] == [("request", claim)]
    assert said[0].quote in turn


def test_a_statement_that_opens_with_an_identifier_keeps_its_case() -> None:
    turn = "test_retry_backoff fails about 1 in 20 runs on CI.\n\nnpm ci is slow on the runners."
    said = requests.read(_one_prompt(turn), "Dana")
    assert [r.text for r in said] == [
        "test_retry_backoff fails about 1 in 20 runs on CI.",
        "npm ci is slow on the runners.",
    ]


@pytest.mark.parametrize(
    "line",
    [
        "tally.db.PoolExhausted: no free connections",  # a qualified exception, any name
        "java.lang.IllegalStateException: closed",
        "Caused by: java.io.IOException: broken pipe",
        'Exception in thread "main" java.lang.NullPointerException',
        "panic: runtime error: index out of range [3] with length 3",
        "goroutine 1 [running]:",
        "thread 'main' panicked at src/main.rs:4:5:",
        "npm ERR! code ERESOLVE",
        "    at node:internal/modules/cjs/loader:1080:15",
        "Uncaught (in promise) Error: 401",
    ],
)
def test_pasted_log_lines_of_other_stacks_are_not_prose(line: str) -> None:
    """redteam20: a paste from another language's runtime is no more prose than Python's."""
    got = prose(f"it broke:\n{line}\n\nplease fix the queue")
    assert got == ["it broke:", "please fix the queue"]


def test_an_answered_question_and_the_persons_follow_up_are_one_decision(tmp_path: Path) -> None:
    """redteam20: the answer to the agent's question ("Postgres") and the person's own words
    after it ("lets go with postgres for the audit log, ...") made two decision notes."""
    import json

    sid = "e1e1e1e1-0000-4000-8000-000000000001"
    ask = {"questions": [{"question": "Where should the audit log live?",
                          "options": [{"label": "Postgres"}, {"label": "SQLite file"}]}]}
    rows = [
        {"type": "user", "message": {"role": "user", "content": "add an audit log to the api"}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "tool_use", "id": "q1", "name": "AskUserQuestion", "input": ask}]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "q1", "is_error": False, "content":
             'User has answered your questions: "Where should the audit log live?"="Postgres". '
             "You can now continue with the user's answers in mind."}]}},
        {"type": "user", "message": {"role": "user", "content":
            "lets go with postgres for the audit log, sqlite locks up under concurrent writes"}},
    ]
    src = tmp_path / f"{sid}.jsonl"
    src.write_text("".join(json.dumps({
        "sessionId": sid, "uuid": f"u-{i}", "parentUuid": None, "cwd": "/home/ana/src/ledger",
        "timestamp": f"2026-06-01T10:0{i}:00Z", **r}) + "\n" for i, r in enumerate(rows)),
        encoding="utf-8")
    root = new_vault(tmp_path / "v")
    memctl(root, "ingest", str(src), "--user", "ana")
    memctl(root, "curate")
    notes = [p for p in (root / "decisions").glob("*.md") if p.name != "INDEX.md"]
    assert len(notes) == 1, [p.name for p in notes]
    text = notes[0].read_text("utf-8")
    assert "Ana chose Postgres when the assistant asked" in text
    assert "Ana chose postgres for the audit log, sqlite locks up" in text


def test_a_request_after_a_paste_does_not_point_at_the_sentence_before_it() -> None:
    """With a trace pasted in the turn, 'why' and 'it' are about the paste: the statement
    next to the ask is context, not what the ask is about."""
    turn = (
        "seeing this on staging:\n\nTraceback (most recent call last):\n"
        '  File "app/db.py", line 41, in connect\npool.PoolExhausted: no free connection\n\n'
        "we run gunicorn with 8 workers. can you find out why?"
    )
    said = {(r.kind, r.text) for r in requests.read(_one_prompt(turn), "Dana")}
    assert ("request", "Dana asked Claude to find out why.") in said, said
    assert not any("find out why Dana" in t for _, t in said), said


def _subagent_transcript(folder: Path, brief: str) -> Path:
    """A parent session and one sub-agent it spawned, as Claude Code lays them out on disk:
    `<session>.jsonl` and `<session>/subagents/agent-<id>.jsonl`."""
    import json

    sid = "6c2d1f4e-8b3a-4d9e-a011-3b4c5d6e7f80"
    base = {"cwd": "/home/dana/src/ledger", "sessionId": sid, "version": "2.0.14",
            "gitBranch": "main"}  # fmt: skip

    def row(n: int, kind: str, content: object, side: bool, **more: object) -> str:
        return json.dumps({
            **base, "parentUuid": f"00000000-0000-4000-9000-{n - 1:012d}" if n > 1 else None,
            "isSidechain": side, "type": kind, "uuid": f"00000000-0000-4000-9000-{n:012d}",
            "timestamp": f"2026-05-04T10:{n:02d}:00.000Z",
            "message": {"role": kind, "content": content, **more},
        })  # fmt: skip

    model = {"model": "claude-sonnet-4-5"}
    (folder / f"{sid}.jsonl").write_text("\n".join([
        row(1, "user", "Get a helper to move the invoice export onto the tax table.", False),
        row(2, "assistant", [{"type": "text", "text": "Spawning a helper for that."}], False,
            **model),
    ]) + "\n", "utf-8")  # fmt: skip
    sub = folder / sid / "subagents"
    sub.mkdir(parents=True)
    call = {"type": "tool_use", "id": "c1", "name": "Bash",
            "input": {"command": 'git commit -am "export: read tax_rates"'}}  # fmt: skip
    result = {"type": "tool_result", "tool_use_id": "c1",
              "content": "[main 4f3e2d1] export: read tax_rates\n 1 file changed"}  # fmt: skip
    (sub / "agent-b7c8d9.jsonl").write_text("\n".join([
        row(1, "user", brief, True),
        row(2, "assistant", [call], True, **model),
        row(3, "user", [result], True),
        row(4, "assistant", [{"type": "text", "text": "Committed 4f3e2d1."}], True, **model),
    ]) + "\n", "utf-8")  # fmt: skip
    return folder


def _subagent_vault(tmp_path: Path, brief: str) -> Path:
    """A vault the CLI ingested the parent session and its sub-agent (opening with `brief`)
    into, as Dana's, and curated."""
    (tmp_path / "src").mkdir()
    src = _subagent_transcript(tmp_path / "src", brief)
    root = new_vault(tmp_path / "v")
    memctl(root, "ingest", str(src), "--scope", "team", "--user", "dana")
    memctl(root, "curate")
    return root


def _goal_lines(root: Path, slug: str) -> list[str]:
    notes = [p for p in (root / "sessions").glob(f"*{slug}*.md")]
    assert len(notes) == 1, sorted(p.name for p in (root / "sessions").iterdir())
    body = notes[0].read_text("utf-8")
    goal = body.split("## Goal", 1)[1].split("\n## ", 1)[0] if "## Goal" in body else ""
    return [line for line in goal.splitlines() if line.startswith("- ")]


def test_a_subagents_goal_is_the_task_its_brief_sets(tmp_path: Path) -> None:
    """A sub-agent's transcript opens with the brief the spawning agent wrote: no person's
    request, but the only place that says what the sub-agent's work was for. Its session
    note's goal is the task the brief sets (the first sentence of its task section, not the
    role or the context before it), in the brief's words, cited as observed; nothing else
    in the brief (its rules for that sub-agent) becomes anyone's instruction."""
    brief = (
        "You are **mina**, a helper for the ledger repo.\n\n"
        "The repo keeps invoices in `ledger/` and the old rates in a YAML file.\n\n"
        "## Your task\n\n"
        "Move the **invoice export** onto the `tax_rates` table, so that exports stop "
        "reading the YAML file.\n\n"
        "## Rules\n\n"
        "- Never push.\n- Commit once, on main.\n"
    )
    root = _subagent_vault(tmp_path, brief)
    goal = _goal_lines(root, "you-are-mina")
    assert goal and goal[0].startswith(
        "- Task from the parent session: Move the invoice export onto the `tax_rates` table, "
        "so that exports stop reading the YAML file."
    ), goal
    assert "#observed" in goal[0]
    assert len(goal) == 1
    notes = [p for p in root.rglob("*.md") if not {".git", "raw"} & set(p.relative_to(root).parts)]
    assert notes and not [p for p in notes if "Never push" in p.read_text("utf-8")]
    memctl(root, "verify")


def test_a_subagents_brief_without_a_task_section_gives_its_first_sentence(
    tmp_path: Path,
) -> None:
    """A brief of a few plain sentences: the task is its first that is not the role."""
    root = _subagent_vault(
        tmp_path,
        "You are a reviewer. Check that every invoice total in `ledger/export.py` is rounded "
        "once. Report what you find.",
    )
    goal = _goal_lines(root, "you-are-a-reviewer")
    assert len(goal) == 1 and goal[0].startswith(
        "- Task from the parent session: Check that every invoice total in `ledger/export.py` "
        "is rounded once."
    ), goal


def test_a_cut_claim_leaves_no_parenthesis_open() -> None:
    """A claim over the length cap is cut where a clause ends; a cut inside a parenthesis
    ("(EnterPlanMode, when the harness ...") reads as garbled as a word cut in two, and a
    quoted sentence with no clause end outside its brackets is cut before them."""
    text = (
        "Research the export format (CSV, JSON, Parquet, each with its own header rules, "
        "quoting rules, date formats and the encodings that the accounting team asked for "
        "over the years, including the odd ones from the Lisbon office) and write it down."
    )
    cut = findings.short(text)
    assert cut.count("(") <= cut.count(")"), cut
    assert len(cut) <= findings.MAX_CLAIM
    said = ('Dana said: "Pretend we have three exports (say, first would be "csv for the bank", '
            'second would be "json for the shop", while the last would be "parquet for the '
            'warehouse team that wants it nightly and compressed")"')  # fmt: skip
    cut = findings.short(said)
    assert len(cut) <= findings.MAX_CLAIM and cut.count("(") <= cut.count(")"), cut
    assert cut.startswith('Dana said: "Pretend we have three exports') and cut.endswith('…"')


def _mina(tmp_path: Path) -> Path:
    """A vault holding one curated sub-agent session whose brief sets its task under a
    heading, after the role it hands out."""
    brief = (
        "You are **mina**, a helper for the ledger repo.\n\n"
        "## Your task\n\n"
        "Move the **invoice export** onto the `tax_rates` table, so that exports stop "
        "reading the YAML file.\n"
    )
    return _subagent_vault(tmp_path, brief)


def test_a_subagents_session_is_titled_by_its_task_not_its_role(tmp_path: Path) -> None:
    """"Session: You are **mina**, a helper for the ledger repo." names every sub-agent of a
    team alike, in recent-session lists and recall headings; the task its brief sets says
    which one it was. The note keeps its file (named after the raw session, which is fixed)."""
    root = _mina(tmp_path)
    notes = list((root / "sessions").glob("*you-are-mina*.md"))
    assert len(notes) == 1, sorted(p.name for p in (root / "sessions").iterdir())
    title = next(ln for ln in notes[0].read_text("utf-8").splitlines() if ln.startswith("# "))
    assert title.startswith("# Session: Move the invoice export onto the `tax_rates` table"), title
    assert "You are" not in title and len(title) <= 100, title
    memctl(root, "verify")


def test_forgetting_a_subagents_brief_takes_its_task_out_of_the_title(tmp_path: Path) -> None:
    """The title quotes the brief: forgetting the brief's turn leaves its words nowhere."""
    root = _mina(tmp_path)
    raw = next(p for p in (root / "raw").rglob("*.md") if "you-are-mina" in p.name)
    memctl(root, "forget", f"{raw.relative_to(root).as_posix()}#t1")
    left = [p for p in root.rglob("*.md") if ".git" not in p.parts
            and "the `tax_rates` table" in p.read_text("utf-8")]  # fmt: skip
    assert not left, [(p.name, p.read_text("utf-8")[:400]) for p in left]
    memctl(root, "verify")


def test_a_sub_agents_brief_is_labelled_as_the_parent_agents_words(tmp_path: Path) -> None:
    """A sub-agent's first "user" turn is the brief the agent that spawned it wrote: recall
    names its speaker so ("parent agent"), never the session's user, who never said it."""
    root = _mina(tmp_path)
    out = memctl(root, "recall", "invoice export tax_rates table", "--user", "dana").stdout
    task = [ln for ln in out.splitlines() if ln.startswith("- Task from the parent session")]
    assert task and "[observed · parent agent " in task[0], out
    ref = task[0].rsplit(" ", 1)[-1].rstrip("]")  # the brief's turn, "<session>#t1"
    assert not [ln for ln in out.splitlines() if ref in ln and "dana" in ln], out
    # the parent session's turn is Dana's own words, and says so
    assert "[stated · dana " in out, out
