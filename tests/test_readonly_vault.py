"""Reading a vault memctl cannot write: a read-only mount, or a vault of another user.

Found in review: `search`, `recall` and `context` on a read-only vault failed with
"the vault is read-only; memctl can only read it", even with a current index, because
tantivy takes a lock file inside the index folder to read it. Read commands now answer,
from a copy of the vault's index (or one built from the files when it is stale or
missing) kept under the cache dir, outside the vault, and say so in one line on stderr.

The read-only vault here is a real one: a small tmpfs remounted read-only (as
tests/test_git_faults.py does), and, when the tests do not run as root, a folder whose
write bits are gone (root ignores those).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from util import init_vault, memctl, ok

from memctl.faces.mcp import Tools
from memctl.vault import Vault

TURNS = [
    {"role": "user", "content": "We decided to use Postgres for billing because of row locks."},
    {"role": "assistant", "content": "Noted: Postgres for billing."},
]
NOTE = """---
title: Kafka
store: knowledge
scope: team
---
# Kafka

## Facts

- The team runs Kafka on three brokers in eu-west-1.
"""


@contextlib.contextmanager
def _fs(where: Path) -> Iterator[Path]:
    where.mkdir()
    r = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(where)],
        capture_output=True,
        check=False,
    )
    if r.returncode != 0:
        pytest.skip(f"cannot mount a small filesystem here: {r.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _remount(fs: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(fs)], check=True)


def _vault(fs: Path, tmp: Path) -> Path:
    v = fs / "vault"
    init_vault(v)
    src = tmp / "s.jsonl"
    src.write_text("\n".join(json.dumps(t) for t in TURNS) + "\n")
    ok("--vault", v, "ingest", src, "--user", "dana")
    ok("--vault", v, "curate")
    return v


def _snapshot(v: Path) -> dict[str, bytes]:
    return {
        p.relative_to(v).as_posix(): p.read_bytes()
        for p in sorted(v.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def _answers(v: Path, query: str, expect: str) -> list[str]:
    """Every read command answers; returns the stderr lines they printed."""
    said = []
    for args in (
        ("search", query),
        ("search", query, "--json"),
        ("recall", query, "--user", "dana"),
        ("context", "--user", "dana"),
        ("status",),
        ("verify",),
    ):
        r = memctl("--vault", v, *args)
        assert r.code == 0, (args, r.err)
        assert "Traceback" not in r.err and len(r.err.strip().splitlines()) <= 1, (args, r.err)
        if args[0] == "search":
            assert expect in r.out, (args, r.out)
        said += r.err.strip().splitlines()
    return said


def test_read_commands_answer_on_a_read_only_mount_with_a_current_index(tmp_path: Path) -> None:
    with _fs(tmp_path / "fs") as fs:
        v = _vault(fs, tmp_path)
        before = _snapshot(v)
        _remount(fs, "ro")
        said = _answers(v, "Postgres billing", "Postgres")
        assert len(said) == 1 and "read-only" in said[0] and "copy of its index" in said[0], said
        assert str(v) not in said[0].split(" in ", 1)[1]  # the copy lives outside the vault
        r = memctl("--vault", v, "show", "decisions/INDEX.md")
        assert r.code == 0 and "Postgres" in r.out, r.err
        # an MCP server on the same vault: search, list, read, recall, context
        tools = Tools(Vault.open(v, env={"HOME": os.environ["HOME"]}), "dana")
        assert tools.search("Postgres")["hits"]
        assert tools.list("decisions")["notes"]
        assert "Postgres" in tools.read("decisions/INDEX.md")["text"]
        assert "Postgres" in tools.recall("Postgres billing")
        assert tools.context()
        assert _snapshot(v) == before
        _remount(fs, "rw")


def test_notes_touched_but_unchanged_still_copy_the_current_index(tmp_path: Path) -> None:
    """The quick stat check cannot vouch for the index here: every note's mtime moved (a
    checkout, a backup restore, a save without changes; or a write in the same clock tick
    as the last index, which marks it racy). The bytes are what the index saw, so the
    read-only vault still gets a copy of its own index, not one rebuilt from the files."""
    with _fs(tmp_path / "fs") as fs:
        v = _vault(fs, tmp_path)
        later = time.time_ns() + 5_000_000_000
        for p in v.rglob("*.md"):
            if ".memctl" not in p.parts and ".git" not in p.parts:
                os.utime(p, ns=(later, later))
        before = _snapshot(v)
        _remount(fs, "ro")
        said = _answers(v, "Postgres billing", "Postgres")
        assert len(said) == 1 and "copy of its index" in said[0], said
        assert _snapshot(v) == before
        _remount(fs, "rw")


def test_a_stale_index_is_brought_up_to_date_outside_the_vault(tmp_path: Path) -> None:
    with _fs(tmp_path / "fs") as fs:
        v = _vault(fs, tmp_path)
        (v / "knowledge" / "kafka.md").write_text(NOTE)  # by hand: the index has not seen it
        before = _snapshot(v)
        _remount(fs, "ro")
        said = _answers(v, "Kafka brokers", "knowledge/kafka.md")
        assert len(said) == 1 and "read-only" in said[0], said
        r = memctl("--vault", v, "search", "eu-west-1", "--json")  # nothing new: nothing said
        assert r.code == 0 and r.err == "" and r.json()["hits"], r.err
        assert _snapshot(v) == before
        _remount(fs, "rw")


def test_a_missing_index_is_built_outside_the_vault(tmp_path: Path) -> None:
    with _fs(tmp_path / "fs") as fs:
        v = _vault(fs, tmp_path)
        shutil.rmtree(v / ".memctl" / "index")
        before = _snapshot(v)
        _remount(fs, "ro")
        said = _answers(v, "Postgres billing", "Postgres")
        assert len(said) == 1 and "stale or missing" in said[0], said
        assert not (v / ".memctl" / "index").exists()
        assert _snapshot(v) == before
        # and a write still fails in one line, as before
        r = memctl("--vault", v, "reindex")
        assert r.code != 0 and "read-only" in r.err and len(r.err.strip().splitlines()) == 1
        _remount(fs, "rw")


def test_doctor_and_review_read_a_read_only_vault_and_refuse_to_change_it(
    tmp_path: Path,
) -> None:
    """Both took the vault lock just to look, so they failed like a write."""
    with _fs(tmp_path / "fs") as fs:
        v = _vault(fs, tmp_path)
        before = _snapshot(v)
        _remount(fs, "ro")
        for args in (("doctor",), ("doctor", "--json"), ("review",), ("review", "--json")):
            r = memctl("--vault", v, *args)
            assert r.code == 0 and r.err == "", (args, r.err)
        assert memctl("--vault", v, "doctor", "--json").json()["ok"] is True
        for args in (("doctor", "--repair"), ("review", "--all")):
            r = memctl("--vault", v, *args)
            assert r.code != 0 and "read-only" in r.err, (args, r.err)
            assert len(r.err.strip().splitlines()) == 1, r.err
        assert _snapshot(v) == before
        _remount(fs, "rw")


@pytest.mark.skipif(os.geteuid() == 0, reason="root ignores write permissions; see the mounts")
def test_a_vault_without_write_permission_answers(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    v = _vault(tmp_path / "plain", tmp_path)
    (v / "knowledge" / "kafka.md").write_text(NOTE)
    subprocess.run(["chmod", "-R", "a-w", str(v)], check=True)
    try:
        said = _answers(v, "Kafka brokers", "knowledge/kafka.md")
        assert len(said) == 1 and "read-only" in said[0], said
    finally:
        subprocess.run(["chmod", "-R", "u+w", str(v)], check=True)
