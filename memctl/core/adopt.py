"""What `memctl init` adopts from a folder, what it leaves alone, and why.

A vault commits what it holds, and it is shared, so init is careful about a folder that
already has files in it: it adopts markdown notes (and, in a vault copied or unzipped
without its `.git`, everything memctl itself wrote), never walks into dependency or tool
folders, keeps secrets files out of git, and refuses a folder that is mostly something
else, by the share of its files, not by a fixed count. Each choice comes with its reason
in one line, for init to print.
"""

from __future__ import annotations

import contextlib
import fnmatch
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from memctl.errors import InputError

# Folders whose files belong to a tool: never walked, never adopted, listed with why.
TOOL_DIRS: dict[str, str] = {
    ".git": "a git repository's own data",
    ".hg": "a Mercurial repository's own data",
    ".svn": "a Subversion checkout's own data",
    ".bzr": "a Bazaar branch's own data",
    ".jj": "a Jujutsu repository's own data",
    ".obsidian": "Obsidian's settings for this folder",
    ".trash": "Obsidian's trash",
    "node_modules": "installed JavaScript dependencies",
    "bower_components": "installed JavaScript dependencies",
    ".venv": "a Python virtual environment",
    "venv": "a Python virtual environment",
    "__pycache__": "compiled Python",
    ".tox": "a tox environment",
    ".nox": "a nox environment",
    ".mypy_cache": "a tool's cache",
    ".pytest_cache": "a tool's cache",
    ".ruff_cache": "a tool's cache",
    ".cache": "a tool's cache",
    ".idea": "an editor's settings",
    ".vscode": "an editor's settings",
    ".DS_Store": "Finder's folder settings",
}
# What memctl itself keeps in a vault that git should hold (the rest of .memctl is ignored).
OWN_FILES = (".memctl/config.toml", ".gitignore", ".gitattributes")
OWN_DIRS = (".memctl/state",)
# Files that hold secrets: left alone, and git-ignored so no `git add -A` takes them.
SECRET_PATTERNS = (
    ".env", ".env.*", "*.pem", "*.key", "*.p12", "*.pfx", "id_rsa", "id_dsa", "id_ecdsa",
    "id_ed25519", ".netrc", ".npmrc", ".pypirc", "credentials", "credentials.json",
    "*.keystore", "secrets.*",
)  # fmt: skip
# Why a folder init left alone is also kept out of git, where the reason alone does not say.
_IGNORED_BECAUSE = {
    ".obsidian": "each person's own (delete these two lines to share them in the vault)",
    ".idea": "each person's own",
    ".vscode": "each person's own",
    ".DS_Store": "each person's own",
}
_NOT_SECRET = (".env.example", ".env.sample", ".env.template", "*.pub")
_SURVEY_LIMIT = 20_000  # stop walking: the folder is far past any share of notes anyway
FEW = 4  # up to this many other files never make a folder "mostly something else"


@dataclass
class Survey:
    """A folder as init sees it before it changes anything."""

    notes: list[str] = field(default_factory=list)  # markdown notes: adopted
    own: list[str] = field(default_factory=list)  # files memctl wrote (a vault without .git)
    others: list[str] = field(default_factory=list)  # left alone, listed
    secrets: list[str] = field(default_factory=list)  # left alone and git-ignored
    skipped: dict[str, str] = field(default_factory=dict)  # folder/ -> why it is not walked
    truncated: bool = False

    def mostly_other(self) -> bool:
        """More of the files here are something else than notes: a code project or a home
        folder, not a folder of notes. Tool folders do not count (an Obsidian vault has
        .obsidian/, a notes repository .git/); a handful of other files never does."""
        other = len(self.others) + len(self.secrets)
        return other > FEW and other > len(self.notes)


def is_secret(name: str) -> bool:
    if any(fnmatch.fnmatch(name, p) for p in _NOT_SECRET):
        return False
    return any(fnmatch.fnmatch(name, p) for p in SECRET_PATTERNS)


def survey(root: Path, *, own: bool = False) -> Survey:
    """Walk `root` once: notes, memctl's own files (`own`: a vault with no history yet),
    secrets, other files, and the tool folders not walked.

    A nested git repository is one entry of the skipped folders: its files belong to it.
    Notes in other dot-folders are left alone too, as every store walk skips them.
    """
    s = Survey()
    count = 0
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        rel_here = here.relative_to(root)
        keep = []
        for d in sorted(dirnames):
            rel = (rel_here / d).as_posix()
            if rel == ".memctl":
                if own:
                    s.own += _own_state(root)
                continue
            why = TOOL_DIRS.get(d)
            if why is None and (here / d / ".git").exists():
                why = "a git repository of its own"
            if why is not None:
                s.skipped[rel + "/"] = why
                continue
            keep.append(d)
        dirnames[:] = keep
        hidden = any(part.startswith(".") for part in rel_here.parts)
        for name in sorted(filenames):
            rel = (rel_here / name).as_posix()
            count += 1
            if rel in OWN_FILES:
                if own:
                    s.own.append(rel)
                continue  # init writes or merges these itself
            if name in TOOL_DIRS:
                s.skipped[rel] = TOOL_DIRS[name]
            elif is_secret(name):
                s.secrets.append(rel)
            elif name.endswith(".md") and not name.startswith(".") and not hidden:
                s.notes.append(rel)
            else:
                s.others.append(rel)
        if count > _SURVEY_LIMIT:
            s.truncated = True
            break
    s.notes.sort()
    s.others.sort()
    s.secrets.sort()
    s.own.sort()
    return s


def _own_state(root: Path) -> list[str]:
    out = [rel for rel in OWN_FILES if rel.startswith(".memctl/") and (root / rel).is_file()]
    for d in OWN_DIRS:
        for p in sorted((root / d).rglob("*")):
            if p.is_file() and not p.name.endswith(".tmp"):
                out.append(p.relative_to(root).as_posix())
    return out


def ignore_lines(secrets: list[str], gitignore: str) -> str:
    """The lines to add to .gitignore so git never takes these files (none already there)."""
    have = {line.strip() for line in gitignore.splitlines()}
    add = [f"/{rel}" for rel in secrets if f"/{rel}" not in have and rel not in have]
    if not add:
        return ""
    return "# memctl init: files that may hold secrets, left alone\n" + "\n".join(add) + "\n"


def left_alone_lines(root: Path, skipped: dict[str, str]) -> str:
    """Ignore rules for the tool folders init left alone, so `git status` is clean after
    init: each is rebuilt by its tool, per device, or versioned by a repository of its own,
    never a note. One comment line says why; rules git already applies are not repeated."""
    paths = [rel for rel in skipped if rel.rstrip("/").rsplit("/", 1)[-1] != ".git"]
    if not paths:
        return ""
    proc = subprocess.run(
        ["git", "-C", str(root), "check-ignore", "--", *paths],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    covered = set(proc.stdout.splitlines()) if proc.returncode in (0, 1) else set()
    out = ["# memctl init: tool folders it left alone; never notes"]
    for rel in paths:
        if rel in covered:
            continue
        why = skipped[rel]
        extra = _IGNORED_BECAUSE.get(rel.rstrip("/").rsplit("/", 1)[-1])
        out += [f"# {why}" + (f"; {extra}" if extra else ""), f"/{rel}"]
    return "\n".join(out) + "\n" if len(out) > 1 else ""


def has_commits(root: Path) -> bool:
    """Does the folder's git repository (if any) have a commit yet?"""
    if not (root / ".git").exists():
        return False
    r = subprocess.run(["git", "-C", str(root), "rev-parse", "--verify", "-q", "HEAD"],
                       capture_output=True, check=False)  # fmt: skip
    return r.returncode == 0


def refuse_takeover(root: Path, env: dict[str, str], found: Survey) -> None:
    """A home folder, the filesystem root or a folder mostly not of notes is no vault:
    init refuses it unless forced, because a vault commits what it holds."""
    home = env.get("HOME")
    if root == Path(root.anchor) or (home and root == Path(home).expanduser().resolve()):
        what = "the filesystem root" if root == Path(root.anchor) else "your home folder"
        raise InputError(
            f"refusing to make {what} a vault (it would hold everything below it); "
            "use a folder of its own, e.g. ~/memory, or pass --force",
            root,
        )
    if found.mostly_other():
        other = [*found.others, *found.secrets]
        k = f"{len(other)}{'+' if found.truncated else ''}"
        notes = len(found.notes)
        raise InputError(
            f"refusing to make a vault of a folder that is mostly not notes: {k} files that "
            f"are not notes, {notes} note{'s' * (notes != 1)} (e.g. {sorted(other)[0]}); use "
            "an empty folder or one of markdown notes, or pass --force (they are never "
            "committed)",
            root,
        )


class Created:
    """What init is about to create, so that a failure can take exactly that away again."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.root_new = not root.exists()
        self.git_new = not (root / ".git").exists()
        self.memctl_new = not (root / ".memctl").exists()
        self.before = {p.name for p in root.iterdir()} if root.is_dir() else set()

    def remove(self) -> None:
        import shutil

        if self.root_new:
            shutil.rmtree(self.root, ignore_errors=True)
            return
        if self.git_new:
            shutil.rmtree(self.root / ".git", ignore_errors=True)
        if self.memctl_new:
            shutil.rmtree(self.root / ".memctl", ignore_errors=True)
        for p in self.root.iterdir():
            if p.name not in self.before and p.is_dir():
                # store folders made for INDEX files the rollback already removed
                for sub in sorted(p.rglob("*"), key=lambda x: len(x.parts), reverse=True):
                    with contextlib.suppress(OSError):
                        sub.rmdir()
                with contextlib.suppress(OSError):
                    p.rmdir()


def first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "stderr", "") or exc).strip()
    for line in text.splitlines():
        line = line.strip().strip("'\"")
        if line and not line.startswith(("cmdline:", "stderr:", "stdout:")):
            return line
    return type(exc).__name__


