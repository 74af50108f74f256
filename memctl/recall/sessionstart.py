"""The block for the start of a session: instructions, profile, decisions, open threads,
knowledge."""

from __future__ import annotations

import time
from datetime import datetime
from typing import TYPE_CHECKING, Any

from memctl.recall.graph import Reader
from memctl.recall.pack import Packer, finish
from memctl.recall.project import here
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

# (section title, store, share of the budget, notes to read, claims per note, whose notes)
# In the order an agent starting work in a code base needs them: this project's note,
# decisions and sessions; then the person's profile and accepted instructions (the block's
# header tells the model to follow those, and nothing else in it); then what is no
# project's: their own decisions and chats, and the team's knowledge. Whose: "here" is the
# note of the session's working directory, "project" notes that record this project,
# "none" notes of no project, "any" every note; another project's notes never come.
_CONTEXT_PARTS: tuple[tuple[str, str, float, int, int, str], ...] = (
    ("project", "projects", 0.15, 1, 12, "here"),
    ("project decisions", "decisions", 0.15, 8, 4, "project"),
    ("project sessions", "sessions", 0.15, 6, 4, "project"),
    ("open threads", "sessions", 0.1, 10, 4, "project"),
    ("instructions", "instructions", 0.15, 6, 10, "any"),
    ("profile", "profile", 0.15, 1, 20, "any"),
    ("decisions", "decisions", 0.1, 8, 4, "none"),
    ("open threads", "sessions", 0.1, 10, 4, "none"),
    ("recent sessions", "sessions", 0.1, 6, 3, "none"),
    ("team knowledge", "knowledge", 0.1, 6, 8, "any"),
)
_OPEN_SECTIONS = ("open threads", "open items", "open questions", "next steps")
_SUMMARY_SECTIONS = ("summary", "goal", "progress", "outcome", "outcomes")


def context(
    vault: Floor,
    *,
    user: str | None = None,
    budget: int | None = None,
    fmt: str = "md",
    enabled: bool = True,
    now: datetime | None = None,
    project: str | None = None,
    user_from: str | None = None,
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
    at = here(r, project) if project else None
    for part, store, share, n_notes, per_note, whose in _CONTEXT_PARTS:
        if store not in vault.config.stores or (at is None and whose in ("here", "project")):
            continue
        if at is None and whose == "none":
            whose = "any"  # no working directory: no project to keep to, as before
        filters: dict[str, Any] = {"kind": "note", "store": store, "status": "active"}
        if part == "profile":
            filters["scope"] = [f"user:{user}"]
        elif part == "team knowledge":
            filters["scope"] = ["team", "global"]
        if whose == "here":
            path = at.note if at is not None else None
            if path is None:
                continue
            hits = [h for h in r.search("", limit=200, **filters) if h.ref == path]
        else:
            hits = _context_hits(r, filters, n_notes * (4 if whose != "any" else 1))
        mems: list[Memory] = []
        rank = -1
        for h in hits:
            note = r.note(h.ref)
            if note is None or not r.visible(note.scope) or note.status != "active":
                explain.append(
                    Decision(h.ref, "note", False, "unreadable, out of scope or inactive")
                )
                continue
            if at is not None and whose in ("project", "none", "any"):
                owns = at.owns(str(note.meta.get("project") or "") or None)
                if owns is False:
                    explain.append(Decision(h.ref, "note", False, "another project's"))
                    continue
                if (whose == "project") != bool(owns):
                    continue  # in this project's part, or in the part for no project
            rank += 1
            if rank >= n_notes:
                break
            picked = 0
            claims = note.active_claims()
            if whose == "here":  # how to build and test it first, as a prompt's standing does
                rank_of = {s: i for i, s in enumerate(PROJECT_SECTIONS)}
                claims.sort(key=lambda sc: rank_of.get(sc[0].name.casefold(), len(rank_of)))
            for section, c in claims:
                sec = section.name.casefold()
                if part == "open threads" and sec not in _OPEN_SECTIONS:
                    continue
                if part.endswith("sessions") and sec not in _SUMMARY_SECTIONS:
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

    head = f"Memory for {user}: start of session"
    if user_from:  # the hook was told no user: say whose memory this is taken to be
        head += f" (user {user}, from {user_from})"
    renderer = Renderer(fmt, head, {"user": user, "kind": "context"})
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
