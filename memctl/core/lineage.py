"""Who added each uncited line of a note, from git: the provenance label recall shows (issue 22).

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
_VERSION = 1


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


# ---- blame --------------------------------------------------------------------------------


def _may_have_uncited(text: str) -> bool:
    """A bullet line past the frontmatter with no footnote: parsing (YAML and all) is worth
    it only then; a curated note cites on every line."""
    body = text
    if text.startswith("---"):
        end = text.find("\n---", 3)
        body = text[end + 4 :] if end >= 0 else text
    return any(_BULLET.match(x) and "[^" not in x for x in body.split("\n"))


def _uncited(rel: str, text: str) -> dict[str, str]:
    """Claim key -> claim text of the lines that cite nothing (and are not the agent's)."""
    from memctl.core.notes import parse_note
    from memctl.errors import MemctlError

    if not _may_have_uncited(text):
        return {}

    try:
        note = parse_note(text, rel)
    except MemctlError:
        return {}
    return {c.key: c.text for _, c in note.all_claims() if c.human}


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


def foreign_keys(root: Path, items: list[tuple[str, bytes]],
                 agent: tuple[str, str]) -> dict[str, frozenset[str]]:  # fmt: skip
    """For each (note path, bytes): the claim keys of uncited lines the user did not add."""
    todo: list[tuple[str, dict[str, str], list[str] | None, list[str]]] = []
    for rel, data in items:
        text = data.decode("utf-8", "replace")
        keys = _uncited(rel, text)
        blame = _blame(root, rel, data) if keys else None
        todo.append((rel, keys, blame, text.split("\n")))
    if not any(b for _, _, b, _ in todo):
        return {rel: frozenset() for rel, *_ in todo}
    own = own_commits(root)
    metas = _commits(root, (s for _, _, b, _ in todo if b for s in b))
    out: dict[str, frozenset[str]] = {}
    from memctl.core.notes import claim_key

    for rel, keys, blame, lines in todo:
        if not keys or blame is None:
            out[rel] = frozenset()  # nothing uncited, or a file git does not track yet: theirs
            continue
        theirs: set[str] = set()
        other: set[str] = set()
        for n, line in enumerate(lines):
            if not _BULLET.match(line):
                continue
            key = claim_key(_BULLET.sub("", line, count=1))
            if key not in keys:
                continue
            sha = blame[n] if n < len(blame) else UNCOMMITTED
            (theirs if _users(sha, metas.get(sha), own, agent) else other).add(key)
        out[rel] = frozenset(other - theirs)
    return out


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
