"""Local state of a vault clone that no pull can reach, read on every command.

Leaf module (stdlib, errors and store only): config loading, the index, recall and undo read
what `memctl.gitops.remotetrust` decided and wrote here. Everything lives in the git
directory, which is never tracked, pulled or pushed; docs/sync.md has the whole trust model.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import subprocess
import tomllib
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Tables of config.toml that decide where data goes or how it is protected: every table. The
# agent and human identities decide whose lines are `human`; [remember] whether the agent
# writes team notes unreviewed; [recall] how much goes into every prompt.
PROTECTED = ("vault", "ingest", "git", "curate", "recall", "remember", "redact", "hooks",
             "retention", "limits", "stores")
LOCAL_CONFIG_REL = ".memctl/config.local.toml"
# What a remote may track under .memctl/: the shared config and the shared state.
SHARED_STATE = frozenset({
    ".memctl/config.toml",
    ".memctl/state/curation.json",
    ".memctl/state/removed.jsonl",
})
NOTE_LIMIT = 1 << 20  # bytes: a note past this is refused by sync
RAW_LIMIT = 16 << 20  # bytes: a raw session past this is refused by sync and ingest
ATTACHMENT_LIMIT = 2 << 20  # bytes: an image a transcript carries is kept up to this
READ_BOUND = 4 << 20  # bytes: recall, search and the hooks never read a note past this
RAW_READ_BOUND = RAW_LIMIT  # ... nor a raw session past this
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmg]?i?b?)?\s*$", re.I)


# ---- where local state lives -----------------------------------------------------------------


def git_dir(root: Path) -> Path:
    """The vault's git directory, without running git (a worktree's `.git` is a file)."""
    dot = root / ".git"
    if dot.is_file():
        with contextlib.suppress(OSError, UnicodeDecodeError):
            line = dot.read_text(encoding="utf-8").strip()
            if line.startswith("gitdir:"):
                target = Path(line[len("gitdir:"):].strip())
                return target if target.is_absolute() else (root / target).resolve()
    return dot


def local_dir(root: Path) -> Path:
    return git_dir(root) / "memctl"


def write_local(path: Path, text: str) -> None:
    from memctl.core.store import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, text)


# ---- limits --------------------------------------------------------------------------------


def parse_size(value: Any, what: str) -> int:
    """`1MB`, `512 KB`, `2000000` -> bytes; a MemctlError naming the key otherwise."""
    from memctl.errors import MemctlError

    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    m = _SIZE.match(str(value))
    if not m or isinstance(value, bool):
        raise MemctlError(f"[limits] {what} = {value!r} is not a size (e.g. 1MB, 500KB)",
                          ".memctl/config.toml", exit_code=2)  # fmt: skip
    unit = (m.group(2) or "b").lower()[:1]
    return int(float(m.group(1)) * {"b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[unit])


def limits(data: dict[str, Any]) -> tuple[int, int]:
    """(note limit, raw limit) in bytes from the config's [limits] table."""
    table = data.get("limits", {})
    if not isinstance(table, dict):
        table = {}
    note = parse_size(table["note"], "note") if "note" in table else NOTE_LIMIT
    raw = parse_size(table["raw"], "raw") if "raw" in table else RAW_LIMIT
    return note, raw


def attachment_limit(data: dict[str, Any]) -> int:
    """The largest attachment (a pasted screenshot) ingest keeps as a file, from [limits]."""
    table = data.get("limits", {})
    if isinstance(table, dict) and "attachment" in table:
        return parse_size(table["attachment"], "attachment")
    return ATTACHMENT_LIMIT


def human_size(n: int) -> str:
    return f"{n / (1 << 20):.1f} MB" if n >= 1 << 20 else f"{n / 1024:.0f} KB"


def read_bound(rel: str) -> int:
    """The most bytes a reader answering a prompt reads of the file at `rel`."""
    return RAW_READ_BOUND if rel.startswith("raw/") else READ_BOUND


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_BINARY", 0) | getattr(os, "O_CLOEXEC", 0)


def read_bounded_bytes(path: Path, bound: int = READ_BOUND) -> bytes:
    """At most `bound` bytes of a regular file (OSError for anything else).

    Opened without blocking: a named pipe where a file should be would otherwise hold the
    prompt until someone writes to it. The read asks for no more than the file holds: a
    read of n bytes sizes its buffer by n, and asking for the bound (MBs) made every read
    of a small cache entry allocate and free that much, 3-5x the read itself.
    """
    fd = os.open(path, _OPEN_FLAGS | getattr(os, "O_NONBLOCK", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        want = min(bound, st.st_size + 1)  # one past: a file that grew meanwhile reads on
        parts = [os.read(fd, want)]
        got = len(parts[0])
        while got < bound and len(parts[-1]) == want:
            want = min(bound - got, 1 << 20)
            parts.append(os.read(fd, want))
            got += len(parts[-1])
        return parts[0] if len(parts) == 1 else b"".join(parts)
    finally:
        os.close(fd)


def read_bounded(path: Path, bound: int = READ_BOUND) -> str:
    """At most `bound` bytes of a file, decoded (a cut character dropped): readers that
    answer a prompt never pay for a file someone made huge."""
    return read_bounded_bytes(path, bound).decode("utf-8", "ignore")


# ---- config that waits for the user ----------------------------------------------------------


def held_path(root: Path) -> Path:
    return local_dir(root) / "held-config.json"


def held_templates_path(root: Path) -> Path:
    return local_dir(root) / "held-templates.json"


def held_templates(root: Path) -> dict[str, str | None]:
    """Store template files a pull changed -> the text in force until the user accepts
    (None: there was no such file)."""
    p = held_templates_path(root)
    if not p.is_file():
        return {}
    try:
        files = json.loads(p.read_text(encoding="utf-8")).get("files", {})
        return {str(k): (None if v is None else str(v)) for k, v in files.items()}
    except (OSError, ValueError, AttributeError):
        return {}


def accepted_steering_path(root: Path) -> Path:
    return local_dir(root) / "accepted-instructions.json"


def accepted_steering(root: Path) -> dict[str, frozenset[str]]:
    """instructions/ note -> claim keys of lines someone else added that the user accepted
    (`memctl sync --accept-config`): followed, labelled `accepted`."""
    try:
        notes = json.loads(accepted_steering_path(root).read_text(encoding="utf-8"))["notes"]
        return {str(k): frozenset(str(x) for x in v) for k, v in notes.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return {}


def accept_steering(root: Path, more: dict[str, set[str]]) -> None:
    have = {k: set(v) for k, v in accepted_steering(root).items()}
    for rel, keys in more.items():
        have.setdefault(rel, set()).update(keys)
    write_local(accepted_steering_path(root), json.dumps(
        {"notes": {k: sorted(v) for k, v in sorted(have.items())}}, indent=1) + "\n")


def local_override(root: Path) -> Path | None:
    """This machine's `config.local.toml`: a regular file git does not track. One a pull
    brought (tracked, so it came with someone's history) pins nothing."""
    local = root / LOCAL_CONFIG_REL
    if not local.is_file() or local.is_symlink():
        return None
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    proc = subprocess.run(["git", "-C", str(root), "ls-files", "--error-unmatch", "--",
                           LOCAL_CONFIG_REL], capture_output=True, env=env,
                          check=False)  # fmt: skip
    return None if proc.returncode == 0 else local


def effective(root: Path, data: dict[str, Any], local: Path | None = None) -> dict[str, Any]:
    """The config in force: the tracked file, protected tables held at what the user last
    accepted (while a pulled change waits), and the local override (`local_override`) on
    top."""
    held = held_path(root)
    if held.is_file():
        with contextlib.suppress(OSError, ValueError):
            kept = json.loads(held.read_text(encoding="utf-8")).get("tables", {})
            data = dict(data)
            for key in PROTECTED:
                if key in kept:
                    data[key] = kept[key]
                else:
                    data.pop(key, None)
    if local is not None:
        data = _deep_merge(data, read_local(local)[1])
    return data


def read_local(local: Path) -> tuple[str, dict[str, Any]]:
    """The local override's text and tables; a TOML error names the file and line."""
    from memctl.errors import MemctlError

    text = local.read_text(encoding="utf-8")
    try:
        return text, tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = int(m.group(1)) if (m := re.search(r"\(at line (\d+)", str(exc))) else None
        raise MemctlError(f"invalid config: {exc}", local, line, exit_code=2) from None


def _deep_merge(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    out = dict(a)
    for k, v in b.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = _deep_merge(out[k], v)
        else:
            out[k] = v
    return out


# ---- commits that came from elsewhere ---------------------------------------------------------


def pulled_path(root: Path) -> Path:
    return local_dir(root) / "pulled"


def pulled(root: Path) -> set[str]:
    try:
        return set(pulled_path(root).read_text(encoding="utf-8").split())
    except OSError:
        return set()


def run_git(root: Path, env: dict[str, str] | None = None) -> Callable[..., str]:
    def git(*args: str, input: str | None = None) -> str:
        proc = subprocess.run(["git", "-C", str(root), *args], input=input, capture_output=True,
                              text=True, encoding="utf-8", errors="replace", env=env,
                              check=False)  # fmt: skip
        if proc.returncode != 0:
            from memctl.errors import MemctlError

            raise MemctlError(f"git {args[0]} failed: {proc.stderr.strip()[:200]}")
        return proc.stdout

    return git
