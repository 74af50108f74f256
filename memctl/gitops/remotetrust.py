"""What a remote may send, and what stays local (docs/sync.md): the trust model of `sync`.

A pull brings content to merge and review, never configuration, code or local state:

- `incoming` inspects the fetched tree *before* anything is checked out: a symlink or a
  submodule anywhere, a file the remote tracked under `.memctl/` beyond the shared config
  and state, a note or raw file past its size limit, conflict markers in a note: each stops
  the pull, with the path and the reason, and the vault stays as it was.
- Settings that decide where data goes or how it is protected (`PROTECTED` tables) take
  effect from a pull only once the user accepts them: sync keeps the values in force
  before the pull in `<git dir>/memctl/held-config.json` and `load_config` reads those
  instead, until `memctl sync --accept-config`. `.memctl/config.local.toml` (untracked,
  and a pull may never track it) pins any setting on this machine.
- Lines a remote added without a citation are `unverified` in recall, never `human`: the
  label comes from the commit that added each line (memctl.core.lineage, git blame), so it
  holds however the commits arrived (sync, a plain `git pull`, the clone).
- Commits that came in by a pull are listed in `<git dir>/memctl/pulled`, so that
  `undo` undoes the user's own command, never a collaborator's.

Local state lives in the git directory (memctl.localstate reads it on every command):
nothing there is ever tracked, pulled or pushed. Kept free of gitpython and tantivy.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from memctl.core.attachments import FOLDER as ATTACHMENTS
from memctl.core.configguard import changes, forget_templates, hold, protected, record, toml
from memctl.core.lineage import cat_file_objects
from memctl.core.localstate import (
    SHARED_STATE,
    git_dir,
    held_path,
    held_templates,
    held_templates_path,
    human_size,
    local_dir,
    pulled_path,
    run_git,
    write_local,
)
from memctl.gitops import pulledfiles

_MODE_LINK, _MODE_GITLINK = "120000", "160000"



# ---- config that waits for the user ----------------------------------------------------------


def hold_templates(root: Path, before: dict[str, str | None]) -> None:
    """A pull changed these store template files (path -> the text in force before it, None
    when there was none): they are read as they were until the user accepts. A file held
    already keeps the text the user last accepted."""
    have = held_templates(root)
    add = {k: v for k, v in before.items() if k not in have}
    if add:
        write_local(held_templates_path(root),
                    json.dumps({"files": {**have, **add}}, indent=1, sort_keys=True) + "\n")


def _template_changes(root: Path) -> list[str]:
    out = []
    for rel, old in sorted(held_templates(root).items()):
        p = root / rel
        now = None
        if p.is_file() and not p.is_symlink():
            with contextlib.suppress(OSError, UnicodeDecodeError):
                now = p.read_text(encoding="utf-8")
        if now == old:
            continue
        a, b = (old or "").splitlines(), (now or "").splitlines()
        plus, minus = len(set(b) - set(a)), len(set(a) - set(b))
        out.append(f"{rel}: store template (sections and extraction prompt) changed, "
                   f"+{plus} -{minus} lines (`git log -p -- {rel}`)")  # fmt: skip
    return out


def waiting(root: Path, current: str | None,
            agent: tuple[str, str] | None = None) -> list[str]:  # fmt: skip
    """Settings, store templates and (given the agent identity) instructions someone else
    added that wait for `memctl sync --accept-config`."""
    held = held_path(root)
    out: list[str] = []
    if held.is_file():
        with contextlib.suppress(OSError, ValueError):
            old = json.loads(held.read_text(encoding="utf-8")).get("tables", {})
            out = changes(old, protected(toml(current)))
    steer = [f"{rel}: {len(keys)} instruction line{'s' * (len(keys) != 1)} someone else added, "
             f"NOT followed until you accept (`git log -p -- {rel}`)"
             for rel, keys in _steering(root, agent).items()] if agent else []  # fmt: skip
    return out + _template_changes(root) + steer


def _steering(root: Path, agent: tuple[str, str]) -> dict[str, set[str]]:
    """instructions/ note -> claim keys of the lines someone else added (a pull, a plain
    `git pull`, the clone) that the user has not accepted: recall leaves them out of the
    instructions the model is told to follow (memctl.recall.rank.steering)."""
    from memctl.core.lineage import STEERING, foreign
    from memctl.core.localstate import accepted_steering, read_bounded_bytes

    folder = root / STEERING
    if not folder.is_dir() or folder.is_symlink():
        return {}
    have = accepted_steering(root)
    out: dict[str, set[str]] = {}
    for p in sorted(folder.rglob("*.md")):
        rel = p.relative_to(root).as_posix()
        if p.name == "INDEX.md" or p.is_symlink() or not p.is_file():
            continue
        with contextlib.suppress(OSError):
            keys = set(foreign(root, rel, read_bounded_bytes(p), agent)) - have.get(rel, set())
            if keys:
                out[rel] = keys
    return out


def accept(root: Path, current: str | None, agent: tuple[str, str] | None = None) -> list[str]:
    """The user takes the pulled settings, templates and instructions: the holds go; what
    changed by them."""
    from memctl.core.localstate import accept_steering

    changed = waiting(root, current, agent)
    for p in (held_path(root), held_templates_path(root)):
        with contextlib.suppress(FileNotFoundError):
            p.unlink()
    record(root, current)
    forget_templates(root)
    if agent:
        accept_steering(root, _steering(root, agent))
    return changed


# ---- lines and commits that came from elsewhere ----------------------------------------------


def mark_pulled(root: Path, shas: Iterable[str]) -> None:
    shas = [s for s in shas if s]
    if not shas:
        return
    p = pulled_path(root)
    p.parent.mkdir(parents=True, exist_ok=True)
    with p.open("a", encoding="utf-8") as fh:
        fh.write("".join(s + "\n" for s in shas))


# ---- what a fetched tree may hold ------------------------------------------------------------


@dataclass
class Incoming:
    """What a pull would bring, judged before it is checked out."""

    refused: list[str] = field(default_factory=list)  # each "path: why"
    reported: list[str] = field(default_factory=list)
    config_before: str | None = None
    config_after: str | None = None
    config_changed: bool = False
    commits: list[str] = field(default_factory=list)


def conflict_marker(text: str) -> int | None:
    """Line number of a `<<<<<<<` marker line a `>>>>>>>` line closes, else None."""
    if "<<<<<<<" not in text or ">>>>>>>" not in text:
        return None
    opened = None
    for n, line in enumerate(text.splitlines(), 1):
        if line.startswith("<<<<<<<") and opened is None:
            opened = n
        elif line.startswith(">>>>>>>") and opened is not None:
            return opened
    return None


def blobs(root: Path, shas: list[str], env: dict[str, str] | None = None) -> dict[str, str]:
    """Many blobs in one `git cat-file --batch`, decoded (what is not UTF-8 replaced)."""
    import subprocess

    if not shas:
        return {}
    proc = subprocess.run(["git", "-C", str(root), "cat-file", "--batch"], capture_output=True,
                          input="".join(s + "\n" for s in shas).encode(), env=env,
                          check=False)  # fmt: skip
    return {
        name: blob.decode("utf-8", "replace") for name, _, blob in cat_file_objects(proc.stdout)
    }


def _forged_pictures(
    root: Path, env: dict[str, str] | None, pictures: list[tuple[str, str]]
) -> list[str]:
    """Attachments whose bytes are not what their name (a sha256) says: a picture swapped
    under a turn that cites it."""
    import hashlib
    import subprocess

    if not pictures:
        return []
    proc = subprocess.run(["git", "-C", str(root), "cat-file", "--batch"], capture_output=True,
                          input="".join(s + "\n" for _, s in pictures).encode(), env=env,
                          check=False)  # fmt: skip
    data = {name: blob for name, _, blob in cat_file_objects(proc.stdout)}
    return [
        f"{path}: its bytes are not the sha256 its name says (a swapped attachment)"
        for path, sha in pictures
        if hashlib.sha256(data.get(sha, b"")).hexdigest() != path.rsplit("/", 1)[-1].split(".")[0]
    ]


def incoming(root: Path, env: dict[str, str] | None, base: str, upstream: str,
             note_limit: int, raw_limit: int,
             sessions: dict[str, str] | None = None) -> Incoming:  # fmt: skip
    """Judge what `base..upstream` brings, before any of it is checked out. `sessions`:
    session id -> raw path of the sessions this clone holds."""
    git = run_git(root, env)
    res = Incoming()
    res.commits = git("rev-list", f"{base}..{upstream}").split()
    raw_diff = git("diff", "--raw", "-z", "--no-renames", "--no-abbrev", base, upstream)
    fields = raw_diff.split("\0")
    entries: list[tuple[str, str, str, str]] = []  # (new mode, new sha, status, path)
    old_sha: dict[str, str] = {}
    i = 0
    while i + 1 < len(fields):
        head, path = fields[i], fields[i + 1]
        i += 2
        if not head.startswith(":"):
            continue
        _om, nm, osha, ns, status = head[1:].split(" ")
        entries.append((nm, ns, status[:1], path))
        old_sha[path] = osha
    sizes: dict[str, int] = {}
    live = [e for e in entries if e[2] != "D"]
    if live:
        out = git_batch(git, "--batch-check=%(objectname) %(objectsize)", [e[1] for e in live])
        for line in out.splitlines():
            sha, _, n = line.partition(" ")
            if n.isdigit():
                sizes[sha] = int(n)
    notes: list[tuple[str, str, str]] = []  # (path, new sha, old sha or "")
    shared: list[tuple[str, str]] = []  # (path, new sha) of the shared config and state
    grown: list[tuple[str, str, str]] = []  # (path, old sha, new sha) of changed raw sessions
    gone: list[str] = []  # notes and raw sessions the pull deletes
    added_raw: list[tuple[str, str]] = []  # (path, sha) of raw sessions the pull adds
    pictures: list[tuple[str, str]] = []  # (path, sha) of attachments the pull adds
    ignore: str | None = None  # the sha of a .gitignore the pull brings
    for mode, sha, status, path in entries:
        if path == ".memctl/config.toml":
            res.config_changed = True
        if path == ".gitattributes" and status != "D":
            from memctl.gitops.mergedrivers import ATTRIBUTES

            ours = set(ATTRIBUTES.splitlines())
            text = git("show", f"{upstream}:.gitattributes")
            if any("merge" in x and x.strip() not in ours for x in text.splitlines()):
                res.reported.append(
                    ".gitattributes: the pull names merge drivers; memctl's are bound in "
                    ".git/info/attributes, so a tracked .gitattributes cannot reassign them"
                )
        if status == "D":
            if path.endswith(".md") and not path.endswith("INDEX.md"):
                gone.append(path)
            continue
        if mode == _MODE_LINK:
            res.refused.append(f"{path}: a symlink (a pull may not link outside the vault)")
            continue
        if mode == _MODE_GITLINK:
            res.refused.append(f"{path}: a submodule")
            continue
        why = pulledfiles.path_problem(path, mode)
        if why:
            res.refused.append(f"{path}: {why}")
            continue
        if path in SHARED_STATE:
            shared.append((path, sha))
        if path == ".gitignore":
            ignore = sha
        size = sizes.get(sha, 0)
        is_raw = path.startswith("raw/")
        limit = raw_limit if is_raw else note_limit
        if size > limit:  # every file: a 60 MB picture costs each teammate as much as a note
            kind = "raw session" if is_raw else "note" if path.endswith(".md") else "file"
            res.refused.append(f"{path}: {human_size(size)}, over the {human_size(limit)} limit "
                               f"for a {kind}{'' if kind != 'file' else ' (the note limit)'}")
            continue
        if path.startswith(ATTACHMENTS + "/"):
            if status != "A":  # named by its content: it never changes, it is only added
                res.refused.append(f"{path}: an attachment changed (its name is its sha256)")
            else:
                pictures.append((path, sha))
            continue
        if path.endswith(".md") and not is_raw:
            notes.append((path, sha, old_sha[path] if status != "A" else ""))
        elif path.endswith(".md") and status == "M":
            grown.append((path, old_sha[path], sha))
        elif path.endswith(".md") and not path.endswith("INDEX.md"):
            added_raw.append((path, sha))
    texts = blobs(root, sorted({s for _, n, o in notes for s in (n, o) if s}
                               | {s for _, s in shared} | {s for _, s in added_raw}
                               | {s for _, a, b in grown for s in (a, b)}
                               | ({ignore} if ignore else set())), env)  # fmt: skip
    for path, sha, old in notes:
        text = texts.get(sha, "")
        line = conflict_marker(text)
        if line:
            res.refused.append(f"{path}:{line}: conflict markers")
            continue
        why = pulledfiles.frontmatter_problem(path, text)
        if why:
            res.refused.append(f"{path}: {why}")
            continue
        said = pulledfiles.meta_change(path, texts.get(old, ""), text) if old else None
        if said:
            res.reported.append(said)
    _judge_raw(res, texts, added_raw, grown, sessions or {})
    res.refused += _forged_pictures(root, env, pictures)
    if ignore:
        res.refused += _ignored(git, root, upstream, texts.get(ignore, ""))
    for path, sha in shared:
        why = pulledfiles.shared_problem(path, texts.get(sha, ""))
        if why:
            res.refused.append(f"{path}: {why}")
    if gone:
        raw = [p for p in gone if p.startswith("raw/")]
        res.reported.append(pulledfiles.removed_line(raw, [p for p in gone if p not in raw]))
    if res.config_changed:
        res.config_before = _show(git, f"{base}:.memctl/config.toml")
        res.config_after = _show(git, f"{upstream}:.memctl/config.toml")
    return res


def _judge_raw(res: Incoming, texts: dict[str, str], added: list[tuple[str, str]],
               grown: list[tuple[str, str, str]], sessions: dict[str, str]) -> None:  # fmt: skip
    """Raw sessions a pull changes stay verbatim; one it adds is a new session, never a
    second file of one this clone holds (a copy under another date folder, with a forged
    turn and a recomputed hash, was served under the real session's short reference)."""
    for path, was, now in grown:
        why = pulledfiles.frontmatter_problem(path, texts.get(now, "")) or pulledfiles.raw_problem(
            path, texts.get(was, ""), texts.get(now, ""))
        if why:
            res.refused.append(f"{path}: {why}")
    seen: dict[str, str] = {}
    for path, sha in added:
        text = texts.get(sha, "")
        why = pulledfiles.frontmatter_problem(path, text)
        if why:
            res.refused.append(f"{path}: {why}")
            continue
        sid = pulledfiles.session_of(path, text)
        if sid is None:
            continue
        other = sessions.get(sid) or seen.get(sid)
        if other is not None and other != path:
            res.refused.append(f"{path}: session {sid} is already {other} (a raw session is "
                               "one file; a second copy of it is never taken from a pull)")
            continue
        seen[sid] = path


def _ignored(git: Callable[..., str], root: Path, upstream: str, text: str) -> list[str]:
    """A pulled `.gitignore` may not ignore the vault's own content."""
    names = [p for p in git("ls-tree", "-r", "--name-only", "-z", upstream).split("\0")
             if p.endswith(".md")]  # fmt: skip
    probes = ["raw/2000/01/01/session.md", *{f"{p.split('/', 1)[0]}/note.md" for p in names
                                              if "/" in p}]  # fmt: skip
    found = pulledfiles.ignore_problems(root, text, sorted(set(names) | set(probes)))
    if not found:
        return []
    more = f" (and {len(found) - 2} more rules)" if len(found) > 2 else ""
    return [f".gitignore: {'; '.join(found[:2])}{more}: every later ingest, curate and "
            "remember would fail to commit"]


def _show(git: Callable[..., str], spec: str) -> str | None:
    from memctl.errors import MemctlError

    try:
        return git("show", spec)
    except MemctlError:  # the file is absent on that side
        return None


def git_batch(git: Callable[..., str], fmt: str, shas: list[str]) -> str:
    return git("cat-file", fmt, input="\n".join(shas) + "\n")




# ---- joining a vault that is already on a remote ----------------------------------------------


def join_remote(root: Path) -> str | None:
    """A `git clone` whose remote HEAD names a branch that does not exist checks out
    nothing; `memctl init` there would start a second, unrelated vault. Check out the
    branch the remote's vault is on instead; the branch name, or None when not such a clone."""
    from memctl.errors import InputError, MemctlError

    if not (root / ".git").exists():
        return None
    git = run_git(root)
    try:
        git("rev-parse", "--verify", "--quiet", "HEAD")
        return None  # has commits: nothing to join
    except MemctlError:
        pass
    try:
        refs = git("for-each-ref", "--format=%(refname)", "refs/remotes/").split()
    except MemctlError:
        return None
    vaults = []
    for ref in refs:
        if ref.endswith("/HEAD"):
            continue
        try:
            git("cat-file", "-e", f"{ref}:.memctl/config.toml")
        except MemctlError:
            continue
        vaults.append(ref)
    if not vaults:
        return None
    names = sorted({r.split("/", 3)[3] for r in vaults})
    if len(names) > 1:
        raise InputError(
            f"the remote holds vaults on branches {', '.join(names)}: `git checkout NAME` the "
            "one to join, then `memctl init`"
        )
    try:
        git("checkout", "-q", names[0])
    except MemctlError as exc:
        raise InputError(f"cannot check out the remote's vault (branch {names[0]}): "
                         f"{exc.message}") from None  # fmt: skip
    return names[0]


def adopt_clone(root: Path, joined: bool) -> list[str]:
    """The first `memctl init` in a clone: what came with the clone is the team's, not the
    user's. Its commits are not the user's to undo (nor are its uncited lines the user's:
    memctl.core.lineage reads that from git), and its protected settings wait for the user
    like a pulled change. What waits, as lines."""
    marker = local_dir(root) / "adopted"
    if marker.exists():
        return []
    reflog = git_dir(root) / "logs" / "HEAD"
    try:
        first = reflog.read_text(encoding="utf-8", errors="replace").split("\n", 1)[0]
    except OSError:
        first = ""
    if not joined and "\tclone: from " not in first:
        write_local(marker, "")
        return []
    git = run_git(root)
    mark_pulled(root, git("rev-list", "HEAD").split())
    from memctl.core.config import CONFIG_REL, DEFAULT_CONFIG_TOML

    cfg = root / CONFIG_REL
    current = cfg.read_text(encoding="utf-8") if cfg.is_file() and not cfg.is_symlink() else None
    changed = hold(root, DEFAULT_CONFIG_TOML, current)
    write_local(marker, "")
    return changed
