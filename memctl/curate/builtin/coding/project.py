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

from memctl.curate import Batch
from memctl.curate.builtin.coding.structure import Coding
from memctl.recall.project import REMOTE, choose, normal_remote, project_dir

__all__ = ["find_project_note", "normal_remote", "project_dir", "project_name", "remote"]


def remote(s: Coding) -> str | None:
    """The session's git remote (host/owner/repo), when a command's output shows one."""
    for c in s.calls:
        if c.name == "Bash" and re.search(r"\bgit (?:remote|push|clone|fetch|pull)\b", c.command):
            m = REMOTE.search(c.result or "") or REMOTE.search(c.command)
            if m:
                return f"{m.group('host')}/{m.group('path')}"
    return None


def project_name(s: Coding, batch: Batch) -> str:
    """The repository's name from its remote, else the working directory's last part."""
    r = remote(s)
    if r:
        return r.rsplit("/", 1)[-1]
    if s.cwd:
        where = project_dir(s.cwd)
        return Path(where).name or where
    return batch.header.title or "unknown project"


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
    from memctl.core.notes import parse_note
    from memctl.core.store import read_text

    folder = root / "projects"
    if not folder.is_dir():
        return None
    found = []
    for f in sorted(folder.rglob("*.md")):
        rel = f.relative_to(root).as_posix()
        if f.name == "INDEX.md" or "proposals" in rel:
            continue
        try:
            note = parse_note(read_text(f), rel)
        except Exception:  # a hand-broken note is doctor's business, not a lookup's
            continue
        if note.status == "active":
            found.append((rel, note.meta))
    return choose(found, cwd, remote_url, root, home)
