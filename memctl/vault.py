"""The front door: `Vault`, one method per thing a user or agent does with a vault.

A Vault is the floor (`memctl.core.floor.Floor`: files, lock, git, index) with the user
actions on top; each method composes the features below it (ingest/, curate/, recall/,
gitops/, index/) and returns a result object. The CLI, hooks, MCP server and
LearningMachine call these methods and nothing lower.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, overload

from memctl.core.config import (
    CONFIG_REL,
    DEFAULT_CONFIG_TOML,
    HOOK_ALERTS_REL,
    Config,
    load_config,
)
from memctl.core.floor import Floor, find_root
from memctl.core.history import History
from memctl.core.model import Message
from memctl.core.raw import message_record, parse_session
from memctl.core.store import VaultLock, read_text
from memctl.errors import InputError, LockTimeoutError, MemctlError, VaultNotFoundError
from memctl.requests import (
    CurateRequest,
    ForgetRequest,
    IngestRequest,
    RecallRequest,
    RememberRequest,
    Request,
    SearchRequest,
)
from memctl.results import IngestResult, InitResult, SessionChange, ShowResult, StatusResult

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping
    from datetime import date, datetime

    from memctl.core.provenance import VerifyResult
    from memctl.core.refs import Ref
    from memctl.curate.engine import CurateResult
    from memctl.curate.proposals import ReviewResult
    from memctl.curate.remember import Remembered
    from memctl.gitops.doctor import DoctorResult
    from memctl.gitops.drift import BlameLine, DriftResult
    from memctl.gitops.forget import ForgetResult
    from memctl.gitops.gc import GcResult
    from memctl.gitops.learned import DiffResult
    from memctl.gitops.sync import SyncResult
    from memctl.gitops.undo import UndoResult
    from memctl.index.schema import ReindexResult
    from memctl.index.search import SearchResult
    from memctl.recall import RecallResult
    from memctl.recall.access import UserAccess

__all__ = ["GITIGNORE", "HOOK_ALERTS_REL", "Vault", "agent_ask", "agent_compacting", "find_root"]

GITIGNORE = """\
# memctl: the index and caches are rebuilt from the files; never commit them.
.memctl/index/
.memctl/cache/
.memctl/lock
.memctl/*.tmp
.memctl/pathspec.*
.memctl/message.*
.memctl/conflicts/
.memctl/config.local.toml
.obsidian/workspace*.json
"""

ProgressFn = Callable[[int, int, str], None]




class Vault(Floor):
    """A memctl vault: markdown files in a git repository, plus a rebuildable index."""

    def __init__(self, root: Path, config: Config) -> None:
        super().__init__(root, config)
        # whoever takes the lock first finishes or undoes what a killed command left
        self.lock.on_acquire = self._recover

    # ---- crash recovery (memctl/gitops/recovery.py) ------------------------------------------

    def recover_if_needed(self) -> None:
        """Take the lock briefly if a killed command left work behind (the lock recovers)."""
        from memctl.gitops import recovery

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
        from memctl.gitops import recovery

        if not recovery.needed(self.root):
            return
        # a lock taken without waiting is a reader's (a hook on every prompt, a search's
        # index refresh): it never waits for someone else's git either
        res = recovery.recover(self, 0.0 if self.lock.timeout == 0 else 5.0)
        if res:
            self.notice(res.summary())

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
        from memctl.core import adopt, templates
        from memctl.curate import indexfiles
        from memctl.curate.specs import STATE_REL, render_state
        from memctl.gitops import mergedrivers, remotetrust

        env = dict(os.environ) if env is None else env
        root = Path(path).expanduser().resolve()
        # a fresh clone of a remote whose HEAD names no branch: join the vault it holds
        joined = remotetrust.join_remote(root) if root.is_dir() else None
        existed = (root / ".memctl").is_dir()
        found = adopt.Survey()
        if root.is_dir():
            unborn = not adopt.has_commits(root)
            if not existed or unborn:
                # a vault copied or unzipped without its .git is adopted whole: its
                # sessions, notes and memctl's own files, in the one init commit
                found = adopt.survey(root, own=existed and unborn)
                if not force and not existed:
                    adopt.refuse_takeover(root, env, found)
        notes = found.notes + found.own
        created = adopt.Created(root)
        try:
            root.mkdir(parents=True, exist_ok=True)
            history = History.init(root)
            lock = VaultLock(root)
            with lock:
                config = load_config(root, env)
                vault = cls(root, config)
                vault.history = history
                adopted = notes if not history.has_commits() else []
                n = len(adopted)
                what = "file" if existed else "note"  # a vault's own files, or notes
                with vault.change(
                    "init",
                    subject="init: memctl vault"
                    + (f", adopted {n} {what}{'s' * (n != 1)}" if adopted else ""),
                    refresh=False,
                    index=False,
                ) as ch:
                    tx = ch.tx
                    ch.paths = list(adopted)
                    ch.trailers["Memctl-Adopted"] = str(n)
                    if not (root / CONFIG_REL).exists():
                        tx.write(CONFIG_REL, DEFAULT_CONFIG_TOML)
                    gi = root / ".gitignore"
                    ignore = read_text(gi) if gi.exists() else ""
                    if "# memctl:" not in ignore:
                        ignore = (ignore.rstrip("\n") + "\n\n" if ignore else "") + GITIGNORE
                    for more in (adopt.ignore_lines(found.secrets, ignore),
                                 adopt.left_alone_lines(root, found.skipped)):  # fmt: skip
                        if more:
                            ignore = ignore.rstrip("\n") + "\n\n" + more
                    if not gi.exists() or ignore != read_text(gi):
                        tx.write(".gitignore", ignore)
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
                    if adopted:
                        # the INDEX files list the notes adopted, as every later write would
                        indexfiles.refresh(vault, tx)
                # git never takes merge drivers from a remote: every clone registers its own
                mergedrivers.install(root)
        except BaseException as exc:
            created.remove()
            if isinstance(exc, MemctlError | KeyboardInterrupt):
                raise
            if isinstance(exc, OSError):
                raise MemctlError(f"cannot initialise the vault: {exc.strerror}", root) from None
            why = adopt.first_line(exc)
            raise MemctlError(f"cannot initialise the vault: {why}", root) from None
        waiting = remotetrust.adopt_clone(root, joined is not None) if existed else []
        if waiting:
            vault.config = load_config(root, env)
        if existed and not (root / ".memctl" / "index").exists():
            vault.reindex()  # a fresh clone: searchable at once
        return vault, InitResult(
            str(root),
            not existed,
            adopted,
            ch.commit,
            found.others,
            joined,
            waiting,
            found.skipped,
            found.secrets,
        )


    # ---- a face's request (memctl/requests.py) ----------------------------------------------

    @overload
    def handle(self, request: IngestRequest) -> IngestResult: ...
    @overload
    def handle(self, request: SearchRequest) -> SearchResult: ...
    @overload
    def handle(self, request: CurateRequest) -> CurateResult: ...
    @overload
    def handle(self, request: RememberRequest) -> Remembered: ...
    @overload
    def handle(self, request: ForgetRequest) -> ForgetResult: ...
    @overload
    def handle(self, request: RecallRequest) -> RecallResult: ...

    def handle(self, request: Request) -> Any:
        """Carry out what a face asked for: the method of its action, given its fields."""
        return getattr(self, request.action)(**request.kwargs())

    # ---- ingest (memctl/ingest/) -----------------------------------------------------------

    def ingest(
        self,
        sources: list[str | Path],
        *,
        fmt: str | None = None,
        user: str | None = None,
        scope: str | None = None,
        session: str | None = None,
        redact: bool | None = None,
        stdin: BinaryIO | None = None,
        progress: Callable[[int, int, str], None] | None = None,
        skip_bad_lines: bool = False,
    ) -> IngestResult:
        """Write transcripts verbatim as raw sessions; all of it, or none of it (but with
        `skip_bad_lines`, a Claude Code line that cannot be read is left out and listed)."""
        from memctl.ingest.run import ingest

        return ingest(
            self,
            sources,
            fmt=fmt,
            user=user,
            scope=scope,
            session=session,
            redact=redact,
            stdin=stdin,
            progress=progress,
            skip_bad_lines=skip_bad_lines,
        )

    # ---- search (memctl/index/) ------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        kind: str | Iterable[str] | None = None,
        store: str | Iterable[str] | None = None,
        user: str | Iterable[str] | None = None,
        scope: str | Iterable[str] | None = None,
        speaker: str | Iterable[str] | None = None,
        status: str | Iterable[str] | None = "active",
        since: str | date | datetime | None = None,
        until: str | date | datetime | None = None,
        limit: int = 10,
        sync: bool = True,
        now: datetime | None = None,
        section: str | Iterable[str] | None = None,
        cite: str | Iterable[str] | None = None,
        link: str | Iterable[str] | None = None,
        snippets: bool = True,
        project: str | None = None,
    ) -> SearchResult:
        """Ranked hits over turns, notes and claims; every filter narrows, none widens.
        `project` (a directory, or a project note's name or id) keeps the project's notes
        and the turns of sessions worked in it."""
        from memctl.index.search import search

        kw: dict[str, Any] = dict(kind=kind, store=store, user=user, scope=scope, speaker=speaker,
                  status=status, since=since, until=until, sync=sync, now=now,
                  section=section, cite=cite, link=link, snippets=snippets)  # fmt: skip
        if project:
            from memctl.gitops.projects import project_hits

            return project_hits(self, project, lambda n: search(self, query, limit=n, **kw), limit)
        return search(self, query, limit=limit, **kw)

    def reindex(self, paths: Iterable[str | Path] | None = None) -> ReindexResult:
        """Rebuild the search index from the files (only `paths` and what moved, if given)."""
        from memctl.index.writer import rebuild

        return rebuild(self, paths)

    # ---- learning stores (memctl/curate/) --------------------------------------------------

    def curate(
        self,
        *,
        store: str | list[str] | None = None,
        session: str | None = None,
        dry_run: bool = False,
        model: str | None = None,
        curator: str | None = None,
        today: str | None = None,
    ) -> CurateResult:
        """Turn uncurated turns into cited notes, one commit per run."""
        from memctl.curate.engine import run

        return run(
            self,
            store=store,
            session=session,
            dry_run=dry_run,
            model=model,
            curator=curator,
            today=today,
        )

    def review(
        self,
        *,
        accept: list[str] | tuple[str, ...] = (),
        reject: list[str] | tuple[str, ...] = (),
        accept_all: bool = False,
        reject_all: bool = False,
        force: bool = False,
        today: str | None = None,
    ) -> ReviewResult:
        """Proposals awaiting a human: list them, or accept or reject some or all."""
        from memctl.curate.proposals import review

        return review(
            self,
            accept=accept,
            reject=reject,
            accept_all=accept_all,
            reject_all=reject_all,
            force=force,
            today=today,
        )

    def verify(self, paths: list[str] | None = None, raw: bool = True) -> VerifyResult:
        """Check every citation (or those in `paths`) against its raw turn, and raw hashes."""
        from memctl.core.provenance import verify_vault

        return verify_vault(self, paths, raw)

    def remember(
        self,
        user: str,
        claim: str,
        *,
        source: str | None = None,
        quote: str | None = None,
        store: str = "knowledge",
        note: str | None = None,
        section: str | None = None,
        scope: str = "user",
        own: bool = False,
        replaces: str | None = None,
        today: str | None = None,
    ) -> Remembered:
        """One claim an agent records itself: cited and verified, or marked as its own.

        `source` may be a whole session (memctl finds the person's message holding the
        quote); a live session a hook has seen is first brought up to date from its
        transcript, so the agent can quote what was just said. `replaces` supersedes a
        claim of the same note."""
        from memctl.curate.agentic import transcript_of
        from memctl.curate.remember import remember

        session = (source or "").split("#", 1)[0].strip()
        live = transcript_of(self.root, session) if session else None
        if live is not None and not own:
            # new turns only; a session whose past differs is refused by ingest, as ever
            self.ingest([live], fmt="claude_code", session=session)
        return remember(
            self,
            user,
            claim,
            source=source,
            quote=quote,
            store=store,
            note=note,
            section=section,
            scope=scope,
            own=own,
            replaces=replaces,
            today=today,
        )

    # ---- history of what was learned (memctl/gitops/) --------------------------------------

    def project_dir(self, project: str) -> str | None:
        """The working directory a project (its note's name, path or id) records."""
        from memctl.recall.project import resolve_project

        return resolve_project(self.root, project, self.config.home)[1] or None

    def diff(
        self,
        *,
        since: str | None = None,
        rev_range: str | None = None,
        store: str | list[str] | None = None,
        uncommitted: bool | None = None,
        project: str | None = None,
        session: str | None = None,
    ) -> DiffResult:
        """Claim-level changes: what the agent learned, changed and dropped; `project`: only
        that project's notes and claims; `session`: only what that session taught (claims
        citing its turns)."""
        from memctl.gitops.learned import diff

        res = diff(self, since=since, rev_range=rev_range, store=store, uncommitted=uncommitted)
        if project or session:
            from memctl.gitops.projects import narrow_diff

            res = narrow_diff(self, res, project, session)
        return res

    def forget(
        self,
        ref: str | None = None,
        *,
        user: str | None = None,
        dry_run: bool = False,
        purge: bool = False,
    ) -> ForgetResult:
        """Remove a session (or everything of a user) and every claim that rests on it."""
        from memctl.gitops.forget import forget

        return forget(self, ref, user=user, dry_run=dry_run, purge=purge)

    def undo(self, *, dry_run: bool = False) -> UndoResult:
        """Revert the last memctl command's commit."""
        from memctl.gitops.undo import undo

        return undo(self, dry_run)

    def rollback(self, note: str, rev: str, *, dry_run: bool = False) -> UndoResult:
        """Put one note back as it was at `rev`."""
        from memctl.gitops.undo import rollback

        return rollback(self, note, rev, dry_run)

    def sync(self, remote: str | None = None, *, accept_config: bool = False) -> SyncResult:
        """Pull a teammate's memory, merge it claim by claim, push ours; `accept_config`
        takes the protected settings a pull changed (docs/sync.md)."""
        from memctl.gitops.sync import sync

        return sync(self, remote, accept_config=accept_config)

    def gc(self, *, apply: bool = False, now: datetime | None = None) -> GcResult:
        """Retention: what old raw sessions and stale claims would go (with `apply`, go)."""
        from memctl.gitops.gc import gc

        return gc(self, apply=apply, now=now)

    def blame(self, note: str) -> list[BlameLine]:
        """Which command and which turn put each line of a note there."""
        from memctl.gitops.drift import blame

        return blame(self, note)

    def drift(self, note: str | None = None) -> DriftResult:
        """Claims whose wording moved away from the quotes that support them."""
        from memctl.gitops.drift import drift

        return drift(self, note)

    def doctor(self, repair: bool = False) -> DoctorResult:
        """Check the vault's invariants; with `repair`, fix what can be fixed without loss."""
        from memctl.gitops.doctor import run

        return run(self, repair=repair)

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
        project: str | None = None,
        session: str | None = None,
    ) -> RecallResult:
        """Cited memories for a prompt, packed into a token budget (see memctl.recall);
        `project`: the working directory, whose project note then stands; `session`: the
        session the prompt is made in, whose turns the agent has already."""
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
            project=project,
            session=session,
        )

    def warm(self) -> None:
        """Load what a first recall would (its modules, the tokenizer, the index): a
        resident process calls it before it listens (memctl.recall.warm)."""
        from memctl.recall import warm

        warm(self)

    def context(
        self,
        *,
        user: str | None = None,
        budget: int | None = None,
        fmt: str = "md",
        enabled: bool = True,
        now: datetime | None = None,
        project: str | None = None,
        user_from: str | None = None,
    ) -> RecallResult:
        """The session-start block: the project's note (`project`: the working directory),
        decisions and sessions, profile, instructions, team knowledge; `user_from` says
        where the user's name came from (a hook that was given none)."""
        from memctl.recall import context

        return context(
            self, user=user, budget=budget, fmt=fmt, enabled=enabled, now=now, project=project,
            user_from=user_from,
        )  # fmt: skip

    def access(self, user: str) -> UserAccess:
        """What `user` may read here: scopes, and notes and INDEX files as they may see them."""
        from memctl.recall.access import UserAccess

        return UserAccess(self, user)

    @staticmethod
    def session_label(raw_path: str) -> str:
        """The short name recall and footnotes give a session (`64628a`), else its path."""
        from memctl.core.raw import short_digest

        return short_digest(raw_path) or raw_path

    @staticmethod
    def write_outside(path: Path, text: str) -> None:
        """Write a file that is not the vault's (an agent's settings) atomically, as the
        vault's own files are: a killed write leaves the old file, never half of it."""
        from memctl.core.store import atomic_write

        atomic_write(path, text)

    @staticmethod
    def git_error(exc: BaseException) -> MemctlError:
        """A fault gitpython raised (a damaged repository, a missing object) as one line."""
        from memctl.core.history import git_error

        return git_error(exc)

    @staticmethod
    def recall_off(env: Mapping[str, str]) -> bool:
        """`MEMCTL_RECALL=off` (or 0/false/no/none): the caller wants an answer without memory."""
        from memctl.recall.results import disabled_by

        return disabled_by(env)

    # ---- reading ---------------------------------------------------------------------------

    def a_person_spoke(self, change: SessionChange) -> bool:
        """Do the turns an ingest added to a session hold anything a person said (not the
        agent's turns, not tool output pasted in by the harness)? What the Stop hook asks
        before telling the person that curating a save kept nothing."""
        from memctl.core.provenance import by_person
        from memctl.recall.turns import is_output

        _, messages, _ = self.read_session(change.path)
        new = messages[len(messages) - change.turns_added :] if change.turns_added else []
        # a person's turn (no sub-agent brief, no command's output), and no slash command
        return any(by_person(m) and m.content.strip() and not is_output(m.role, m.content)
                   for m in new)  # fmt: skip

    def export(self, session: str, fmt: str = "jsonl") -> Iterator[str]:
        """Give back the ingested messages, exactly as they came in for jsonl, as a transcript
        memctl reads back to the same messages for the other formats it writes; a turn
        reference gives back that one message."""
        from memctl.ingest.formats.write import WRITES, write

        if fmt not in WRITES:
            raise InputError(f"unknown export format {fmt!r}: use {', '.join(WRITES)}")
        r = self.resolve(session)
        if not r.is_raw:
            raise InputError(f"{r.path} is a {r.kind}; export takes a session or a turn")
        text = read_text(self.root / r.path)
        header, messages = parse_session(text, r.path)
        if r.turn is not None:
            messages = [self._turn(r, messages)]
        from memctl.core.attachments import load

        return write(messages, fmt, session=header.session, load=lambda rel: load(self.root, rel))

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
                self.turn_text(m),
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


def agent_ask(root: Path, payload: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    """The Stop hook's once-per-session request that the agent record the session's
    decisions, or None (memctl.curate.agentic says when)."""
    from memctl.curate.agentic import stop_ask

    return stop_ask(root, payload, env)


def agent_compacting(root: Path, payload: Mapping[str, Any]) -> str | None:
    """PreCompact: arm the ask for the session's next Stop; its id, or None."""
    from memctl.curate.agentic import compacting

    return compacting(root, payload)
