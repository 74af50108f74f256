"""Which code base a session works in, and finding that project's note again.

A coding agent records the working directory of every line (Claude Code's `cwd`); the git
remote shows when a command prints it (`git remote -v`, a push). The project's name is the
remote's repository name when known, else the working directory's last part. Its note in the
`projects` store keeps both in its frontmatter, so recall can find the note for a prompt made
in that directory or clone (`find_project_note`).
"""

from __future__ import annotations

import re
from pathlib import Path

from memctl.core.raw import slugify
from memctl.curate import Batch
from memctl.curate.builtin.coding.structure import Coding
from memctl.recall.project import REMOTE, choose, normal_remote, project_dir, project_id

__all__ = [
    "find_project_note",
    "identity",
    "normal_remote",
    "own_note",
    "project_dir",
    "project_name",
    "project_note",
    "remote",
]


def remote(s: Coding) -> str | None:
    """The session's git remote (host/owner/repo), when a command's output shows one."""
    for c in s.calls:
        if c.name == "Bash" and re.search(r"\bgit (?:remote|push|clone|fetch|pull)\b", c.command):
            m = REMOTE.search(c.result or "") or REMOTE.search(c.command)
            if m:
                return f"{m.group('host')}/{m.group('path')}"
    return None


def project_name(s: Coding, batch: Batch) -> str | None:
    """The repository's name from its remote, else the working directory's last part."""
    r = remote(s)
    if r:
        return r.rsplit("/", 1)[-1]
    if s.cwd:
        where = project_dir(s.cwd)
        return Path(where).name or where
    return None  # no folder and no remote: a session's first words are no project's name


def project_note(s: Coding, batch: Batch, name: str) -> tuple[str, str, str]:
    """The (name, note title, slug) of the session's project note.

    The note already kept for this code base (same remote, or the working directory it
    records holds the session's) is the one, whatever its title. Otherwise a new note takes
    the project's name, unless a note of that title is another code base's (two folders
    called `ledger`, told apart by where they are or their remotes): then the new one is
    named with its folder too, so their facts never mix.
    """
    title = _title(batch, name)
    context = batch.context
    if context is None:
        return name, title, slugify(name)
    notes = context.notes("projects")
    where = project_dir(s.place) if s.place else None
    url = remote(s)
    ours = choose([(n.path, n.meta) for n in notes], where, url, Path("/"), None)
    for n in notes:
        if n.path == ours:
            return name, n.title, Path(n.path).stem
    same = [n for n in notes if n.title == title]
    if not same or not any(n.meta.get("cwd") or n.meta.get("remote") for n in same):
        return name, title, slugify(name)  # a new name, or a note that says nowhere
    place = (where or url or "").removeprefix("~/").strip("/")
    if not place or "/" not in place:
        return name, title, slugify(name)  # nothing to tell it apart by
    named = f"{name} ({place})"
    return named, _title(batch, named), slugify(place.replace("/", "-"))


def identity(s: Coding, batch: Batch, slug: str) -> dict[str, str]:
    """The project identity a note from this session records in its frontmatter: `cwd`
    (portable), `remote` when known, and `project`, the stable id the project's note keeps
    as `project_id` (made from how the project was first known, kept through renames)."""
    where = project_dir(s.place) if s.place else None
    url = remote(s)
    known = None
    if batch.context is not None:
        known = next((n for n in batch.context.notes("projects") if Path(n.path).stem == slug),
                     None)  # fmt: skip
    pid = str(known.meta.get("project_id") or "") if known is not None else ""
    if not pid and known is not None:  # a note from before ids: made from what it records
        pid = project_id(known.meta.get("remote"), known.meta.get("cwd")) or ""
    pid = pid or project_id(url, where) or ""
    return {k: v for k, v in (("project", pid), ("cwd", where), ("remote", url)) if v}


def own_note(
    batch: Batch, store: str, ident: dict[str, str], note: str, slug: str, project: str
) -> tuple[str, str]:
    """The (title, slug) for a decision of this project: "Postgres" decided in two code
    bases is two notes, each recording its project, never one note that mixes them."""
    pid = ident.get("project")
    if not pid or batch.context is None:
        return note, slug
    for n in batch.context.notes(store):
        theirs = n.meta.get("project")
        if n.title.casefold() == note.casefold() and theirs and theirs != pid:
            return f"{note} ({project})", slugify(f"{slug}-{project}", 60)
    return note, slug


def _title(batch: Batch, value: str) -> str:
    spec = batch.stores.get("projects")
    try:
        return spec.title.format(topic=value, name=value) if spec else value
    except (KeyError, IndexError, ValueError):
        return value


def find_project_note(
    root: Path,
    cwd: str | None = None,
    remote_url: str | None = None,
    home: Path | None = None,
) -> str | None:
    """The vault path of the active project note for a working directory or git remote.

    Read from the files (no index needed), decided by recall's rule (`recall.project.choose`):
    a remote first, else the note whose recorded working directory holds `cwd`.
    """
    from memctl.recall.project import project_notes

    return choose(project_notes(root), cwd, remote_url, root, home)
