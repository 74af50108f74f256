"""Helpers shared by CLI tests: run the real `memctl` in a subprocess and snapshot a vault."""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"


@dataclass
class Run:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


def memctl(*args: str | Path, input: str | bytes | None = None, cwd: Path | None = None,
           env: dict[str, str] | None = None, timeout: float = 120) -> Run:
    """Run `python -m memctl ARGS` exactly as a user would, in a clean environment."""
    full_env = dict(os.environ)
    full_env.pop("MEMCTL_VAULT", None)
    full_env["PYTHONIOENCODING"] = "utf-8"
    full_env["COLUMNS"] = "200"
    if env:
        full_env.update(env)
    data = input.encode() if isinstance(input, str) else input
    proc = subprocess.run(
        [sys.executable, "-m", "memctl", *map(str, args)],
        input=data, capture_output=True, cwd=cwd, env=full_env, timeout=timeout, check=False,
    )
    return Run(proc.returncode, proc.stdout.decode("utf-8", "replace"),
               proc.stderr.decode("utf-8", "replace"))


def ok(*args: str | Path, **kw: Any) -> Run:
    """Run and insist on success, showing stderr when it fails."""
    r = memctl(*args, **kw)
    assert r.code == 0, f"memctl {' '.join(map(str, args))} failed ({r.code}): {r.err}{r.out}"
    return r


def git(vault: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(vault), *args], capture_output=True, text=True,
                          check=True).stdout


def snapshot(vault: Path) -> dict[str, str]:
    """Every file below the vault (index and lock excluded) with its hash, plus git HEAD."""
    out: dict[str, str] = {}
    for p in sorted(vault.rglob("*")):
        rel = p.relative_to(vault).as_posix()
        if not p.is_file() or rel.startswith((".memctl/index", ".memctl/cache", ".git/")) \
                or rel == ".memctl/lock":
            continue
        out[rel] = hashlib.sha256(p.read_bytes()).hexdigest()
    out["HEAD"] = git(vault, "rev-parse", "HEAD").strip()
    return out


def new_vault(tmp: Path, name: str = "vault") -> Path:
    """A new, empty vault at tmp/name, as `memctl init` makes it."""
    return init_vault(tmp / name)


_TEMPLATE: dict[tuple[tuple[str, str], ...], Path] = {}


def init_vault(target: Path) -> Path:
    """`memctl init target`, made by copying a vault that a real `memctl init` made once in
    this process: the suite sets up a few hundred empty vaults, and an init costs ~130 ms
    of CPU where a copy costs ~5. The init commit, config, templates, merge drivers and git
    index are the same bytes; nothing in them names the vault's folder. What else an init
    depends on is kept equal: memctl's and git's variables (one template per set of them),
    and no git config in the test's home (the init commit's author comes from git config).
    A folder that holds files (init adopts them) or a home with a git config gets a real
    init. Tests of init itself run `memctl init`."""
    home = Path(os.environ.get("HOME", "/nonexistent"))
    xdg = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    settings = tuple(sorted(
        (k, v) for k, v in os.environ.items()
        if k.startswith(("MEMCTL_", "GIT_", "XDG_CONFIG_HOME")) and k != "MEMCTL_HOME"
    ))  # fmt: skip
    if (target.exists() and any(target.iterdir())) or (home / ".gitconfig").exists() \
            or (xdg / "git" / "config").exists():
        ok("init", target)
        return target
    if settings not in _TEMPLATE:
        made = Path(tempfile.mkdtemp(prefix="memctl-template-"))
        atexit.register(shutil.rmtree, made, ignore_errors=True)
        env = {**os.environ, "HOME": str(made), "MEMCTL_HOME": str(made)}
        env.pop("MEMCTL_VAULT", None)
        subprocess.run([sys.executable, "-m", "memctl", "init", str(made / "vault")], env=env,
                       capture_output=True, check=True)  # fmt: skip
        _TEMPLATE[settings] = made / "vault"
    shutil.copytree(_TEMPLATE[settings], target, symlinks=True, dirs_exist_ok=True)
    return target


def ctrl_c_stops() -> None:
    """Popen's preexec_fn for a process a test stops with SIGINT: a suite started in the
    background by a shell (`pytest ... &`) inherits SIGINT ignored, Python then installs no
    KeyboardInterrupt, and Ctrl-C would never reach the command under test."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
