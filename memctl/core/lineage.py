"""Who added each uncited line of a note, from git: the provenance label recall shows.

A note line that cites nothing reads as a person's own (`human`). How a line looks proves
nothing, and neither does the identity a commit claims (an attacker authors a commit as the
agent or as you), so the label comes from the commit that added the line (`git blame`):

- not committed yet (the work tree): the user's own, `human`;
- a commit this clone made itself (its reflog records it as a commit or a rebased pick of
  one, never as a fetch, pull, clone or reset), authored by someone other than the agent
  identity, with no `Memctl-*` trailers (or memctl's record of the user's hand edits,
  `Memctl-Command: edit`, or of the notes `init` adopted): `human`;
- anything else (the agent's commits, memctl's own commands, every commit that arrived from
  elsewhere by `memctl sync`, a plain `git pull` or the clone): `unverified`.

Blame costs a git process per note, so it runs when the index takes in a changed note and
is kept in `<git dir>/memctl/lineage.json`, keyed by the note's git blob id: recall only
looks it up (and hashes the text it already read). The clone's own commits are harvested
from its reflogs into `<git dir>/memctl/own` as they appear, so that a reflog expiring
does not turn the user's old lines into someone else's. Both files are caches of what git
says, never tracked, pushed or pulled; deleting them only costs the blames again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import subprocess
from collections.abc import Iterable, Iterator
from pathlib import Path

from memctl.core.localstate import git_dir, local_dir, write_local

UNCOMMITTED = "0" * 40
# memctl commands whose commits carry lines the user typed: hand edits it recorded, and the
# notes `init` adopted from the folder
USER_COMMANDS = frozenset({"edit", "init"})
# reflog entries that record a commit this clone made (the new id is the commit)
_OWN = re.compile(
    r"^(commit( \((initial|amend|merge)\))?|(rebase( -i)?|pull --rebase) "
    r"\((pick|reword|edit|squash|fixup|continue)\)|cherry-pick|revert): "
)
_ENTRY = re.compile(r"^[0-9a-f]{40} ([0-9a-f]{40}) [^\t]*\t(.*)$")
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
_VERSION = 2  # 2: #agent lines and instructions/ lines are looked up too


def blob_id(data: bytes) -> str:
    """git's id of a blob holding `data` (what `git hash-object` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _git(root: Path, *args: str, input: bytes | None = None) -> bytes | None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    try:
        proc = subprocess.run(["git", "-C", str(root), *args], input=input,
                              capture_output=True, env=env, check=False)  # fmt: skip
    except OSError:
        return None
    return proc.stdout if proc.returncode == 0 else None


# ---- the clone's own commits ------------------------------------------------------------------


def _reflogs(root: Path) -> list[Path]:
    gd = git_dir(root)
    common = gd
    with contextlib.suppress(OSError):
        line = (gd / "commondir").read_text(encoding="utf-8").strip()
        common = (gd / line).resolve() if line else gd
    logs = [gd / "logs" / "HEAD"]
    heads = common / "logs" / "refs" / "heads"
    if heads.is_dir():
        logs += sorted(p for p in heads.rglob("*") if p.is_file())
    return logs


def own_commits(root: Path) -> set[str]:
    """Commits this clone made, from its reflogs, kept in `<git dir>/memctl/own`.

    Only the part of each reflog not read before is read (its size is remembered): the
    HEAD reflog of a long-used vault holds an entry per memctl command.
    """
    state = local_dir(root) / "own.json"
    own_file = local_dir(root) / "own"
    try:
        seen: dict[str, int] = json.loads(state.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        seen = {}
    try:
        own = set(own_file.read_text(encoding="utf-8").split())
    except OSError:
        own, seen = set(), {}
    new: list[str] = []
    changed = False
    for log in _reflogs(root):
        key = str(log)
        try:
            size = log.stat().st_size
        except OSError:
            continue
        start = seen.get(key, 0)
        if start == size:
            continue
        if start > size:
            start = 0  # expired or rewritten: read it again (the set drops repeats)
        with log.open("rb") as fh:
            fh.seek(start)
            data = fh.read().decode("utf-8", "replace")
        for line in data.splitlines():
            m = _ENTRY.match(line)
            if m and _OWN.match(m.group(2)) and m.group(1) not in own:
                own.add(m.group(1))
                new.append(m.group(1))
        seen[key] = size
        changed = True
    if changed:
        with contextlib.suppress(OSError):
            if new:
                own_file.parent.mkdir(parents=True, exist_ok=True)
                with own_file.open("a", encoding="utf-8") as fh:
                    fh.write("".join(s + "\n" for s in new))
            write_local(state, json.dumps(seen, sort_keys=True) + "\n")
    return own


def rewritten(root: Path, commit_map: Path) -> None:
    """History was rewritten (`forget --purge`: git-filter-repo's `commit-map`, lines of
    "old new"): the new ids of this clone's own commits are its own too. The rewrite
    expires the reflogs, which would otherwise make every commit a stranger's (undo would
    find nothing of the user's, their uncited lines would turn `unverified`)."""
    own = own_commits(root)
    try:
        rows = commit_map.read_text(encoding="utf-8").splitlines()
    except OSError:
        return
    new = []
    for row in rows:
        old, _, now = row.partition(" ")
        now = now.strip()
        if old in own and len(now) == 40 and now != UNCOMMITTED and now not in own:
            new.append(now)
    if new:
        with contextlib.suppress(OSError), (local_dir(root) / "own").open(
            "a", encoding="utf-8"
        ) as fh:
            fh.write("".join(s + "\n" for s in new))


# ---- blame --------------------------------------------------------------------------------


def _may_have_uncited(text: str) -> bool:
    """A bullet line past the frontmatter with no footnote: parsing (YAML and all) is worth
    it only then; a curated note cites on every line."""
    body = text
    if text.startswith("---"):
        end = text.find("\n---", 3)
        body = text[end + 4 :] if end >= 0 else text
    return any(_BULLET.match(x) and "[^" not in x for x in body.split("\n"))


# Notes whose every line steers the agent (the instructions store's folder)
STEERING = "instructions/"


def _uncited(rel: str, text: str) -> dict[str, bool]:
    """Claim key -> strict, for the lines whose label comes from git: a line that cites
    nothing is a person's only if the user added it (strict: `_users`); an `#agent` line,
    and any line of an instructions/ note, is taken as written only if this clone made it
    (a teammate's `#agent` line outranked `unverified`; a pushed instruction was followed)."""
    from memctl.core.notes import parse_note
    from memctl.errors import MemctlError

    steer = rel.startswith(STEERING)
    if not steer and not _may_have_uncited(text):
        return {}
    try:
        note = parse_note(text, rel)
    except MemctlError:
        return {}
    out: dict[str, bool] = {}
    for _, c in note.all_claims():
        if c.human:
            out[c.key] = True
        elif c.agent or steer:
            out.setdefault(c.key, False)
    return out


def _blame(root: Path, rel: str, data: bytes) -> list[str] | None:
    """The commit that added each line of `data` (as the note at `rel`); None: not tracked."""
    out = _git(root, "blame", "--porcelain", "--contents", "-", "--", rel, input=data)
    if out is None:
        return None
    shas: list[str] = []
    for line in out.split(b"\n"):
        head = line.split(b" ", 3)
        if len(head) >= 3 and len(head[0]) == 40 and head[1].isdigit() and head[2].isdigit():
            n = int(head[2])
            while len(shas) < n:
                shas.append(UNCOMMITTED)
            shas[n - 1] = head[0].decode()
    return shas


def _commits(root: Path, shas: Iterable[str]) -> dict[str, tuple[str, str, str]]:
    """sha -> (author name, author email, message) in one `git cat-file --batch`."""
    want = sorted(set(shas) - {UNCOMMITTED})
    if not want:
        return {}
    out = _git(root, "cat-file", "--batch", input="".join(s + "\n" for s in want).encode())
    got: dict[str, tuple[str, str, str]] = {}
    for sha, kind, raw in cat_file_objects(out or b""):
        if kind != "commit":
            continue
        body = raw.decode("utf-8", "replace")
        headers, _, message = body.partition("\n\n")
        name = email = ""
        for h in headers.splitlines():
            if h.startswith("author "):
                who = h[7:].rsplit(" ", 2)[0]
                name, _, email = who.partition(" <")
                email = email.rstrip(">")
        got[sha] = (name, email, message)
    return got


def cat_file_objects(data: bytes) -> Iterator[tuple[str, str, bytes]]:
    """(object name, type, content) for each object in `git cat-file --batch` output;
    "<name> missing" lines are skipped. One parser for every batch read of memctl."""
    at = 0
    while at < len(data):
        nl = data.find(b"\n", at)
        if nl < 0:
            return
        head = data[at:nl].split()
        at = nl + 1
        if len(head) != 3 or not head[2].isdigit():
            continue
        n = int(head[2])
        yield head[0].decode(), head[1].decode(), data[at : at + n]
        at += n + 1


def _users(sha: str, meta: tuple[str, str, str] | None, own: set[str],
           agent: tuple[str, str]) -> bool:  # fmt: skip
    """Did the user add the lines this commit added (see the module docstring)?"""
    if sha == UNCOMMITTED:
        return True
    if sha not in own or meta is None:
        return False
    name, email, message = meta
    if (name, email.casefold()) == (agent[0], agent[1].casefold()):
        return False
    trailers = dict(re.findall(r"^(Memctl-[\w-]+):\s*(.*)$", message, flags=re.M))
    return not trailers or trailers.get("Memctl-Command", "").strip() in USER_COMMANDS


# Past this many notes to blame at once (a pull of a few thousand hand-written notes took
# six minutes at a blame each), notes no commit of the user's ever touched are not blamed.
_SIFT_OVER = 8


def foreign_keys(root: Path, items: list[tuple[str, bytes]],
                 agent: tuple[str, str]) -> dict[str, frozenset[str]]:  # fmt: skip
    """For each (note path, bytes): the claim keys of uncited lines the user did not add."""
    parsed = [(rel, data, _uncited(rel, data.decode("utf-8", "replace"))) for rel, data in items]
    own = own_commits(root)
    # a note every line of which came from elsewhere: nothing to blame (see _untouched)
    plain = [(rel, data) for rel, data, keys in parsed if keys and all(keys.values())]
    skip = _untouched(root, plain, own, agent) \
        if sum(1 for *_, keys in parsed if keys) > _SIFT_OVER else set()  # fmt: skip
    todo: list[tuple[str, dict[str, bool], list[str] | None, list[str]]] = []
    out: dict[str, frozenset[str]] = {}
    for rel, data, keys in parsed:
        if rel in skip:
            out[rel] = frozenset(keys)
            continue
        text = data.decode("utf-8", "replace")
        blame = _blame(root, rel, data) if keys else None
        todo.append((rel, keys, blame, text.split("\n")))
    if not any(b for _, _, b, _ in todo):
        return {**out, **{rel: frozenset() for rel, *_ in todo}}
    metas = _commits(root, (s for _, _, b, _ in todo if b for s in b))
    from memctl.core.notes import claim_key, parse_claim

    for rel, keys, blame, lines in todo:
        if not keys or blame is None:
            out[rel] = frozenset()  # nothing uncited, or a file git does not track yet: theirs
            continue
        theirs: set[str] = set()
        other: set[str] = set()
        moved = _Moves(root, rel)
        for n, line in enumerate(lines):
            if not _BULLET.match(line):
                continue
            key = claim_key(_BULLET.sub("", line, count=1))
            if key not in keys and "[^" in line and (c := parse_claim(line)) is not None:
                key = c.key  # a cited line: its key is its text's, markers aside
            if key not in keys:
                continue
            sha = blame[n] if n < len(blame) else UNCOMMITTED
            if not keys[key]:  # made in this clone, by the user or by memctl for them
                (theirs if sha == UNCOMMITTED or sha in own else other).add(key)
                continue
            if _users(sha, metas.get(sha), own, agent):
                sha = moved.origin(key, sha, own, metas, agent)
            (theirs if _users(sha, metas.get(sha), own, agent) else other).add(key)
        out[rel] = frozenset(other - theirs)
    return out


class _Moves:
    """Where a line the user's commit (or the work tree) shows as added really came from.

    Blame calls a line added by the commit whose diff adds it. A merge driver re-renders a
    whole note, so a rebased pick of the user's own hand edit "adds" a line a remote pushed
    into the same note (moved, or re-formatted); so does the user moving a line. When the
    commit's parent already held a line with the same claim key, the line is followed into
    the parent's blame, until a commit that did add it."""

    def __init__(self, root: Path, rel: str) -> None:
        self.root, self.rel = root, rel
        self._blames: dict[str, list[tuple[str, str]] | None] = {}

    def origin(self, key: str, sha: str, own: set[str],
               metas: dict[str, tuple[str, str, str]], agent: tuple[str, str]) -> str:  # fmt: skip
        for _ in range(16):
            found = None
            for parent in self._parents(sha):
                for psha, line in self._blame_at(parent) or ():
                    if _BULLET.match(line) and _key(line) == key:
                        found = psha
                        break
                if found:
                    break
            if found is None:
                return sha
            if found not in metas:
                metas.update(_commits(self.root, [found]))
            sha = found
            if not _users(sha, metas.get(sha), own, agent):
                return sha
        return sha

    def _parents(self, sha: str) -> list[str]:
        rev = "HEAD" if sha == UNCOMMITTED else sha
        out = _git(self.root, "rev-list", "--parents", "-n", "1", rev)
        ids = (out or b"").decode().split()
        return ids[:1] if sha == UNCOMMITTED else ids[1:]

    def _blame_at(self, rev: str) -> list[tuple[str, str]] | None:
        if rev not in self._blames:
            out = _git(self.root, "blame", "--porcelain", rev, "--", self.rel)
            self._blames[rev] = None if out is None else _porcelain_lines(out)
        return self._blames[rev]


def _key(line: str) -> str:
    from memctl.core.notes import claim_key

    return claim_key(_BULLET.sub("", line, count=1))


def _porcelain_lines(out: bytes) -> list[tuple[str, str]]:
    """(commit, line text) for each line of `git blame --porcelain` output."""
    lines: list[tuple[str, str]] = []
    sha = ""
    for raw in out.split(b"\n"):
        if raw.startswith(b"\t"):
            lines.append((sha, raw[1:].decode("utf-8", "replace")))
            continue
        head = raw.split(b" ", 3)
        if len(head) >= 3 and len(head[0]) == 40 and head[1].isdigit() and head[2].isdigit():
            sha = head[0].decode()
    return lines


def _untouched(root: Path, items: list[tuple[str, bytes]], own: set[str],
               agent: tuple[str, str]) -> set[str]:  # fmt: skip
    """Notes whose bytes are HEAD's and that no commit of the user's (see `_users`) ever
    touched: every uncited line of theirs came from elsewhere, no blame needed."""
    if not items:
        return set()
    metas = _commits(root, own)
    mine = [s for s in own if _users(s, metas.get(s), own, agent)]
    touched: set[str] = set()
    if mine:
        out = _git(root, "diff-tree", "--stdin", "-m", "-r", "--root", "--name-only", "-z",
                   "--no-commit-id", input="".join(s + "\n" for s in mine).encode())  # fmt: skip
        touched = set((out or b"").decode("utf-8", "surrogateescape").split("\0"))
    heads = _git(root, "cat-file", "--batch-check=%(objectname)",
                 input="".join(f"HEAD:{rel}\n" for rel, _ in items).encode())  # fmt: skip
    at_head = (heads or b"").decode().split("\n")
    out_set = set()
    for i, (rel, data) in enumerate(items):
        if rel in touched or i >= len(at_head) or at_head[i] != blob_id(data):
            continue
        out_set.add(rel)
    return out_set


# ---- the cache ------------------------------------------------------------------------------


def _cache_path(root: Path) -> Path:
    return local_dir(root) / "lineage.json"


_loaded: dict[Path, tuple[float, dict[str, list[object]]]] = {}


def _load(root: Path) -> dict[str, list[object]]:
    p = _cache_path(root)
    try:
        mtime = p.stat().st_mtime
    except OSError:
        return {}
    got = _loaded.get(p)
    if got is not None and got[0] == mtime:
        return got[1]
    try:
        data = json.loads(p.read_text(encoding="utf-8"))
        notes = data["notes"] if data.get("version") == _VERSION else {}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        notes = {}
    _loaded[p] = (mtime, notes)
    return notes


def _save(root: Path, notes: dict[str, list[object]]) -> None:
    with contextlib.suppress(OSError):  # a read-only vault: computed again next time
        write_local(_cache_path(root), json.dumps({"version": _VERSION, "notes": notes},
                                                  sort_keys=True) + "\n")  # fmt: skip
        _loaded.pop(_cache_path(root), None)


def refresh(root: Path, items: list[tuple[str, bytes]], agent: tuple[str, str],
            gone: Iterable[str] = (), force: bool = False) -> None:  # fmt: skip
    """The index took in these notes (path, bytes): blame those whose blob is new to the
    cache; forget `gone`. Called by the index writer, under the vault lock."""
    cache = dict(_load(root))
    todo = []
    for rel, data in items:
        blob = blob_id(data)
        entry = cache.get(rel)
        if force or not entry or entry[0] != blob:
            todo.append((rel, data, blob))
    dropped = [rel for rel in gone if rel in cache]
    if not todo and not dropped:
        return
    for rel in dropped:
        cache.pop(rel, None)
    found = foreign_keys(root, [(rel, data) for rel, data, _ in todo], agent) if todo else {}
    for rel, _, blob in todo:
        cache[rel] = [blob, sorted(found.get(rel, ()))]
    _save(root, cache)


def foreign(root: Path, rel: str, data: bytes, agent: tuple[str, str]) -> frozenset[str]:
    """Claim keys of the uncited lines of the note at `rel` (its bytes `data`) that the user
    did not add: recall labels them `unverified`. A lookup when the index has seen this
    version of the note; otherwise (a read-only vault, a stale index) blamed now and kept."""
    blob = blob_id(data)
    for attempt in range(2):
        entry = _load(root).get(rel)
        if entry and entry[0] == blob and isinstance(entry[1], list):
            return frozenset(str(k) for k in entry[1])
        if attempt == 0:
            refresh(root, [(rel, data)], agent)
    return foreign_keys(root, [(rel, data)], agent)[rel]  # the cache could not be written
