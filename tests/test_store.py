"""The store's path checks: no write ever lands outside the vault, however the path is spelled."""

from __future__ import annotations

from pathlib import Path

import pytest

from memctl.errors import MemctlError
from memctl.store import Transaction


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    v = tmp_path / "v"
    (v / "raw").mkdir(parents=True)
    (tmp_path / "outside").mkdir()
    return v


@pytest.mark.parametrize("rel", ["../escape.md", "raw/../../escape.md", "/etc/x.md"])
def test_paths_that_climb_out_are_refused(vault: Path, rel: str) -> None:
    tx = Transaction(vault)
    with pytest.raises(MemctlError, match="escapes the vault"):
        tx.write(rel, "x")
    assert not (vault.parent / "escape.md").exists()


def test_a_symlinked_folder_or_file_pointing_out_is_refused(vault: Path) -> None:
    outside = vault.parent / "outside"
    (vault / "raw" / "linked").symlink_to(outside, target_is_directory=True)
    (outside / "target.md").write_text("keep", encoding="utf-8")
    (vault / "raw" / "file.md").symlink_to(outside / "target.md")
    tx = Transaction(vault)
    tx.write("raw/ok.md", "fine")  # a folder resolved once stays checked for the next file
    for rel in ("raw/linked/new.md", "raw/file.md"):
        with pytest.raises(MemctlError, match="escapes the vault"):
            tx.write(rel, "x")
    assert sorted(p.name for p in outside.iterdir()) == ["target.md"]
    assert (outside / "target.md").read_text(encoding="utf-8") == "keep"
    tx.rollback()
    assert not (vault / "raw" / "ok.md").exists()
