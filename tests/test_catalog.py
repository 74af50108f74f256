"""Session headers come from a stat-checked cache: it must always answer as the files do."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from util import new_vault, ok

from memctl import Vault
from memctl.core.catalog import CACHE_REL


def _jsonl(path: Path, session: str, n: int, start: str = "2026-09-01T10") -> Path:
    lines = [
        json.dumps({"session": session, "role": "user" if i % 2 == 0 else "assistant",
                    "content": f"{session} message {i}", "timestamp": f"{start}:{i:02d}:00Z"})
        for i in range(n)
    ]  # fmt: skip
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    v = new_vault(tmp_path)
    for k, sid in enumerate(["alpha", "beta", "gamma"]):
        ok("--vault", v, "ingest", _jsonl(tmp_path / f"{sid}.jsonl", sid, 2 + k))
    return v


def _fresh(v: Path) -> list[dict]:
    (v / CACHE_REL).unlink(missing_ok=True)
    return Vault.open(v).sessions()


def test_cached_headers_equal_headers_read_from_the_files(vault: Path) -> None:
    assert (vault / CACHE_REL).is_file()  # ingest left the cache behind
    cached = Vault.open(vault).sessions()
    assert sorted(s["session"] for s in cached) == ["alpha", "beta", "gamma"]
    assert cached == _fresh(vault)
    assert Vault.open(vault).sessions() == cached  # and from the cache it wrote just now


def test_a_hand_edited_header_is_read_again(vault: Path, tmp_path: Path) -> None:
    v = Vault.open(vault)
    rel = next(s["path"] for s in v.sessions() if s["session"] == "beta")
    p = vault / rel
    text = p.read_text(encoding="utf-8")
    st = p.stat()
    p.write_text(text.replace("title: beta message 0", "title: BETA message 0"), encoding="utf-8")
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000))  # same size, newer mtime
    got = {s["session"]: s["title"] for s in Vault.open(vault).sessions()}
    assert got["beta"] == "BETA message 0"
    # a YAML date where memctl writes a string reads back the same from cache and file
    p.write_text(text.replace("started: '2026-09-01T10:00:00Z'", "started: 2026-09-01"))
    first = Vault.open(vault).sessions()
    assert first == Vault.open(vault).sessions() == _fresh(vault)
    assert any(s["started"] == "2026-09-01" for s in first)


def test_deleted_sessions_vanish_and_a_broken_cache_is_ignored(vault: Path, tmp_path: Path) -> None:
    v = Vault.open(vault)
    gamma = next(s["path"] for s in v.sessions() if s["session"] == "gamma")
    (vault / gamma).unlink()
    assert "gamma" not in Vault.open(vault).session_map()
    (vault / CACHE_REL).write_text("{ not json", encoding="utf-8")
    assert [s["session"] for s in Vault.open(vault).sessions()] == ["beta", "alpha"]
    # the session map still finds sessions to append to: no duplicate file for alpha
    ok("--vault", vault, "ingest", _jsonl(tmp_path / "alpha.jsonl", "alpha", 4))
    assert [s["turns"] for s in _fresh(vault) if s["session"] == "alpha"] == [4]


def test_a_file_written_just_before_the_read_is_checked_again(vault: Path) -> None:
    v = Vault.open(vault)
    v.sessions()
    saved = json.loads((vault / CACHE_REL).read_text())["files"]
    rel = next(iter(saved))
    p = vault / rel
    p.write_text(p.read_text().replace("session: ", "session: x"), encoding="utf-8")
    time.sleep(0.001)
    assert any(s["session"].startswith("x") for s in Vault.open(vault).sessions())
    entry = json.loads((vault / CACHE_REL).read_text())["files"][rel]
    assert entry[2] == 1  # racy: within 50 ms of its mtime, so the next reader reads it again
    p.write_text(p.read_text().replace("session: x", "session: y"), encoding="utf-8")
    os.utime(p, ns=(entry[0], entry[0]))  # same size, same mtime: only the racy flag saves us
    assert any(s["session"].startswith("y") for s in Vault.open(vault).sessions())


def test_files_this_process_wrote_are_settled_by_comparing_their_frontmatter(
    vault: Path,
) -> None:
    from memctl.core.catalog import Catalog

    v = Vault.open(vault)
    rels = [s["path"] for s in v.sessions()]
    for rel, tamper in zip(rels[:2], (False, True), strict=True):
        p = vault / rel
        text = p.read_text(encoding="utf-8")
        p.write_text(text, encoding="utf-8")  # as ingest does: written now, hence racy
        cat = Catalog(vault)
        header = dict(next(d for r, d in cat.headers() if r == rel))
        cat.put(rel, header, p, text)
        assert json.loads(json.dumps(cat._load()[rel]))[2] == 1
        if tamper:  # someone rewrites the header within the same mtime tick: same size
            st = p.stat()
            at = text.index("session: ") + len("session: ")
            p.write_text(text[:at] + "Z" + text[at + 1 :], encoding="utf-8")
            os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
            assert p.stat().st_size == st.st_size
        time.sleep(0.06)
        cat.save()
        saved = json.loads((vault / CACHE_REL).read_text())["files"][rel]
        assert saved[2] == int(tamper)  # clean bytes settle; tampered ones stay racy
    sessions = {s["path"]: s["session"] for s in Vault.open(vault).sessions()}
    assert sessions[rels[1]].startswith("Z") and not sessions[rels[0]].startswith("Z")
