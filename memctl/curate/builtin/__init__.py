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
        from memctl.curate.builtin.coding import brief, extract, is_coding, steering, structure
        from memctl.curate.builtin.custom_context import claims as context_claims
        from memctl.curate.builtin.custom_context import is_context, stated_name

        if not is_coding(batch):
            ex = Extractor(_without_context(batch))
            settings = any(is_context(m) for m in batch.messages)
            if settings and not any(m.name for m in batch.messages if m.role == "user"):
                # The name the person asked to be called by is who the user is.
                ex.rename(stated_name(batch) or ex.default_name)
            claims = ex.run()
            if settings:
                # The person's own settings: profile and instructions as they stated them,
                # and the employer, places and products those lines name, as entity notes.
                from memctl.curate.builtin.intro import name_entities

                stated = context_claims(batch, ex.default_name)
                for p in stated:
                    if p.store == "profile" and "entities" in batch.stores:
                        q = p.citations[-1]
                        name_entities(ex, q.quote, p.text, q.turn, q.quote)
                claims += stated
            if ex.talks_to_agent and any(m.role == "assistant" for m in batch.messages):
                # A person steering an assistant ("use pnpm", "let's do vite") in any chat.
                steer = steering(
                    batch,
                    ex.default_name,
                    lambda: (ex.session_title(), ex.session_slug()),
                    owner=ex.owner,
                )
                # One sentence, one line in a note: what the prose reader already said there
                # ("Ines wants short answers, ...") is not said again by the steering reader.
                said = {(p.store, q.turn, q.quote) for p in claims for q in p.citations}
                claims += [
                    p for p in steer
                    if not any((p.store, q.turn, q.quote) in said for q in p.citations)
                ]
            return Extraction(claims)
        # A coding session: the prose reader sees only what the person typed (markup, notices
        # and pasted logs blanked out), and the coding extractors read the rest of the session.
        ex = Extractor(_prose_batch(batch))
        if _subagent(batch):
            ex.subagent_task = brief.title(structure.read(batch))
        mine = extract(
            batch,
            ex.default_name,
            lambda: (ex.session_title(), ex.session_slug()),
            owner=ex.owner,
        )
        # A sentence the coding extractors read is theirs: the prose reader's claim on the same
        # words would say it twice (or file "I like this idea" in the profile, out of context).
        read = {(q.turn, q.quote) for p in mine for q in p.citations}
        prose = [] if _subagent(batch) else ex.run()  # a sub-agent's prompts are no person's
        claims = [
            p
            for p in prose
            if p.store not in ("sessions", "knowledge")
            and not any((q.turn, q.quote) in read for q in p.citations)
        ]
        return Extraction(claims + mine)


def _subagent(batch: Batch) -> bool:
    """A sub-agent's transcript (Claude Code links it to the session that spawned it)."""
    meta = dict(batch.header.extra).get("source_meta")
    return isinstance(meta, dict) and bool(meta.get("parent_session"))


def _without_context(batch: Batch) -> Batch:
    """The batch with the settings turn blanked: it is read by its own rules, not as chat."""
    from dataclasses import replace

    from memctl.curate.builtin.custom_context import is_context

    if not any(is_context(m) for m in batch.messages):
        return batch
    messages = [replace(m, content="") if is_context(m) else m for m in batch.messages]
    return replace(batch, messages=messages)


def _prose_batch(batch: Batch) -> Batch:
    from dataclasses import replace

    from memctl.curate.builtin.coding.markup import clean

    def sidechain(m: object) -> bool:  # a sub-agent's prompt written inline in the session
        meta = getattr(m, "meta", None)
        return isinstance(meta, dict) and meta.get("isSidechain") is True

    messages = [
        replace(m, content="" if sidechain(m) else clean(m.content)) if m.role == "user" else m
        for m in batch.messages
    ]
    return replace(batch, messages=messages)
