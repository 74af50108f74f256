"""Helpers shared by CLI tests: run the real `memctl` in a subprocess and snapshot a vault."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
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
    v = tmp / name
    ok("init", v)
    return v
