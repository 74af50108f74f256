"""One parser for `git cat-file --batch` output, against a real repository's."""

from __future__ import annotations

import subprocess
from pathlib import Path

from memctl.core.lineage import cat_file_objects


def _git(repo: Path, *args: str, data: bytes | None = None) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], input=data, capture_output=True,
                          check=True).stdout  # fmt: skip


def test_objects_come_back_whole_and_missing_ones_are_skipped(tmp_path: Path) -> None:
    repo = tmp_path / "r"
    _git(tmp_path, "init", "-q", str(repo))
    # a blob that holds newlines, a line shaped like a batch header, and bytes not UTF-8
    tricky = b"line one\n0123 blob 5\n\xff\xfe tail\n\n"
    blob = _git(repo, "hash-object", "-w", "--stdin", data=tricky).decode().strip()
    plain = _git(repo, "hash-object", "-w", "--stdin", data=b"plain").decode().strip()
    (repo / "f.txt").write_bytes(b"x")
    _git(repo, "add", "f.txt")
    _git(repo, "-c", "user.name=T", "-c", "user.email=t@example.invalid", "commit", "-q",
         "-m", "first")  # fmt: skip
    commit = _git(repo, "rev-parse", "HEAD").decode().strip()
    missing = "0" * 40
    names = [blob, missing, commit, "nosuchref", plain]
    out = _git(repo, "cat-file", "--batch", data="".join(n + "\n" for n in names).encode())
    got = list(cat_file_objects(out))
    assert [(n, k) for n, k, _ in got] == [(blob, "blob"), (commit, "commit"), (plain, "blob")]
    assert got[0][2] == tricky and got[2][2] == b"plain"
    assert got[1][2].startswith(b"tree ") and b"\n\nfirst\n" in got[1][2]
    assert list(cat_file_objects(b"")) == []
    assert list(cat_file_objects(out[:20])) == []  # cut inside the first header: nothing
