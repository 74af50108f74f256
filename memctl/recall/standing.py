"""Standing context: what governs every answer for this user, whatever the prompt's words.

Engineer A says "we're trying to cut down on egress costs"; days later Engineer B asks
"Datadog or Grafana?". No word is shared, yet A's goal should shape B's answer. So the
team's goals and constraints, its decisions in force and the user's own preferences and
instructions are eligible for every recall: they get a reserved share of the budget
(`[recall] standing`, default 0.25), ranked by how much of the prompt they carry, then by
how recent they are. A prompt about nothing in memory ("write a haiku about autumn") gets
no turns and no topical claims, but its standing lines still come with it: a preference
such as "keep answers short" governs a haiku as much as a design question, and the share
is small and can be set to 0.

Standing lines are claim lines read from the index (memctl.index.claim_docs), so no note
file is opened; each keeps its citations, which are checked against the user's scopes
before it is shown, like any claim.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memctl.recall.project import STORE
from memctl.recall.rank import check_cites, coverage, recency, steering, unsupported
from memctl.recall.results import AGENT_TAG, Decision, Memory
from memctl.recall.words import content_terms

if TYPE_CHECKING:
    from memctl.index.search import Hit
    from memctl.recall.graph import Reader

# Which lines stand, by store: the sections that state a goal, a constraint, a decision in
# force, or how the user wants to be answered (instructions/ notes keep theirs under
# "Instructions", as the curator writes them).
SECTIONS: dict[str, tuple[str, ...]] = {
    "knowledge": ("goals", "goal", "constraints", "constraint", "policies", "policy"),
    "decisions": ("decision",),
    "profile": ("preferences", "instructions"),
    "instructions": ("instructions",),
}
# The project note of the directory a prompt is made in (memctl.recall.project): all it says
# about the code base stands there; other projects' notes never do.
# In the order they stand when the prompt names none of their words: how to build, test and
# run it first, then where it runs and what bites, then what it is made of.
PROJECT_SECTIONS = ("commands", "environments", "gotchas", "where", "stack", "layout", "facts")
# How to build, test and run a code base matters to any prompt made in it, whatever its
# words; what it found out along the way ("Round 2 commit SHA: …") is read at session start,
# and at a prompt only when the prompt speaks of it: else it takes the answer's place.
TOPICAL = ("facts",)
# a decision note's first line is the decision
PER_NOTE = {"decisions": 1, "profile": 4, "projects": 6}
# The builtin curator's dating line under a decision ("Decided on 2026-11-20, stated by
# Root."): true, but it says nothing without the decision it dates, so it never stands alone.
_STAMP = re.compile(r"Decided on \S+, stated by [^.]+\.")
DEFAULT_PER_NOTE = 3
W_NOTE = 0.25  # share of a line's relevance that comes from its note's
POOL = 30  # lines read per query: the newest, and those the prompt's words match best


@dataclass(frozen=True)
class Standing:
    """A standing line, ranked: how much of the prompt it carries, then its recency."""

    hit: Hit
    rel: float
    score: float


def _hits(r: Reader, query: str, project: str | None = None) -> list[Hit]:
    """Standing lines the user may see: the newest and, for a real prompt, the best matches;
    with `project`, that project note's lines too."""
    stores = [s for s in SECTIONS if s in r.vault.config.stores]
    wanted = {sec for s in stores for sec in SECTIONS[s]}
    if project is not None:
        stores.append(STORE)
        wanted.update(PROJECT_SECTIONS)
    if not stores:
        return []
    sections = sorted(wanted)
    found: dict[tuple[str, str], Hit] = {}
    for q in ("", query) if query.strip() else ("",):
        hits = _newest(r, stores, sections) if q == "" else None
        if hits is None:
            hits = r.search(q, kind="claim", status="active", limit=POOL, store=stores,
                            section=sections)  # fmt: skip
        for h in hits:
            if h.store == STORE and h.ref != project:
                continue  # another project's note: not where this prompt is made
            sec = (h.section or "").casefold()
            if h.store != STORE and sec in PROJECT_SECTIONS and sec not in SECTIONS.get(
                h.store or "", ()
            ):
                continue  # a knowledge note's "Facts" do not stand because a project's do
            found.setdefault((h.ref, h.text), h)
    return list(found.values())


# The newest standing lines do not depend on the prompt: one process asks for them again
# only when the index has moved (memctl.index.view), or for another user's scopes.
_NEWEST: dict[tuple[object, ...], list[Hit]] = {}


def _newest(r: Reader, stores: list[str], sections: list[str]) -> list[Hit] | None:
    """The newest standing lines as the last identical search gave them, asking it again
    when the index moved since; None when that cannot be told (then the caller asks)."""
    from memctl.index import reader

    if not r.synced:
        return None  # the first search of a recall brings the index in step: not this one
    view = reader.view(r.vault)
    if view is None:
        return None
    key = (view, tuple(sorted(r.scopes)), tuple(stores), tuple(sections))
    hits = _NEWEST.get(key)
    if hits is None:
        hits = r.search("", kind="claim", status="active", limit=POOL, store=stores,
                        section=sections)  # fmt: skip
        if reader.view(r.vault) == view:  # nobody committed while it was asked
            if len(_NEWEST) >= 16:
                _NEWEST.clear()
            _NEWEST[key] = hits
    return hits


def standing(
    r: Reader,
    qweight: dict[str, float],
    full: float,
    query: str,
    notes: dict[str, float],
    project: str | None = None,
    keep: Callable[[Hit], bool] | None = None,
) -> list[Standing]:
    """The standing lines for this user and prompt, best first.

    Relevance is the share of the prompt's words a line carries plus, at W_NOTE, how well
    its note matched (`notes`: path -> the candidate score rank.gather gave it), so of two
    lines that say the same, the one in the note the prompt found comes first.
    """
    out: list[Standing] = []
    for h in _hits(r, query, project):
        if h.store == "profile" and h.scope != f"user:{r.user}":
            continue  # someone else's profile, even when shared, does not govern this user
        if not r.visible(h.scope) or (keep is not None and not keep(h)):
            continue  # out of scope, or another project's (memctl.recall.project)
        rel = coverage(content_terms(h.text), qweight, full) if qweight else 0.0
        if qweight and not rel and h.store == STORE and (h.section or "").casefold() in TOPICAL:
            continue  # at a prompt, a project's facts stand only when they carry its words
        # the prompt is made in the project: its note counts as found
        rel += W_NOTE * (1.0 if h.ref == project else notes.get(h.ref, 0.0))
        # relevance first; within the same relevance, a project's more useful sections and
        # then the newer line
        score = rel + recency(h.timestamp, r.now) * 1e-3
        if h.store == STORE:  # a section step (1/7 of 1e-3) outweighs any recency (<= 1e-4)
            sec, n = (h.section or "").casefold(), len(PROJECT_SECTIONS)
            order = PROJECT_SECTIONS.index(sec) if sec in PROJECT_SECTIONS else n
            score = rel + (n - order) / n * 1e-3 + recency(h.timestamp, r.now) * 1e-4
        out.append(Standing(h, rel, score))
    out.sort(key=lambda s: (-s.score, s.hit.ref, s.hit.text))
    return out


def memories(r: Reader, ranked: list[Standing], explain: list[Decision]) -> Iterator[Memory]:
    """Ranked standing lines as memories, at most a few per note, citations checked.

    A generator: the caller stops once the share is full, so citations are read only for
    the lines that can still be packed.
    """
    per_note: dict[str, int] = {}
    for s in ranked:
        h = s.hit
        if _STAMP.fullmatch(h.text.strip()):
            explain.append(Decision(h.ref, "claim", False, "standing: a date line says nothing "
                                    "without its decision", 0, h.text))  # fmt: skip
            continue
        cap = PER_NOTE.get(h.store or "", DEFAULT_PER_NOTE)
        if per_note.get(h.ref, 0) >= cap:
            explain.append(
                Decision(h.ref, "claim", False, f"standing: note already gives {cap}", 0, h.text)
            )
            continue
        cites, reason = check_cites(r, tuple(zip(h.cites, h.quotes, strict=False)))
        if reason is not None:
            explain.append(Decision(h.ref, "claim", False, f"standing: {reason}", 0, h.text))
            continue
        text, basis = h.text, "inferred" if h.inferred else "stated"
        terms = content_terms(text)
        if unsupported(r, terms, tuple(zip(h.cites, h.quotes, strict=False)),
                       h.inferred or h.observed, text):
            basis = "unverified"  # quotes that share no word with the claim support nothing
        elif h.observed:
            basis = "observed"  # what the agent's tools show, never said by anyone
        if text.endswith(AGENT_TAG):  # memctl writes the tag on uncited lines only
            text = text[: -len(AGENT_TAG)].rstrip()
        if h.store == "instructions" and (basis := steering(r, h.ref, text, basis)) is None:
            explain.append(Decision(h.ref, "claim", False, "standing: an instruction someone "
                                    "else added, not accepted", 0, h.text))  # fmt: skip
            continue
        dates = sorted(d for d in (c.date for c in cites) if d)
        why = f"standing: {h.section or 'line'} in {h.store}"
        if s.rel > 0:
            why += f", carries {s.rel:.0%} of the prompt"
        yield (
            Memory(
                kind="claim",
                text=text,
                basis=basis,
                ref=h.ref,
                score=s.score,
                date=dates[-1] if dates else (h.timestamp or None),
                citations=cites,
                title=h.title,
                store=h.store,
                scope=h.scope,
                section=h.section,
                why=why,
            )
        )
        per_note[h.ref] = per_note.get(h.ref, 0) + 1
