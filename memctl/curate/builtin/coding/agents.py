"""The sub-agents a session spawned: how many, named what, for which task, how isolated.

A session that delegates (Claude Code's `Agent` or `Task` tool) did its work through the
agents it spawned; their transcripts are sessions of their own, and the only place that ties
them to this one is the call that spawned them. Each call's own fields say it: the
`description` the agent gave it, its `name`, its `subagent_type` ("Explore"), its `model`,
its `isolation` ("worktree"). The calls one turn of the agent's work makes together (no
person's prompt between them) are one line, each description cited to its call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memctl.curate.builtin.coding.structure import Call, Coding

_SPAWN = frozenset(("Agent", "Task"))
MAX_NAMED = 4


@dataclass
class Spawned:
    """One line: its text and the (turn, description) of each call it names."""

    text: str
    cites: list[tuple[int, str]]


def read(session: Coding) -> list[Spawned]:
    prompts = sorted(h.turn for h in session.humans if h.kind == "prompt")
    groups: list[list[Call]] = []
    for c in session.calls:
        if c.name not in _SPAWN or c.turn < session.start or c.error:
            continue
        if not _field(c, "description"):
            continue
        last = groups[-1][-1] if groups else None
        if last is not None and not any(last.turn < p < c.turn for p in prompts):
            groups[-1].append(c)
        else:
            groups.append([c])
    return [_line(g) for g in groups]


def _field(c: Call, key: str) -> str:
    value = c.input.get(key)
    return " ".join(value.split()) if isinstance(value, str) else ""


def _line(calls: list[Call]) -> Spawned:
    kinds = {_field(c, "subagent_type") for c in calls}
    kind = kinds.pop() if len(kinds) == 1 else ""
    kind = "" if kind in ("", "general-purpose") else kind
    models = {_field(c, "model") for c in calls}
    model = models.pop() if len(models) == 1 else ""
    what = f"{kind} sub-agent" if kind else "sub-agent"
    if model:
        what += f" ({model})"
    shown = calls[:MAX_NAMED]
    if len(calls) == 1:
        c = calls[0]
        name = _field(c, "name")
        article = "an" if what[0].lower() in "aeiou" else "a"
        head = f"Spawned {article} {what}" + (f" named {name}" if name else "")
        # the description as the agent wrote it: "Explore codebase structure" opens with a
        # verb, "Claude Code research" with a name, and nothing here can tell them apart
        text = f"{head}: {_field(c, 'description').rstrip('.')}"
    else:
        parts = [
            f"{_field(c, 'name')} ({_field(c, 'description')})" if _field(c, "name")
            else _field(c, "description")
            for c in shown
        ]  # fmt: skip
        more = len(calls) - len(shown)
        listed = ", ".join(parts[:-1]) + f" and {parts[-1]}" if not more else (
            ", ".join(parts) + f" and {more} more"
        )  # fmt: skip
        text = f"Spawned {len(calls)} {what}s: {listed}"
    if all(_field(c, "isolation") == "worktree" for c in calls):
        text += ", each in its own git worktree" if len(calls) > 1 else ", in its own git worktree"
    return Spawned(text + ".", [(c.turn, str(c.input["description"])) for c in shown])



def named_in(session: Coding, text: str, before: int) -> list[tuple[int, str]]:
    """The spawn calls (before turn `before`) whose agents a report's sentence names, as
    (turn, name): "Round 2: 3 fresh agents (alice2/bob2/carol2) spawned ..." is what those
    three calls did, and cites them. Two names at least: one name alone ("alice") is as
    often the agent's subject as its spawn."""
    got: list[tuple[int, str]] = []
    for c in session.calls:
        name = _field(c, "name")
        if c.name not in _SPAWN or c.turn >= before or c.error or len(name) < 2:
            continue
        if re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text):
            got.append((c.turn, str(c.input["name"])))
    return got if len({n for _, n in got}) >= 2 else []
