"""The floor every feature stands on: one vault's files, lock, git history and index.

`Floor` is the object features are handed (`memctl.Vault` is a Floor with the user actions
on top). It owns what every write needs: the lock, the write guard (git writable, no
conflict marker in a file about to be rewritten), committing a transaction, and keeping
INDEX files and the search index in step, so that a feature changes the vault only through
`change` (or `write_notes`, a change that writes whole files).
"""

from __future__ import annotations

import contextlib
import getpass
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.core.catalog import Catalog
from memctl.core.config import Config
from memctl.core.history import History, Identity
from memctl.core.model import Message
from memctl.core.raw import parse_session, read_header
from memctl.core.store import Transaction, VaultLock, read_text, register_guard, walk_markdown
from memctl.errors import InputError, MemctlError
from memctl.version import __version__

if TYPE_CHECKING:
    from memctl.core.refs import Ref


def find_root(start: Path) -> Path | None:
    """Walk up from `start` to the first folder holding `.memctl/`."""
    cur = start.resolve()
    for cand in (cur, *cur.parents):
        if (cand / ".memctl").is_dir():
            return cand
    return None


@dataclass
class VaultChange:
    """What one command is changing, and what its commit will say (see `Floor.change`).

    Writes go through `tx` (the journalled transaction). `paths` are committed beside what
    `tx` touched (files another step already put in place: adopted notes, recovered
    sessions, what a `git revert` staged). `before_commit` steps run after the writes are
    durable and before the commit; `on_failure` steps run before the files are put back.
    """

    tx: Transaction
    subject: str
    trailers: dict[str, str]
    author: Identity | None = None
    body: str = ""
    refresh: bool = True
    index: bool = True
    paths: list[str] = field(default_factory=list)
    before_commit: list[Callable[[], object]] = field(default_factory=list)
    undo: list[tuple[Callable[[], object], bool]] = field(default_factory=list)
    committer: Callable[[list[str], VaultChange], str | None] | None = None
    commit: str | None = None
    dropped: bool = False

    def drop(self) -> None:
        """Nothing is to be committed after all: every file goes back as it was."""
        self.dropped = True

    def on_failure(self, step: Callable[[], object], *, restores: bool = False) -> None:
        """Run `step` if the change fails; `restores`: it puts the files back itself (a
        `git reset --hard`), so the journal's copies are dropped instead of restored."""
        self.undo.append((step, restores))


class Floor:
    """A memctl vault's files in a git repository, plus its rebuildable index."""

    def __init__(self, root: Path, config: Config) -> None:
        self.root = root
        self.config = config
        self._history: History | None = None
        self.lock = VaultLock(root)
        register_guard(root, self._write_guard)
        self.catalog = Catalog(root)
        self.origins: dict[str, str] = {}  # session id -> origin, filled by session_map()
        # One line per thing done on the user's behalf that they should hear of (a recovery);
        # the front end prints them as they come when it sets `on_notice`.
        self.notices: list[str] = []
        self.on_notice: Callable[[str], None] | None = None
        # Set by a caller that exits after a command or two (the CLI, a hook): the search
        # index's freshness check then never pays for a folder watch it would not reuse.
        self.one_shot = False

    @property
    def history(self) -> History:
        """The git repository, opened on first use so that reading commands skip gitpython."""
        if self._history is None:
            self._history = History(self.root)
        return self._history

    @history.setter
    def history(self, value: History) -> None:
        self._history = value


    # ---- the write guard ------------------------------------------------------------------

    def _write_guard(self) -> Callable[[str, Path], None]:
        """The check each Transaction runs before it first changes a path (see store.py)."""
        checked = committed = False
        dirty: set[str] | None = None  # INDEX files with hand edits, asked git once

        def guard(rel: str, target: Path) -> None:
            nonlocal checked, committed, dirty
            if not checked:
                committed = self.history.has_commits()
                if committed:
                    self.history.check_writable()
                checked = True
            if rel.startswith("raw/") and not rel.endswith("/INDEX.md"):
                return  # a transcript may quote anything, conflict markers included
            if not target.is_file() or target.suffix not in (".md", ".json", ".toml"):
                return
            text = read_text(target)
            line = _conflict_marker(text)
            if line:
                raise MemctlError(
                    "conflict marker left by a merge; resolve it and commit first",
                    rel,
                    line,
                    exit_code=3,
                )
            if rel.endswith("INDEX.md") and dirty is None:
                dirty = self.history.dirty_indexes() if committed else set()
            if rel.endswith("INDEX.md") and rel in (dirty or ()):
                # memctl regenerates INDEX files; a person's uncommitted edit is kept in a
                # commit of its own first, so that nothing of theirs vanishes unrecorded
                sha = self.commit_hand_edits(
                    [rel], f"edit: {rel} edited by hand (kept before memctl rewrote it)"
                )
                if sha:
                    self.notice(
                        f"{rel} had uncommitted hand edits: kept in commit {sha[:10]}, "
                        "then rewritten (see `git show " + sha[:10] + "`)"
                    )

        return guard

    def notice(self, line: str) -> None:
        """Tell the user of something done on their behalf (the front end shows it as it comes)."""
        self.notices.append(line)
        if self.on_notice is not None:
            self.on_notice(line)

    # ---- identities ----------------------------------------------------------------------

    def human_identity(self) -> Identity:
        """The person running memctl: config, else their git identity, else a neutral one."""
        if self.config.human is not None:
            return self.config.human
        try:
            name, email = self.history.identity()
        except Exception:
            name = email = ""
        return Identity(str(name) or "memctl user", str(email) or "user@memctl.invalid")

    def whoami(self) -> tuple[str, str]:
        """The memctl user a hook acts as when told none, and where that name came from:
        the config's `user`, else the first name of `git config user.name` (a hook runs as
        a person, not as a login account), else the login name."""
        if self.config.user:
            return self.config.user, "the config's user"
        import subprocess

        try:
            got = subprocess.run(
                ["git", "config", "--get", "user.name"], cwd=self.root, capture_output=True,
                text=True, timeout=5, check=False,
            ).stdout.split()  # fmt: skip
        except (OSError, subprocess.SubprocessError):
            got = []
        first = re.sub(r"[^\w.@-]", "", got[0]).lower() if got else ""
        if first:
            return first, "git config user.name"
        return self.default_user(), "the login name"

    def default_user(self) -> str:
        if self.config.user:
            return self.config.user
        try:
            return getpass.getuser()
        except Exception:
            return "user"


    def session_map(self) -> dict[str, str]:
        """session id -> raw path, from the session headers (cached by file stat)."""
        out: dict[str, str] = {}
        self.origins = {}
        for rel, data in self.catalog.headers():
            sid = data.get("session")
            if sid is not None:
                out[str(sid)] = rel
                source = data.get("source")
                if isinstance(source, dict):
                    self.origins[str(sid)] = str(source.get("origin"))
        self.catalog.save()
        return out

    # ---- writing derived notes -------------------------------------------------------------

    def write_notes(
        self,
        files: dict[str, str],
        *,
        subject: str,
        command: str = "write",
        trailers: dict[str, str] | None = None,
        author: Identity | None = None,
        body: str = "",
        refresh: bool = True,
    ) -> str | None:
        """Write derived files (notes, their INDEX, curation state) as one commit, or not at all.

        The public way for curation and other writers of whole notes to change the vault,
        under the vault lock the caller holds: a `change` that writes `files` and nothing else.
        """
        with self.change(
            command, subject=subject, author=author, body=body, refresh=refresh
        ) as ch:
            ch.trailers.update(trailers or {})
            ch.tx.expect(list(files))
            for rel, text in files.items():
                ch.tx.write(rel, text)
        return ch.commit

    @contextlib.contextmanager
    def change(
        self,
        command: str,
        *,
        subject: str = "",
        user: str | None = None,
        author: Identity | None = None,
        body: str = "",
        refresh: bool = True,
        index: bool = True,
        journal: str | None = None,
        redact: bool = True,
    ) -> Iterator[VaultChange]:
        """One command's change to the vault: every write in the block lands as one commit,
        or, on any failure (an exception, Ctrl-C), every file is put back and none is made.

        The commit's `Memctl-Version`, `Memctl-Command` (and `Memctl-User`) trailers are
        written here, so no command can leave them out; the block adds its own to
        `ch.trailers` and may set `ch.subject` and `ch.body` once it knows what it did.
        `refresh` rewrites the INDEX files in the same commit, `index` brings the search
        index in step after it, `journal` names the work in the write-ahead journal when
        crash recovery must treat it apart from the command (default: `command`). Nothing
        written and no `ch.paths`: no commit. `ch.drop()` puts everything back quietly.
        """
        tx = Transaction(self.root, command=journal or command, redact=redact)
        trailers = {"Memctl-Version": __version__, "Memctl-Command": command}
        if user is not None:
            trailers["Memctl-User"] = user
        ch = VaultChange(tx, subject, trailers, author, body, refresh=refresh, index=index)
        try:
            yield ch
            if not ch.dropped and (tx.touched or ch.paths):
                ch.commit = self._commit_change(ch)
        except BaseException:
            restored = False
            for undo, restores in reversed(ch.undo):
                with contextlib.suppress(Exception):
                    undo()
                restored = restored or restores
            if restored:
                tx.done()
            else:
                tx.rollback()
            raise
        if ch.dropped:
            tx.rollback()
        else:
            tx.done()

    def _commit_change(self, ch: VaultChange) -> str | None:
        """INDEX files, fsync, the caller's last steps, one commit, then the search index."""
        tx = ch.tx
        if ch.refresh:
            self.refresh_indexes(tx)
        tx.flush()
        for step in ch.before_commit:
            step()
        paths = list(dict.fromkeys([*ch.paths, *tx.touched]))
        if ch.committer is not None:
            sha = ch.committer(paths, ch)
        else:
            sha = self.history.commit(
                paths, ch.subject, ch.trailers, author=ch.author or self.human_identity(),
                body=ch.body,
            )
        if ch.index:
            self.after_write(paths)
        return sha

    def commit_hand_edits(self, paths: list[str], subject: str, **trailers: str) -> str | None:
        """Commit a person's uncommitted edits to `paths` as theirs, before memctl rewrites
        those files: otherwise memctl's commit would carry their lines, and neither `diff`
        nor undo could tell who wrote what."""
        extra = {f"Memctl-{k.replace('_', '-').title()}": v for k, v in trailers.items()}
        return self.history.commit(
            paths,
            subject,
            {"Memctl-Version": __version__, "Memctl-Command": "edit", **extra},
            author=self.human_identity(),
        )

    # ---- hooks for derived state (index, INDEX.md) ----------------------------------------

    def refresh_indexes(self, tx: Transaction) -> None:
        """Keep INDEX.md files current in the same commit as the change they describe."""
        from memctl.core import templates

        sessions = self.sessions()
        tx.write("raw/INDEX.md", templates.raw_index(sessions))
        counts = {name: len(self.notes(name)) for name in self.config.stores}
        tx.write("INDEX.md", templates.root_index(self.config, counts, sessions))

    def after_write(self, touched: list[str]) -> None:
        """Called inside the lock after a write: the search index follows in the same command."""
        from memctl.index import writer

        writer.after_write(self, touched)

    # ---- reading -------------------------------------------------------------------------

    def sessions(self) -> list[dict[str, Any]]:
        """Every raw session's frontmatter plus its path, newest first."""
        out = [{**data, "path": rel} for rel, data in self.catalog.headers()]
        self.catalog.save()
        out.sort(key=lambda d: (str(d.get("started") or ""), d["path"]), reverse=True)
        return out

    def notes(self, store: str) -> list[Path]:
        """Note files of one store (INDEX.md excluded)."""
        sc = self.config.stores[store]
        return [p for p in walk_markdown(self.root, sc.folder) if p.name != "INDEX.md"]

    def resolve(self, ref: str) -> Ref:
        """Any reference memctl prints or accepts (see memctl/core/refs.py) -> what it names."""
        from memctl.core.refs import resolve

        return resolve(self, ref)

    def resolve_session(self, ref: str) -> str:
        """A session reference (id, prefix, digest, raw path; any #tN ignored) -> the raw path."""
        r = self.resolve(ref.split("#", 1)[0])
        if not r.is_raw:
            raise InputError(f"{r.path} is a {r.kind}, not a session")
        return r.path

    @staticmethod
    def turn_text(m: Message) -> str:
        """A turn as a person reads it: its text, then each tool call it made, whole (the
        call is in the raw file's turn comment, which Obsidian and a plain read skip)."""
        from memctl.index.toolcalls import turn_text

        return turn_text(m.content, m.meta)

    def read_session(self, ref: str) -> tuple[str, list[Message], dict[str, Any]]:
        rel = self.resolve_session(ref)
        text = read_text(self.root / rel)
        _, messages = parse_session(text, rel)
        return rel, messages, read_header(text, rel)



def _conflict_marker(text: str) -> int | None:
    """Line number of a `<<<<<<< ` marker that a `>>>>>>> ` closes, else None."""
    if "<<<<<<< " not in text or ">>>>>>> " not in text:
        return None
    opened = None
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("<<<<<<< ") and opened is None:
            opened = n
        elif line.startswith(">>>>>>> ") and opened is not None:
            return opened
    return None


