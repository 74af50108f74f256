"""`--project` and `--session` for search and diff: one project's memory out of one vault.

A user keeps one vault for every code base. Notes from work in a code base record the
project's id (memctl.recall.project); a raw session records the directory it was worked in.
These narrow what search and diff give to one project, or to what one session taught.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from memctl.recall.project import in_project, resolve_project

if TYPE_CHECKING:
    from memctl.core.floor import Floor
    from memctl.gitops.learned import DiffResult
    from memctl.index.search import SearchResult

WIDEN = 8  # hits asked for per hit wanted: the others are other projects'


def _places(vault: Floor) -> dict[str, str]:
    """raw path -> the working directory its session recorded (cached session headers)."""
    out: dict[str, str] = {}
    for rel, data in vault.catalog.headers():
        meta = data.get("source_meta")
        cwd = meta.get("cwd") if isinstance(meta, dict) else None
        if isinstance(cwd, str) and cwd:
            out[rel] = cwd
    return out


def project_hits(
    vault: Floor, project: str, run: Callable[[int], SearchResult], limit: int
) -> SearchResult:
    """The search's hits that are the project's: its notes and claims, its sessions' turns."""
    ids, _ = resolve_project(vault.root, project, vault.config.home)
    res = run(max(limit, 1) * WIDEN)
    places = _places(vault)
    kept = [
        h for h in res.hits
        if in_project(h.project, None, ids) or (
            h.kind == "turn" and in_project(None, places.get(h.ref.split("#", 1)[0]), ids))
    ]  # fmt: skip
    kept.sort(key=lambda h: -h.score)
    return dataclasses.replace(res, hits=kept[:limit])


def narrow_diff(
    vault: Floor, res: DiffResult, project: str | None, session: str | None
) -> DiffResult:
    """Only the changes of one project's notes, or the claims that cite one session."""
    from memctl.core.notes import parse_note
    from memctl.core.store import read_text

    raw: str | None = None
    if session:
        raw = vault.resolve_session(session)
    ids: set[str] = set()
    if project:
        ids, _ = resolve_project(vault.root, project, vault.config.home)
    places = _places(vault) if project else {}
    notes = []
    for n in res.notes:
        meta: dict[str, Any] = {}
        target = vault.root / n.path
        if project and target.is_file():
            try:
                meta = dict(parse_note(read_text(target), n.path).meta)
            except Exception:  # a hand-broken note: judged by its citations alone
                meta = {}
        ours = bool(ids) and in_project(
            str(meta.get("project") or meta.get("project_id") or "") or None, None, ids
        )
        changes = [
            c for c in n.changes
            if (raw is None or any(s.ref.split("#", 1)[0] == raw for s in c.sources))
            and (not project or ours or any(
                in_project(None, places.get(s.ref.split("#", 1)[0]), ids) for s in c.sources))
        ]  # fmt: skip
        if changes:
            notes.append(dataclasses.replace(n, changes=changes))
    return dataclasses.replace(res, notes=notes)
