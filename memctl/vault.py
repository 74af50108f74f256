"""The library facade: everything the CLI, hooks and MCP server do goes through `Vault`."""

from __future__ import annotations

import contextlib
import dataclasses
import getpass
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from memctl.catalog import Catalog
from memctl.config import CONFIG_REL, DEFAULT_CONFIG_TOML, Config, load_config
from memctl.errors import (
    ConflictError,
    InputError,
    LockTimeoutError,
    MemctlError,
    NotATranscriptError,
    VaultNotFoundError,
)
from memctl.history import History, Identity
from memctl.model import Message, Transcript
from memctl.raw import (
    file_name_id,
    header_data,
    legacy_file_name_ids,
    make_header,
    message_record,
    now_utc,
    parse_session,
    read_header,
    remember_parsed,
    render_header,
    render_session,
    render_turn,
    session_path,
    slugify,
)
from memctl.results import (
    FileProblem,
    IngestResult,
    InitResult,
    SessionChange,
    ShowResult,
    StatusResult,
)
from memctl.store import Transaction, VaultLock, read_text, register_guard, walk_markdown
from memctl.version import __version__

if TYPE_CHECKING:
    from datetime import datetime

    from memctl.doctor import DoctorResult
    from memctl.index import Feed  # tantivy loads only when a command needs it
    from memctl.recall import RecallResult
    from memctl.refs import Ref

GITIGNORE = """\
# memctl: the index and caches are rebuilt from the files; never commit them.
.memctl/index/
.memctl/cache/
.memctl/lock
.memctl/*.tmp
.memctl/pathspec.*
.memctl/message.*
.memctl/conflicts/
.obsidian/workspace*.json
"""

ProgressFn = Callable[[int, int, str], None]


def _valid_scope(scope: str) -> str:
    if scope in ("team", "global") or (scope.startswith("user:") and len(scope) > 5):
        return scope
    raise InputError(f"invalid scope {scope!r}: use 'user:NAME', 'team' or 'global'")


def find_root(start: Path) -> Path | None:
    """Walk up from `start` to the first folder holding `.memctl/`."""
    cur = start.resolve()
    for cand in (cur, *cur.parents):
        if (cand / ".memctl").is_dir():
            return cand
    return None


class Vault:
    """A memctl vault: markdown files in a git repository, plus a rebuildable index."""

    def __init__(self, root: Path, config: Config) -> None:
        self.root = root
        self.config = config
        self._history: History | None = None
        self.lock = VaultLock(root)
        self.lock.on_acquire = self._recover
        register_guard(root, self._write_guard)
        self.catalog = Catalog(root)
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

    # ---- opening -------------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        path: str | Path | None = None,
        *,
        env: dict[str, str] | None = None,
        notice: Callable[[str], None] | None = None,
        recover: bool = True,
        one_shot: bool = False,
        **flags: Any,
    ) -> Vault:
        """Find the vault: explicit path, then MEMCTL_VAULT, then walking up from the cwd.

        A journal left by a killed command is finished or undone here when no other
        process holds the lock (else by whichever command takes it next). `one_shot`:
        this process exits after a command or two (see `Vault.one_shot`).
        """
        env = dict(os.environ) if env is None else env
        if path is not None:
            root = Path(path).expanduser().resolve()
            if not (root / ".memctl").is_dir():
                raise VaultNotFoundError(
                    f"{root} is not a memctl vault; run `memctl init {path}` to create one"
                )
        elif env.get("MEMCTL_VAULT"):
            root = Path(env["MEMCTL_VAULT"]).expanduser().resolve()
            if not (root / ".memctl").is_dir():
                raise VaultNotFoundError(
                    f"MEMCTL_VAULT={env['MEMCTL_VAULT']} is not a memctl vault; "
                    "run `memctl init` there or fix the variable"
                )
        else:
            found = find_root(Path.cwd())
            if found is None:
                raise VaultNotFoundError(
                    "not inside a memctl vault; run `memctl init [PATH]`, or pass --vault PATH "
                    "or set MEMCTL_VAULT"
                )
            root = found
        vault = cls(root, load_config(root, env, **flags))
        vault.on_notice = notice
        vault.one_shot = one_shot
        if recover:
            vault.recover_if_needed()
        else:
            vault.lock.on_acquire = None
        return vault

    # ---- crash recovery (memctl/recovery.py) -------------------------------------------------

    def recover_if_needed(self) -> None:
        """Take the lock briefly if a killed command left work behind (the lock recovers)."""
        from memctl import recovery

        if not recovery.needed(self.root):
            return
        old = self.lock.timeout
        self.lock.timeout = 0.0
        try:
            with self.lock:
                pass
        except LockTimeoutError:
            pass  # a live writer has it; it, or the command after it, recovers
        finally:
            self.lock.timeout = old

    def _recover(self) -> None:
        from memctl import recovery

        if not recovery.needed(self.root):
            return
        # a lock taken without waiting is a reader's (a hook on every prompt, a search's
        # index refresh): it never waits for someone else's git either
        res = recovery.recover(self, 0.0 if self.lock.timeout == 0 else 5.0)
        if res:
            self._notice(res.summary())

    def _write_guard(self) -> Callable[[str, Path], None]:
        """The check each Transaction runs before it first changes a path (see store.py)."""
        checked = False

        def guard(rel: str, target: Path) -> None:
            nonlocal checked
            if not checked:
                if self.history.has_commits():
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
            if rel.endswith("INDEX.md") and self.history.is_dirty(rel):
                # memctl regenerates INDEX files; a person's uncommitted edit is kept in a
                # commit of its own first, so that nothing of theirs vanishes unrecorded
                sha = self.history.commit(
                    [rel],
                    f"edit: {rel} edited by hand (kept before memctl rewrote it)",
                    {"Memctl-Version": __version__, "Memctl-Command": "edit"},
                    author=self.human_identity(),
                )
                if sha:
                    self._notice(
                        f"{rel} had uncommitted hand edits: kept in commit {sha[:10]}, "
                        "then rewritten (see `git show " + sha[:10] + "`)"
                    )

        return guard

    def _notice(self, line: str) -> None:
        self.notices.append(line)
        if self.on_notice is not None:
            self.on_notice(line)

    @classmethod
    def init(
        cls,
        path: str | Path = ".",
        *,
        env: dict[str, str] | None = None,
        force: bool = False,
    ) -> tuple[Vault, InitResult]:
        """Create a vault, or adopt a folder of notes as one; safe to run twice.

        Only markdown notes are adopted: anything else in the folder is left alone and
        listed, never staged. A home folder, or one with many files that are not notes, is
        refused unless `force`, because a vault commits what it holds. A failure removes
        whatever this call created.
        """
        from memctl import mergedrivers, templates
        from memctl.curate.engine import STATE_REL, render_state

        env = dict(os.environ) if env is None else env
        root = Path(path).expanduser().resolve()
        existed = (root / ".memctl").is_dir()
        notes: list[str] = []
        others: list[str] = []
        if root.is_dir() and not existed:
            notes, others = _survey(root)
            if not force:
                _refuse_takeover(root, env, others)
        created = _Created(root)
        try:
            root.mkdir(parents=True, exist_ok=True)
            history = History.init(root)
            lock = VaultLock(root)
            with lock:
                config = load_config(root, env)
                vault = cls(root, config)
                vault.history = history
                adopted = notes if not history.has_commits() else []
                tx = Transaction(root, command="init")
                try:
                    if not (root / CONFIG_REL).exists():
                        tx.write(CONFIG_REL, DEFAULT_CONFIG_TOML)
                    gi = root / ".gitignore"
                    if not gi.exists():
                        tx.write(".gitignore", GITIGNORE)
                    elif "# memctl:" not in read_text(gi):
                        tx.write(".gitignore", read_text(gi).rstrip("\n") + "\n\n" + GITIGNORE)
                    for store in config.stores.values():
                        readme = f"{store.folder}/INDEX.md"
                        if not (root / readme).exists():
                            tx.write(readme, templates.store_index(store, []))
                    if not (root / "raw").exists():
                        tx.write("raw/INDEX.md", templates.raw_index([]))
                    if not (root / "INDEX.md").exists():
                        tx.write("INDEX.md", templates.root_index(config, {}, []))
                    if not history.has_commits() and not (root / STATE_REL).exists():
                        # there from the start, so no revert of a curate commit deletes it
                        # (a deletion against a change is a conflict no merge driver sees)
                        tx.write(STATE_REL, render_state({}))
                    ga = root / ".gitattributes"
                    attrs = mergedrivers.attributes_text(read_text(ga) if ga.exists() else None)
                    if attrs is not None:
                        tx.write(".gitattributes", attrs)
                    paths = tx.touched + adopted
                    tx.flush()
                    n = len(adopted)
                    sha = history.commit(
                        paths,
                        "init: memctl vault"
                        + (f", adopted {n} note{'s' * (n != 1)}" if adopted else ""),
                        {
                            "Memctl-Version": __version__,
                            "Memctl-Command": "init",
                            "Memctl-Adopted": str(len(adopted)),
                        },
                        author=vault.human_identity(),
                    )
                except BaseException:
                    tx.rollback()
                    raise
                tx.done()
                # git never takes merge drivers from a remote: every clone registers its own
                mergedrivers.install(root)
        except BaseException as exc:
            created.remove()
            if isinstance(exc, MemctlError | KeyboardInterrupt):
                raise
            if isinstance(exc, OSError):
                raise MemctlError(f"cannot initialise the vault: {exc.strerror}", root) from None
            raise MemctlError(f"cannot initialise the vault: {_first_line(exc)}", root) from None
        if existed and not (root / ".memctl" / "index").exists():
            vault.reindex()  # a fresh clone: searchable at once
        return vault, InitResult(str(root), not existed, adopted, sha, others)

    # ---- identities ----------------------------------------------------------------------

    def human_identity(self) -> Identity:
        """The person running memctl: config, else their git identity, else a neutral one."""
        if self.config.human is not None:
            return self.config.human
        try:
            reader = self.history.repo.config_reader()
            name = reader.get_value("user", "name", "")
            email = reader.get_value("user", "email", "")
        except Exception:
            name = email = ""
        return Identity(str(name) or "memctl user", str(email) or "user@memctl.invalid")

    def default_user(self) -> str:
        if self.config.user:
            return self.config.user
        try:
            return getpass.getuser()
        except Exception:
            return "user"

    # ---- ingest --------------------------------------------------------------------------

    def _session_map(self) -> dict[str, str]:
        """session id -> raw path, from the session headers (cached by file stat)."""
        out: dict[str, str] = {}
        self._origins: dict[str, str] = {}
        for rel, data in self.catalog.headers():
            sid = data.get("session")
            if sid is not None:
                out[str(sid)] = rel
                source = data.get("source")
                if isinstance(source, dict):
                    self._origins[str(sid)] = str(source.get("origin"))
        self.catalog.save()
        return out

    def ingest(
        self,
        sources: list[str | Path],
        *,
        fmt: str | None = None,
        user: str | None = None,
        scope: str | None = None,
        session: str | None = None,
        redact: bool | None = None,
        stdin: IO[bytes] | None = None,
        progress: ProgressFn | None = None,
    ) -> IngestResult:
        """Write transcripts verbatim as raw sessions; all of it, or none of it."""
        from memctl import formats, index

        if not sources:
            raise InputError("nothing to ingest: give files, folders or - for stdin")
        chosen = user or self.config.user or None
        login = self.default_user()
        fixed_scope = scope or self.config.scope
        if fixed_scope:
            fixed_scope = _valid_scope(fixed_scope)
        do_redact = self.config.redact if redact is None else redact
        paths: list[Path] = []
        use_stdin = False
        for s in sources:
            if str(s) == "-":
                use_stdin = True
                continue
            p = Path(s)
            if not p.exists():
                raise InputError("no such file or folder", p)
            paths.append(p)
        files = formats.iter_files(paths)
        named = {p for p in paths if not p.is_dir()}
        failed: list[FileProblem] = []
        skipped: list[FileProblem] = []
        if not files and not use_stdin:
            raise InputError("no transcript files found", paths[0] if paths else None)
        changes: list[SessionChange] = []
        with self.lock:
            sessions = self._session_map()
            tx = Transaction(self.root, command="ingest", redact=do_redact)
            feed = index.Feed(self)
            stager = self.history.stager()
            try:
                units: list[Path | IO[bytes]] = list(files)
                if use_stdin:
                    units.append(stdin if stdin is not None else _stdin_bytes())
                for i, unit in enumerate(units):
                    label = str(unit) if isinstance(unit, Path) else "<stdin>"
                    if progress:
                        progress(i, len(units), label)
                    # A file found in a folder stands alone: if it is bad, its writes are
                    # undone and it is reported; named files are all-or-nothing together.
                    alone = isinstance(unit, Path) and unit not in named
                    mark = tx.mark() if alone else None
                    known = dict(sessions) if alone else sessions
                    done: list[SessionChange] = []
                    try:
                        for tr in formats.read_transcripts(unit, fmt, session=session):
                            who, source = (chosen, "flag") if chosen else _speaker(tr, login)
                            where = fixed_scope or _valid_scope(f"user:{who}")
                            change = self._write_transcript(
                                tx, tr, who, where, do_redact, sessions, feed
                            )
                            done.append(
                                dataclasses.replace(change, user=who, user_from=source)
                            )
                    except (InputError, ConflictError) as exc:
                        if mark is None:
                            raise
                        undone = tx.undo_to(mark)
                        feed.drop(undone)
                        sessions.clear()
                        sessions.update(known)
                        problem = FileProblem(
                            exc.path or label, exc.line, exc.message, exc.exit_code
                        )
                        (skipped if isinstance(exc, NotATranscriptError) else failed).append(
                            problem
                        )
                        continue
                    if mark is not None:
                        tx.release(mark)
                    changes.extend(done)
                    for change in done:
                        if change.action != "unchanged":
                            stager.add(change.path)
                if progress:
                    progress(len(units), len(units), "")
                sha = None
                changed = [c for c in changes if c.action != "unchanged"]
                if changed:
                    self._refresh_indexes(tx)
                    turns = sum(c.turns_added for c in changed)
                    n = len(changed)
                    tx.flush()
                    stager.wait()
                    sha = self.history.commit(
                        tx.touched,
                        f"ingest: {n} session{'s' * (n != 1)}, {turns} turn{'s' * (turns != 1)}",
                        {
                            "Memctl-Version": __version__,
                            "Memctl-Command": "ingest",
                            "Memctl-Sessions": str(n),
                            "Memctl-Turns": str(turns),
                            "Memctl-Redactions": str(sum(c.redactions for c in changed)),
                        },
                        author=self.human_identity(),
                    )
                tx.done()
                feed.finish(tx.touched)
            except BaseException:
                feed.abort()
                stager.wait()
                tx.rollback()
                with contextlib.suppress(Exception):
                    self.history.unstage(stager.staged)
                raise
        return IngestResult(changes, sha, len(units), failed, skipped)

    def _session_id(self, tr: Transcript, sessions: dict[str, str]) -> str:
        """The id a transcript's session goes by (see `raw.file_name_id` for the rule).

        A file-name id first looks for the session under the ids older memctl gave it, so
        a vault written before the rule grows its sessions in place instead of doubling them.
        """
        from memctl.formats._common import NameId

        sid = str(tr.session_id or "session")  # a plain str: YAML knows no NameId
        if not isinstance(tr.session_id, NameId):
            return sid
        qualified = file_name_id(sid, tr.origin)
        if qualified in sessions:
            return qualified
        *older, bare = legacy_file_name_ids(sid, tr.origin)
        for old in older:
            if old in sessions:
                return old
        if bare in sessions and self._same_source(bare, sessions[bare], tr):
            return bare
        return qualified

    def _same_source(self, sid: str, rel: str, tr: Transcript) -> bool:
        """Is the session older memctl recorded under the bare file name `sid` this one?

        Its origin names the file when it was recorded as an absolute path; a relative one
        (the path as typed, from a folder we no longer know) cannot be compared, so there
        the turns decide: a transcript that continues the session's turns, or that they
        continue, is that session; another conversation is another session.
        """
        origin = getattr(self, "_origins", {}).get(sid)
        if origin and Path(origin).is_absolute():
            return Path(origin).resolve() == Path(tr.origin).resolve()
        try:
            _, old = parse_session(read_text(self.root / rel), rel)
        except (OSError, MemctlError):
            return False
        norm = [_normalise(m) for m in tr.messages]
        k = min(len(old), len(norm))
        return k > 0 and old[:k] == norm[:k]

    def _write_transcript(
        self,
        tx: Transaction,
        tr: Transcript,
        user: str,
        scope: str,
        do_redact: bool,
        sessions: dict[str, str],
        feed: Feed,
    ) -> SessionChange:
        if do_redact:
            tr, redactions = _redact_transcript(tr)
        else:
            redactions = 0
        messages = tr.messages
        if not messages:
            raise InputError("transcript has no messages", tr.origin, tr.line)
        sid = self._session_id(tr, sessions)
        # found by the id its header records: a session keeps the name it was first given
        rel = sessions.get(sid) or session_path(sid, messages, now_utc())
        title = tr.title or _title_from(messages)
        target = tx.path(rel)
        if target.exists():
            header, old = parse_session(read_text(target), rel)
            if header.session != sid:
                raise ConflictError(
                    f"{rel} holds session {header.session!r}, not {sid!r}; its header was "
                    "changed by hand (run `memctl doctor`)",
                    tr.origin,
                    tr.line,
                )
            norm = [_normalise(m) for m in messages]
            common = min(len(old), len(norm))
            for k in range(common):
                if old[k] != norm[k]:
                    raise ConflictError(
                        f"session {sid!r} differs from {rel} at turn t{k + 1}; refusing to "
                        "rewrite history (ingest it with a different --session to keep both)",
                        tr.origin,
                        tr.line,
                    )
            if len(norm) <= len(old):
                return SessionChange(sid, rel, "unchanged", 0, len(old), 0, tr.origin)
            new = norm[len(old) :]
            allm = old + new
            h = make_header(
                header.session,
                header.title,
                header.source_format,
                header.origin,
                header.user,
                header.scope,
                allm,
                dict(header.extra),
            )
            text = read_text(target)
            body_start = text.index("\n---\n", 3) + 5
            appended = "".join(render_turn(len(old) + i, m) for i, m in enumerate(new, 1))
            new_text = render_header(h) + text[body_start:] + appended
            written = tx.write(rel, new_text)
            feed.session(rel, new_text, h, allm, written)
            self.catalog.put(rel, header_data(h), written, new_text)
            remember_parsed(rel, new_text, h, allm)
            sessions[sid] = rel
            return SessionChange(sid, rel, "appended", len(new), len(allm), redactions, tr.origin)
        extra = {"source_meta": tr.meta} if tr.meta else {}
        h = make_header(sid, title, tr.source_format, tr.origin, user, scope, messages, extra)
        text = render_session(h, messages)
        written = tx.write(rel, text)
        feed.session(rel, text, h, messages, written)
        self.catalog.put(rel, header_data(h), written, text)
        remember_parsed(rel, text, h, messages)
        sessions[sid] = rel
        return SessionChange(
            sid, rel, "created", len(messages), len(messages), redactions, tr.origin
        )

    # ---- writing derived notes -------------------------------------------------------------

    def write_notes(
        self,
        files: dict[str, str],
        *,
        subject: str,
        trailers: dict[str, str],
        author: Identity,
        body: str = "",
        command: str = "write",
        refresh: bool = True,
    ) -> str | None:
        """Write derived files (notes, their INDEX, curation state) as one commit, or not at all.

        The public way for curation, review and other writers of notes to change the vault,
        under the vault lock the caller holds: files are written atomically and journaled, the
        INDEX files and the search index follow in the same command, and any failure puts
        every file back as it was and leaves no commit.
        """
        tx = Transaction(self.root, command=command)
        try:
            tx.expect(list(files))
            for rel, text in files.items():
                tx.write(rel, text)
        except BaseException:
            tx.rollback()
            raise
        return self.commit_transaction(
            tx, subject=subject, trailers=trailers, author=author, body=body, refresh=refresh
        )

    def commit_transaction(
        self,
        tx: Transaction,
        *,
        subject: str,
        trailers: dict[str, str],
        author: Identity,
        body: str = "",
        refresh: bool = True,
    ) -> str | None:
        """Finish a caller's transaction as one commit: INDEX files, fsync, commit, search index.

        For writers that delete or read back what they wrote (review); on any failure the
        transaction is rolled back and the vault is as it was.
        """
        try:
            if refresh:
                self._refresh_indexes(tx)
            tx.flush()
            sha = self.history.commit(tx.touched, subject, trailers, author=author, body=body)
            self._after_write(tx.touched)
        except BaseException:
            tx.rollback()
            raise
        return sha

    # ---- hooks for derived state (index, INDEX.md) ----------------------------------------

    def _refresh_indexes(self, tx: Transaction) -> None:
        """Keep INDEX.md files current in the same commit as the change they describe."""
        from memctl import templates

        sessions = self.sessions()
        tx.write("raw/INDEX.md", templates.raw_index(sessions))
        counts = {name: len(self.notes(name)) for name in self.config.stores}
        tx.write("INDEX.md", templates.root_index(self.config, counts, sessions))

    def _after_write(self, touched: list[str]) -> None:
        """Called inside the lock after a write: the search index follows in the same command."""
        from memctl import index

        index.after_write(self, touched)

    # ---- search (memctl/search.py, memctl/index.py) -----------------------------------------

    def search(self, query: str, **filters: Any) -> Any:
        """Ranked hits over turns and notes; see `memctl.search.search` for the filters."""
        from memctl import search

        return search.search(self, query, **filters)

    def reindex(self, **options: Any) -> Any:
        """Rebuild the search index from the files."""
        from memctl import index

        return index.rebuild(self, **options)

    # ---- learning stores (memctl/curate/, memctl/notes.py, memctl/provenance.py) -----------

    def curate(self, **options: Any) -> Any:
        """Turn uncurated turns into cited notes; see `memctl.curate.run`."""
        from memctl import curate

        return curate.run(self, **options)

    def diff(self, **options: Any) -> Any:
        """Claim-level changes: what the agent learned; see `memctl.learned.diff`."""
        from memctl import learned

        return learned.diff(self, **options)

    def review(self, **options: Any) -> Any:
        """Proposals awaiting a human; see `memctl.curate.review`."""
        from memctl import curate

        return curate.review(self, **options)

    def verify(self, **options: Any) -> Any:
        """Check every citation in the vault against its raw turn."""
        from memctl import provenance

        return provenance.verify_vault(self, **options)

    # ---- recall (memctl/recall/) -----------------------------------------------------------

    def recall(
        self,
        query: str,
        *,
        user: str | None = None,
        budget: int | None = None,
        fmt: str = "md",
        history: bool = False,
        enabled: bool = True,
        now: datetime | None = None,
    ) -> RecallResult:
        """Cited memories for a prompt, packed into a token budget (see memctl.recall)."""
        from memctl.recall import recall

        return recall(
            self,
            query,
            user=user,
            budget=budget,
            fmt=fmt,
            history=history,
            enabled=enabled,
            now=now,
        )

    def context(
        self,
        *,
        user: str | None = None,
        budget: int | None = None,
        fmt: str = "md",
        enabled: bool = True,
        now: datetime | None = None,
    ) -> RecallResult:
        """The session-start block: profile, decisions, open threads, team knowledge."""
        from memctl.recall import context

        return context(self, user=user, budget=budget, fmt=fmt, enabled=enabled, now=now)

    def doctor(self, repair: bool = False) -> DoctorResult:
        """Check the vault's invariants; with `repair`, fix what can be fixed without loss."""
        from memctl import doctor

        return doctor.run(self, repair=repair)

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
        """Any reference memctl prints or accepts (see memctl/refs.py) -> what it names."""
        from memctl.refs import resolve

        return resolve(self, ref)

    def resolve_session(self, ref: str) -> str:
        """A session reference (id, prefix, digest, raw path; any #tN ignored) -> the raw path."""
        r = self.resolve(ref.split("#", 1)[0])
        if not r.is_raw:
            raise InputError(f"{r.path} is a {r.kind}, not a session")
        return r.path

    def read_session(self, ref: str) -> tuple[str, list[Message], dict[str, Any]]:
        rel = self.resolve_session(ref)
        text = read_text(self.root / rel)
        _, messages = parse_session(text, rel)
        return rel, messages, read_header(text, rel)

    def export(self, session: str, fmt: str = "jsonl") -> Iterator[str]:
        """Give back the ingested messages as JSONL lines, exactly as they came in; a turn
        reference gives back that one message."""
        if fmt != "jsonl":
            raise InputError(f"unknown export format {fmt!r}: use jsonl")
        r = self.resolve(session)
        if not r.is_raw:
            raise InputError(f"{r.path} is a {r.kind}; export takes a session or a turn")
        text = read_text(self.root / r.path)
        _, messages = parse_session(text, r.path)
        if r.turn is not None:
            messages = [self._turn(r, messages)]
        for m in messages:
            rec: dict[str, Any] = {}
            if m.id is not None:
                rec["id"] = m.id
            rec["role"] = m.role
            rec["content"] = m.content
            if m.name is not None:
                rec["name"] = m.name
            if m.timestamp is not None:
                rec["timestamp"] = m.timestamp
            for k, v in m.meta.items():
                rec.setdefault(k, v)
            yield json.dumps(rec, ensure_ascii=False)

    @staticmethod
    def _turn(r: Ref, messages: list[Message]) -> Message:
        n = r.turn or 0
        if not 1 <= n <= len(messages):
            raise InputError(f"{r.path} has turns t1..t{len(messages)}; no #t{n}")
        return messages[n - 1]

    def show(self, ref: str) -> ShowResult:
        """A note, an INDEX file, a session, or one turn, named in any reference form."""
        r = self.resolve(ref)
        text = read_text(self.root / r.path)
        if not r.is_raw:
            return ShowResult(r.kind, r.path, text, {})
        header, messages = parse_session(text, r.path)
        if r.turn is not None:
            m = self._turn(r, messages)
            return ShowResult(
                "turn",
                r.text,
                m.content,
                {
                    **message_record(m),
                    "session": header.session,
                    "user": header.user,
                    "scope": header.scope,
                },
            )
        return ShowResult(
            "session", r.path, text, {"session": header.session, "turns": len(messages)}
        )

    def status(self) -> StatusResult:
        """Counts per store and user, and what git has not recorded yet."""
        stores = {name: len(self.notes(name)) for name in self.config.stores}
        users: dict[str, dict[str, int]] = {}
        turns = 0
        sessions = self.sessions()
        for s in sessions:
            u = users.setdefault(str(s.get("user", "?")), {"sessions": 0, "turns": 0})
            u["sessions"] += 1
            u["turns"] += int(s.get("turns", 0))
            turns += int(s.get("turns", 0))
        head = self.history.head_sha()
        return StatusResult(
            str(self.root),
            stores,
            dict(sorted(users.items())),
            len(sessions),
            turns,
            self.history.dirty(),
            head,
        )

    def log(self, limit: int = 20) -> list[Any]:
        return self.history.log(limit)


MANY_OTHER_FILES = 100  # more files than this that are not notes: not a notes folder
_SURVEY_LIMIT = 20_000  # stop counting: the folder is far past the limit anyway
_TOOL_DIRS = frozenset({".git", ".memctl", ".obsidian"})


def _survey(root: Path) -> tuple[list[str], list[str]]:
    """The folder's markdown notes (adoptable) and everything else (left alone).

    A nested git repository is one entry of "everything else": its files belong to it.
    Notes in dot-folders are left alone too, as every store walk skips them.
    """
    notes: list[str] = []
    others: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        keep = []
        for d in sorted(dirnames):
            if here == root and d in _TOOL_DIRS:
                continue
            if (here / d / ".git").exists():
                others.append((here / d).relative_to(root).as_posix() + "/")
                continue
            keep.append(d)
        dirnames[:] = keep
        hidden = any(part.startswith(".") for part in here.relative_to(root).parts)
        for name in sorted(filenames):
            rel = (here / name).relative_to(root).as_posix()
            if here == root and name == ".gitignore":
                continue
            if name.endswith(".md") and not name.startswith(".") and not hidden:
                notes.append(rel)
            else:
                others.append(rel)
        if len(others) > _SURVEY_LIMIT:
            break
    return sorted(notes), sorted(others)


def _refuse_takeover(root: Path, env: dict[str, str], others: list[str]) -> None:
    home = env.get("HOME")
    if root == Path(root.anchor) or (home and root == Path(home).expanduser().resolve()):
        what = "the filesystem root" if root == Path(root.anchor) else "your home folder"
        raise InputError(
            f"refusing to make {what} a vault (it would hold everything below it); "
            "use a folder of its own, e.g. ~/memory, or pass --force",
            root,
        )
    if len(others) > MANY_OTHER_FILES:
        n = f"{len(others)}{'+' if len(others) > _SURVEY_LIMIT else ''}"
        raise InputError(
            f"refusing to adopt a folder with {n} files that are not notes "
            f"(e.g. {others[0]}); use an empty folder or one of markdown notes, "
            "or pass --force (they are never committed)",
            root,
        )


class _Created:
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


def _first_line(exc: BaseException) -> str:
    text = str(getattr(exc, "stderr", "") or exc).strip()
    for line in text.splitlines():
        line = line.strip().strip("'\"")
        if line and not line.startswith(("cmdline:", "stderr:", "stdout:")):
            return line
    return type(exc).__name__


def _stdin_bytes() -> IO[bytes]:
    import sys

    return sys.stdin.buffer


def _title_from(messages: list[Message]) -> str:
    first = next((m.content for m in messages if m.role == "user" and m.content.strip()), "")
    words = first.split()
    title = " ".join(words[:10])
    return (title[:80] + ("…" if len(words) > 10 or len(title) > 80 else "")) or "Untitled session"


def _normalise(m: Message) -> Message:
    """What a message looks like after a trip through a raw file (JSON-normal meta)."""
    if not m.meta:
        return m
    meta = json.loads(json.dumps(m.meta, ensure_ascii=False))
    return Message(m.role, m.content, m.id, m.name, m.timestamp, meta)


def _redact_transcript(tr: Transcript) -> tuple[Transcript, int]:
    """Redact every string a transcript brings: messages, and also its session id, title
    and transcript-level meta (a text preamble, an export's stray top-level keys), which
    end up in frontmatter, raw/INDEX.md and INDEX.md. The store masks whatever is left
    on its way to disk; doing it here keeps the index and the catalog, which are fed from
    these values, equal to the files."""
    import dataclasses

    from memctl.redact import redact

    messages, count = _redact_all(tr.messages)
    changes: dict[str, Any] = {}
    for name in ("session_id", "title"):
        value = getattr(tr, name)
        if isinstance(value, str):
            new, found = redact(value)
            if found:
                changes[name] = new
                count += len(found)
    if tr.meta:
        meta, n = _redact_value(tr.meta)
        if n:
            changes["meta"] = meta
            count += n
    if messages is not tr.messages:
        changes["messages"] = messages
    return (dataclasses.replace(tr, **changes) if changes else tr), count


def _redact_value(value: Any, key: str | None = None) -> tuple[Any, int]:
    """Redact every string inside a JSON-like value; under a key the key is context
    ({"password": "hunter2"} is a secret even though "hunter2" alone is not)."""
    from memctl.redact import redact, redact_field

    if isinstance(value, str):
        new, found = redact_field(key, value) if key else redact(value)
        return new, len(found)
    if isinstance(value, list):
        pairs = [_redact_value(v) for v in value]
        return [v for v, _ in pairs], sum(n for _, n in pairs)
    if isinstance(value, dict):
        out, count = {}, 0
        for k, v in value.items():
            out[k], n = _redact_value(v, str(k))
            count += n
        return out, count
    return value, 0


def _redact_all(messages: list[Message]) -> tuple[list[Message], int]:
    """Redact content, the speaker's name and every string inside meta (tool inputs carry
    secrets too); the list itself comes back unchanged when nothing was found."""
    from memctl.redact import redact

    count = 0
    out = []
    for m in messages:
        content, found = redact(m.content)
        n = len(found)
        meta, k = _redact_value(m.meta) if m.meta else (m.meta, 0)
        # a speaker's name is rarely long enough to hold a secret; the store checks it anyway
        name, found_name = redact(m.name) if m.name and len(m.name) >= 8 else (m.name, [])
        n += k + len(found_name)
        # almost every message is clean: keep it rather than build an equal copy
        if n:
            m = Message(m.role, content, m.id, name, m.timestamp, meta)
            count += n
        out.append(m)
    return (out if count else messages), count


_NOT_A_NAME = frozenset({"user", "human", "me", "you", "customer", "client", "anonymous"})


def _speaker(tr: Transcript, login: str) -> tuple[str, str]:
    """Whose session this is when `--user` is not given: the human the transcript names.

    Chat exports and team transcripts name who spoke; the login name of whoever runs the
    import is only a last resort, and the result says when it was used.
    """
    for m in tr.messages:
        name = (m.name or "").strip()
        if m.role == "user" and name and name.lower() not in _NOT_A_NAME:
            slug = slugify(name, 40)
            if slug:
                return slug, "transcript"
    return login, "login"
