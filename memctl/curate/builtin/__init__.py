"""The built-in curator: deterministic, offline, extractive.

It reads only what users said (never the assistant, never pasted documents, code or HTML
comments) and recognises the sentence shapes people use to state durable facts:

- about themselves: identity ("I'm a ... at Org", "I live in ..."), preferences ("I prefer
  X over Y", "I hate ..."), habits ("I always ...", "I bill by the day"), plans ("I'll ...",
  "Next I need to ..."), progress ("I shipped ...") and corrections ("Actually, I meant X,
  not Y");
- about their team: goals ("We're trying to ..."), facts ("Our bill is ...", "We manage
  ...", "The lake is about 600 TB"), decisions ("We decided to ... because ...");
- about other people and organisations: roles ("Alex is our CTO", "my client Alex Chen",
  "Alex's analyst, Inês"), what they want or lead, "it's called X";
- standing instructions ("Always ...", "From now on ..."), only ever as proposals.

Every claim quotes the whole sentence it came from, so every claim verifies. Claims are
rewritten into the third person ("I prefer" -> "Dana prefers") so a note reads well out of
context; names are kept as said and linked to the entity they were resolved to. A first
name is resolved only when exactly one person with that first name is known in the scope;
otherwise nothing is claimed about them (two people who share a name are never merged).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memctl.curate import Batch, Extraction

if TYPE_CHECKING:
    from memctl.core.floor import Floor


class BuiltinCurator:
    """Deterministic, offline, extractive; see the module docstring for what it extracts."""

    name = "builtin"

    def __init__(self, vault: Floor | None = None, model: str | None = None) -> None:
        self.model = None  # no model: the same turns always give the same notes
        del vault, model

    def extract(self, batch: Batch) -> Extraction:
        from memctl.curate.builtin.claims import Extractor

        return Extraction(Extractor(batch).run())
