"""Proposals: notes curated in `propose` mode wait in `<note>.proposed.md` for a human.

A proposal is the whole note as it would read once accepted (status `proposed`, plus
`proposal_of`, the note it becomes, and `base`, a digest of that note when the proposal was
made). Accepting writes it over the note (status `active`); rejecting deletes it. Either way
the proposal stays in git history, and the turns it came from are not curated again.
"""

from __future__ import annotations

import difflib
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from memctl.core.notes import note_id, parse_note, render_note
from memctl.core.provenance import RawTurns
from memctl.core.store import read_text, walk_markdown
from memctl.curate.merge import PROPOSED_SUFFIX, NoteSet, text_digest
from memctl.errors import ConflictError, InputError, MemctlError, PathEscapeError

if TYPE_CHECKING:
    from memctl.core.floor import Floor


@dataclass(frozen=True)
class PendingProposal:
    """One proposal: its id (the note it would become), files, and the diff accepting makes."""

    id: str
    store: str
    title: str
    path: str
    target: str
    new_note: bool
    stale: bool
    diff: str
    claims: int


@dataclass
class ReviewResult:
    """Proposals still pending, what this call accepted and rejected, and its commit."""

    pending: list[PendingProposal] = field(default_factory=list)
    accepted: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    commit: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "pending": [asdict(p) for p in self.pending],
            "accepted": self.accepted,
            "rejected": self.rejected,
            "commit": self.commit,
        }


def _accepted_text(text: str, path: str, target: str, today: str) -> str:
    note = parse_note(text, path)
    note.path = target
    note.meta["status"] = "active"
    note.meta.pop("proposal_of", None)
    note.meta.pop("base", None)
    note.meta["updated"] = today
    return render_note(note)


def _writable(vault: Floor) -> bool:
    import os

    return os.access(vault.root / ".memctl", os.W_OK)


def _target(vault: Floor, rel: str, text: str, named: object, folder: str) -> str:
    """The note a proposal becomes: `proposal_of`, which must be a note of the proposal's
    own store folder (not an INDEX.md, not another proposal) and pass the confinement rule.

    It comes from a file anyone can edit (or a merge can bring in), and listing reads it
    while accepting writes it, so `../../x`, `/etc/passwd` or `.memctl/config.toml` there
    would read or replace files memctl must never touch.
    """
    from memctl.core.store import inside

    target = str(named or rel[: -len(PROPOSED_SUFFIX)] + ".md")
    line = next(
        (i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith("proposal_of:")), None
    )
    why = None
    if not target.startswith(folder.rstrip("/") + "/") or not target.endswith(".md"):
        why = f"is not a note in {folder.rstrip('/')}/"
    elif target.endswith(PROPOSED_SUFFIX) or target.rsplit("/", 1)[-1] == "INDEX.md":
        why = "is not a note (a proposal or an INDEX.md)"
    else:
        try:
            inside(vault.root, target)
        except PathEscapeError as exc:
            why = f"is outside the vault ({exc.why})"
    if why is not None:
        raise InputError(f"proposal_of {target!r} {why}", rel, line)
    return target


def pending(vault: Floor, today: str | None = None) -> list[PendingProposal]:
    """Every proposal in the vault, in path order, with the diff accepting it would make."""
    today = today or datetime.now(UTC).date().isoformat()
    out = []
    folders = sorted({(s.folder, s.name) for s in vault.config.stores.values()})
    for folder, store in folders:
        for p in walk_markdown(vault.root, folder):
            if not p.name.endswith(PROPOSED_SUFFIX):
                continue
            rel = p.relative_to(vault.root).as_posix()
            text = read_text(p)
            try:
                note = parse_note(text, rel)
            except MemctlError:
                continue
            target = _target(vault, rel, text, note.meta.get("proposal_of"), folder)
            current = read_text(vault.root / target) if (vault.root / target).is_file() else None
            new_text = _accepted_text(text, rel, target, today)
            diff = "".join(
                difflib.unified_diff(
                    (current or "").splitlines(keepends=True),
                    new_text.splitlines(keepends=True),
                    f"a/{target}" if current is not None else "/dev/null",
                    f"b/{target}",
                )
            )
            base = str(note.meta.get("base") or "")
            out.append(
                PendingProposal(
                    id=note_id(target),
                    store=note.store or store,
                    title=note.title,
                    path=rel,
                    target=target,
                    new_note=current is None,
                    stale=bool(base) and base != text_digest(current),
                    diff=diff,
                    claims=sum(1 for _, c in note.active_claims() if not c.human),
                )
            )
    return out


def _pick(props: list[PendingProposal], ref: str) -> PendingProposal:
    ref = ref.removesuffix(".md").removesuffix(".proposed")
    exact = [p for p in props if ref in (p.id, note_id(p.path).removesuffix(".proposed"))]
    if exact:
        return exact[0]
    pref = [p for p in props if p.id.startswith(ref) or p.id.split("/", 1)[-1].startswith(ref)]
    if len(pref) == 1:
        return pref[0]
    if not pref:
        known = ", ".join(p.id for p in props) or "none pending"
        raise InputError(f"no proposal {ref!r} (pending: {known})")
    raise InputError(f"proposal {ref!r} is ambiguous: {', '.join(p.id for p in pref)}")


def review(
    vault: Floor,
    *,
    accept: list[str] | tuple[str, ...] = (),
    reject: list[str] | tuple[str, ...] = (),
    accept_all: bool = False,
    reject_all: bool = False,
    force: bool = False,
    today: str | None = None,
) -> ReviewResult:
    """List proposals, or accept/reject them in one commit by the human."""
    from memctl.curate.specs import load_specs, store_index

    today = today or datetime.now(UTC).date().isoformat()
    res = ReviewResult()
    if not (accept or reject or accept_all or reject_all) and not _writable(vault):
        res.pending = pending(vault, today)  # only listing: a read-only vault can be read
        return res
    with vault.lock:
        props = pending(vault, today)
        if accept_all and reject_all:
            raise InputError("--all and --reject-all contradict each other")
        to_accept = [_pick(props, a) for a in accept]
        to_reject = [_pick(props, r) for r in reject]
        # --all accepts every proposal not named with --reject (and --reject-all the reverse).
        if accept_all:
            to_accept = [p for p in props if p not in to_reject]
        if reject_all:
            to_reject = [p for p in props if p not in to_accept]
        both = {p.path for p in to_accept} & {p.path for p in to_reject}
        if both:
            raise InputError(f"cannot both accept and reject {', '.join(sorted(both))}")
        for p in to_accept:
            if p.stale and not force:
                raise ConflictError(
                    f"{p.target} changed after proposal {p.id} was made; edit {p.path} to "
                    "taste and accept with --force, or reject it"
                )
        if not to_accept and not to_reject:
            res.pending = props
            return res
        with vault.change("review") as ch:
            tx = ch.tx
            for p in to_accept:
                text = read_text(vault.root / p.path)
                tx.write(p.target, _accepted_text(text, p.path, p.target, today))
                tx.delete(p.path)
                res.accepted.append(p.id)
            for p in to_reject:
                tx.delete(p.path)
                res.rejected.append(p.id)
            specs = load_specs(vault)
            notes = NoteSet(
                vault.root,
                {n: s.config.folder for n, s in specs.items()},
                today,
                RawTurns(vault.root),
                "review",
            )
            for store in sorted({p.store for p in [*to_accept, *to_reject]}):
                if store in specs:
                    tx.write(
                        f"{specs[store].config.folder}/INDEX.md",
                        store_index(vault, specs[store], notes),
                    )
            na, nr = len(res.accepted), len(res.rejected)
            ch.subject = f"review: {na} accepted, {nr} rejected"
            ch.trailers["Memctl-Accepted"] = ", ".join(res.accepted) or "none"
            ch.trailers["Memctl-Rejected"] = ", ".join(res.rejected) or "none"
        res.commit = ch.commit
        done = {p.path for p in [*to_accept, *to_reject]}
        res.pending = [p for p in props if p.path not in done]
    return res
