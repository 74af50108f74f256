"""Recall: the memories that reach the model, ranked, scoped, cited and packed into a budget.

`recall(vault, query)` answers "what should the agent know before it answers this?"; a
prompt goes through one module per job, in this order:

- `graph.py` reads the vault once per call (notes, raw sessions, the citation/link graph);
- `rank.py` finds candidate notes and turns and scores every claim;
- `prompt.py` picks what to keep (diversity, per-note shares) and hands it to
- `pack.py`, which fits items into the token budget, counting with `memctl.core.tokens`, and
- `render.py`, which writes the block as md, xml or json.

`sessionstart.py` builds the session-start block from the same parts; `results.py` holds the
result types every caller receives.

Scope rule: a note or turn with scope `user:X` reaches only user X; `team` and `global`
reach everyone. The rule is applied in the index query and checked again on every file read.

Nothing here prints; `RecallResult.text` is the rendered block (md, xml or json) and the CLI,
hooks, MCP server and learning loop decide where it goes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memctl.recall.results import (
    AGENT_TAG,
    FORMATS,
    OFF_VALUES,
    RESULT_VERSION,
    Cite,
    Decision,
    Memory,
    RecallResult,
    disabled_by,
    visible_scopes,
)

if TYPE_CHECKING:
    from memctl.core.floor import Floor
    from memctl.recall.prompt import recall
    from memctl.recall.sessionstart import context


def __getattr__(name: str) -> Any:
    """`recall` and `context` load the engine on first use: the curator asks this package
    only for its words, scopes and project rule, and loading graph, rank, pack and the
    tokenizer with them cost every `memctl curate` ~40 ms (sessionstart.py is not named
    context.py, so that the function, not a submodule, is what `context` names)."""
    if name == "recall":
        from memctl.recall.prompt import recall

        return recall
    if name == "context":
        from memctl.recall.sessionstart import context

        return context
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def warm(vault: Floor) -> None:
    """Load what a first recall would: the engine's modules, the tokenizer's table and its
    Unicode pattern (`regex`, imported for the first text with a digit or space outside
    ASCII: ~20 ms) and the index's live snapshot. For a resident process, so that no
    prompt pays for its start; nothing here fails: what cannot load now loads when first
    asked."""
    try:
        from memctl.core import tokens
        from memctl.index.reader import Reader
        from memctl.recall import prompt  # noqa: F401

        tokens.use_cache_dir(vault.root / ".memctl" / "cache")
        enc = tokens.encoding()
        if enc is not None:
            enc.pattern  # noqa: B018  (compiles it)
        Reader(vault)
    except Exception:
        return


__all__ = [
    "AGENT_TAG",
    "FORMATS",
    "OFF_VALUES",
    "RESULT_VERSION",
    "Cite",
    "Decision",
    "Memory",
    "RecallResult",
    "context",
    "disabled_by",
    "recall",
    "visible_scopes",
    "warm",
]
