"""Git as a person runs it in these tests: with an identity, since HOME is a fresh folder."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

PERSON = {
    "GIT_AUTHOR_NAME": "Dana Reyes",
    "GIT_AUTHOR_EMAIL": "dana@example.com",
    "GIT_COMMITTER_NAME": "Dana Reyes",
    "GIT_COMMITTER_EMAIL": "dana@example.com",
}


def run_git(repo: Path, *args: str, check: bool = True) -> str:
    """`git -C repo ARGS` as Dana; stdout, or an AssertionError with git's stderr."""
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=False,
        env={**os.environ, **PERSON},
    )
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} -> {proc.returncode}\n{proc.stderr}")
    return proc.stdout
