"""Curation: turning verbatim turns into cited notes, by a pluggable curator.

A curator only *proposes* claims: each names a store, a note, a section, its text and the
turns and verbatim quotes that support it. Everything that makes memory trustworthy happens
here, the same for every curator: quotes are checked against the cited turn, writes go only
to configured stores (and to instructions/ only as proposals), claims are merged into notes
(add, update, supersede, no-op), and one commit records the run.

Curators are found by name: the built-ins are registered exactly as a third party would
register one, through the `memctl.curators` entry-point group (see `register`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memctl.curate.model import (
    ACTIONS,
    Batch,
    Context,
    Curator,
    Entity,
    Extraction,
    KnownClaim,
    KnownEntity,
    KnownNote,
    Proposal,
    Quote,
    StoreSpec,
)
from memctl.curate.registry import ENTRY_POINT_GROUP, available, get_curator, register

if TYPE_CHECKING:
    from memctl.core.floor import Floor

__all__ = [
    "ACTIONS",
    "ENTRY_POINT_GROUP",
    "Batch",
    "Context",
    "Curator",
    "Entity",
    "Extraction",
    "KnownClaim",
    "KnownEntity",
    "KnownNote",
    "Proposal",
    "Quote",
    "StoreSpec",
    "available",
    "get_curator",
    "register",
    "review",
    "run",
]

# ---- entry points for the front door ------------------------------------------------------


def run(vault: Floor, **options: Any) -> Any:
    """Curate uncurated turns into notes; see `memctl.curate.engine.run`."""
    from memctl.curate import engine

    return engine.run(vault, **options)


def review(vault: Floor, **options: Any) -> Any:
    """List, accept or reject proposals; see `memctl.curate.proposals.review`."""
    from memctl.curate import proposals

    return proposals.review(vault, **options)
