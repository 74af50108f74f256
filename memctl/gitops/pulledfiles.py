"""What a pulled file may be, and what it may hold (docs/sync.md): sync's checks on content.

memctl.gitops.remotetrust finds what `base..upstream` would bring; this module judges each path
and each blob, before anything is checked out. Every check here is one a careless or hostile
clone got past once (a red team's findings):

- a path: a pull brings notes, raw sessions and the vault's own shared files, never a
  hidden file or folder that tools read as configuration or code (`.githooks/`, `.claude/`,
  `.vscode/`, `.gitmodules`, a `.gitattributes` below the root) and never an executable;
- the shared config and curation state must parse: one that does not stops every later
  memctl command of every teammate (sync included, so the fix could not be pulled);
- a raw session is verbatim and only ever grows: a pull may append turns, or blank one
  the way `memctl forget` does, but not rewrite what a turn said, who said it, or whose
  session it is (a rewritten turn made a planted line `stated · Dana` in Dana's own vault).

Kept free of gitpython and tantivy; stdlib, core and purge's placeholder only.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from memctl.core.localstate import SHARED_STATE, write_local

_MODE_EXEC = "100755"
_ROOT_FILES = frozenset({".gitignore", ".gitattributes"})
CONFIG_REL = ".memctl/config.toml"
STATE_REL = ".memctl/state/curation.json"
REMOVED_REL = ".memctl/state/removed.jsonl"


def _obsidian_problem(path: str) -> str | None:
    """The vault opens as an Obsidian vault and teams share its `.obsidian/` settings
    (memctl's .gitignore leaves out only the workspace files); its community plugins are
    code Obsidian runs, and the list of them switches them on."""
    rest = path[len(".obsidian/"):]
    if rest.startswith("plugins/") or rest == "community-plugins.json":
        return ("an Obsidian community plugin or the list that enables them: code Obsidian "
                "runs is never taken from a pull")  # fmt: skip
    return None


def path_problem(path: str, mode: str) -> str | None:
    """Why a pull may not bring a file at `path` with git mode `mode`; None when it may."""
    if path.startswith(".memctl/"):
        if path not in SHARED_STATE:
            return "local state under .memctl/ is never taken from a pull"
    elif path.startswith(".obsidian/") and not any(
        p.startswith(".") for p in path.split("/")[1:]
    ):
        if why := _obsidian_problem(path):
            return why
    elif path not in _ROOT_FILES and any(p.startswith(".") for p in path.split("/")):
        return ("a hidden file or folder (tool configuration or hooks such as .githooks/, "
                ".claude/, .gitmodules or a .gitattributes below the root are never taken "
                "from a pull)")  # fmt: skip
    if mode == _MODE_EXEC:
        return "an executable file (a pull brings content, never code)"
    return None


def shared_problem(path: str, text: str) -> str | None:
    """Why the shared config or curation state a pull brings would break this clone."""
    if path == CONFIG_REL:
        return _config_problem(text)
    if path == STATE_REL:
        return _state_problem(text)
    if path == REMOVED_REL:
        return _removed_problem(text)
    return None


def _config_problem(text: str) -> str | None:
    from memctl.core.configschema import validate
    from memctl.errors import MemctlError

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return f"{exc} (every memctl command would stop on it)"
    try:
        validate(data, Path(CONFIG_REL), text)
    except MemctlError as exc:
        where = f"line {exc.line}: " if exc.line else ""
        return f"{where}{exc.message} (every memctl command would stop on it)"
    return None


def _state_problem(text: str) -> str | None:
    why = "curation state is not {} (every curate would stop on it)"
    try:
        data = json.loads(text)
    except ValueError:
        return why.format("valid JSON")
    stores = data.get("stores", {}) if isinstance(data, dict) else None
    if not isinstance(stores, dict) or not all(
        isinstance(v, dict)
        and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in v.values())
        for v in stores.values()
    ):
        return why.format('{"stores": {STORE: {SESSION: TURNS}}}')
    return None


def _removed_problem(text: str) -> str | None:
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except ValueError:
            rec = None
        if not isinstance(rec, dict) or "claim" not in rec or not isinstance(
            rec.get("sources") or [], list
        ):
            return f"line {n}: not a removed-claim record (every curate would stop on it)"
    return None


def raw_problem(path: str, old: str, new: str) -> str | None:
    """Why the change from `old` to `new` of a raw session is not one a pull may bring: a
    session grows (turns appended) and `memctl forget` blanks a turn in place; nothing
    else changes what a turn said, who said it, or whose session it is. The header is as
    verbatim as the turns: its scope decides who may recall the session (a pulled `scope:
    user:eve` hid a teammate's whole session and its claims), so only what the turns
    themselves determine may change with them, recomputed here, never taken as written."""
    from memctl.core.raw import make_header, parse_session
    from memctl.errors import MemctlError
    from memctl.gitops.purge import FORGOTTEN

    try:
        h0, m0 = parse_session(old, path)
    except MemctlError:
        return None  # ours does not parse either: the pull may well be its repair
    try:
        h1, m1 = parse_session(new, path)
    except MemctlError as exc:
        return f"not a raw session ({exc.message})"
    if (h1.session, h1.user) != (h0.session, h0.user):
        return "a raw session's owner or id was rewritten (raw sessions are verbatim)"
    if len(m1) < len(m0):
        return f"a raw session lost turns ({len(m0)} -> {len(m1)}; raw sessions only grow)"
    forgot = False
    for n, (a, b) in enumerate(zip(m0, m1, strict=False), 1):
        if b.role != a.role or b.timestamp != a.timestamp:
            return f"turn t{n} was rewritten (raw sessions are verbatim)"
        if b.content == FORGOTTEN:
            forgot = forgot or a.content != FORGOTTEN
            continue  # `memctl forget` of that turn
        if (b.content, b.name, b.id) != (a.content, a.name, a.id):
            return f"turn t{n} was rewritten (raw sessions are verbatim)"
    title = h1.title if forgot else h0.title  # forget retitles a session named by its words
    want = make_header(h0.session, title, h0.source_format, h0.origin, h0.user, h0.scope, m1,
                       dict(h0.extra))  # fmt: skip
    # participants and content_hash are summaries an older memctl may compute otherwise
    # (verify checks the hash against the turns); everything else is said or fixed
    fields = [f for f in want.__dataclass_fields__ if f not in ("participants", "content_hash")
              and getattr(h1, f) != getattr(want, f)]  # fmt: skip
    if fields:
        return (f"its header was rewritten ({', '.join(fields)}; a raw session's header is "
                "as verbatim as its turns)")  # fmt: skip
    return None


def frontmatter_problem(path: str, text: str) -> str | None:
    """A note or raw header whose frontmatter holds a YAML anchor or alias: a 687-byte
    frontmatter of nested aliases ran sync past two minutes and made recall, search and
    the prompt hook never finish. Other YAML a note may hold is the note's business."""
    from memctl.core.notes import has_frontmatter, read_frontmatter
    from memctl.errors import MemctlError

    if not has_frontmatter(text):
        return None
    try:
        read_frontmatter(text, path)
    except MemctlError as exc:
        if "anchors and aliases" in exc.message:
            return f"line {exc.line}: {exc.message}"
    return None


def session_of(path: str, text: str) -> str | None:
    """The session id a raw file's header names, or None when it does not parse."""
    from memctl.core.raw import split_frontmatter
    from memctl.errors import MemctlError

    try:
        data, _ = split_frontmatter(text, path)
    except MemctlError:
        return None
    sid = data.get("session")
    return None if sid is None else str(sid)


def meta_change(path: str, old: str, new: str) -> str | None:
    """What a pull changes of a note's scope or status, said like a deletion: a note
    re-scoped to one user or archived leaves every teammate's recall (claims they just
    merged included) without a word otherwise."""
    from memctl.core.notes import has_frontmatter, read_frontmatter
    from memctl.errors import MemctlError

    def meta(text: str) -> tuple[str, str]:
        data: dict[str, object] = {}
        if has_frontmatter(text):
            try:
                data, _ = read_frontmatter(text, path)
            except MemctlError:
                data = {}
        return str(data.get("scope") or "team"), str(data.get("status") or "active")

    (s0, t0), (s1, t1) = meta(old), meta(new)
    bits = []
    if s1 != s0:
        bits.append(f"scope {s0} -> {s1}")
    if t1 != t0:
        bits.append(f"status {t0} -> {t1}")
    if not bits:
        return None
    return (f"{path}: the pull changes its {' and '.join(bits)}, so it may leave your recall "
            f"(`git log -p -1 -- {path}` names who; change it back and sync to undo)")


def ignore_problems(root: Path, gitignore: str, paths: list[str]) -> list[str]:
    """The rules of a pulled `.gitignore` that would ignore vault content (a note, a raw
    session): every later ingest, curate and remember would fail to commit. Judged in a
    scratch repository (`git check-ignore --no-index`), so nothing of the vault is touched."""
    import subprocess
    import tempfile

    if not gitignore.strip():
        return []
    with tempfile.TemporaryDirectory(prefix="memctl-ignore-") as tmp:
        env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": tmp, "PATH": _path()}
        subprocess.run(["git", "init", "-q", tmp], capture_output=True, env=env, check=False)
        write_local(Path(tmp, ".gitignore"), gitignore)  # a scratch repository, not the vault
        proc = subprocess.run(
            ["git", "-C", tmp, "-c", "core.excludesFile=", "check-ignore", "--no-index", "-v",
             "-z", "--stdin"],
            input="\0".join(paths).encode("utf-8", "surrogateescape"), capture_output=True,
            env=env, check=False,
        )  # fmt: skip
    out = proc.stdout.decode("utf-8", "replace").split("\0")
    rules: dict[tuple[str, str], list[str]] = {}  # (line, pattern) -> the paths it ignores
    for i in range(0, len(out) - 3, 4):
        _source, line, pattern, path = out[i : i + 4]
        if not pattern.startswith("!"):  # a negation: the path is not ignored
            rules.setdefault((line, pattern), []).append(path)
    return [f"rule {pattern!r} (.gitignore:{line}) ignores {hit[0]}"
            + (f" and {len(hit) - 1} more" if len(hit) > 1 else "")
            for (line, pattern), hit in rules.items()]  # fmt: skip


def _path() -> str:
    import os

    return os.environ.get("PATH", "/usr/bin:/bin")


def removed_line(raw: list[str], notes: list[str]) -> str:
    """What a pull deletes is said, never taken silently: a teammate's `memctl forget` is
    a real deletion, but so would be a hostile one (the files stay in git history)."""
    bits = []
    if raw:
        bits.append(f"{len(raw)} raw session{'s' * (len(raw) != 1)}")
    if notes:
        bits.append(f"{len(notes)} note{'s' * (len(notes) != 1)}")
    some = ", ".join([*raw, *notes][:3]) + (", ..." if len(raw) + len(notes) > 3 else "")
    return (f"the pull deletes {' and '.join(bits)} ({some}); they stay in git history "
            "(`git log --diff-filter=D --stat -1 -- PATH` names who, `git checkout "
            "COMMIT^ -- PATH` brings one back)")
