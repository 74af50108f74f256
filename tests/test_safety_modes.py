"""File modes: memctl honours the umask for new files and keeps a rewritten file's mode.

Found in review: every file was written 0600 whatever the umask (mkstemp's mode leaked
through the rename), and `hooks install` turned a 0644 `.claude/settings.json` into 0600,
so a shared vault or a settings file other tools read became private by accident.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from util import DATA, ok

from memctl.faces.hooks import install


@pytest.fixture
def umask() -> Iterator[Callable[[int], None]]:
    """Set the process umask (inherited by the memctl subprocesses) and restore it."""
    old = os.umask(0o022)

    def set_(value: int) -> None:
        os.umask(value)

    yield set_
    os.umask(old)


def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


def _vault_files(v: Path) -> list[Path]:
    return [
        p
        for p in v.rglob("*")
        if p.is_file() and not p.relative_to(v).as_posix().startswith((".git/", ".memctl/"))
    ]


@pytest.mark.parametrize("mask,want", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_new_files_follow_the_umask(
    tmp_path: Path, umask: Callable[[int], None], mask: int, want: int
) -> None:
    umask(mask)
    v = tmp_path / "v"
    ok("init", v)
    ok("--vault", v, "ingest", DATA / "formats" / "memctl.jsonl")
    files = _vault_files(v)
    assert any(p.relative_to(v).parts[0] == "raw" and p.name != "INDEX.md" for p in files)
    modes = {p.relative_to(v).as_posix(): oct(_mode(p)) for p in files}
    assert set(modes.values()) == {oct(want)}, modes


def test_rewriting_a_file_keeps_its_mode(tmp_path: Path, umask: Callable[[int], None]) -> None:
    umask(0o077)
    v = tmp_path / "v"
    ok("init", v)
    index = v / "raw" / "INDEX.md"
    index.chmod(0o664)
    ok("--vault", v, "ingest", DATA / "formats" / "memctl.jsonl")
    assert "turns" in index.read_text()
    assert _mode(index) == 0o664


def test_hooks_install_keeps_a_0644_settings_file(
    tmp_path: Path, umask: Callable[[int], None]
) -> None:
    umask(0o077)
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps({"model": "x"}))
    path.chmod(0o644)
    res = install(path, tmp_path / "vault", base="/opt/bin/memctl")
    assert res.changed
    assert "hooks" in json.loads(path.read_text())
    assert _mode(path) == 0o644
