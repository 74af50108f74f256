"""`memctl doctor`: is the vault whole? Each check says what is wrong and, with repair, fixes it.

The checks are the invariants the rest of memctl promises: no unfinished journal and no
stale git lock (a killed command), the search index equal to the files, no stray temp
files, the INDEX files what memctl would write, every citation verbatim, and no secret in
the working tree. Repair only does what cannot lose anything: recovery from the journal,
removing temp files, rebuilding the derived index, rewriting INDEX files that memctl
itself generates (one commit). Citations and secrets it reports, for a person to judge.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.core.store import read_text, walk_markdown
from memctl.errors import MemctlError, ReadOnlyVaultError

if TYPE_CHECKING:
    from memctl.core.floor import Floor

MAX_LISTED = 20


@dataclass
class Check:
    """One check's outcome: `problems` empty means ok; `repaired` says what repair did."""

    name: str
    problems: list[str] = field(default_factory=list)
    repaired: str | None = None

    @property
    def ok(self) -> bool:
        return not self.problems or self.repaired is not None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "problems": self.problems,
                "repaired": self.repaired}


@dataclass
class DoctorResult:
    checks: list[Check]
    repair: bool

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "repair": self.repair, "checks": [c.to_json() for c in self.checks]}


def run(vault: Floor, repair: bool = False) -> DoctorResult:
    """Every check in order; with `repair`, each fixes what it safely can before the next."""
    from memctl.gitops import gitlocks, recovery, syncrecovery

    checks: list[Check] = []
    # seen before the lock: taking it with `repair` puts an interrupted sync right at once
    interrupted = syncrecovery.interrupted(vault.root)
    rebasing = syncrecovery.rebase_in_progress(vault.root)
    temps = syncrecovery.driver_temp_files(vault.root)
    with _lock(vault, recover=repair):
        # first: every repair after it writes, and a half-done rebase refuses any write
        if repair and interrupted is not None:
            gitlocks.clear_stale_git_locks(vault.root)  # the killed git's, or git cannot run
        fixed = syncrecovery.repair(vault.root) if repair else None
        c = Check("journal")
        journals = recovery.pending(vault.root)
        for j in journals:
            header, entries = recovery.read_journal(j)
            c.problems.append(
                f"unfinished {header.get('command', 'write')} (pid {header.get('pid', '?')}, "
                f"started {header.get('started', '?')}): {len(entries)} files"
            )
        locks = _git_locks(vault.root)
        c.problems += [f"git lock file {x} (stale unless a git command is running)" for x in locks]
        purge = (vault.root / recovery.PURGE_REL).exists()
        if purge:
            c.problems.append(
                "purge incomplete: a forget --purge was stopped before history was rewritten; "
                "run `memctl doctor --repair`"
            )
        if repair and c.problems:
            res = recovery.recover(vault)
            c.repaired = res.summary() if res else "nothing to recover"
            if (recovery.pending(vault.root) or _git_locks(vault.root)
                    or (vault.root / recovery.PURGE_REL).exists()):  # fmt: skip
                c.repaired = None
        checks.append(c)
        checks.append(_temp_files(vault, repair))
        checks.append(_index_files(vault, repair))
        checks.append(_search_index(vault, repair))
        checks.append(_merge_drivers(vault, repair))
        checks.append(_sync_leftovers(vault))
        checks.append(_interrupted_sync(vault, repair, interrupted, rebasing, temps, fixed))
        checks.append(_conflict_markers(vault))
        checks.append(_sizes(vault))
        checks.append(_ignore_rules(vault))
        checks.append(_citations(vault))
        checks.append(_secrets(vault))
        checks.append(_hook_alerts(vault))
    return DoctorResult(checks, repair)


class _lock:
    """The vault lock, taken without the automatic recovery unless repairing."""

    def __init__(self, vault: Floor, recover: bool) -> None:
        self.vault = vault
        self.recover = recover
        self.saved = vault.lock.on_acquire
        self.held = False

    def __enter__(self) -> None:
        if not self.recover:
            self.vault.lock.on_acquire = None
        try:
            self.vault.lock.__enter__()
        except ReadOnlyVaultError:
            # Nothing can change a read-only vault under the checks, so they need no lock;
            # a repair would have to write, and says so in one line.
            self.vault.lock.on_acquire = self.saved
            if self.recover:
                raise
            return
        self.held = True

    def __exit__(self, *exc: object) -> None:
        try:
            if self.held:
                self.vault.lock.__exit__(*exc)
        finally:
            self.vault.lock.on_acquire = self.saved


def _git_locks(root: Path) -> list[str]:
    from memctl.gitops.gitlocks import GIT_LOCK_NAMES

    git_dir = root / ".git"
    return [f".git/{n}" for n in GIT_LOCK_NAMES if (git_dir / n).exists()]


def _temp_files(vault: Floor, repair: bool) -> Check:
    """Temp files of atomic writes (`.name.XXXX.tmp`) outside .git and .memctl."""
    c = Check("temp files")
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(vault.root):
        dirnames[:] = [d for d in dirnames if d not in (".git", ".memctl")]
        for name in filenames:
            if name.startswith(".") and name.endswith(".tmp"):
                found.append(Path(dirpath) / name)
    c.problems = [f"stray temp file {p.relative_to(vault.root).as_posix()}" for p in found]
    if repair and found:
        for p in found:
            p.unlink(missing_ok=True)
        c.repaired = f"removed {len(found)} temp file{'s' * (len(found) != 1)}"
    return c


def _index_files(vault: Floor, repair: bool) -> Check:
    """Every INDEX.md (root, raw/, each store's) as memctl would write it now."""
    from memctl.curate import indexfiles

    c = Check("INDEX files")
    # every INDEX file, store ones included: a revert or a pull can leave a store's INDEX
    # linking a note that is gone
    want = indexfiles.expected(vault)
    stale = {}
    for rel, text in want.items():
        path = vault.root / rel
        have = read_text(path) if path.is_file() else None
        if have != text:
            stale[rel] = text
            c.problems.append(f"{rel} is {'missing' if have is None else 'out of date'}")
    if repair and stale:
        dirty = {line[3:] for line in vault.history.dirty()}
        hand = sorted(r for r in set(stale) & dirty if (vault.root / r).exists())
        if hand:
            c.problems.append("not rewritten, edited by hand: " + ", ".join(hand))
            return c
        with vault.change(
            "doctor", subject="doctor: INDEX files rewritten", refresh=False, index=False
        ) as ch:
            for rel, text in stale.items():
                ch.tx.write(rel, text)
        sha = ch.commit
        c.repaired = f"rewrote {len(stale)} INDEX file{'s' * (len(stale) != 1)}" + (
            f" (commit {sha[:10]})" if sha else ""
        )
    return c


def _merge_drivers(vault: Floor, repair: bool) -> Check:
    """The git merge drivers that keep revert, rebase and sync free of conflicts."""
    from memctl.gitops import mergedrivers

    c = Check("merge drivers")
    ga = vault.root / ".gitattributes"
    no_lines = mergedrivers.attributes_text(read_text(ga) if ga.exists() else None) is not None
    if no_lines:
        c.problems.append(".gitattributes has no memctl merge drivers (run `memctl init`)")
    missing = mergedrivers.installed(vault.root)
    if missing:
        c.problems.append(
            f"not registered in this clone's git config: {', '.join(missing)} "
            "(git never copies them from a remote, and an older memctl named another command; "
            "run `memctl init` here)"
        )
    unbound = not mergedrivers.bound(vault.root)
    if unbound:
        c.problems.append("not bound in .git/info/attributes, so a tracked .gitattributes "
                          "could reassign them (run `memctl doctor --repair`)")  # fmt: skip
    if repair and (missing or unbound) and not no_lines:
        mergedrivers.install(vault.root)
        c.repaired = (f"registered {len(missing)} merge driver{'s' * (len(missing) != 1)}"
                      if missing else "bound the merge drivers in .git/info/attributes")
    return c


def _interrupted_sync(
    vault: Floor,
    repair: bool,
    journal: dict[str, Any] | None,
    rebasing: bool,
    temps: list[Path],
    fixed: str | None,
) -> Check:
    """A sync killed mid-rebase: its journal says so; the next command (or --repair) aborts
    the rebase it started and removes the merge drivers' temp files."""

    c = Check("interrupted sync")
    if journal is not None:
        c.problems.append(
            f"a sync (pid {journal.get('pid', '?')}) did not finish"
            + (": its rebase is still in progress" if rebasing else "")
            + (f", {len(temps)} merge temp file(s) in the vault" if temps else "")
            + " (`memctl doctor --repair` aborts it; nothing is lost)"
        )
    elif rebasing:
        c.problems.append("a rebase is in progress (not memctl's): finish it "
                          "(`git rebase --continue`) or `git rebase --abort`")  # fmt: skip
    if repair and journal is not None:
        done = fixed or next((n for n in vault.notices if "interrupted sync" in n), None)
        c.repaired = done or "put right"
    return c


def _conflict_markers(vault: Floor) -> Check:
    """Notes holding `<<<<<<<`/`>>>>>>>` lines: every later write to them is refused, and
    recall would serve the lines between as if a person wrote them."""
    from memctl.core.localstate import READ_BOUND, read_bounded
    from memctl.gitops.remotetrust import conflict_marker

    c = Check("conflict markers")
    for path in walk_markdown(vault.root):
        rel = path.relative_to(vault.root).as_posix()
        if rel.startswith("raw/") and not rel.endswith("INDEX.md"):
            continue  # a transcript may quote anything
        try:
            text = read_bounded(path, READ_BOUND)
        except OSError:
            continue
        line = conflict_marker(text)
        if line:
            c.problems.append(f"{rel}:{line}: conflict markers; resolve them and commit")
    return c


def _sizes(vault: Floor) -> Check:
    """Notes and raw sessions past the vault's limits: sync refuses to pull such files, and
    recall, search and the hooks skip any past their read bound."""
    from memctl.core import localstate

    c = Check("file sizes")
    note_limit, raw_limit = localstate.limits(vault.config.data)
    for path in walk_markdown(vault.root):
        rel = path.relative_to(vault.root).as_posix()
        try:
            size = path.stat().st_size
        except OSError:
            continue
        limit = raw_limit if rel.startswith("raw/") else note_limit
        if size > limit:
            skipped = size > localstate.read_bound(rel)
            c.problems.append(
                f"{rel}: {localstate.human_size(size)}, over the "
                f"{localstate.human_size(limit)} limit"
                + ("; recall and search skip it" if skipped else "")
            )
    return c


def _ignore_rules(vault: Floor) -> Check:
    """`.gitignore` rules that cover notes or raw sessions (a plain `git pull` may bring
    one): every later ingest, curate and remember fails to commit what it wrote."""
    from memctl.core.localstate import run_git
    from memctl.gitops.pulledfiles import ignore_problems

    c = Check("ignore rules")
    gi = vault.root / ".gitignore"
    if not gi.is_file() or gi.is_symlink():
        return c
    try:
        text = gi.read_text(encoding="utf-8", errors="replace")
        names = run_git(vault.root)("ls-files", "-z", "--", "*.md").split("\0")
    except (OSError, MemctlError):
        return c
    names = [n for n in names if n]
    probes = {"raw/2000/01/01/session.md", *(f"{sc.folder}/note.md"
                                             for sc in vault.config.stores.values())}  # fmt: skip
    c.problems += [f".gitignore: {x}; remove the rule (`git log -p -- .gitignore` names who "
                   "added it)" for x in ignore_problems(vault.root, text, [*names, *probes])]
    return c


def _sync_leftovers(vault: Floor) -> Check:
    """What a merge driver set aside (a claim changed two ways) and no sync has filed yet."""
    from memctl.gitops.mergedrivers import CONFLICTS_DIR

    c = Check("merge leftovers")
    aside = vault.root / CONFLICTS_DIR
    if aside.is_dir():
        for p in sorted(aside.rglob("*.md")):
            rel = p.relative_to(vault.root).as_posix()
            c.problems.append(f"{rel}: set aside by a merge; `memctl sync` files it for review")
    return c


def index_problems(vault: Floor) -> list[str]:
    """How the search index differs from the files (empty: it equals them)."""
    from memctl.index import freshness, schema

    gen, why = freshness.current_generation(vault.root)
    if gen is None:
        if not (vault.root / schema.INDEX_REL).exists():
            # never built (a new vault, a fresh clone): nothing disagrees with the files,
            # and the first command that searches builds it from them
            return []
        return [why.split(";", 1)[0]]  # what is wrong; doctor itself rebuilt nothing
    try:
        manifest = gen.files
    except (OSError, ValueError, KeyError, TypeError):
        return ["search index manifest unreadable"]
    files = freshness.scan(vault.root)
    out = [f"not indexed: {rel}" for rel in sorted(set(files) - set(manifest))]
    out += [f"indexed but gone: {rel}" for rel in sorted(set(manifest) - set(files))]
    for rel in sorted(set(files) & set(manifest)):
        entry = manifest[rel]
        if (entry[0], entry[1]) == tuple(files[rel]):
            continue
        digest = hashlib.sha256((vault.root / rel).read_bytes()).hexdigest()
        if digest != entry[2]:
            out.append(f"indexed an older version: {rel}")
    return out


def _search_index(vault: Floor, repair: bool) -> Check:
    c = Check("search index")
    c.problems = index_problems(vault)
    if repair and c.problems:
        from memctl.index.writer import rebuild

        r = rebuild(vault)
        c.repaired = f"rebuilt the index from {r.files} files"
    return c


def _citations(vault: Floor) -> Check:
    c = Check("citations")
    from memctl.core.provenance import verify_vault

    res = verify_vault(vault)
    c.problems = [
        f"{p.path}{':' + str(p.line) if p.line else ''}: {p.message}" for p in res.problems
    ]
    return c


def _secrets(vault: Floor) -> Check:
    """Every markdown file in the working tree through the redactor's detectors."""
    from memctl.core.redact import find_secrets

    c = Check("secrets")
    for path in walk_markdown(vault.root):
        try:
            text = read_text(path)
        except (OSError, UnicodeDecodeError):
            continue
        for f in find_secrets(text):
            line = text.count("\n", 0, f.start) + 1
            c.problems.append(f"{path.relative_to(vault.root).as_posix()}:{line}: {f.kind}")
    return c


def _hook_alerts(vault: Floor) -> Check:
    """Failures of the detached Stop worker that no hook has shown yet."""
    from memctl.core.config import HOOK_ALERTS_REL as ALERTS_REL

    c = Check("hooks")
    path = vault.root / ALERTS_REL
    if path.is_file():
        c.problems = [ln for ln in read_text(path).splitlines() if ln.strip()]
    return c
