"""Power loss: the write-ahead journal reaches the disk before the data it covers.

A kill -9 leaves the page cache alone, so the crash tests cannot see this; a power cut
loses whatever was not fsynced, in any order the disk likes. The guarantee that makes
recovery work is an ordering: the journal line naming a file (and the hard link keeping
its original) is durable before that file is replaced. These tests watch the real system
calls a real ingest makes (os.fsync, os.fdatasync, os.write, os.link, os.replace are
wrapped to log the call and then make it), and check that order on every write.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from util import new_vault

from memctl.core.store import atomic_write
from memctl.vault import Vault

Event = tuple[str, str]


def _fd_path(fd: int) -> str:
    try:
        return str(Path(f"/proc/self/fd/{fd}").readlink())
    except OSError:
        return f"fd:{fd}"


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Event]]:
    """The order of the durability-relevant OS calls this process makes."""
    if not Path("/proc/self/fd").is_dir():
        pytest.skip("needs /proc to name the file an fd refers to")
    log: list[Event] = []
    real = {name: getattr(os, name) for name in ("fsync", "fdatasync", "write", "link",
                                                 "replace")}

    def sync(name: str):  # type: ignore[no-untyped-def]
        def call(fd: int) -> None:
            log.append((name, _fd_path(fd)))
            real[name](fd)
        return call

    def write(fd: int, data: bytes) -> int:
        path = _fd_path(fd)
        if path.endswith("/log") and "/.memctl/journal/" in path:
            for line in bytes(data).decode("utf-8", "replace").splitlines():
                rec = json.loads(line)
                if "path" in rec:
                    log.append(("journal", rec["path"]))
        return real["write"](fd, data)

    def link(src: str, dst: str, *a: object, **k: object) -> None:
        log.append(("link", str(dst)))
        real["link"](src, dst, *a, **k)

    def replace(src: str, dst: str, *a: object, **k: object) -> None:
        log.append(("replace", str(dst)))
        real["replace"](src, dst, *a, **k)

    monkeypatch.setattr(os, "fsync", sync("fsync"))
    monkeypatch.setattr(os, "fdatasync", sync("fdatasync"), raising=False)
    monkeypatch.setattr(os, "write", write)
    monkeypatch.setattr(os, "link", link)
    monkeypatch.setattr(os, "replace", replace)
    yield log


def _transcripts(folder: Path, sessions: int, turns: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(sessions):
        (folder / f"s{i}.jsonl").write_text("".join(
            json.dumps({"id": f"s{i}-m{t}", "role": "user" if t % 2 == 0 else "assistant",
                        "content": f"session {i} turn {t}: billing moves to Postgres"}) + "\n"
            for t in range(turns)))
    return folder


def _check_order(log: list[Event], root: Path) -> int:
    """Every replace of a vault file comes after its journal line and after a sync of the
    journal log that follows that line (and, for a file with an original, after a sync of
    the journal folder that follows its link). Returns how many replaces were checked."""
    real_root = str(root.resolve())
    checked = 0
    for i, (kind, where) in enumerate(log):
        if kind != "replace" or not where.startswith(real_root + "/"):
            continue
        rel = where[len(real_root) + 1 :]
        if rel.startswith((".git/", ".memctl/")):
            continue
        before = log[:i]
        lines = [k for k, (what, p) in enumerate(before) if what == "journal" and p == rel]
        assert lines, f"{rel} was replaced with no journal line naming it"
        line = lines[-1]
        syncs = [k for k, (what, p) in enumerate(before)
                 if what in ("fsync", "fdatasync") and "/.memctl/journal/" in p
                 and p.endswith("/log") and k > line]
        assert syncs, f"{rel} was replaced before the journal line naming it was synced"
        links = [k for k, (what, p) in enumerate(before) if what == "link" and k < line
                 and "/.memctl/journal/" in p]
        if links:
            jdir = log[links[-1]][1].rsplit("/", 1)[0]
            dsyncs = [k for k, (what, p) in enumerate(before)
                      if what == "fsync" and p == jdir and k > links[-1]]
            assert dsyncs, f"{rel} was replaced before its original's link was synced"
        checked += 1
    return checked


def test_ingest_syncs_the_journal_before_each_file_it_covers(
    tmp_path: Path, calls: list[Event]
) -> None:
    vault_dir = new_vault(tmp_path)
    vault = Vault.open(vault_dir, env={})
    src = _transcripts(tmp_path / "t", 6, 4)
    calls.clear()
    vault.ingest([src], user="dana", scope="team")
    assert _check_order(calls, vault_dir) >= 6 + 2  # six sessions and two INDEX files
    # the sessions grow: each raw file is replaced, its original kept by a link first
    _transcripts(src, 6, 7)
    calls.clear()
    vault.ingest([src], user="dana", scope="team")
    assert sum(1 for k, p in calls if k == "link") >= 6
    assert _check_order(calls, vault_dir) >= 6 + 2


def test_a_new_journal_is_durable_where_it_is_listed(tmp_path: Path, calls: list[Event]) -> None:
    """A journal folder that is not in its parent's listing after a power cut is no journal:
    the parent (.memctl/journal) is synced once the folder and its log exist."""
    vault_dir = new_vault(tmp_path)
    vault = Vault.open(vault_dir, env={})
    calls.clear()
    vault.ingest([_transcripts(tmp_path / "t", 1, 2)], user="dana", scope="team")
    root = str(vault_dir.resolve())
    base = f"{root}/.memctl/journal"
    first = next(i for i, (k, p) in enumerate(calls)
                 if k == "replace" and p.startswith(root + "/")
                 and not p.startswith((f"{root}/.memctl/", f"{root}/.git/")))
    assert ("fsync", base) in calls[:first], calls[:first]


def test_a_durable_atomic_write_syncs_the_file_then_its_folder(
    tmp_path: Path, calls: list[Event]
) -> None:
    target = tmp_path / "d" / "f.md"
    atomic_write(target, "hello\n")
    kinds = [(k, p) for k, p in calls if k in ("fsync", "fdatasync", "replace")]
    folder = str(target.parent.resolve())
    at = kinds.index(("replace", str(target)))
    assert any(k in ("fsync", "fdatasync") and p.startswith(folder + "/.f.md.")
               for k, p in kinds[:at]), kinds
    assert ("fsync", folder) in kinds[at:], kinds


def test_a_batch_of_notes_syncs_the_journal_once_before_any_of_them(
    tmp_path: Path, calls: list[Event]
) -> None:
    """Curation writes its notes through `write_notes`, which journals them as one batch."""
    from memctl.core.history import Identity

    vault_dir = new_vault(tmp_path)
    vault = Vault.open(vault_dir, env={})
    files = {f"knowledge/topic-{k}.md": f"# Topic {k}\n\nA hand-written note.\n"
             for k in range(12)}
    calls.clear()
    with vault.lock:
        vault.write_notes(files, subject="write: twelve notes", trailers={},
                          author=Identity("T", "t@example.invalid"))
    assert _check_order(calls, vault_dir) >= 12
    first = next(i for i, (k, p) in enumerate(calls) if k == "replace"
                 and "/knowledge/" in p)
    log_syncs = [p for k, p in calls[:first] if k in ("fsync", "fdatasync")
                 and p.endswith("/log")]
    assert len(log_syncs) <= 2, log_syncs  # the journal's header, then the whole batch
