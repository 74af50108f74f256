"""The project a prompt is made in: its note in the projects store is standing context there.

A coding agent runs in a working directory (Claude Code sends it as the hook's `cwd`). The
curator keeps one note per code base in the `projects` store, its frontmatter holding the
`cwd` it was worked in and, when a command showed it, the git `remote`. A prompt made in
that directory, a subfolder of it, an agent's worktree inside it (`.claude/worktrees/<id>`)
or another clone of the same remote gets that note's lines as standing context: how to run
the tests matters to any prompt in the project, whatever its words.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.core.raw import portable_dir

if TYPE_CHECKING:
    from memctl.index.search import Hit
    from memctl.recall.graph import Reader
    from memctl.recall.rank import ClaimCand

STORE = "projects"
REMOTE = re.compile(
    r"(?:git@|https?://|ssh://git@)(?P<host>[\w.-]+)[:/](?P<path>[\w.-]+/[\w.-]+?)(?:\.git)?"
    r"(?=[\s)'\"]|$)",
    re.M,
)
_WORKTREE = re.compile(r"/\.claude/worktrees/[^/]+/?$")
_URL_LINE = re.compile(r"^\s*url\s*=\s*(\S+)", re.M)


def normal_remote(url: str) -> str:
    """'git@github.com:acme/app.git' and 'https://github.com/acme/app' -> 'github.com/acme/app'."""
    m = REMOTE.search(url.strip())
    return f"{m.group('host')}/{m.group('path')}".lower() if m else url.strip().lower()


def project_dir(cwd: str) -> str:
    """The project a working directory belongs to (an agent's worktree is its project's)."""
    return _WORKTREE.sub("", cwd.rstrip("/")) or cwd


def git_remote(cwd: str) -> str | None:
    """The first remote URL of the git repository `cwd` is in, read from its config file
    (no git process: the hook runs on every prompt)."""
    here = Path(cwd)
    for d in (here, *here.parents):
        dot = d / ".git"
        try:
            if dot.is_file():  # a worktree or submodule: "gitdir: <path>"
                text = dot.read_text(encoding="utf-8", errors="replace")
                git = Path(text.partition("gitdir:")[2].strip())
                git = git if git.is_absolute() else d / git
                common = git / "commondir"
                if common.is_file():
                    git = (git / common.read_text(encoding="utf-8").strip()).resolve()
            elif dot.is_dir():
                git = dot
            else:
                continue
            m = _URL_LINE.search((git / "config").read_text(encoding="utf-8", errors="replace"))
        except OSError:
            return None
        return m.group(1) if m else None
    return None


# The project note for a place does not depend on the prompt: a process asks the index
# again only when it has moved (memctl.index.reader.view), as for the newest standing lines.
_NOTE_FOR: dict[tuple[object, ...], str | None] = {}


def project_note(r: Reader, cwd: str | None, remote: str | None = None) -> str | None:
    """The path of the active project note for a working directory (whose repository's
    remote is `remote`), or None (see `choose`)."""
    if not cwd or STORE not in r.vault.config.stores:
        return None
    from memctl.index import reader

    key: tuple[object, ...] | None = None
    view = reader.view(r.vault) if r.synced else None  # in step with the files: else ask
    if view is not None:
        key = (view, str(r.vault.root), tuple(sorted(r.scopes)), cwd, remote)
        if key in _NOTE_FOR:
            return _NOTE_FOR[key]
    found = []
    for h in r.search("", kind="note", store=STORE, status="active", limit=200):
        note = r.note(h.ref)
        if note is not None and r.visible(note.scope):
            found.append((h.ref, note.meta))
    path = choose(found, cwd, remote, r.vault.root, r.vault.config.home)
    if key is not None and reader.view(r.vault) == view:  # nobody committed meanwhile
        if len(_NOTE_FOR) >= 64:
            _NOTE_FOR.clear()
        _NOTE_FOR[key] = path
    return path


def choose(
    notes: Iterable[tuple[str, Mapping[str, Any]]],
    cwd: str | None,
    remote: str | None,
    root: Path,
    home: Path | None,
) -> str | None:
    """Which of the active project notes (path, frontmatter) is the one for `cwd` / `remote`.

    A remote decides first (clones in different places are one project); else the note whose
    recorded working directory is `cwd`'s project or contains it, the deepest such. The one
    rule for recall's standing context and for any other caller that has the notes at hand.
    """
    want = normal_remote(remote) if remote else None
    here = project_dir(cwd) if cwd else None
    best: tuple[int, str] | None = None
    for ref, meta in notes:
        theirs = normal_remote(str(meta["remote"])) if meta.get("remote") else None
        if want and theirs == want:
            return ref
        if want and theirs:
            continue  # two remotes: two code bases, wherever their folders are
        recorded = str(meta.get("cwd") or "")
        if "/" not in recorded.strip("/") and (want or theirs):
            # a folder's name alone ("claude-code-log", recorded outside any home folder)
            # is no proof; with a remote on one side only, another repository of that name
            continue
        depth = covers(recorded, here, root, home) if here else None
        if depth is not None and (best is None or depth > best[0]):
            best = (depth, ref)
    return best[1] if best else None


def covers(where: str, cwd: str, root: Path, home: Path | None) -> int | None:
    """How closely a project note recorded at `where` holds the working directory `cwd` (the
    longer, the closer), or None when it does not.

    Notes record the directory as raw headers do (memctl.core.raw.portable_path): `~/...`
    under the home folder, else the folder's name alone; `cwd` is this machine's path.
    """
    where = where.rstrip("/")
    if not where:
        return None
    here = project_dir(cwd)
    if "/" not in where:  # a folder's name alone: the project's, or one of its parents'
        return len(where) if where in Path(here).parts else None
    shared = project_dir(portable_dir(here, home))  # as notes record it
    for path in (here, shared):
        if path == where or path.startswith(where + "/"):
            return len(where)
    return None


# ---- a note's project: which code base a derived note came from ----------------------------


def project_id(remote: str | None, where: str | None) -> str | None:
    """A project's stable id, made once from how it was first known (its remote, else its
    working directory as notes record it) and then kept in its note's frontmatter
    (`project_id`), so a renamed folder or note keeps it: every derived note from work in
    the code base carries it as `project`."""
    import hashlib

    key = f"remote:{normal_remote(remote)}" if remote else (f"cwd:{where}" if where else "")
    return hashlib.sha1(key.encode("utf-8")).hexdigest()[:12] if key else None


class Here:
    """The project a session or prompt is made in: its note, id, name and directory.

    A note that records another project is off-project here; a note of no project is the
    person's or the team's, and stands everywhere.
    """

    def __init__(self, note: str | None, meta: Mapping[str, Any], cwd: str | None,
                 remote: str | None, home: Path | None) -> None:  # fmt: skip
        where = project_dir(portable_dir(project_dir(cwd), home)) if cwd else None
        self.note = note
        self.cwd = cwd
        self.id = str(meta.get("project_id") or "") or project_id(
            str(meta.get("remote") or "") or remote, str(meta.get("cwd") or "") or where
        )
        mine = (project_id(remote, None), project_id(None, where),
                project_id(None, str(meta.get("cwd") or "") or None))  # fmt: skip
        self.ids = {i for i in (self.id, *mine) if i}
        name = str(meta.get("cwd") or where or "").rstrip("/").rsplit("/", 1)[-1]
        self.name = name or None

    def owns(self, project: str | None) -> bool | None:
        """True: a note of this project; False: another project's; None: no project's."""
        if not project:
            return None
        return project in self.ids


def here(r: Reader, cwd: str | None) -> Here:
    """Where a prompt is made: the project note for `cwd`, and the project's id."""
    remote = git_remote(cwd) if cwd else None
    path = project_note(r, cwd, remote)
    note = r.note(path) if path else None
    return Here(path, note.meta if note is not None else {}, cwd, remote, r.vault.config.home)


def names(text: str, name: str | None) -> bool:
    """Does a prompt name a project (its folder or repository name, as a word)?"""
    if not name:
        return False
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text, re.I) is not None


class Where:
    """Which lines belong where the prompt is made: not the session in progress (the agent
    has its turns), not another project's notes or sessions unless the prompt names it."""

    def __init__(self, r: Reader, cwd: str | None, session: str | None, query: str) -> None:
        self.r = r
        self.cwd = cwd
        self.query = query
        digest = hashlib.sha1(session.encode("utf-8")).hexdigest() if session else ""
        # a raw file is named by its session id's sha1 (6 digits in vaults from before)
        self.live = (f"-{digest}.md", f"-{digest[:6]}.md") if digest else ()
        # each session's verdict: a recall weighs many turns of each session it meets
        self._sessions: dict[str, str | None] = {}

    @functools.cached_property
    def at(self) -> Here | None:
        # first asked once the recall's first search has brought the index in step, so
        # the project note found for this place can be the one the last prompt found
        return here(self.r, self.cwd) if self.cwd else None

    @property
    def note(self) -> str | None:
        return self.at.note if self.at is not None else None

    def _away(self, pid: str | None, place: str | None) -> bool:
        if self.at is None or self.at.owns(pid) is not False:
            return False
        name = (place or "").rstrip("/").rsplit("/", 1)[-1]
        return not names(self.query, name)

    def keeps_hit(self, h: Hit) -> bool:
        """A standing line from the index: not another project's."""
        if h.store == "projects":
            return True  # standing picks this project's note already
        return not self._away(h.project, None)

    def claim_elsewhere(self, c: ClaimCand) -> str | None:
        meta = c.note.meta
        pid = str(meta.get("project") or meta.get("project_id") or "") or None
        if self._away(pid, str(meta.get("cwd") or "") or None):
            return "another project's note, and the prompt does not name that project"
        if self.live and c.refs and all(ref.split("#", 1)[0].endswith(self.live)
                                        for ref, _ in c.refs):  # fmt: skip
            return "learned only from the session in progress"
        return None

    def turn_elsewhere(self, ref: str) -> str | None:
        """Why a turn is not to be shown where the prompt is made, or None. The same for
        every turn of a session: its place is the session's."""
        path = ref.split("#", 1)[0]
        if path not in self._sessions:
            self._sessions[path] = self._session_elsewhere(ref, path)
        return self._sessions[path]

    def _session_elsewhere(self, ref: str, path: str) -> str | None:
        if self.live and path.endswith(self.live):
            return "the session in progress: the agent has its turns"
        if self.at is None:
            return None
        place = self.r.session_place(ref)
        if not place:
            return None  # a chat of no code base: the person's, anywhere
        pid = project_id(None, project_dir(place))
        if pid in self.at.ids or place.rstrip("/").rsplit("/", 1)[-1] == self.at.name:
            return None
        if self._away(pid, place):
            return "another project's session, and the prompt does not name that project"
        return None



# ---- --project: a project named by its folder, note or id ---------------------------------


def project_notes(root: Path, folder: str = STORE) -> list[tuple[str, dict[str, Any]]]:
    """(vault path, frontmatter) of every active project note, read from the files (no index
    needed); hand-broken notes are doctor's business and left out."""
    from memctl.core.notes import parse_note
    from memctl.core.store import read_text

    base = root / folder
    if not base.is_dir():
        return []
    out = []
    for f in sorted(base.rglob("*.md")):
        rel = f.relative_to(root).as_posix()
        if f.name == "INDEX.md" or "proposals" in rel:
            continue
        try:
            note = parse_note(read_text(f), rel)
        except Exception:  # any unreadable note is simply not a candidate
            continue
        if note.status == "active":
            out.append((rel, {**note.meta, "title": note.title}))
    return out


def resolve_project(root: Path, value: str, home: Path | None) -> tuple[set[str], str]:
    """The ids notes of a project carry and a working directory of it, for `--project`:
    a directory (the project it is in), or a project note's name, path or id."""
    from memctl.errors import InputError

    notes = project_notes(root)
    d = Path(value).expanduser()
    if value.startswith(("/", "~", ".")) or d.is_dir():
        cwd = str(d.resolve()) if d.is_dir() else str(d)
        ref = choose(notes, cwd, git_remote(cwd), root, home)
        meta = next((m for r, m in notes if r == ref), {})
        return Here(ref, meta, cwd, git_remote(cwd), home).ids, cwd
    want = value.strip().removesuffix(".md").casefold()
    for ref, meta in notes:
        keys = {Path(ref).stem.casefold(), ref.removesuffix(".md").casefold(),
                str(meta.get("title") or "").casefold(), str(meta.get("project_id") or ""),
                str(meta.get("cwd") or "").rstrip("/").rsplit("/", 1)[-1].casefold()}  # fmt: skip
        if want in keys or f"project: {want}" in keys:
            where = str(meta.get("cwd") or "")
            return Here(ref, meta, None, None, home).ids, where
    known = ", ".join(Path(r).stem for r, _ in notes)
    hint = f"one of: {known}" if known else "this vault has no project notes yet"
    raise InputError(f"no project {value!r}: give a directory, or a project's name ({hint})")


def in_project(project: str | None, place: str | None, ids: set[str]) -> bool:
    """Is a note (its recorded project id) or a session (its working directory) the
    project's? A note of no project and a session of no directory are not."""
    if project:
        return project in ids
    return bool(place) and project_id(None, project_dir(str(place))) in ids
