"""Settings that came in by any git operation wait for the user, not only by `memctl sync`.

`memctl sync` holds the settings a pull changes (memctl.gitops.remotetrust) before it checks
anything out. A plain `git pull`, a fetch and merge, or a rebase onto a teammate's branch
bypasses sync: the config it brings used to take effect on the next command (redaction
off, the curator pointed at someone else's `api_base`, with the user's API key). So
config loading checks, cheaply, whether the tracked config is still the one the user last
had in force (its git blob id, kept in `<git dir>/memctl/accepted-config.json`); only when
it is not does it ask git who changed it since. A change this clone committed (its reflogs
say so: memctl.core.lineage) or has not committed yet is the user's and is taken; one that
arrived from elsewhere is held exactly as a pulled one is, until `memctl sync
--accept-config`.

A vault seen for the first time (made before this existed) takes its config as accepted.
Kept to stdlib and core; the file lives in the git directory, never tracked or pushed.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tomllib
from pathlib import Path
from typing import Any

from memctl.core.localstate import (
    PROTECTED,
    git_dir,
    held_path,
    held_templates,
    held_templates_path,
    local_dir,
    write_local,
)

CONFIG_REL = ".memctl/config.toml"


def _accepted_path(root: Path) -> Path:
    return local_dir(root) / "accepted-config.json"


def _blob(text: str | None) -> str:
    if text is None:
        return ""
    from memctl.core.lineage import blob_id

    return blob_id(text.encode("utf-8"))


# ---- what is held (shared with memctl.gitops.remotetrust) ---------------------------------


def protected(data: dict[str, Any]) -> dict[str, Any]:
    return {k: data[k] for k in PROTECTED if k in data}


def changes(old: dict[str, Any], new: dict[str, Any], prefix: str = "") -> list[str]:
    """`table.key = value` for every protected setting that differs."""
    out = []
    for k in sorted(set(old) | set(new)):
        a, b = old.get(k), new.get(k)
        if a == b:
            continue
        if isinstance(a, dict) and isinstance(b, dict):
            out += changes(a, b, f"{prefix}{k}.")
        else:
            out.append(f"{prefix}{k} = {json.dumps(b) if k in new else '(removed)'}")
    return out


def toml(text: str | None) -> dict[str, Any]:
    if not text:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return {}


def hold(root: Path, before: str | None, after: str | None) -> list[str]:
    """The config changed from `before` to `after` by someone else: hold the protected
    tables at what was in force, unless a hold is already waiting. The settings that
    changed."""
    old, new = protected(toml(before)), protected(toml(after))
    held = held_path(root)
    if held.is_file():
        with contextlib.suppress(OSError, ValueError):
            old = json.loads(held.read_text(encoding="utf-8")).get("tables", old)
    changed = changes(old, new)
    if changed and not held.is_file():
        write_local(held, json.dumps({"tables": old}, indent=2, sort_keys=True) + "\n")
    return changed


# ---- the config the user last had in force ----------------------------------------------------


def record(root: Path, text: str | None) -> None:
    """The user has this config in force (accepted, or their own change)."""
    from memctl.core.history import head_of

    head = head_of(root)
    with contextlib.suppress(OSError):
        write_local(_accepted_path(root), json.dumps(
            {"blob": _blob(text), "head": head or "", "text": text}, sort_keys=True) + "\n")


def screen(root: Path, text: str | None) -> None:
    """Called by config loading with the tracked config's text: hold what a git operation
    other than this clone's own commits changed since the user last had it in force."""
    if held_path(root).is_file() or not (git_dir(root) / "HEAD").exists():
        return  # a hold is waiting already (effective() applies it), or no git here
    try:
        rec = json.loads(_accepted_path(root).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        rec = None
    if isinstance(rec, dict) and rec.get("blob") == _blob(text):
        return
    if not isinstance(rec, dict) or not rec.get("head"):
        record(root, text)  # first sight of this vault (or of its first commit)
        return
    if _foreign(root, str(rec["head"])):
        before = rec.get("text")
        if hold(root, before if isinstance(before, str) else None, text):
            return  # held; `sync --accept-config` records it
    record(root, text)


# ---- store templates: the same, file by file ------------------------------------------------


def _templates_path(root: Path) -> Path:
    return local_dir(root) / "accepted-templates.json"


def forget_templates(root: Path) -> None:
    """The user accepted what came in: each template's next read is its first sight."""
    with contextlib.suppress(FileNotFoundError):
        _templates_path(root).unlink()


def screen_template(root: Path, rel: str, text: str | None) -> str | None:
    """The text of store template `rel` in force: the file's (`text`), unless commits this
    clone did not make (a plain `git pull`, a merge) changed it since the user last had it
    in force; then what they had, held like a template sync pulled, until `memctl sync
    --accept-config`. A template is a store's extraction prompt: text a model follows."""
    if not (git_dir(root) / "HEAD").exists():
        return text
    path = _templates_path(root)
    try:
        seen = json.loads(path.read_text(encoding="utf-8")).get("files", {})
    except (OSError, ValueError, AttributeError):
        seen = {}
    rec = seen.get(rel) if isinstance(seen, dict) else None
    if isinstance(rec, dict) and rec.get("blob") == _blob(text):
        return text
    if isinstance(rec, dict) and rec.get("head") and _foreign(root, str(rec["head"]), rel):
        before = rec.get("text")
        before = before if isinstance(before, str) else None
        have = held_templates(root)
        if rel not in have:
            with contextlib.suppress(OSError):
                write_local(held_templates_path(root), json.dumps(
                    {"files": {**have, rel: before}}, indent=1, sort_keys=True) + "\n")
        return before
    from memctl.core.history import head_of

    seen = dict(seen) if isinstance(seen, dict) else {}
    seen[rel] = {"blob": _blob(text), "head": head_of(root) or "", "text": text}
    with contextlib.suppress(OSError):
        write_local(path, json.dumps({"files": seen}, sort_keys=True) + "\n")
    return text


def _foreign(root: Path, since: str, rel: str = CONFIG_REL) -> bool:
    """Did a commit this clone did not make change `rel` (the config) since `since`?"""
    from memctl.core.lineage import own_commits

    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}

    def git(*args: str) -> str | None:
        proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              env=env, check=False)  # fmt: skip
        return proc.stdout if proc.returncode == 0 else None

    shas = git("rev-list", f"{since}..HEAD", "--", rel)
    if shas is None:  # that commit is gone (history rewritten): the last change decides
        shas = git("rev-list", "-1", "HEAD", "--", rel) or ""
    touched = set(shas.split())
    return bool(touched - own_commits(root))
