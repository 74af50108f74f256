"""A coding session read for its structure: what the human said, what the agent did.

A coding agent's transcript interleaves the human's turns, the agent's prose, its tool calls
and the tools' results. The extractors need them apart and paired: a command with whether it
succeeded, an edit with the sentence that said why, a question with the human's answer (which
Claude Code stores as a tool result, though the words are the human's).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memctl.core.lazyre import lazy
from memctl.core.model import Message
from memctl.core.provenance import harness_output
from memctl.core.raw import local_dir, portable_dir
from memctl.curate import Batch
from memctl.curate.builtin.coding.markup import has_markup, is_harness_turn, prose, shell_input

# What Claude Code writes into a tool result when the human refuses a call or answers the
# agent's question: the words after these openings are the human's.
_REJECTED = lazy(
    r"^The user doesn't want to proceed with this tool use\..*?"
    r"(?:the user said:\s*(?P<why>.+))?$",
    re.S,
)
_ANSWERED = lazy(r'"(?P<q>[^"]{3,300})"\s*=\s*"(?P<a>[^"]{1,300})"')
_FAILED_OUTPUT = lazy(
    r"command not found|No such file or directory|not recognized as|Unknown command|"
    r"unrecognized arguments|error: unexpected argument|ModuleNotFoundError|"
    r"Permission denied|fatal: not a git repository",
    re.I,
)


# The harness's tools that put a question to the person and return their answer.
_ASKS = frozenset(("AskUserQuestion", "AskFollowupQuestion", "ask_user"))


@dataclass
class Call:
    """One tool call with its result, if the transcript holds it."""

    turn: int
    name: str
    input: dict[str, Any]
    result: str | None = None
    error: bool = False
    result_turn: int | None = None
    said_before: tuple[int, str] | None = None  # (turn, text) of the agent's last prose
    _ran: bool | None = field(default=None, repr=False, compare=False)

    @property
    def command(self) -> str:
        cmd = self.input.get("command")
        return cmd if isinstance(cmd, str) else ""

    @property
    def path(self) -> str:
        p = self.input.get("file_path") or self.input.get("notebook_path") or ""
        return p if isinstance(p, str) else ""

    def replaced(self) -> list[str]:
        """The texts an edit replaced: its `old_string`, or each of a MultiEdit's."""
        edits = self.input.get("edits")
        olds = [e.get("old_string") for e in edits if isinstance(e, dict)] if isinstance(
            edits, list
        ) else [self.input.get("old_string") or self.input.get("old_str")]  # fmt: skip
        return [o for o in olds if isinstance(o, str) and o.strip()]

    def wrote(self) -> list[str]:
        """The texts an edit wrote: its `new_string` (each of a MultiEdit's), or a file's
        whole content."""
        edits = self.input.get("edits")
        news = [e.get("new_string") for e in edits if isinstance(e, dict)] if isinstance(
            edits, list
        ) else [self.input.get(k) for k in ("new_string", "new_str", "content", "file_text")]
        return [n for n in news if isinstance(n, str) and n.strip()]

    def ran(self) -> bool:
        """The command ran (its output may report failures, but the tool was there)."""
        if self._ran is None:  # asked by several extractors: read the output once
            self._ran = not (
                self.result is None
                or _REJECTED.match(self.result.strip())
                or _FAILED_OUTPUT.search(self.result[:2000])
            )
        return self._ran


@dataclass
class Human:
    """A human turn's prose (no markup or pastes), or their words in a tool result."""

    turn: int
    sentences: list[str]
    kind: str = "prompt"  # prompt | rejection | answer
    answers: list[tuple[str, str]] = field(default_factory=list)  # (question, answer)
    refused: str | None = None  # the command or file of the call the human refused
    text: str = ""  # the whole turn, to check that two adjacent sentences quote as one


@dataclass
class Shell:
    """A command the human ran themself in the harness's shell (`!cmd` in Claude Code)."""

    turn: int
    command: str
    output: str | None = None  # what it printed (`<bash-stdout>`), the turn after it
    output_turn: int | None = None


@dataclass
class Coding:
    """The parts of one coding session the extractors read."""

    humans: list[Human]
    texts: list[tuple[int, str]]  # the agent's prose turns
    calls: list[Call]
    shells: list[Shell]
    noise: set[int]  # turns that are harness markup only
    subagent: bool  # a sub-agent's transcript: its "user" is the agent that spawned it
    agent: str
    cwd: str | None  # the working directory as the transcript's records give it
    place: str | None  # the same as the raw header keeps it: never a machine's home path
    branch: str | None
    start: int
    # a sub-agent's brief: the first prompt the spawning agent wrote it (its task)
    brief: Human | None = None
    # every turn the person typed (or the harness put in their name), whole: what they
    # pasted is evidence of what the session was about, though none of it is their words
    prompts: list[tuple[int, str]] = field(default_factory=list)


def is_coding(batch: Batch) -> bool:
    """A session in which an agent used tools: a coding session, read by its structure."""
    return any(
        m.role == "assistant" and isinstance(m.meta, dict) and m.meta.get("tool_calls")
        for m in batch.messages
    )


def _agent_name(messages: list[Message]) -> str:
    for m in messages:
        model = m.meta.get("model") if isinstance(m.meta, dict) else None
        if isinstance(model, str) and model:
            return "Claude" if "claude" in model.lower() else "the agent"
    return "the assistant"


def _source_meta(batch: Batch) -> dict[str, Any]:
    for key, value in batch.header.extra:
        if key == "source_meta" and isinstance(value, dict):
            return value
    return {}


def read(batch: Batch) -> Coding:
    """Pair calls with results, split the human's words from markup, in turn order."""
    msgs = batch.messages
    src = _source_meta(batch)
    cwd = src.get("cwd") if isinstance(src.get("cwd"), str) else None
    # notes are shared: they name the folder as raw headers name files (`~/...` under the
    # home folder, else its name alone), never by this machine's absolute path
    place = portable_dir(cwd, Path.home()) if cwd else None
    branch = src.get("gitBranch") if isinstance(src.get("gitBranch"), str) else None
    humans: list[Human] = []
    prompts: list[tuple[int, str]] = []
    texts: list[tuple[int, str]] = []
    calls: list[Call] = []
    shells: list[Shell] = []
    noise: set[int] = set()
    by_id: dict[str, Call] = {}
    said: tuple[int, str] | None = None
    subagent = bool(src.get("parent_session"))
    brief: Human | None = None
    for i, m in enumerate(msgs, 1):
        meta = m.meta if isinstance(m.meta, dict) else {}
        if m.role == "user" and meta.get("isSidechain") is True:
            noise.add(i)  # a sub-agent's prompt, inline: the orchestrating agent's words
            if subagent and brief is None and not texts and not calls:
                brief = Human(i, prose(m.content), text=m.content)
        elif m.role == "user":
            said = None
            cmd = shell_input(m.content)
            if cmd:
                shells.append(Shell(i, cmd))
            elif shells and shells[-1].turn == i - 1 and harness_output(m.content):
                # what the harness printed for the person's `!cmd`, in the turn after it
                shells[-1].output, shells[-1].output_turn = m.content, i
            prompts.append((i, m.content))
            sentences = prose(m.content)
            if sentences:
                humans.append(Human(i, sentences, text=m.content))
            elif has_markup(m.content) or is_harness_turn(m.content) or not m.content.strip():
                noise.add(i)
        elif m.role == "assistant":
            if m.content.strip():
                texts.append((i, m.content))
                said = (i, m.content)
            for tc in meta.get("tool_calls") or []:
                if not isinstance(tc, dict):
                    continue
                inp = tc.get("input") if isinstance(tc.get("input"), dict) else {}
                call = Call(i, str(tc.get("name") or ""), inp, said_before=said)
                calls.append(call)
                if isinstance(tc.get("id"), str):
                    by_id[tc["id"]] = call
        elif m.role == "tool":
            call = by_id.get(str(meta.get("tool_use_id")))
            if call is not None:
                call.result = m.content
                call.error = meta.get("is_error") is True
                call.result_turn = i
            _human_in_result(i, m.content, humans, call)
    cwd = local_dir(cwd, (c.path for c in calls), Path.home())  # the header's is portable
    if cwd is None:
        cwd = _common_folder([c.path for c in calls if c.path])
        place = portable_dir(cwd, Path.home()) if cwd else None
    return Coding(
        humans, texts, calls, shells, noise, subagent, _agent_name(msgs), cwd, place, branch,
        batch.start, brief, prompts
    )


def _common_folder(paths: list[str]) -> str | None:
    """Where a session without a recorded working directory worked: the folder holding every
    file its tools touched (a file's own folder when it touched one), never `/` or a home's
    parent. The project is named after it, never after the session's first words."""
    import os.path

    absolute = [p for p in paths if p.startswith("/")]
    if not absolute:
        return None
    try:
        common = os.path.commonpath(absolute)
    except ValueError:
        return None
    if common in absolute:  # one file, or every path the same file
        common = str(Path(common).parent)
    return common if common.count("/") >= 2 else None


def _human_in_result(turn: int, text: str, humans: list[Human], call: Call | None) -> None:
    """A refusal's reason or an answer to the agent's question: the human's own words."""
    m = _REJECTED.match(text.strip())
    if m:
        why = (m.group("why") or "").strip()
        if why:
            sentences = [s for s in prose(why) if s in text]
            if sentences:
                refused = (call.command or call.path) if call is not None else None
                humans.append(Human(turn, sentences, "rejection", refused=refused or None))
        return
    if text.startswith("User has answered your question") and (
        call is None or call.name in _ASKS
    ):  # a command's output that reads like an answer is output, never the person's
        pairs = [(a.group("q"), a.group("a")) for a in _ANSWERED.finditer(text)]
        if pairs:
            humans.append(Human(turn, [], "answer", pairs))
