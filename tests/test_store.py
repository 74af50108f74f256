"""The store's path checks: no write ever lands outside the vault, however the path is spelled."""

from __future__ import annotations

from pathlib import Path

import pytest

from memctl.core.store import Transaction
from memctl.errors import MemctlError


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


def test_inside_answers_as_resolve_does_once_its_root_is_cached(vault: Path) -> None:
    """`inside` keeps each root resolved and walks only below it: it must still follow a
    symlink made after the first check, wherever it sits in the path."""
    from memctl.core.store import inside

    outside = vault.parent / "outside"
    (vault / "knowledge").mkdir()
    (vault / "knowledge" / "a.md").write_text("a", encoding="utf-8")
    (vault / ".git").mkdir()
    assert inside(vault, "knowledge/a.md") == (vault / "knowledge" / "a.md").resolve()
    assert inside(vault, "./knowledge//a.md") == (vault / "knowledge" / "a.md").resolve()
    assert inside(vault, "knowledge/new/deeper.md") == vault.resolve() / "knowledge/new/deeper.md"
    assert inside(vault, "knowledge/a.md/under.md") == vault.resolve() / "knowledge/a.md/under.md"
    # made after the root was cached: a folder link inside the vault is followed...
    (vault / "raw" / "notes").symlink_to(vault / "knowledge", target_is_directory=True)
    assert inside(vault, "raw/notes/a.md") == (vault / "knowledge" / "a.md").resolve()
    # ...and one leading out, or into .git, is refused, in the middle or at the end
    (vault / "raw" / "out").symlink_to(outside, target_is_directory=True)
    (vault / "raw" / "git").symlink_to(vault / ".git", target_is_directory=True)
    (vault / "raw" / "out.md").symlink_to(outside / "x.md")
    for rel in ("raw/out/x.md", "raw/out/new/deeper.md", "raw/out.md", "raw/git/config"):
        with pytest.raises(MemctlError):
            inside(vault, rel)
    # the same vault reached through a symlinked root checks against its real location
    alias = vault.parent / "alias"
    alias.symlink_to(vault, target_is_directory=True)
    assert inside(alias, "knowledge/a.md") == (vault / "knowledge" / "a.md").resolve()
    with pytest.raises(MemctlError):
        inside(alias, "raw/out/x.md")
