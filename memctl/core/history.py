"""The only gitpython user: one commit per command, readable log, and diffs for review.

memctl never relies on the user's global git identity: every commit names its author
explicitly, the agent (derived learning) and the human (ingest, edits, reviews) apart.
"""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import tempfile
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from memctl.core.diskspace import NO_SPACE
from memctl.errors import MemctlError

if TYPE_CHECKING:
    import git


@dataclass(frozen=True)
class Identity:
    """Who a commit is by; kept distinct for the agent and the human."""

    name: str
    email: str


@dataclass(frozen=True)
class Commit:
    """One memory commit as `memctl log` shows it."""

    sha: str
    author: str
    email: str
    date: str
    subject: str
    body: str
    trailers: dict[str, str]


def parse_trailers(body: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in body.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key and "-" in key and " " not in key:
            out[key] = value.strip()
    return out


def _message(subject: str, trailers: dict[str, str], body: str) -> str:
    """The commit message, secrets masked: subjects quote claims and titles, and a commit
    message can never be taken back once pushed. Masked whatever `redact` says for
    transcripts; trailers stay one line each."""
    from memctl.core.redact import redact

    message = subject + "\n\n" + (body.rstrip() + "\n\n" if body.strip() else "")
    message += "".join(f"{k}: {' '.join(str(v).split())}\n" for k, v in trailers.items())
    return redact(message)[0]


class History:
    """A vault's git repository."""

    def __init__(self, root: Path) -> None:
        # gitpython takes ~0.1 s of CPU to import, most of what a short command costs: the
        # commands run git themselves (`_git`), and `repo` loads it for the few who need it
        self.root = root
        if not (root / ".git").exists():
            raise MemctlError(
                "not a git repository; run `memctl init` here to adopt this folder", root
            )

    @functools.cached_property
    def repo(self) -> git.Repo:
        """The gitpython repository, loaded on first use."""
        import git

        try:
            return git.Repo(self.root)
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            raise MemctlError(
                "not a git repository; run `memctl init` here to adopt this folder", self.root
            ) from None

    @classmethod
    def init(cls, root: Path) -> History:
        """Create a repository on branch main (idempotent: an existing repo is kept)."""
        if not (root / ".git").exists():
            root.mkdir(parents=True, exist_ok=True)
            proc = subprocess.run(
                ["git", "init", "-q", "--initial-branch=main", str(root)],
                stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False,
            )  # fmt: skip
            if proc.returncode != 0:
                raise git_error(GitFailed(("init",), proc.returncode, proc.stderr), "init")
        return cls(root)

    def _env(self, author: Identity, committer: Identity) -> dict[str, str]:
        return {
            "GIT_AUTHOR_NAME": author.name,
            "GIT_AUTHOR_EMAIL": author.email,
            "GIT_COMMITTER_NAME": committer.name,
            "GIT_COMMITTER_EMAIL": committer.email,
        }

    def git_dir(self) -> Path:
        from memctl.core.localstate import git_dir

        return git_dir(self.root)

    def check_writable(self) -> None:
        """Refuse to commit where the commit would be lost or tangled with the user's git work.

        On a detached HEAD a commit belongs to no branch and vanishes at the next checkout;
        during a merge, rebase, cherry-pick or revert it would become part of that operation.
        """
        gd = self.git_dir()
        if (gd / "rebase-merge").exists() or (gd / "rebase-apply").exists():
            raise MemctlError(
                "a rebase is in progress in the vault; finish it (`git rebase --continue`) or "
                "abort it (`git rebase --abort`) first", exit_code=3
            )
        for head, what, verb in (
            ("MERGE_HEAD", "merge", "merge"),
            ("CHERRY_PICK_HEAD", "cherry-pick", "cherry-pick"),
            ("REVERT_HEAD", "revert", "revert"),
        ):
            if (gd / head).exists():
                raise MemctlError(
                    f"a {what} is in progress in the vault; commit it or abort it "
                    f"(`git {verb} --abort`) first", exit_code=3
                )
        try:  # HEAD names a branch (`ref: refs/heads/...`) unless it is detached
            head = (gd / "HEAD").read_text(encoding="utf-8", errors="replace")
            detached = not head.startswith("ref:")
        except OSError:
            detached = False
        if detached:
            at = self._git("rev-parse", "--short", "HEAD").strip() or "?"
            raise MemctlError(
                f"HEAD is detached (at {at}): a commit here would belong to no branch; "
                "`git switch main` (or `git switch -c NAME`) first", exit_code=3
            )
        unmerged = self._git("ls-files", "-u", "-z").split("\0")
        names = sorted({u.split("\t", 1)[1] for u in unmerged if "\t" in u})
        if names:
            raise MemctlError(
                f"unresolved merge conflict in {', '.join(names[:3])}; resolve it and commit first",
                exit_code=3,
            )

    def dirty_indexes(self) -> set[str]:
        """The tracked INDEX.md files that differ from HEAD (hand edits not committed yet),
        found in one `git status` for all of them; the caller knows HEAD names a commit."""
        out = self._git("status", "--porcelain", "-z", "--untracked-files=no", "--",
                        "INDEX.md", ":(glob)**/INDEX.md")  # fmt: skip
        dirty: set[str] = set()
        entries = iter(out.split("\0"))
        for entry in entries:
            if len(entry) < 4:
                continue
            dirty.add(entry[3:])
            if "R" in entry[:2] or "C" in entry[:2]:
                next(entries, None)  # a rename's or copy's source path follows
        return dirty

    def _git(self, *args: str) -> str:
        try:
            return self._run(*args)
        except GitFailed as exc:
            raise git_error(exc) from None

    def read(self, *args: str, whole: bool = False) -> str:
        """The output of a git command that only reads, e.g. `read("rev-list", "HEAD")`; a
        failure is git's own line as a MemctlError. `whole` keeps the last newline, for a
        file's text (`read("show", f"{rev}:{path}", whole=True)`)."""
        try:
            return self._run(*args, strip=not whole)
        except GitFailed as exc:
            raise git_error(exc) from None

    def _run(self, *args: str, env: dict[str, str] | None = None, strip: bool = True) -> str:
        """git in the vault, as gitpython ran it (C locale, no stdin, one trailing newline
        taken off unless not `strip`); GitFailed, carrying git's stderr, when it exits
        non-zero."""
        full = {**os.environ, "LANGUAGE": "C", "LC_ALL": "C", **(env or {})}
        proc = subprocess.run(
            ["git", *args], cwd=self.root, env=full, stdin=subprocess.DEVNULL,
            capture_output=True, check=False,
        )  # fmt: skip
        if proc.returncode != 0:
            raise GitFailed(
                args, proc.returncode, proc.stderr.decode("utf-8", "surrogateescape")
            )
        out = proc.stdout.decode("utf-8", "surrogateescape")
        return out[:-1] if strip and out.endswith("\n") else out

    def commit(
        self,
        paths: Iterable[str],
        subject: str,
        trailers: dict[str, str],
        author: Identity,
        committer: Identity | None = None,
        body: str = "",
    ) -> str | None:
        """Stage and commit exactly `paths`; None when nothing changed."""
        paths = sorted(set(paths))
        if not paths:
            return None
        self.check_writable()
        message = _message(subject, trailers, body)
        tmpdir = self.root / ".memctl"
        tmpdir.mkdir(exist_ok=True)
        fd, spec = tempfile.mkstemp(prefix="pathspec.", dir=tmpdir)
        mfd, msgfile = tempfile.mkstemp(prefix="message.", dir=tmpdir)
        by_spec = (f"--pathspec-from-file={spec}", "--pathspec-file-nul")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write("\0".join(paths))
            with os.fdopen(mfd, "w", encoding="utf-8") as fh:
                fh.write(message)
            try:
                self._run("add", "-A", *by_spec)
                # `git diff` has no --pathspec-from-file before git 2.40: list staged names.
                staged = set(self._run("diff", "--cached", "--name-only", "-z").split("\0"))
                staged -= {""}
            except GitFailed as exc:
                with contextlib.suppress(GitFailed):
                    self._run("reset", "-q", *by_spec)
                raise self._ignored(paths) or git_error(exc) from None
            if not staged.intersection(paths):
                return None
            # --only commits exactly `paths` even when the user has other changes staged, but
            # it re-reads every file into a temporary index; when nothing else is staged the
            # index already holds exactly that commit.
            only = ["--only", *by_spec] if not staged <= set(paths) else []
            try:
                self._run("commit", "--no-verify", "-q", "-F", msgfile, *only,
                          env=self._env(author, committer or author))  # fmt: skip
            except GitFailed as exc:
                with contextlib.suppress(GitFailed):
                    self._run("reset", "-q", *by_spec)
                raise git_error(exc, "commit") from None
        except OSError as exc:
            from memctl.core.store import write_error

            raise write_error(".memctl/", exc) from None
        finally:
            Path(spec).unlink(missing_ok=True)
            Path(msgfile).unlink(missing_ok=True)
        sha = self._git("rev-parse", "HEAD").strip()
        record_head(self.root, sha)  # the command that commits keeps its derived files in step
        return sha

    def _ignored(self, paths: list[str]) -> MemctlError | None:
        """git refuses to add a path a `.gitignore` rule covers, and says so over lines
        that get cut to one: name the rule and the path instead (a pulled `.gitignore`
        covering raw/ stopped every later ingest with half a sentence)."""
        proc = subprocess.run(
            ["git", "check-ignore", "-v", "-z", "--stdin"], cwd=self.root, check=False,
            input="\0".join(paths).encode("utf-8", "surrogateescape"), capture_output=True,
        )  # fmt: skip
        f = proc.stdout.decode("utf-8", "surrogateescape").split("\0")
        if len(f) < 4:
            return None
        source, line, pattern, path = f[:4]
        return MemctlError(
            f"{path} is ignored by rule {pattern!r} ({source}:{line}), so it cannot be "
            f"committed: remove the rule (was it pulled? `git log -p -- {source}`) and run "
            "the command again"
        )

    def unstage(self, paths: Iterable[str]) -> None:
        """Undo `git add` for paths after a failed command (files are restored separately)."""
        paths = sorted(set(paths))
        if not paths:
            return
        fd, spec = tempfile.mkstemp(prefix="pathspec.", dir=self.root / ".memctl")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write("\0".join(paths))
            args = [f"--pathspec-from-file={spec}", "--pathspec-file-nul"]
            if self.has_commits():
                self._git("reset", "-q", *args)
            else:
                self._git("rm", "-q", "--cached", "--ignore-unmatch", "-r", *args)
        finally:
            Path(spec).unlink(missing_ok=True)

    def stager(self) -> Stager:
        """Stage files in the background while a long command is still writing them."""
        return Stager(self.root)

    def has_commits(self) -> bool:
        """Whether HEAD names a commit (False before the first one, or if it is missing)."""
        try:
            self._run("rev-parse", "--verify", "-q", "HEAD^{commit}")
        except GitFailed:
            return False
        return True

    def identity(self) -> tuple[str, str]:
        """user.name and user.email as git would use them here ("" where unset)."""
        try:  # one git for both (every commit asks)
            out = self._run("config", "--get-regexp", r"^user\.(name|email)$")
        except GitFailed:
            return "", ""  # neither is set
        got: dict[str, str] = {}
        for line in out.splitlines():
            key, _, value = line.partition(" ")
            got[key.lower()] = value.strip()  # the last one set wins, as with --get
        return got.get("user.name", ""), got.get("user.email", "")

    def head_sha(self) -> str | None:
        """HEAD's commit id, None before the first commit; a damaged HEAD is one line."""
        try:
            return self._run("rev-parse", "--verify", "-q", "HEAD^{commit}").strip() or None
        except GitFailed:
            return None  # no commit yet (or HEAD names none)

    def head_blobs(self, paths: list[str]) -> dict[str, str | None]:
        """Each path's blob id in HEAD (None where HEAD has no such file)."""
        out: dict[str, str | None] = dict.fromkeys(paths)
        if not paths or not self.has_commits():
            return out
        proc = subprocess.run(
            ["git", "-C", str(self.root), "cat-file", "--batch-check=%(objectname) %(objecttype)"],
            input="".join(f"HEAD:{p}\n" for p in paths).encode("utf-8", "surrogateescape"),
            capture_output=True,
            check=False,
        )
        for path, line in zip(paths, proc.stdout.decode().splitlines(), strict=False):
            sha, _, kind = line.partition(" ")
            out[path] = sha if kind == "blob" else None
        return out

    def texts(self, specs: list[tuple[str, str]]) -> list[str | None]:
        """The text of each (revision, path) pair, None where that revision has no such file,
        read by one `git cat-file --batch` for all of them (a `git show REV:PATH` each cost
        `memctl diff` a process per note per commit)."""
        out: list[str | None] = [None] * len(specs)
        asked = [i for i, (rev, path) in enumerate(specs) if "\n" not in rev + path]
        answered: set[int] = set()  # read from the batch (a "missing" answer counts)
        if asked:
            proc = subprocess.run(
                ["git", "-C", str(self.root), "cat-file", "--batch"],
                input="".join(f"{specs[i][0]}:{specs[i][1]}\n" for i in asked).encode(
                    "utf-8", "surrogateescape"),
                capture_output=True, check=False,
            )  # fmt: skip
            data, at = proc.stdout, 0
            for i in asked if proc.returncode == 0 else ():
                end = data.find(b"\n", at)
                if end < 0:
                    break
                head = data[at:end].split()
                at = end + 1
                if len(head) != 3 or not head[2].isdigit():
                    answered.add(i)  # "<spec> missing" (or ambiguous): no such file there
                    continue
                size = int(head[2])
                if head[1] == b"blob":
                    out[i] = data[at : at + size].decode("utf-8", "surrogateescape")
                at += size + 1  # the object, then its newline
                answered.add(i)
        for i, (rev, path) in enumerate(specs):
            if i not in answered:
                # a name with a line break, or a batch git did not finish: one `git show`
                # each, so a failed read is never taken for a file that is not there
                with contextlib.suppress(GitFailed):
                    out[i] = self._run("show", f"{rev}:{path}", strip=False)
        return out

    def file_blobs(self, paths: list[str]) -> dict[str, str | None]:
        """The blob id each working-tree file would get if added now (None: no such file)."""
        out: dict[str, str | None] = dict.fromkeys(paths)
        present = [p for p in paths if (self.root / p).is_file()]
        if not present:
            return out
        proc = subprocess.run(
            ["git", "-C", str(self.root), "hash-object", "--stdin-paths"],
            input="".join(f"{p}\n" for p in present).encode("utf-8", "surrogateescape"),
            capture_output=True,
            check=False,
        )
        for path, sha in zip(present, proc.stdout.decode().split(), strict=False):
            out[path] = sha
        return out

    def log(
        self, limit: int = 50, paths: list[str] | None = None, rev: str | None = None
    ) -> list[Commit]:
        """Newest first; trailers parsed so tools can read counts without parsing subjects."""
        if not self.has_commits():
            return []
        args = [
            rev or "HEAD",
            f"--max-count={limit}",
            "--format=%H%x00%an%x00%ae%x00%aI%x00%s%x00%b%x1e",
        ]
        if paths:
            args += ["--", *paths]
        out = self._git("log", *args)
        commits = []
        for rec in out.split("\x1e"):
            rec = rec.strip("\n")
            if not rec:
                continue
            sha, an, ae, date, subject, body = rec.split("\x00", 5)
            commits.append(Commit(sha, an, ae, date, subject, body.strip(), parse_trailers(body)))
        return commits

    def dirty(self) -> list[str]:
        """Uncommitted changes as porcelain lines (hand edits, files memctl did not commit)."""
        out = self._git("status", "--porcelain", "--untracked-files=all")
        return [line for line in out.splitlines() if line.strip()]

    def git(self) -> git.Git:
        return self.repo.git


class GitFailed(Exception):
    """A git run that exited non-zero; `stderr` is what git said (as on GitCommandError)."""

    def __init__(self, args: tuple[str, ...], status: int, stderr: str) -> None:
        super().__init__(f"git {' '.join(args[:1])} exited {status}: {stderr.strip()}")
        self.status = status
        self.stderr = stderr


def git_error(exc: BaseException, what: str | None = None) -> MemctlError:
    """A git failure as one line: git's own `fatal:`/`error:` line, with a hint when we have one."""
    text = str(getattr(exc, "stderr", "") or exc)
    lines = [ln.strip().strip("'\"") for ln in text.splitlines()]
    lines = [ln.removeprefix("stderr: ").strip("'\" ") for ln in lines if ln]
    picked = next((ln for ln in lines if ln.startswith(("fatal:", "error:"))), None)
    picked = picked or next((ln for ln in lines if not ln.startswith("cmdline:")), "") or str(exc)
    low = picked.lower()
    hint = ""
    if "read-only" in low:
        hint = "; the vault is read-only, so memctl can only read it"
    elif "no space" in low or "file too large" in low or "quota exceeded" in low:
        hint = f"; {NO_SPACE}: free some space and run the command again"
    elif "unable to read" in low or "bad object" in low or "could not parse" in low or (
        "corrupt" in low
    ):
        hint = "; the repository is damaged: `git fsck` names what is missing"
    return MemctlError(f"git {what + ' ' if what else ''}failed: {picked}{hint}")


class Stager:
    """`git add` on a second thread, in batches, while ingest goes on writing.

    Hashing and compressing a large ingest's new files is most of its commit time; staged
    as they are written, that work overlaps with parsing the next files. It is only a head
    start: `History.commit` stages every path again (git skips files whose stat it has
    cached), so a batch that fails costs time, never correctness. A failed command passes
    `staged` to `History.unstage`, so nothing it staged stays in the git index.
    """

    BATCH = 128

    def __init__(self, root: Path) -> None:
        self.root = root
        self.staged: list[str] = []
        self._pending: list[str] = []
        self._thread: threading.Thread | None = None

    def add(self, rel: str) -> None:
        """Queue a written file; a batch starts when the previous one has finished."""
        self._pending.append(rel)
        if len(self._pending) >= self.BATCH and not (self._thread and self._thread.is_alive()):
            batch, self._pending = self._pending, []
            self.staged.extend(batch)
            self._thread = threading.Thread(target=self._stage, args=(batch,), daemon=True)
            self._thread.start()

    def _stage(self, batch: list[str]) -> None:
        # plain subprocess: gitpython's objects are not meant to be shared across threads
        with contextlib.suppress(OSError):
            subprocess.run(
                ["git", "-C", str(self.root), "add", "-A", "--pathspec-from-file=-",
                 "--pathspec-file-nul"],
                input="\0".join(batch).encode("utf-8", "surrogateescape"),
                capture_output=True,
                check=False,
            )  # fmt: skip

    def wait(self) -> None:
        """Let the running batch finish; call before committing (git locks its index)."""
        if self._thread is not None:
            self._thread.join()
            self._thread = None


# ---- the HEAD memctl's derived files were made for (memctl.follow) ----------------------

HEAD_REL = ".memctl/cache/head"


def head_of(root: Path) -> str | None:
    """HEAD's commit id from the files under .git, without running git (None if unknown)."""
    git_dir = root / ".git"
    try:
        text = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return _rev_parse(root) if git_dir.is_file() else None  # a worktree's .git file
    if not text.startswith("ref: "):
        return text or None
    ref = text[5:].strip()
    with contextlib.suppress(OSError):
        return (git_dir / ref).read_text(encoding="utf-8").strip() or None
    with contextlib.suppress(OSError):
        for line in (git_dir / "packed-refs").read_text(encoding="utf-8").splitlines():
            sha, _, name = line.partition(" ")
            if name.strip() == ref:
                return sha
    return None  # an unborn branch


def _rev_parse(root: Path) -> str | None:
    proc = subprocess.run(["git", "-C", str(root), "rev-parse", "-q", "--verify", "HEAD"],
                          capture_output=True, text=True, check=False)  # fmt: skip
    return proc.stdout.strip() or None


def recorded_head(root: Path) -> str | None:
    try:
        return (root / HEAD_REL).read_text(encoding="utf-8").strip() or None
    except OSError:
        return None


def record_head(root: Path, sha: str | None = None) -> None:
    """Remember that the derived files are in step with `sha` (default: HEAD now).

    A cache file: losing it costs one look at what changed, so it is written without a
    sync and a failure to write it is ignored (a read-only vault).
    """
    from memctl.core.store import atomic_write

    sha = sha or head_of(root)
    if not sha:
        return
    with contextlib.suppress(OSError):
        (root / HEAD_REL).parent.mkdir(parents=True, exist_ok=True)
        atomic_write(root / HEAD_REL, sha + "\n", durable=False)
