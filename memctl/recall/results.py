"""What a recall or context call returns, and the rules every caller shares (scopes, off).

The CLI, the hooks, the MCP server and the learning loop all receive a `RecallResult`; its
`to_json` is the versioned contract of `memctl recall --json`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memctl.errors import InputError

if TYPE_CHECKING:
    from memctl.core.floor import Floor

RESULT_VERSION = 1  # the JSON shape of a recall/context result; bump on any key change
FORMATS = ("md", "xml", "json")
OFF_VALUES = ("off", "0", "false", "no", "none", "disabled")
AGENT_TAG = "#agent"  # a claim the agent recorded on its own authority (memctl.faces.mcp remember)


def visible_scopes(user: str) -> tuple[str, ...]:
    """Scopes `user` may see: their own, the team's and everyone's."""
    return ("global", "team", f"user:{user}")


def disabled_by(env: Mapping[str, str]) -> bool:
    """`MEMCTL_RECALL=off` (or 0/false/no/none): the caller wants an answer without memory."""
    return env.get("MEMCTL_RECALL", "").strip().lower() in OFF_VALUES


# ---- results ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cite:
    """Where a memory came from: the turn, when it was said, by whom, and the words."""

    ref: str
    date: str | None = None
    speaker: str | None = None
    quote: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"ref": self.ref, "date": self.date, "speaker": self.speaker, "quote": self.quote}


@dataclass(frozen=True)
class Memory:
    """One packed item: a claim from a note, or a raw turn.

    `basis` says how much to trust it: `stated` (a person said it in the cited turn),
    `inferred` (the curator's reading of the cited turn), `human` (written into the note by
    a person, no citation), `agent` (the agent's own note, no citation), `said` (a raw turn,
    verbatim), `rewound` (a raw turn on a branch of the session the user went back from) or
    `history` (no longer true).
    """

    kind: str  # "claim" | "turn"
    text: str
    basis: str
    ref: str  # claims: the note's path; turns: raw/...md#tN
    score: float
    date: str | None = None
    citations: tuple[Cite, ...] = ()
    title: str | None = None
    store: str | None = None
    scope: str | None = None
    section: str | None = None
    speaker: str | None = None
    why: str = ""
    tokens: int = 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "text": self.text,
            "basis": self.basis,
            "ref": self.ref,
            "date": self.date,
            "score": round(self.score, 4),
            "citations": [c.to_json() for c in self.citations],
        }
        if self.kind == "claim":
            out.update(title=self.title, store=self.store, scope=self.scope, section=self.section)
        else:
            out.update(speaker=self.speaker, scope=self.scope)
        out["tokens"] = self.tokens
        return out


@dataclass(frozen=True)
class Decision:
    """Why a candidate was kept or dropped (`--explain`)."""

    ref: str
    kind: str  # note | claim | turn
    kept: bool
    reason: str
    score: float = 0.0
    text: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "kind": self.kind,
            "kept": self.kept,
            "reason": self.reason,
            "score": round(self.score, 4),
            "text": self.text,
        }


@dataclass
class RecallResult:
    """The packed memories, their rendering, and how the budget was spent."""

    query: str | None
    user: str
    budget: int
    format: str
    text: str
    memories: list[Memory]
    tokens: int
    tokenizer: str
    disabled: bool = False
    explain: list[Decision] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    seconds: float = 0.0
    kind: str = "recall"  # recall | context

    def to_json(self, explain: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "version": RESULT_VERSION,
            "kind": self.kind,
            "query": self.query,
            "user": self.user,
            "budget": self.budget,
            "tokens": self.tokens,
            "tokenizer": self.tokenizer,
            "disabled": self.disabled,
            "format": self.format,
            "memories": [m.to_json() for m in self.memories],
            "text": self.text,
        }
        if explain:
            out["explain"] = [d.to_json() for d in self.explain]
        return out


def resolve(vault: Floor, user: str | None, budget: int | None, fmt: str) -> tuple[str, int]:
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}: use {', '.join(FORMATS)}")
    budget = vault.config.recall_budget if budget is None else int(budget)
    if budget < 0:
        raise InputError(f"--budget must be 0 or more tokens, got {budget}")
    user = (user or vault.default_user()).strip()
    if not user or any(c in user for c in " \t\n:"):
        raise InputError(f"invalid user {user!r}")
    return user, budget
