"""Merging two versions of a note claim by claim, for the git merge driver and `memctl sync`.

Two people curating the same vault in two clones both add claims to the same notes. A
note is a set of claims, so the merge is a set merge, three-way against the common base:

- a claim on either side is kept (union); the same claim on both sides (same key) is one
  claim citing every source either side cites (duplicates folded);
- a claim one side removed and the other left as it was stays removed;
- a claim one side moved to History (superseded, retracted) moves there;
- History entries of both sides are kept;
- a line that is no claim (a person's own words under the title or between claims) that
  either side added is kept, after the line it followed; one a side removed goes;
- the same claim changed two ways (both sides replaced one base claim, with different
  results) keeps ours in the note, and theirs becomes a proposal of the whole note for
  `memctl review`; the merge never writes conflict markers.

Footnotes are re-labelled through `Note.cite`, so both sides' citations survive even when
their labels collide.
"""

from __future__ import annotations

import copy
from typing import Any

from memctl.core.notes import HISTORY, Claim, Note, Section, parse_note, render_note
from memctl.errors import MemctlError


class NotANote(Exception):
    """One of the versions is not a memctl note: fall back to a text merge."""


Ident = tuple[str, str]  # (claim key, "" for active or the History kind)


def _ident(c: Claim) -> Ident:
    return (c.key, "" if c.lifetime is None else c.lifetime.kind)


def _claims(note: Note) -> dict[Ident, tuple[Section, Claim]]:
    out: dict[Ident, tuple[Section, Claim]] = {}
    for s, c in note.all_claims():
        out.setdefault(_ident(c), (s, c))
    return out


def _cites(note: Note, c: Claim) -> set[tuple[str | None, str]]:
    return {(x.ref, x.quote) for x in note.citations(c) if x.ref}


def _ordered(note: Note, c: Claim) -> list[tuple[str | None, str]]:
    return [(x.ref, x.quote) for x in note.citations(c) if x.ref]


def _parse(text: str, path: str) -> Note:
    if not text.strip():
        raise NotANote(path)
    try:
        note = parse_note(text, path)
    except MemctlError:
        raise NotANote(path) from None
    if "store" not in note.meta:
        raise NotANote(path)
    return note


def _relabel(dst: Note, src: Note, c: Claim) -> Claim:
    """`c` from `src`, with footnote labels valid in `dst` (footnotes copied over)."""
    labels = []
    for r in c.refs:
        cit = src.footnotes.get(r)
        if cit is None:
            labels.append(r)
        elif cit.ref is None:
            if r not in dst.footnotes:
                dst.footnotes[r] = cit
            labels.append(r)
        else:
            labels.append(dst.cite(cit.ref, cit.quote))
    return Claim(c.text, tuple(dict.fromkeys(labels)), c.inferred, c.lifetime, c.observed)


def _replace(note: Note, old: Claim, new: Claim | None) -> None:
    for s in note.sections:
        for i, it in enumerate(s.items):
            if it is old:
                if new is None:
                    del s.items[i]
                else:
                    s.items[i] = new
                return


def _merge_meta(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for key in ("updated", "valid_until"):
        if b.get(key) and str(b[key]) > str(out.get(key) or ""):
            out[key] = b[key]
    for key in ("derived_by", "aliases", "tags"):
        have = list(out.get(key) or [])
        for v in b.get(key) or []:
            if v not in have:
                have.append(v)
        if have:
            out[key] = have
    return out


def _replacements(o: Note, side: Note, ident: Ident, news: set[Ident]) -> list[Ident]:
    """Claims new on `side` that took the place of base claim `ident` (same section/sources)."""
    sec, old = _claims(o)[ident]
    old_refs = _cites(o, old)
    side_claims = _claims(side)
    out = []
    for k in sorted(news):
        s, c = side_claims[k]
        if c.lifetime is not None:
            continue
        if s.name.casefold() == sec.name.casefold() or _cites(side, c) & old_refs:
            out.append(k)
    return out


def _is_text(item: object) -> bool:
    return isinstance(item, str) and bool(item.strip())


def _same(a: object, b: object) -> bool:
    if isinstance(a, Claim) and isinstance(b, Claim):
        return a.key == b.key
    return a == b


def _merge_lines(base: list[Any], theirs: list[Any], into: list[Any]) -> None:
    """Three-way for the lines of one part of a note that are not claims, `into` holding
    ours: a line theirs added goes in after the line it follows there (so a rebase never
    merges a person's line away); a line theirs removed, that ours kept, goes."""
    for line in [i for i in base if _is_text(i) and i not in theirs]:
        if line in into:
            into.remove(line)
    for n, line in enumerate(theirs):
        if not _is_text(line) or line in base or line in into:
            continue
        at = 0
        for prev in reversed(theirs[:n]):
            if not (isinstance(prev, Claim) or _is_text(prev)):
                continue
            found = next((k for k, it in enumerate(into) if _same(it, prev)), None)
            if found is not None:
                at = found + 1
                break
        into.insert(at, line)


def merge_notes(base: str, ours: str, theirs: str, path: str) -> tuple[str, str | None]:
    """(merged note text, proposal text or None when nothing was changed two ways)."""
    a = _parse(ours, path)
    b = _parse(theirs, path)
    o = _parse(base, path) if base.strip() else Note(path, dict(a.meta), a.title)
    oc, ac, bc = _claims(o), _claims(a), _claims(b)
    result = copy.deepcopy(a)
    result.meta = _merge_meta(a.meta, b.meta)
    result.forget_citations()
    rc = _claims(result)
    order = [s.name for s in b.sections]

    a_new = {k for k in ac if k not in oc}
    b_new = {k for k in bc if k not in oc}
    conflicts: list[tuple[list[Ident], list[Ident]]] = []
    for k in oc:
        if k in ac or k in bc or k[1]:
            continue
        ra = _replacements(o, a, k, a_new)
        rb = _replacements(o, b, k, b_new)
        if ra and rb and {x[0] for x in ra} != {x[0] for x in rb}:
            conflicts.append((ra, rb))
    held = {x for _, rb in conflicts for x in rb}

    # theirs into ours
    for k, (sec, c) in bc.items():
        if k in held:
            continue
        if k in rc:
            _, mine = rc[k]
            ocs = _cites(o, oc[k][1]) if k in oc else set()
            acs, bcs = _cites(a, ac[k][1]), _cites(b, c)
            # both sides' sources, less any one side dropped (a forgotten session, say)
            want = (acs | bcs) - (ocs - acs) - (ocs - bcs)
            keep = [r for r in mine.refs if result.footnotes.get(r) is None
                    or result.footnotes[r].ref is None]  # fmt: skip
            ordered = [x for x in (*_ordered(a, ac[k][1]), *_ordered(b, c)) if x in want]
            labels = keep + [result.cite(ref, q) for ref, q in dict.fromkeys(ordered) if ref]
            refs = tuple(dict.fromkeys(labels))
            if refs != mine.refs:
                merged = Claim(mine.text, refs, mine.inferred and c.inferred, mine.lifetime,
                               mine.observed and c.observed)  # fmt: skip
                _replace(result, mine, merged)
                rc[k] = (rc[k][0], merged)
            continue
        if k in oc:
            continue  # ours removed it (or moved it to History): that stands
        new = _relabel(result, b, c)
        if c.lifetime is not None:
            target = result.ensure_section(HISTORY)
        else:
            target = result.ensure_section(sec.name, order)
        target.items.append(new)
        rc[k] = (target, new)

    # what theirs removed (or moved to History), ours left as it was, goes
    for k, (_sec, c) in list(_claims(result).items()):
        if k in oc and k not in bc and k in ac and _cites(a, ac[k][1]) == _cites(o, oc[k][1]):
            _replace(result, c, None)
    # the lines that are not claims (a person's own words: under the title, between claims)
    _merge_lines(o.preamble, b.preamble, result.preamble)
    for bs in b.sections:
        was = o.section(bs.name)
        base_items = was.items if was is not None else []
        if any(_is_text(i) and i not in base_items for i in bs.items):
            _merge_lines(base_items, bs.items, result.ensure_section(bs.name, order).items)
        elif (rs := result.section(bs.name)) is not None:
            _merge_lines(base_items, bs.items, rs.items)
    for s in list(result.sections):
        if not s.items and s.name in {x.name for x in o.sections} - {x.name for x in b.sections}:
            result.sections.remove(s)
    result.prune_footnotes()
    merged_text = render_note(result)
    if not conflicts:
        return merged_text, None

    prop = copy.deepcopy(result)
    prop.forget_citations()
    pc = _claims(prop)
    for ra, rb in conflicts:
        anchor: Section | None = None
        for k in ra:
            if k in pc:
                anchor = pc[k][0]
                _replace(prop, pc[k][1], None)
        for k in rb:
            sec, c = bc[k]
            target = anchor or prop.ensure_section(sec.name, order)
            target.items.append(_relabel(prop, b, c))
    prop.prune_footnotes()
    from memctl.curate.merge import proposal_path, text_digest

    prop.path = proposal_path(path)
    prop.meta["status"] = "proposed"
    prop.meta["proposal_of"] = path
    prop.meta["base"] = text_digest(merged_text)
    prop.meta["conflict"] = "the same claim was changed two ways; this is the other way"
    return merged_text, render_note(prop)
