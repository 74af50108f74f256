"""Git and disk faults: memctl refuses to write where a commit would go wrong, and every
fault is one line on stderr, a non-zero exit and a vault left as it was."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from crashkit import transcripts
from util import git, memctl, new_vault, ok, snapshot

ID = ["-c", "user.name=T", "-c", "user.email=t@example.invalid"]


def _one_line_failure(r: object, *words: str) -> None:
    assert r.code != 0, r.out  # type: ignore[attr-defined]
    err = r.err.strip()  # type: ignore[attr-defined]
    assert "Traceback" not in err and len(err.splitlines()) == 1, err
    for w in words:
        assert w in err, err


def _session(tmp: Path, name: str) -> Path:
    p = tmp / f"{name}.jsonl"
    p.write_text(f'{{"role": "user", "content": "about {name}"}}\n')
    return p


def test_a_detached_head_is_refused(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    ok("--vault", vault, "ingest", _session(tmp_path, "a"))
    git(vault, "checkout", "-q", "--detach")
    before = snapshot(vault)
    r = memctl("--vault", vault, "ingest", _session(tmp_path, "b"))
    _one_line_failure(r, "HEAD is detached", "git switch")
    assert snapshot(vault) == before
    assert git(vault, "status", "--porcelain") == ""


def test_a_merge_or_rebase_in_progress_is_refused(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    ok("--vault", vault, "ingest", _session(tmp_path, "a"))
    git(vault, "checkout", "-q", "-b", "side")
    (vault / "knowledge" / "x.md").write_text("# x\n")
    git(vault, *ID, "add", "-A")
    subprocess.run(["git", "-C", str(vault), *ID, "commit", "-qm", "side"], check=True)
    git(vault, "checkout", "-q", "main")
    subprocess.run(["git", "-C", str(vault), *ID, "merge", "--no-commit", "--no-ff", "side"],
                   check=True, capture_output=True)
    r = memctl("--vault", vault, "ingest", _session(tmp_path, "b"))
    _one_line_failure(r, "merge is in progress")
    git(vault, "merge", "--abort")
    env = {"GIT_SEQUENCE_EDITOR": "sed -i 1ibreak"}
    subprocess.run(["git", "-C", str(vault), *ID, "rebase", "-q", "-i", "HEAD~1"], check=True,
                   capture_output=True, env={**os.environ, **env})
    r = memctl("--vault", vault, "ingest", _session(tmp_path, "c"))
    _one_line_failure(r, "rebase is in progress")


def test_conflict_markers_in_a_memctl_file_are_refused(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    index = vault / "INDEX.md"
    index.write_text(index.read_text() + "<<<<<<< HEAD\nmine\n=======\ntheirs\n>>>>>>> side\n")
    subprocess.run(["git", "-C", str(vault), *ID, "commit", "-qam", "bad merge"], check=True)
    before = snapshot(vault)
    r = memctl("--vault", vault, "ingest", _session(tmp_path, "a"))
    _one_line_failure(r, "INDEX.md", "conflict marker")
    assert snapshot(vault) == before


def test_a_missing_git_object_is_one_line(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    ok("--vault", vault, "ingest", _session(tmp_path, "a"))
    head = git(vault, "rev-parse", "HEAD").strip()
    (vault / ".git" / "objects" / head[:2] / head[2:]).unlink()
    r = memctl("--vault", vault, "ingest", _session(tmp_path, "b"))
    _one_line_failure(r, "git")
    r = memctl("--vault", vault, "status")
    _one_line_failure(r, "git")


def test_a_hand_edited_index_file_is_committed_before_it_is_rewritten(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    index = vault / "INDEX.md"
    index.write_text(index.read_text() + "\nMy own line about this vault.\n")
    r = ok("--vault", vault, "ingest", _session(tmp_path, "a"))
    assert "INDEX.md" in r.err and "hand" in r.err
    log = git(vault, "log", "--format=%s", "-2").splitlines()
    assert log[1].startswith("edit:") and log[0].startswith("ingest:")
    assert "My own line about this vault." in git(vault, "show", "HEAD~1:INDEX.md")


@contextlib.contextmanager
def _small_fs(where: Path, size: str) -> Iterator[Path]:
    where.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                       capture_output=True, check=False)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a small filesystem here: {r.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def test_a_full_disk_is_one_line_and_rolls_back(tmp_path: Path) -> None:
    with _small_fs(tmp_path / "fs", "3m") as fs:
        vault = new_vault(fs)
        ok("--vault", vault, "ingest", transcripts(tmp_path / "t0", 3, 4))
        before = snapshot(vault)
        filler = fs / "filler"
        with contextlib.suppress(OSError), filler.open("wb") as fh:
            while True:
                fh.write(b"\0" * 65536)
        filler.unlink()
        with filler.open("wb") as fh:  # leave about 200 KB
            fh.write(b"\0" * (os.statvfs(fs).f_bavail * os.statvfs(fs).f_frsize - 200_000))
        r = memctl("--vault", vault, "ingest", transcripts(tmp_path / "t1", 40, 60, tag="big"))
        _one_line_failure(r, "No space left")
        assert snapshot(vault) == before
        assert git(vault, "status", "--porcelain") == ""
        filler.unlink()
        ok("--vault", vault, "ingest", transcripts(tmp_path / "t1", 40, 60, tag="big"))
        assert git(vault, "status", "--porcelain") == ""


def test_a_read_only_vault_is_one_line(tmp_path: Path) -> None:
    with _small_fs(tmp_path / "fs", "8m") as fs:
        vault = new_vault(fs)
        ok("--vault", vault, "ingest", _session(tmp_path, "a"))
        subprocess.run(["mount", "-o", "remount,ro", str(fs)], check=True)
        r = memctl("--vault", vault, "ingest", _session(tmp_path, "b"))
        _one_line_failure(r, "read-only")
        r = memctl("--vault", vault, "status")
        assert r.code == 0 and "1 session," in r.out, r.err
        r = memctl("--vault", vault, "search", "about")  # tantivy may need to write: one line
        assert "Traceback" not in r.err and len(r.err.strip().splitlines()) <= 1, r.err
