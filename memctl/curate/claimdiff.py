"""Claim-level differences between two versions of one note: the classifier `memctl diff`
shows history with, and that curate counts its own changes with before it commits, so the
counts a command prints, its commit records and `memctl diff` shows are one count.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memctl.core.notes import Claim, Note, parse_note, strip_links
from memctl.errors import MemctlError

_HIST_ACTION = {
    "superseded": "superseded",
    "corrected": "superseded",
    "retracted": "retracted",
    "resolved": "resolved",
}


@dataclass(frozen=True)
class Source:
    ref: str
    quote: str


@dataclass(frozen=True)
class ClaimChange:
    """One claim-level change, who made it, and where it came from."""

    action: str
    section: str
    text: str
    sources: list[Source]
    author: str
    human: bool
    commit: str
    date: str
    detail: str = ""
    before: str | None = None
    basis: str = "source"  # source (cites turns) | agent (its own, #agent) | human

    @property
    def origin(self) -> str:
        """The line's provenance in words, for `memctl diff`."""
        if self.sources:
            return "from the turns quoted above"
        return "the agent's own note (#agent)" if self.basis == "agent" else "human-authored"

    @property
    def plain(self) -> str:
        return strip_links(self.text)


def read_note(text: str | None, path: str) -> Note | None:
    """A note's text parsed, or None: a version that is missing or does not parse."""
    if text is None:
        return None
    try:
        return parse_note(text, path)
    except MemctlError:
        return None


def _sources(note: Note, claim: Claim) -> list[Source]:
    return [Source(c.ref, c.quote) for c in note.citations(claim) if c.ref]


def claim_changes(
    old: Note | None, new: Note | None, author: str, human: bool, commit: str, date: str
) -> list[ClaimChange]:
    """Claim-level differences between two versions of one note."""

    def active(n: Note | None) -> dict[str, tuple[str, Claim]]:
        return {c.key: (s.name, c) for s, c in n.active_claims()} if n else {}

    def hist(n: Note | None) -> dict[str, Claim]:
        return {c.key: c for c in n.history_claims()} if n else {}

    o_act, n_act, o_hist, n_hist = active(old), active(new), hist(old), hist(new)
    proposed = new is not None and new.status == "proposed"
    out: list[ClaimChange] = []

    def mk(action: str, section: str, c: Claim, src: Note, **kw: Any) -> ClaimChange:
        return ClaimChange(
            action, section, c.text, _sources(src, c), author, human, commit, date,
            basis=c.basis, **kw
        )

    for key, c in n_hist.items():
        if key in o_hist or c.lifetime is None or new is None:
            continue
        action = _HIST_ACTION.get(c.lifetime.kind, "superseded")
        span = f"{c.lifetime.kind} {c.lifetime.since} → {c.lifetime.until}"
        out.append(mk(action, "History", c, new, detail=span))
    removed = [
        (sec, c) for key, (sec, c) in o_act.items() if key not in n_act and key not in n_hist
    ]
    for key, (sec, c) in n_act.items():
        assert new is not None
        if key in o_act:
            _, oc = o_act[key]
            if set(c.refs) - set(oc.refs):
                out.append(mk("reinforced", sec, c, new, detail="new source"))
            continue
        match = next(
            (r for r in removed if r[1].refs and set(r[1].refs) & set(c.refs)), None
        ) or next((r for r in removed if r[1].human and c.human and r[0] == sec), None)
        if match is not None:
            removed.remove(match)
            out.append(mk("edited", sec, c, new, before=match[1].text))
        else:
            out.append(mk("proposed" if proposed else "added", sec, c, new))
    for sec, c in removed:
        assert old is not None
        out.append(mk("removed", sec, c, old))
    return out


def count_changes(changes: dict[str, tuple[str | None, str | None]]) -> dict[str, int]:
    """Claim changes by action over {path: (old text, new text)}, classified exactly as
    `memctl diff` classifies a commit, so what a command prints and its commit records can
    never disagree with what `memctl diff` later shows for it."""
    out: dict[str, int] = {}
    for path, (old_t, new_t) in changes.items():
        if path.endswith("/INDEX.md") or not path.endswith(".md"):
            continue
        for c in claim_changes(read_note(old_t, path), read_note(new_t, path), "", False, "", ""):
            out[c.action] = out.get(c.action, 0) + 1
    return dict(sorted(out.items()))
