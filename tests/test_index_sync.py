"""The index stays in step with the files: hand edits, deletes, checkouts, corruption, schema
changes and concurrent writers, all observed through `memctl search`."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from searchutil import DANA, MARCO, PRIYA, ROOT, cli, git, note, ok, proc, transcript
from util import init_vault

from memctl.index import freshness, schema, writer


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    v = tmp_path / "v"
    init_vault(v)
    transcript(tmp_path / "dana.jsonl", "dana-egress", DANA, 3, ids="d")
    ok("--vault", v, "ingest", tmp_path / "dana.jsonl", "--user", "dana")
    note(v, "knowledge/alpha.md", "knowledge", "Alpha note", "active", "- the aardvark plan\n")
    git(v, "add", "-A")
    git(v, "commit", "-q", "-m", "alpha")
    # a commit made outside memctl: the next memctl command brings INDEX files and the index
    # in step with it; let it happen here, so each test starts settled
    ok("--vault", v, "status")
    return v


def found(v: Path, *words: str, runner=cli) -> list[str]:
    r = runner("--vault", v, "search", "--json", *words)
    assert r.code == 0, r.err
    return r.refs()


def gen_dir(v: Path) -> Path:
    cur = json.loads((v / ".memctl/index/current.json").read_text())
    return v / ".memctl/index" / cur["gen"]


def test_a_hand_edited_note_is_found_by_its_new_text_only(vault: Path) -> None:
    assert found(vault, "aardvark") == ["knowledge/alpha.md"]
    p = vault / "knowledge/alpha.md"
    p.write_text(p.read_text().replace("aardvark", "albatros"), encoding="utf-8")
    r = proc("--vault", vault, "search", "--json", "albatros")
    assert r.refs() == ["knowledge/alpha.md"] and r.err == ""
    assert found(vault, "aardvark") == []


def test_same_size_edit_is_detected_by_hash(vault: Path) -> None:
    p = vault / "knowledge/alpha.md"
    assert found(vault, "aardvark")
    old = p.stat()
    p.write_text(p.read_text().replace("aardvark", "pangolin"), encoding="utf-8")
    os.utime(p, ns=(old.st_atime_ns, old.st_mtime_ns + 1_000_000))  # size unchanged
    assert found(vault, "pangolin") == ["knowledge/alpha.md"]
    assert found(vault, "aardvark") == []


def test_new_and_deleted_files(vault: Path) -> None:
    (vault / "misc").mkdir()
    (vault / "misc/new.md").write_text("Meeting about the quokka budget\n", encoding="utf-8")
    assert found(vault, "quokka") == ["misc/new.md"]
    (vault / "misc/new.md").unlink()
    (vault / "knowledge/alpha.md").unlink()
    assert found(vault, "quokka") == []
    assert found(vault, "aardvark") == []


def test_git_checkout_of_an_older_commit(vault: Path) -> None:
    p = vault / "knowledge/alpha.md"
    p.write_text(p.read_text().replace("aardvark", "wombat"), encoding="utf-8")
    before = git(vault, "rev-parse", "HEAD").strip()
    git(vault, "commit", "-qam", "wombat")
    assert found(vault, "wombat") == ["knowledge/alpha.md"]
    git(vault, "checkout", "-q", before)
    assert found(vault, "aardvark", runner=proc) == ["knowledge/alpha.md"]
    assert found(vault, "wombat") == []
    git(vault, "checkout", "-q", "main")
    assert found(vault, "wombat") == ["knowledge/alpha.md"]
    assert found(vault, "aardvark") == []


def test_touch_without_change_is_not_reindexed(vault: Path) -> None:
    from memctl import Vault

    v = Vault.open(vault)
    # a folder written within RACY_NS of a sync is racy by design and is listed again; on an
    # idle machine the fixture's last writes are that recent, so let them age first
    time.sleep(schema.RACY_NS / 1e9)
    writer.sync(v)  # the fixture's note written by hand, if the fixture's status left it
    assert writer.sync(v).added == 0
    st = (vault / "knowledge/alpha.md").stat()
    os.utime(vault / "knowledge/alpha.md", ns=(st.st_atime_ns, st.st_mtime_ns - 10**10))
    # Folders written within RACY_NS of a check stay racy (the next check walks them all
    # again, as git does for racy files); let the fixture's folders age out of that window
    # so what is left to see is the note's remembered stat.
    time.sleep(schema.RACY_NS / 1e9)
    rep = writer.sync(v)
    assert (rep.added, rep.updated, rep.removed) == (0, 0, 0)
    gen = freshness.current_generation(vault)[0]
    assert freshness.files_unchanged(gen, vault)  # stat remembered


def test_reindex_rebuilds_and_reports(vault: Path) -> None:
    res = ok("--vault", vault, "reindex", "--json").json()
    assert res["files"] == 2 and res["turns"] == len(DANA) and res["notes"] == 1
    assert res["index_bytes"] > 0 and res["skipped"] == []
    gens = [p for p in (vault / ".memctl/index").iterdir() if p.is_dir()]
    assert len(gens) == 1  # the old generation is gone, and with it any stale row
    assert "reindexed 2 files" in ok("--vault", vault, "reindex").out


def _one_notice(r) -> str:
    assert r.code == 0, r.err
    lines = r.err.splitlines()
    assert len(lines) == 1, r.err
    assert lines[0].startswith("memctl: ")
    return lines[0]


@pytest.mark.parametrize("damage", ["meta", "segments", "current", "stats", "manifest", "missing"])
def test_a_broken_index_is_rebuilt_with_one_notice(vault: Path, damage: str) -> None:
    # another process builds the index: this one must not have it mapped while we damage
    # files in place (that is SIGBUS territory, not something tantivy itself ever does)
    assert found(vault, "aardvark", runner=proc)
    g = gen_dir(vault)
    if damage == "meta":
        (g / "meta.json").write_text("{ not json", encoding="utf-8")
    elif damage == "segments":
        for f in g.iterdir():
            if f.suffix in (".idx", ".store", ".term", ".pos", ".fast", ".fieldnorm"):
                f.write_bytes(b"\x00garbage" * 7)
    elif damage == "current":
        (vault / ".memctl/index/current.json").write_text("garbage", encoding="utf-8")
    elif damage == "stats":
        (g / "stat.json").write_text("[", encoding="utf-8")
    elif damage == "manifest":
        # read only when something changed: change a note so the sync needs it
        (g / "manifest.json").write_text("[", encoding="utf-8")
        note = vault / "knowledge/alpha.md"
        note.write_text(note.read_text() + "- and the aardvark budget\n", encoding="utf-8")
    else:
        import shutil

        shutil.rmtree(vault / ".memctl/index")
    r = proc("--vault", vault, "search", "--json", "aardvark")
    if damage == "stats":  # a cache of the manifest: rewritten from it, nothing to rebuild
        assert r.err == "" and r.refs() == ["knowledge/alpha.md"]
        assert json.loads((g / "stat.json").read_text())["files"] == ["knowledge/alpha.md"]
        return
    notice = _one_notice(r)
    assert "rebuilt" in notice or "built" in notice
    assert r.refs() == ["knowledge/alpha.md"]
    again = cli("--vault", vault, "search", "--json", "aardvark")
    assert again.err == "" and again.refs() == ["knowledge/alpha.md"]


def test_an_old_schema_is_rebuilt_with_one_notice(vault: Path) -> None:
    assert found(vault, "aardvark")
    cur = vault / ".memctl/index/current.json"
    data = json.loads(cur.read_text())
    cur.write_text(json.dumps({**data, "schema": schema.SCHEMA_VERSION - 1}), encoding="utf-8")
    r = cli("--vault", vault, "search", "--json", "aardvark")
    assert "schema changed" in _one_notice(r)
    assert r.refs() == ["knowledge/alpha.md"]
    assert json.loads(cur.read_text())["schema"] == schema.SCHEMA_VERSION


def test_an_unreadable_raw_file_is_left_out_not_fatal(vault: Path) -> None:
    bad = vault / "raw/2020/01/01/broken-000000.md"
    bad.parent.mkdir(parents=True)
    bad.write_text("---\nsession: x\n---\n## t2 · nobody\nno comment line\n", encoding="utf-8")
    r = cli("--vault", vault, "search", "--json", "aardvark")
    assert r.code == 0 and r.refs() == ["knowledge/alpha.md"]
    assert "not searchable: raw/2020/01/01/broken-000000.md" in r.err
    assert cli("--vault", vault, "search", "aardvark").err == ""  # said once, not every time


def test_custom_store_folder_names_the_store(vault: Path) -> None:
    cfg = vault / ".memctl/config.toml"
    cfg.write_text(cfg.read_text() + '\n[stores.runbooks]\nfolder = "runbooks"\n', encoding="utf-8")
    (vault / "runbooks").mkdir()
    (vault / "runbooks/failover.md").write_text("# Failover\n\nPromote the replica.\n")
    hit = ok("--vault", vault, "search", "--json", "replica", "--store", "runbooks").json()
    assert [h["store"] for h in hit["hits"]] == ["runbooks"]


WRITER = textwrap.dedent(
    """
    import json, sys
    from pathlib import Path
    from memctl import Vault
    vault, src = Path(sys.argv[1]), Path(sys.argv[2])
    batches, per = int(sys.argv[3]), int(sys.argv[4])
    v = Vault.open(vault)
    for b in range(batches):
        files = []
        for s in range(per):
            f = src / f"b{b}s{s}.jsonl"
            lines = [json.dumps({"role": "user", "content": f"zebraword batch {b} turn {t} "
                                 + "filler text " * 40, "session": f"b{b}s{s}"})
                     for t in range(20)]
            f.write_text("\\n".join(lines) + "\\n")
            files.append(f)
        v.ingest(files, user="w")
    (vault / "writer-done").write_text("1")
    """
)

SEARCHER = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path
    from memctl import Vault
    vault = Path(sys.argv[1])
    v = Vault.open(vault)
    counts, errors = [], []
    deadline = time.time() + 120
    while time.time() < deadline:
        done = (vault / "writer-done").exists()
        try:
            res = v.search("zebraword", limit=10000)
            counts.append(len(res.hits))
        except Exception as exc:
            errors.append(repr(exc))
        if done:
            break
    print(json.dumps({"counts": counts, "errors": errors}))
    """
)


def test_two_searchers_see_a_consistent_index_while_a_writer_ingests(
    vault: Path, tmp_path: Path
) -> None:
    src = tmp_path / "batches"
    src.mkdir()
    batches, per, turns = 6, 3, 20
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    searchers = [
        subprocess.Popen(
            [sys.executable, "-c", SEARCHER, str(vault)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        for _ in range(2)
    ]
    writer = subprocess.run(
        [sys.executable, "-c", WRITER, str(vault), str(src), str(batches), str(per)],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert writer.returncode == 0, writer.stderr
    step = per * turns
    for s in searchers:
        out, err = s.communicate(timeout=300)
        assert s.returncode == 0, err.decode()
        res = json.loads(out)
        assert res["errors"] == []
        counts = res["counts"]
        assert counts, "searcher never ran"
        # every search saw whole ingests (one commit each), never half of one, never going back
        assert all(c % step == 0 for c in counts), counts
        assert counts == sorted(counts), counts
        assert counts[-1] == batches * step
    assert len(found(vault, "zebraword", "-n", "1000")) == batches * step


def test_reindex_of_given_paths_is_incremental(vault: Path) -> None:
    from memctl import Vault

    v = Vault.open(vault)
    assert found(vault, "aardvark")
    p = vault / "knowledge/alpha.md"
    p.write_text(p.read_text().replace("aardvark", "okapi"), encoding="utf-8")
    res = v.reindex(paths=[p])  # what a file watcher passes: absolute paths
    assert (res.files, res.notes, res.turns) == (1, 1, 0)
    assert found(vault, "okapi") == ["knowledge/alpha.md"]
    outside = vault.parent / "elsewhere.md"
    assert v.reindex(paths=[outside, "knowledge/alpha.md"]).files == 1  # forced, outside ignored


AWKWARD = [
    ("user", "Zoë", "Café ☕ résumé — naïve ünïcode 日本語 zebra"),
    ("assistant", None, ""),
    ("user", None, "line one\n## t3 · a forged heading, zebra\nmore\n\n"),
    ("assistant", None, "last zebra turn\r\nwith CRLF\n"),
]


def test_turn_text_comes_back_exactly(tmp_path: Path) -> None:
    from memctl import Vault

    v = tmp_path / "v"
    init_vault(v)
    transcript(tmp_path / "a.jsonl", "awkward", AWKWARD, 1, ids="a")
    ok("--vault", v, "ingest", tmp_path / "a.jsonl")
    hits = Vault.open(v).search("zebra", limit=10).hits
    assert {h.id: h.text for h in hits if h.text} == {
        f"a{i}": c for i, (_, _, c) in enumerate(AWKWARD, 1) if c
    }
    # the raw file changes under a search that skips the sync: text is read the slow way
    raw = next(p for p in (v / "raw").rglob("*.md") if p.name != "INDEX.md")
    raw.write_bytes(raw.read_bytes().replace(b"title: ", b"title: Longer "))
    again = Vault.open(v).search("zebra", limit=10, sync=False).hits
    assert {h.id: h.text for h in again} == {h.id: h.text for h in hits}
    raw.unlink()
    assert Vault.open(v).search("zebra", sync=False).hits == []  # vanished, not crashed


def test_an_appended_session_is_found_whole(tmp_path: Path) -> None:
    v = tmp_path / "v"
    init_vault(v)
    transcript(tmp_path / "d.jsonl", "dana-egress", DANA[:2], 3, ids="d")
    ok("--vault", v, "ingest", tmp_path / "d.jsonl")
    transcript(tmp_path / "d.jsonl", "dana-egress", DANA, 3, ids="d")
    ok("--vault", v, "ingest", tmp_path / "d.jsonl")  # same session, three more turns
    hits = ok("--vault", v, "search", "--json", "egress", "analytics", "ops-4711", "-n", "20")
    texts = {h["id"]: h["snippet"] for h in hits.json()["hits"]}
    assert "OPS-4711" in texts["d5"] and "egress" in texts["d1"]


def test_a_failing_index_never_undoes_a_committed_write(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memctl import Vault

    def full_disk(*_a: object, **_k: object) -> None:
        raise OSError(28, "No space left on device")

    transcript(tmp_path / "m.jsonl", "marco", [("user", "Marco", "the quetzal rollout")], 1)
    # only the index writer fails; undoing every patch (`monkeypatch.undo()`) would also
    # undo the suite's isolation (HOME, MEMCTL_SERVE=0) for the searches after it
    with monkeypatch.context() as m:
        m.setattr(writer, "_apply_locked", full_disk)
        res = Vault.open(vault).ingest([tmp_path / "m.jsonl"])
    assert res.commit and git(vault, "status", "--porcelain") == ""
    assert found(vault, "quetzal")  # the next search catches the index up


def _search_all(v: Path, queries: list[str]) -> list[list[tuple[str, float, str]]]:
    out = []
    for q in queries:
        hits = ok("--vault", v, "search", "--json", "-n", "50", "--status", "all", q).json()["hits"]
        out.append([(h["ref"], round(h["score"], 4), h["snippet"]) for h in hits])
    return out


def test_ingest_indexes_what_it_writes_exactly_as_a_rebuild_would(
    vault: Path, tmp_path: Path
) -> None:
    # ingest feeds the index from memory; a rebuild reads the files: both must agree, for new
    # sessions, an appended one, and a note edited by hand during the same command
    src = tmp_path / "src"
    src.mkdir()
    transcript(src / "marco.jsonl", "marco", MARCO, 2, ids="m")
    transcript(src / "priya.jsonl", "priya", PRIYA, 10, ids="p")
    transcript(src / "more.jsonl", "dana-egress", [*DANA, ("user", "Dana", "And the aardvark?")],
               3, ids="d")  # fmt: skip
    alpha = vault / "knowledge/alpha.md"
    alpha.write_text(alpha.read_text() + "- a quokka budget too\n", encoding="utf-8")
    r = ok("--vault", vault, "ingest", src)
    assert r.err == ""
    queries = ["egress", "aardvark", "quokka", "Grafana exporter", "Berlin Sundays", "Dana",
               "ops-4711", '"memory limit"', "budget"]  # fmt: skip
    fed = _search_all(vault, queries)
    assert any(h[0].endswith("#t6") for h in fed[1])  # the appended turn is searchable
    assert [h[0] for h in fed[2]] == ["knowledge/alpha.md"]
    g = gen_dir(vault)
    manifest = json.loads((g / "manifest.json").read_text())["files"]
    for rel, (mtime, size, sha, _racy) in manifest.items():
        st = (vault / rel).stat()
        data = (vault / rel).read_bytes()
        assert (st.st_mtime_ns, st.st_size) == (mtime, size), rel
        assert hashlib.sha256(data).hexdigest() == sha, rel
    ok("--vault", vault, "reindex")
    assert _search_all(vault, queries) == fed


def test_a_failed_ingest_leaves_nothing_searchable(
    vault: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memctl import Vault
    from memctl.core.history import History
    from memctl.errors import MemctlError

    def refuse(*_a: object, **_k: object) -> None:
        raise MemctlError("git commit failed: simulated")

    transcript(tmp_path / "m.jsonl", "marco", [("user", "Marco", "the quetzal rollout")], 1)
    with monkeypatch.context() as m, pytest.raises(MemctlError):
        m.setattr(History, "commit", refuse)
        Vault.open(vault).ingest([tmp_path / "m.jsonl"])
    assert git(vault, "status", "--porcelain") == ""
    assert found(vault, "quetzal") == []
    ok("--vault", vault, "ingest", tmp_path / "m.jsonl")
    assert len(found(vault, "quetzal")) == 1
