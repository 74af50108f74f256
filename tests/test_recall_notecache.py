"""Parsed notes and their lines' ranking data, kept in `.memctl/cache/notes/` between processes.

What is kept must be what the file gives now: a note changed by hand, a damaged entry, one
from another memctl or one whose lines do not fit the note is parsed again; a note written
in the same clock tick it is read is not kept; a forgotten line does not outlive its note
in the cache; recall gives the same answer with the cache as without it, in a new process
(`memctl recall` run as a subprocess) as in this one.
"""

from __future__ import annotations

import marshal
import os
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from util import DATA, ok

from memctl.core.notes import parse_note
from memctl.index import schema
from memctl.recall import graph, notecache, rank, termcache
from memctl.recall.graph import Reader
from memctl.vault import Vault

SAMPLES = DATA / "sample-transcripts"
QUERIES = [
    ("dana", "How do I cut NAT gateway costs?"),
    ("marco", "Datadog or Grafana?"),
    ("priya", "polars or pandas for the bakery forecast?"),
    ("newhire", "What should I know about the cloud migration?"),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample sessions ingested as their users and curated into notes."""
    v = tmp_path_factory.mktemp("notecache") / "vault"
    ok("init", v)
    for row in (SAMPLES / "sessions.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        path, user, scope = row.split("\t")
        ok("--vault", v, "ingest", SAMPLES / path, "--user", user, "--scope", scope)
    ok("--vault", v, "curate")
    return v


def _fresh_process() -> None:
    """Forget what this process keeps, as a new one starts."""
    graph._PARSED.clear()
    graph._WHERE.clear()
    rank._ROWS.clear()
    notecache._PENDING.clear()
    termcache._MEMORY.clear()


@pytest.fixture
def vault(built: Path, tmp_path: Path) -> Path:
    v = tmp_path / "vault"
    shutil.copytree(built, v, symlinks=True)
    shutil.rmtree(notecache.folder(v), ignore_errors=True)
    _fresh_process()
    time.sleep(schema.RACY_NS / 1e9 + 0.05)  # the copies' mtimes settle
    return v


def _entries(v: Path) -> list[Path]:
    folder = notecache.folder(v)
    return sorted(folder.iterdir()) if folder.is_dir() else []


def _rows_the_long_way(note_path: Path, rel: str) -> list[tuple[object, ...]]:
    rows = rank._rows(parse_note(note_path.read_text(encoding="utf-8"), rel))
    return [(w.section, w.claim, w.is_hist, w.text, w.refs, w.terms, w.quoted, w.day, w.answer)
            for w in rows]  # fmt: skip


def _answers(v: Path) -> list[str]:
    _fresh_process()
    vault = Vault.open(v)
    return [vault.recall(q, user=u).text for u, q in QUERIES]


def _kept_note_paths(v: Path) -> list[str]:
    return [marshal.loads(e.read_bytes())[1] for e in _entries(v)]


def test_a_kept_note_reads_back_as_its_file_parses(vault: Path) -> None:
    # a new process (the CLI) asks, and keeps what it read
    for u, q in QUERIES:
        ok("--vault", vault, "recall", q, "--user", u)
    kept = _kept_note_paths(vault)
    assert kept, "recall kept no note"
    v = Vault.open(vault)
    for rel in kept:
        _fresh_process()
        note = notecache.load(vault, rel, vault / rel)
        assert note is not None
        assert note == parse_note((vault / rel).read_text(encoding="utf-8"), rel)
        assert id(note) in notecache._LOADED
        adopted = [(w.section, w.claim, w.is_hist, w.text, w.refs, w.terms, w.quoted, w.day,
                    w.answer) for w in rank._rows(note)]  # fmt: skip
        assert id(note) not in notecache._LOADED, "its kept rows were not the ones taken"
        rank._ROWS.clear()
        assert adopted == _rows_the_long_way(vault / rel, rel)
    # and a reader takes it from there: mark one line in one entry, see the mark come back
    entry = notecache.entry_of(vault, kept[0])
    data = list(marshal.loads(entry.read_bytes()))
    plain = list(data[3])
    sections = [(name, [("zzmarkzz " + i[0], *i[1:]) if isinstance(i, tuple) else i
                        for i in items]) for name, items in plain[3]]  # fmt: skip
    plain[3] = sections
    data[3] = tuple(plain)
    entry.write_bytes(marshal.dumps(tuple(data)))
    _fresh_process()
    note = Reader(v, "dana", None).note(kept[0])
    assert note is not None and any(c.text.startswith("zzmarkzz") for _, c in note.all_claims())


def test_recall_is_the_same_with_and_without_kept_notes(vault: Path) -> None:
    first = _answers(vault)  # parses, ranks and keeps
    assert _entries(vault)
    assert _answers(vault) == first  # reads what it kept
    shutil.rmtree(notecache.folder(vault))
    assert _answers(vault) == first


def test_a_note_changed_by_hand_is_parsed_again(vault: Path) -> None:
    _answers(vault)
    rel = _kept_note_paths(vault)[0]
    p = vault / rel
    st = p.stat()
    text = p.read_text(encoding="utf-8")
    claim = next(c for _, c in parse_note(text, rel).all_claims())
    # same size, an editor that keeps the mtime's second: only the stat tells
    changed = text.replace(claim.text, claim.text[::-1], 1)
    assert len(changed.encode()) == len(text.encode()) and changed != text
    p.write_text(changed, encoding="utf-8")
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    time.sleep(schema.RACY_NS / 1e9 + 0.05)
    _fresh_process()
    note = Reader(Vault.open(vault), "dana", None).note(rel)
    assert note is not None and note == parse_note(changed, rel)


@pytest.mark.parametrize(
    "damage",
    [b"", b"\xe3\x01", marshal.dumps([]), marshal.dumps((1, 2, 3, 4, 5)),
     "another memctl's", "another note's", "rows that do not fit", "a claim's refs a list",
     "a quote's words a list", "a footnote of four parts"],
)  # fmt: skip
def test_a_damaged_or_foreign_entry_is_parsed_again(vault: Path, damage: bytes | str) -> None:
    _answers(vault)
    rel = _kept_note_paths(vault)[0]
    entry = notecache.entry_of(vault, rel)
    if isinstance(damage, bytes):
        entry.write_bytes(damage)
    else:
        data = list(marshal.loads(entry.read_bytes()))
        if damage == "another memctl's":
            data[0] = "0" * 16
        elif damage == "another note's":
            data[1] = "knowledge/elsewhere.md"
        elif damage == "rows that do not fit":
            data[4] = [*data[4][:-1], data[4][-1], data[4][-1]]
        elif damage == "a claim's refs a list":
            plain = list(data[3])
            plain[3] = [(name, [[*i[:1], list(i[1]), *i[2:]] if isinstance(i, tuple) else i
                                for i in items]) for name, items in plain[3]]  # fmt: skip
            data[3] = tuple(plain)
        elif damage == "a quote's words a list":
            data[4] = [(*r[:3], tuple((ref, sorted(w)) for ref, w in r[3]), *r[4:])
                       for r in data[4]]  # fmt: skip
        else:
            plain = list(data[3])
            plain[4] = {k: (*v, "x") for k, v in plain[4].items()}
            data[3] = tuple(plain)
        entry.write_bytes(marshal.dumps(tuple(data)))
    _fresh_process()
    note = Reader(Vault.open(vault), "dana", None).note(rel)
    assert note == parse_note((vault / rel).read_text(encoding="utf-8"), rel)
    assert [
        (w.text, w.terms, w.quoted, w.day) for w in rank._rows(note)  # type: ignore[arg-type]
    ] == [(t[3], t[5], t[6], t[7]) for t in _rows_the_long_way(vault / rel, rel)]
    again = marshal.loads(entry.read_bytes())
    assert again[0] == notecache.fingerprint() and again[1] == rel, "written over"


def test_a_note_read_in_the_tick_it_was_written_is_not_kept(vault: Path) -> None:
    _answers(vault)
    rel = _kept_note_paths(vault)[0]
    shutil.rmtree(notecache.folder(vault))
    p = vault / rel
    p.write_text(p.read_text(encoding="utf-8"), encoding="utf-8")  # written just now
    _fresh_process()
    note = Reader(Vault.open(vault), "dana", None).note(rel)
    assert note is not None
    rank._rows(note)
    assert rel not in _kept_note_paths(vault)


def test_forget_takes_the_notes_out_of_the_cache(vault: Path) -> None:
    _answers(vault)
    rel = _kept_note_paths(vault)[0]
    note = parse_note((vault / rel).read_text(encoding="utf-8"), rel)
    ref = next(c.ref for c in note.footnotes.values() if c.ref)
    words = note.footnotes[next(k for k, c in note.footnotes.items() if c.ref == ref)].quote
    assert any(words.encode() in e.read_bytes() for e in _entries(vault))
    ok("--vault", vault, "forget", ref)
    assert not any(words.encode() in e.read_bytes() for e in _entries(vault)), \
        "a forgotten quote is kept"  # fmt: skip


def test_the_cache_folders_stay_bounded_and_keep_the_newest(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past KEEP entries a folder loses its oldest half; it is counted at a process's first
    write and every LOOK_EVERY-th after, so it never holds more than KEEP + LOOK_EVERY."""
    monkeypatch.setattr(notecache, "KEEP", 5)
    monkeypatch.setattr(termcache, "LOOK_EVERY", 3)
    monkeypatch.setattr(termcache, "_WRITES", {})
    _answers(vault)  # keeps every note it ranks: more than 5 on the sample vault
    folder = notecache.folder(vault)
    sizes = []
    for i in range(40):
        p = folder.parent / "filler" / f"n{i}.md"  # entries of notes that never were
        entry = folder / f"filler-{i:02d}.marshal"
        termcache.make_room(folder, notecache.KEEP)
        entry.write_bytes(marshal.dumps(str(p)))
        os.utime(entry, ns=(10**18 + i, 10**18 + i))  # written in this order
        sizes.append(len(_entries(vault)))
    assert max(sizes) <= notecache.KEEP + termcache.LOOK_EVERY
    names = {e.name for e in _entries(vault)}
    assert "filler-39.marshal" in names and "filler-00.marshal" not in names


def test_a_note_read_and_never_ranked_is_kept_and_ranked_later(vault: Path) -> None:
    """A note a recall reads but does not rank (out of the user's scope, another
    project's) is kept as read, so the next process does not parse it again; once a
    recall ranks it, its entry gains the rows."""
    v = Vault.open(vault)
    rel = next(str(p.relative_to(vault)) for p in sorted(vault.glob("*/*.md"))
               if p.parent.name not in ("raw", "sessions") and "---" in p.read_text("utf-8"))
    note = Reader(v, "dana", None).note(rel)  # read, not ranked
    assert note is not None
    entry = notecache.entry_of(vault, rel)
    data = marshal.loads(entry.read_bytes())
    assert data[1] == rel and data[4] is None
    _fresh_process()
    again = Reader(v, "dana", None).note(rel)
    assert again == note and id(again) in notecache._LOADED, "read from its entry"
    rows = rank._rows(again)
    assert [(w.text, w.terms) for w in rows] == [
        (t[3], t[5]) for t in _rows_the_long_way(vault / rel, rel)
    ]
    assert marshal.loads(entry.read_bytes())[4] is not None, "its rows were kept"


def _recall_cli(vault: Path, limit_memory: bool = False) -> list[str]:
    """`memctl recall` for each of QUERIES, each a process of its own (at most a minute,
    and with `limit_memory` 3 GiB of address space): what each printed."""
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 30, 3 << 30))

    out = []
    for u, q in QUERIES:
        p = subprocess.run(
            [sys.executable, "-m", "memctl", "--vault", str(vault), "recall", q, "--user", u],
            capture_output=True, text=True, env={**os.environ, "MEMCTL_SERVE": "0"},
            preexec_fn=limit if limit_memory else None, timeout=60, check=False,
        )  # fmt: skip
        assert p.returncode == 0, p.stderr[-500:]
        out.append(p.stdout)
    return out


def test_a_cache_entry_made_huge_is_not_read_past_its_bound(vault: Path) -> None:
    """A file someone made huge in either cache folder (8 GiB, sparse) is read no further
    than an entry can be, fails to parse, and is written over: `memctl recall`, run with
    3 GiB of address space, answers as before."""
    first = _recall_cli(vault, limit_memory=True)
    rel = _kept_note_paths(vault)[0]
    planted = [notecache.entry_of(vault, rel), *sorted(termcache.folder(vault).iterdir())[:1]]
    assert len(planted) == 2
    for entry in planted:
        with entry.open("wb") as fh:
            fh.write(b"\xe3" * 64)  # no entry's start
            fh.truncate(8 << 30)
    assert _recall_cli(vault, limit_memory=True) == first
    for entry in planted:
        assert entry.stat().st_size < 1 << 20, "not written over"


def test_a_fifo_in_either_cache_folder_does_not_hang_a_recall(vault: Path) -> None:
    """A named pipe where an entry should be (nobody writes to it): opening it to read
    would wait for a writer forever, and the prompt with it. It is passed over, and
    `memctl recall` answers as before."""
    first = _recall_cli(vault)
    planted = [notecache.entry_of(vault, rel) for rel in _kept_note_paths(vault)]
    planted += sorted(termcache.folder(vault).iterdir())
    # and the tokenizer's table and its kept word counts (memctl.core.tokens)
    planted += sorted((vault / ".memctl" / "cache").glob("*.marshal"))
    assert len(planted) >= 4
    for entry in planted:
        entry.unlink()
        os.mkfifo(entry)
    assert _recall_cli(vault) == first
