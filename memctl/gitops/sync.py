"""`memctl sync [REMOTE]`: share a vault. Pull with rebase, re-index what changed, push.

The merge drivers (memctl.gitops.mergedrivers) make the rebase clean: notes merge claim by claim,
INDEX files line by line, raw sessions by their longer agreeing version, watermarks by the
further one. What a driver could not decide (a claim changed two ways, a session whose
turns differ) it leaves in `.memctl/conflicts/`; sync turns those into proposals for
`memctl review` and sessions of their own, in one commit. Nothing is ever force-pushed:
a remote that moved while we rebased is pulled again, a few times, then sync gives up and
says so.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.core.config import CONFIG_REL, load_config
from memctl.core.history import record_head
from memctl.core.localstate import limits
from memctl.core.store import Transaction
from memctl.errors import ConflictError, InputError, MemctlError
from memctl.gitops import pulledcuration, remotetrust, syncrecovery

if TYPE_CHECKING:
    from memctl.core.floor import Floor

ATTEMPTS = 3


@dataclass
class SyncResult:
    """What one sync fetched, replayed, pushed, proposed and re-indexed."""

    remote: str
    branch: str
    pulled: int = 0  # commits that came in
    replayed: int = 0  # local commits rebased onto them
    pushed: int = 0
    proposals: list[str] = field(default_factory=list)
    sessions_kept_apart: list[str] = field(default_factory=list)
    index_files: list[str] = field(default_factory=list)
    reindexed: int = 0
    reported: list[str] = field(default_factory=list)  # pulled changes worth a word
    config_waiting: list[str] = field(default_factory=list)  # pulled settings held
    config_accepted: list[str] = field(default_factory=list)
    commit: str | None = None
    head: str = ""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class _Git:
    def __init__(self, vault: Floor) -> None:
        who = vault.human_identity()
        self.root = vault.root
        self.env = {
            **os.environ,
            "GIT_AUTHOR_NAME": who.name,
            "GIT_AUTHOR_EMAIL": who.email,
            "GIT_COMMITTER_NAME": who.name,
            "GIT_COMMITTER_EMAIL": who.email,
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_EDITOR": "true",
        }

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        proc = subprocess.run(
            ["git", "-C", str(self.root), *args],
            capture_output=True,
            text=True,
            env=self.env,
            check=False,
        )
        if check and proc.returncode != 0:
            msg = (proc.stderr.strip() or proc.stdout.strip()).splitlines()
            raise MemctlError(f"git {args[0]} failed: {msg[-1] if msg else 'no output'}")
        return proc

    def out(self, *args: str) -> str:
        return self.run(*args).stdout.strip()


def sync(vault: Floor, remote: str | None = None, accept_config: bool = False) -> SyncResult:
    """Pull (rebase), re-index, push; never force. One vault lock for all of it.

    `accept_config`: the user takes the protected settings a pull changed (remotetrust.py).
    """
    from memctl.gitops import mergedrivers

    g = _Git(vault)
    with vault.lock:
        if accept_config:
            accepted = remotetrust.accept(vault.root, _tracked_config(vault), _agent(vault))
        branch = g.out("rev-parse", "--abbrev-ref", "HEAD")
        if branch == "HEAD":
            raise ConflictError("sync needs a branch; HEAD is detached (git switch main)")
        remotes = g.out("remote").split()
        if remote is None:
            upstream = g.run("config", f"branch.{branch}.remote", check=False).stdout.strip()
            remote = upstream or ("origin" if "origin" in remotes else (remotes or [""])[0])
        if not remote or remote not in remotes:
            raise InputError(
                f"no remote {remote!r}: add one with `git remote add origin URL`"
                if remote
                else "this vault has no git remote: `git remote add origin URL`, then sync"
            )
        # untracked files ride along (git refuses, and sync says so, if a pull would clobber one)
        dirty = [x for x in vault.history.dirty() if not x.startswith("??")]
        if dirty:
            raise ConflictError(
                f"sync needs everything committed; {len(dirty)} uncommitted change(s), e.g. "
                f"{dirty[0].strip()}: commit them (or `git stash`) and sync again"
            )
        mergedrivers.install(vault.root)
        res = SyncResult(remote, branch)
        if accept_config:
            res.config_accepted = accepted
        start = g.out("rev-parse", "HEAD")
        _clear_aside(vault.root)
        journal = syncrecovery.start(vault.root, branch, start)
        try:
            for attempt in range(ATTEMPTS):
                fixes = _pull(vault, g, res)
                _settle(vault, g, res, fixes)
                if _push(g, res):
                    break
                if attempt == ATTEMPTS - 1:
                    raise ConflictError(
                        f"{remote}/{branch} kept moving while syncing; nothing was force-pushed, "
                        "run `memctl sync` again"
                    )
        finally:
            journal.unlink(missing_ok=True)
        res.config_waiting = remotetrust.waiting(vault.root, _tracked_config(vault), _agent(vault))
        res.head = g.out("rev-parse", "HEAD")
        if res.head != start:
            changed = [
                p for p in g.out("diff", "--name-only", "-z", start, res.head).split("\0") if p
            ]
            res.reindexed = len(changed)
            vault.after_write(changed)
        # the derived files are in step with the HEAD sync left: without this record, the
        # next command would take the pull for a git change made outside memctl
        record_head(vault.root, res.head)
    return res


def _pull(vault: Floor, g: _Git, res: SyncResult) -> dict[str, str]:
    """Fetch, judge, rebase. The curation state this clone does not take from the pull
    (memctl.gitops.pulledcuration), as files for `_settle` to write."""
    g.run("fetch", "--quiet", res.remote)
    upstream = f"refs/remotes/{res.remote}/{res.branch}"
    if g.run("rev-parse", "--verify", "--quiet", upstream, check=False).returncode != 0:
        _beside(g, res)
        return {}  # the remote has no such branch yet: the push creates it
    mb = g.run("merge-base", "HEAD", upstream, check=False)
    if mb.returncode != 0:
        raise ConflictError(
            f"this vault and {res.remote}/{res.branch} share no history (two separate "
            f"`memctl init`s); clone the remote instead and run `memctl init` in the clone"
        )
    base = mb.stdout.strip()
    res.pulled += int(g.out("rev-list", "--count", f"HEAD..{upstream}") or 0)
    if base == g.out("rev-parse", upstream):
        return {}  # nothing new there
    note_limit, raw_limit = limits(vault.config.data)
    came = remotetrust.incoming(vault.root, g.env, base, upstream, note_limit, raw_limit,
                          vault.session_map())
    if came.refused:
        more = f" (and {len(came.refused) - 3} more)" if len(came.refused) > 3 else ""
        raise ConflictError(
            f"sync stopped: {res.remote}/{res.branch} holds what a pull may not bring: "
            + "; ".join(came.refused[:3]) + more
            + ". Nothing was pulled; your vault is as it was. Ask whoever pushed it to remove "
            "it (see docs/sync.md)"
        )
    res.reported += [x for x in came.reported if x not in res.reported]
    res.replayed += int(g.out("rev-list", "--count", f"{upstream}..HEAD") or 0)
    ours = g.out("rev-parse", "HEAD")
    # store templates are extraction prompts: what a pull changes in them waits for the user
    tpls = sorted({sc.template for sc in vault.config.stores.values() if sc.template})
    moved = [p for p in g.out("diff", "--name-only", "-z", ours, upstream, "--", *tpls)
             .split("\0") if p] if tpls else []  # fmt: skip
    before = {p: _show_at(g, ours, p) for p in moved}
    proc = g.run("rebase", "--quiet", upstream, check=False)
    if proc.returncode != 0:
        status = g.run("status", "--porcelain", check=False).stdout
        g.run("rebase", "--abort", check=False)
        where = [line[3:] for line in status.splitlines() if line[:2] in ("UU", "AA", "UD", "DU")]
        gone = [line[3:] for line in status.splitlines() if line[:2] in ("UD", "DU")]
        if gone:
            raise ConflictError(_deleted_here(res, upstream, gone))
        raise ConflictError(
            "sync stopped: git could not rebase onto "
            f"{res.remote}/{res.branch} ({', '.join(where[:3]) or proc.stderr.strip()[:200]}); "
            "your vault is as it was before sync"
        )
    remotetrust.mark_pulled(vault.root, came.commits)
    if before:
        remotetrust.hold_templates(vault.root, before)
    fixes, said = pulledcuration.screen(vault.root, ours)
    res.reported += [x for x in said if x not in res.reported]
    if came.config_changed:
        remotetrust.hold(vault.root, came.config_before, came.config_after)
        vault.config = load_config(vault.root, dict(os.environ))
    return fixes


def _deleted_here(res: SyncResult, upstream: str, gone: list[str]) -> str:
    """A pull deletes a file a local commit changed: git stops the rebase, and every later
    sync stopped the same way with nothing said about a way out. Say both ways."""
    up = upstream.removeprefix("refs/remotes/")
    rel = gone[0]
    more = f" (and {len(gone) - 1} more)" if len(gone) > 1 else ""
    return (
        f"sync stopped: {res.remote}/{res.branch} deletes {rel}{more}, which a commit of yours "
        "changed; your vault is as it was before sync. To keep your version: `git rebase "
        f"{up}`, `git add {rel}`, `GIT_EDITOR=true git rebase --continue`, then `memctl "
        f"sync`. To take the deletion: the same with `git rm {rel}` in place of `git add` "
        "(and `git rebase --skip` if git says nothing is left to commit)"
    )


def _show_at(g: _Git, rev: str, rel: str) -> str | None:
    proc = g.run("show", f"{rev}:{rel}", check=False)
    return proc.stdout if proc.returncode == 0 else None


def _has(g: _Git, rev: str) -> bool:
    return g.run("rev-parse", "--verify", "--quiet", rev, check=False).returncode == 0


def _push(g: _Git, res: SyncResult) -> bool:
    upstream = f"refs/remotes/{res.remote}/{res.branch}"
    ahead = (
        int(g.out("rev-list", "--count", f"{upstream}..HEAD") or 0)
        if _has(g, upstream)
        else int(g.out("rev-list", "--count", "HEAD") or 0)
    )
    if not ahead:
        return True
    if _has(g, upstream):
        _outgoing(g, upstream)
    proc = g.run("push", "--quiet", res.remote, f"HEAD:refs/heads/{res.branch}", check=False)
    if proc.returncode == 0:
        res.pushed += ahead
        if not g.run("config", f"branch.{res.branch}.remote", check=False).stdout.strip():
            g.run("branch", "--quiet", "--set-upstream-to", f"{res.remote}/{res.branch}",
                  check=False)  # fmt: skip
        return True
    if "rejected" in proc.stderr or "non-fast-forward" in proc.stderr or "fetch first" in (
        proc.stderr
    ):
        return False
    raise MemctlError(f"git push failed: {proc.stderr.strip().splitlines()[-1:]}")


def _outgoing(g: _Git, upstream: str) -> None:
    """What this clone would push is judged as every teammate's sync will judge it: a
    teammate's sync refuses a pull with a hidden tool file, an executable, a link, an
    oversized note (docs/sync.md), and then never syncs again until it is gone. Better
    said here, where it was made, before anything is pushed."""
    from memctl.core.localstate import limits

    data = load_config(g.root, dict(os.environ)).data
    note_limit, raw_limit = limits(data)
    mine = remotetrust.incoming(g.root, g.env, upstream, "HEAD", note_limit, raw_limit)
    if mine.refused:
        more = f" (and {len(mine.refused) - 3} more)" if len(mine.refused) > 3 else ""
        raise ConflictError(
            "sync stopped before pushing: your commits hold what every teammate's sync "
            "refuses: " + "; ".join(mine.refused[:3]) + more + ". Nothing was pushed; take "
            "it out in a new commit (see docs/sync.md) and sync again"
        )


def _settle(vault: Floor, g: _Git, res: SyncResult, fixes: dict[str, str]) -> None:
    """Proposals and kept-apart sessions from the drivers, stale INDEX files, the curation
    state this clone keeps its own (`fixes`): one commit."""
    from memctl.curate import indexfiles
    from memctl.gitops.mergedrivers import CONFLICTS_DIR

    root = vault.root
    aside = root / CONFLICTS_DIR
    with vault.change("sync", index=False) as ch:
        tx = ch.tx
        if aside.is_dir() and not aside.is_symlink():
            for rel in _aside_files(aside):
                text = _read_nofollow(aside / rel)
                if text is None:
                    continue
                if rel.startswith("raw/"):
                    target = _apart(vault, rel, text, tx)
                    res.sessions_kept_apart.append(target)
                else:
                    tx.write(rel, text)
                    res.proposals.append(rel)
        for rel, text in fixes.items():
            tx.write(rel, text)
        res.index_files = indexfiles.refresh(vault, tx)
        if not tx.touched:
            return
        bits = []
        if res.proposals:
            bits.append(f"{len(res.proposals)} conflicting notes proposed for review")
        if res.sessions_kept_apart:
            bits.append(f"{len(res.sessions_kept_apart)} divergent sessions kept apart")
        if res.index_files:
            bits.append("INDEX files regenerated")
        if fixes:
            bits.append("curation state screened")
        ch.subject = "sync: " + ", ".join(bits)
        ch.trailers["Memctl-Remote"] = res.remote
        ch.trailers["Memctl-Proposals"] = str(len(res.proposals))
    res.commit = ch.commit
    shutil.rmtree(aside, ignore_errors=True)


def _apart(vault: Floor, rel: str, text: str, tx: Transaction) -> str:
    """Their version of a session whose turns differ from ours, as a session of its own."""
    import hashlib

    digest = hashlib.sha1(text.encode("utf-8", "surrogatepass")).hexdigest()[:6]
    text = re.sub(r"^session: (.*)$", lambda m: f"session: {m.group(1)}-{digest}", text, count=1,
                  flags=re.M)  # fmt: skip
    stem = Path(rel).stem  # already ends in the driver's digest
    target = f"{Path(rel).parent.as_posix()}/{stem}.md"
    n = 2
    while (vault.root / target).exists():
        target = f"{Path(rel).parent.as_posix()}/{stem}-{n}.md"
        n += 1
    tx.write(target, text)
    return target


# ---- what only this clone's merge drivers write, read without following a link -------------


def _aside_files(aside: Path) -> list[str]:
    """Regular `*.md` files below the conflicts folder; links (to files or folders) skipped."""
    out = []
    for dirpath, dirnames, filenames in os.walk(aside, followlinks=False):
        here = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if not (here / d).is_symlink())
        for name in sorted(filenames):
            p = here / name
            if name.endswith(".md") and not p.is_symlink() and p.is_file():
                out.append(p.relative_to(aside).as_posix())
    return out


def _read_nofollow(p: Path) -> str | None:
    try:
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as fh:
        return fh.read().decode("utf-8", "replace")


def _clear_aside(root: Path) -> None:
    """Links and anything not a regular file in the conflicts folder are not ours: gone."""
    from memctl.gitops.mergedrivers import CONFLICTS_DIR

    aside = root / CONFLICTS_DIR
    if aside.is_symlink():
        aside.unlink()
        return
    if not aside.is_dir():
        return
    for dirpath, dirnames, filenames in os.walk(aside, followlinks=False):
        here = Path(dirpath)
        for name in [*dirnames, *filenames]:
            p = here / name
            if p.is_symlink() or not (p.is_dir() or p.is_file()):
                p.unlink(missing_ok=True)


def _agent(vault: Floor) -> tuple[str, str]:
    return vault.config.agent.name, vault.config.agent.email


def _tracked_config(vault: Floor) -> str | None:
    p = vault.root / CONFIG_REL
    try:
        return p.read_text(encoding="utf-8") if not p.is_symlink() else None
    except OSError:
        return None


# ---- one history ------------------------------------------------------------------------------


def _beside(g: _Git, res: SyncResult) -> None:
    """Our branch is new on the remote: refuse a new root beside a vault on another branch."""
    refs = g.out("for-each-ref", "--format=%(refname)", f"refs/remotes/{res.remote}/")
    for ref in refs.split():
        name = ref[len(f"refs/remotes/{res.remote}/"):]
        if name == "HEAD":
            continue
        if g.run("merge-base", "HEAD", ref, check=False).returncode == 0:
            continue  # shares history: a branch of the same vault
        if g.run("cat-file", "-e", f"{ref}:{CONFIG_REL}", check=False).returncode != 0:
            continue  # not a vault
        raise ConflictError(
            f"{res.remote} already holds a vault on branch {name!r}, and this vault (branch "
            f"{res.branch!r}) shares no history with it; nothing was pushed. To join it: "
            f"`git clone -b {name} URL` and run `memctl init` in the clone (then ingest your "
            "transcripts there), or sync this vault to a remote of its own"
        )
