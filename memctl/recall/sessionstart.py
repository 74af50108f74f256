"""The block for the start of a session: instructions, profile, decisions, open threads,
knowledge."""

from __future__ import annotations

import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memctl.recall.graph import Reader
from memctl.recall.pack import Packer, finish
from memctl.recall.project import project_note
from memctl.recall.rank import steering, unsupported
from memctl.recall.render import Renderer
from memctl.recall.results import AGENT_TAG, Cite, Decision, Memory, RecallResult, resolve
from memctl.recall.standing import PROJECT_SECTIONS
from memctl.recall.words import content_terms, plain

if TYPE_CHECKING:
    from memctl.core.floor import Floor
    from memctl.core.notes import Note
    from memctl.index.search import Hit

# ---- context: the block for the start of a session ----------------------------------------

# (section title, store, share of the budget, notes to read, claims per note)
# The user's accepted instructions come first: they govern everything after them, and the
# block's header tells the model to follow them (and nothing else in the block).
_CONTEXT_PARTS: tuple[tuple[str, str, float, int, int], ...] = (
    ("instructions", "instructions", 0.15, 6, 10),
    ("project", "projects", 0.15, 1, 12),  # only the note of the session's working directory
    ("profile", "profile", 0.2, 1, 20),
    ("decisions", "decisions", 0.2, 8, 4),
    ("open threads", "sessions", 0.15, 10, 4),
    ("recent sessions", "sessions", 0.15, 6, 3),
    ("team knowledge", "knowledge", 0.15, 6, 8),
)
_OPEN_SECTIONS = ("open threads", "open items", "open questions", "next steps")
_SUMMARY_SECTIONS = ("summary", "goal", "progress", "outcome")


def context(
    vault: Floor,
    *,
    user: str | None = None,
    budget: int | None = None,
    fmt: str = "md",
    enabled: bool = True,
    now: datetime | None = None,
    project: str | None = None,
) -> RecallResult:
    """Accepted instructions, the project's note (`project`: the working directory),
    profile, active decisions, open threads, recent sessions and
    team knowledge, packed."""
    started = time.perf_counter()
    user, budget = resolve(vault, user, budget, fmt)
    if not enabled:
        return RecallResult(None, user, budget, fmt, "", [], 0, "", disabled=True, kind="context")
    r = Reader(vault, user, now)
    explain: list[Decision] = []
    per_part: list[tuple[str, float, list[Memory]]] = []
    for part, store, share, n_notes, per_note in _CONTEXT_PARTS:
        if store not in vault.config.stores:
            continue
        filters: dict[str, Any] = {"kind": "note", "store": store, "status": "active"}
        if part == "profile":
            filters["scope"] = [f"user:{user}"]
        elif part == "team knowledge":
            filters["scope"] = ["team", "global"]
        if part == "project":
            path = project_note(r, project)
            if path is None:
                continue
            hits = [h for h in r.search("", limit=200, **filters) if h.ref == path]
        else:
            hits = _context_hits(r, filters, n_notes)
        mems: list[Memory] = []
        for rank, h in enumerate(hits):
            note = r.note(h.ref)
            if note is None or not r.visible(note.scope) or note.status != "active":
                explain.append(
                    Decision(h.ref, "note", False, "unreadable, out of scope or inactive")
                )
                continue
            picked = 0
            claims = note.active_claims()
            if part == "project":  # how to build and test it first, as a prompt's standing does
                rank_of = {s: i for i, s in enumerate(PROJECT_SECTIONS)}
                claims.sort(key=lambda sc: rank_of.get(sc[0].name.casefold(), len(rank_of)))
            for section, c in claims:
                sec = section.name.casefold()
                if part == "open threads" and sec not in _OPEN_SECTIONS:
                    continue
                if part == "recent sessions" and sec not in _SUMMARY_SECTIONS:
                    continue
                if part == "instructions" and sec != "instructions":
                    continue
                if picked >= per_note:
                    break
                m = _claim_memory(r, note, h.ref, section.name, c, 1.0 / (rank + 1), part, explain)
                if m is not None:
                    mems.append(m)
                    picked += 1
        per_part.append((part, share, mems))

    renderer = Renderer(
        fmt, f"Memory for {user}: start of session", {"user": user, "kind": "context"}
    )
    packer = Packer(renderer, budget)
    # each part first gets its share, then what the others left over, in priority order
    leftovers: list[Memory] = []
    for part, share, mems in per_part:
        cap = packer.used + int(budget * share)
        for i, m in enumerate(mems):
            m = Memory(**{**m.__dict__, "title": f"{part}: {m.title}"})
            if packer.used + packer.cost(m) > cap:
                leftovers.extend(
                    Memory(**{**x.__dict__, "title": f"{part}: {x.title}"}) for x in mems[i:]
                )
                break
            packer.add(m)
            explain.append(Decision(m.ref, "claim", True, part, m.score, m.text))
    for m in leftovers:
        ok = packer.add(m) is not None
        explain.append(
            Decision(
                m.ref,
                "claim",
                ok,
                m.title or "" if ok else "over the token budget",
                m.score,
                m.text,
            )
        )
    return finish(packer, explain, r.notices, None, user, budget, fmt, started, "context")


def _context_hits(r: Reader, filters: dict[str, Any], n: int) -> list[Hit]:
    """The newest notes matching `filters` (the index orders an empty query by date)."""
    scope = filters.pop("scope", None)
    hits = r.search("", limit=max(n * 3, n), **filters)
    if scope is not None:
        hits = [h for h in hits if h.scope in scope]
    return hits[:n]


def _claim_memory(
    r: Reader,
    note: Note,
    path: str,
    section: str,
    c: Any,
    score: float,
    part: str,
    explain: list[Decision],
) -> Memory | None:
    text = plain(c.text)
    cites: list[Cite] = []
    for cit in note.citations(c):
        if cit.ref is None:
            continue
        scope = r.turn_scope(cit.ref)
        if scope is None or not r.visible(scope):
            explain.append(
                Decision(path, "claim", False, f"cites a turn outside {r.user}'s scope", 0, text)
            )
            return None
        cites.append(r.cite(cit.ref, cit.quote))
    dates = sorted(d for d in (ct.date for ct in cites) if d)
    basis = "human" if c.human else ("inferred" if c.inferred else "stated")
    if c.human and c.key in r.foreign(path):
        basis = "unverified"  # a line that cites nothing, added by someone else (git blame)
    elif unsupported(r, content_terms(text), tuple((ct.ref, ct.quote) for ct in cites),
                     c.inferred or c.observed, text):
        basis = "unverified"
    elif c.observed:
        basis = "observed"  # what the agent's tools show, never said by anyone
    if text.endswith(AGENT_TAG):
        if not c.refs:  # the agent's own line, if this clone's agent wrote it
            basis = "unverified" if c.key in r.foreign(path) else "agent"
        text = text[: -len(AGENT_TAG)].rstrip()
    if part == "instructions" and (basis := steering(r, path, c.text, basis)) is None:
        explain.append(Decision(path, "claim", False, "an instruction someone else added, not "
                                "accepted (`memctl sync --accept-config`)", 0, text))  # fmt: skip
        return None
    return Memory(
        kind="claim",
        text=text,
        basis=basis,
        ref=path,
        score=score,
        date=dates[-1] if dates else None,
        citations=tuple(cites),
        title=plain(note.title),
        store=note.store,
        scope=note.scope,
        section=section,
        why=part,
    )
