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

_REMOTE = re.compile(
    r"(?:git@|https?://|ssh://git@)(?P<host>[\w.-]+)[:/](?P<path>[\w.-]+/[\w.-]+?)(?:\.git)?(?=[\s)'\"]|$)",
    re.M,
)


def remote(s: Coding) -> str | None:
    """The session's git remote (host/owner/repo), when a command's output shows one."""
    for c in s.calls:
        if c.name == "Bash" and re.search(r"\bgit (?:remote|push|clone|fetch|pull)\b", c.command):
            m = _REMOTE.search(c.result or "") or _REMOTE.search(c.command)
            if m:
                return f"{m.group('host')}/{m.group('path')}"
    return None


# Claude Code puts an agent's git worktree inside the project: `<project>/.claude/worktrees/<id>`.
_WORKTREE = re.compile(r"/\.claude/worktrees/[^/]+/?$")


def project_dir(cwd: str) -> str:
    """The project a working directory belongs to (an agent's worktree is its project's)."""
    return _WORKTREE.sub("", cwd.rstrip("/")) or cwd


def project_name(s: Coding, batch: Batch) -> str:
    """The repository's name from its remote, else the working directory's last part."""
    r = remote(s)
    if r:
        return r.rsplit("/", 1)[-1]
    if s.cwd:
        where = project_dir(s.cwd)
        return Path(where).name or where
    return batch.header.title or "unknown project"


def normal_remote(url: str) -> str:
    """ "git@github.com:acme/app.git" and "https://github.com/acme/app" -> "github.com/acme/app"."""
    m = _REMOTE.search(url.strip())
    return f"{m.group('host')}/{m.group('path')}".lower() if m else url.strip().lower()


def find_project_note(
    root: Path,
    cwd: str | None = None,
    remote_url: str | None = None,
    home: Path | None = None,
) -> str | None:
    """The vault path of the project note for a working directory or git remote, if any.

    A remote decides first (clones in different places are one project); else the note whose
    recorded working directory is `cwd` or contains it (a prompt made in a subfolder).
    """
    from memctl.core.notes import parse_note
    from memctl.core.store import read_text
    from memctl.recall.project import covers

    folder = root / "projects"
    if not folder.is_dir():
        return None
    want = normal_remote(remote_url) if remote_url else None
    best: tuple[int, str] | None = None
    for f in sorted(folder.rglob("*.md")):
        rel = f.relative_to(root).as_posix()
        if f.name == "INDEX.md" or "proposals" in rel:
            continue
        try:
            note = parse_note(read_text(f), rel)
        except Exception:  # a hand-broken note is doctor's business, not a lookup's
            continue
        if want and note.meta.get("remote") and normal_remote(str(note.meta["remote"])) == want:
            return rel
        depth = covers(str(note.meta.get("cwd") or ""), cwd, root, home) if cwd else None
        if depth is not None and (best is None or depth > best[0]):
            best = (depth, rel)
    return best[1] if best else None
