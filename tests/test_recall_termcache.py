"""Relevance feedback's per-session counts, kept in `.memctl/cache/terms/` between processes.

The kept counts must be the counts of the file as it is now: an entry counted from other
text (appended, rewritten, forgotten), one from another analyzer, or a damaged one is
counted again; a forgotten turn's words do not outlive it in the cache; recall gives the
same answer with the cache as without it.
"""

from __future__ import annotations

import json
import marshal
import shutil
from collections import Counter
from pathlib import Path

import pytest
from util import DATA, ok

from memctl.recall import termcache, words
from memctl.recall.graph import Reader
from memctl.vault import Vault

SAMPLES = DATA / "sample-transcripts"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Four sample sessions ingested through the CLI as their users."""
    v = tmp_path_factory.mktemp("terms") / "vault"
    ok("init", v)
    for row in (SAMPLES / "sessions.tsv").read_text(encoding="utf-8").splitlines()[1:5]:
        path, user, scope = row.split("\t")
        ok("--vault", v, "ingest", SAMPLES / path, "--user", user, "--scope", scope)
    return v


@pytest.fixture
def vault(built: Path, tmp_path: Path) -> Path:
    v = tmp_path / "vault"
    shutil.copytree(built, v, symlinks=True)
    termcache._MEMORY.clear()  # as a new process finds it
    return v


def _long_way(r: Reader, path: str) -> Counter[str]:
    return words.turn_counts(r.contents(path))


def _entries(v: Path) -> list[Path]:
    folder = termcache.folder(v)
    return sorted(folder.iterdir()) if folder.is_dir() else []


def _sessions(v: Path) -> list[str]:
    return [s["path"] for s in Vault.open(v).sessions()]


def test_kept_counts_are_read_back_and_equal_the_long_way(vault: Path) -> None:
    v = Vault.open(vault)
    paths = _sessions(vault)
    assert len(paths) == 4
    r = Reader(v, "dana", None)
    for p in paths:
        got = r.turn_counts(p)
        assert got == _long_way(r, p) and got
        got["egress"] = 999  # a copy: the caller may change it
        assert r.turn_counts(p) == _long_way(r, p)
    entries = _entries(vault)
    assert len(entries) == 4
    # a new process reads the entry: mark one and see the mark come back
    entry = entries[0]
    data = marshal.loads(entry.read_bytes())
    data["counts"]["zzmarkzz"] = 7
    entry.write_bytes(marshal.dumps(data))
    termcache._MEMORY.clear()
    r2 = Reader(v, "dana", None)
    marked = [p for p in paths if r2.turn_counts(p)["zzmarkzz"] == 7]
    assert len(marked) == 1, "the kept entry was not what the second reader used"


def _fifth_session(vault: Path, tmp_path: Path) -> tuple[Path, str, str, str, str]:
    """A sample session ingested from a copy in `tmp_path` (so it can grow): (the copy,
    its text, user, scope, its raw path in the vault)."""
    row = (SAMPLES / "sessions.tsv").read_text(encoding="utf-8").splitlines()[5]
    path, user, scope = row.split("\t")
    src = tmp_path / Path(path).name
    text = (SAMPLES / path).read_text(encoding="utf-8")
    assert src.suffix == ".jsonl", "a JSONL line is appended to it"
    src.write_text(text, encoding="utf-8")
    before = set(_sessions(vault))
    ok("--vault", vault, "ingest", src, "--user", user, "--scope", scope)
    (raw,) = set(_sessions(vault)) - before
    return src, text, user, scope, raw


def _grow(vault: Path, src: Path, text: str, user: str, scope: str) -> None:
    """The session's transcript, one user turn longer (with a new word), ingested again."""
    last = json.loads(text.strip().splitlines()[-1])
    extra = {**last, "role": "user", "content": "Also the quokkaflange rollout slipped a week."}
    src.write_text(text.rstrip("\n") + "\n" + json.dumps(extra) + "\n", encoding="utf-8")
    ok("--vault", vault, "ingest", src, "--user", user, "--scope", scope)
    termcache._MEMORY.clear()  # as the next process finds it


def test_an_appended_session_is_counted_again(vault: Path, tmp_path: Path) -> None:
    src, text, user, scope, _ = _fifth_session(vault, tmp_path)
    r = Reader(Vault.open(vault), "dana", None)
    before = {p: r.turn_counts(p) for p in _sessions(vault)}
    assert len(before) == 5 and len(_entries(vault)) == 5
    _grow(vault, src, text, user, scope)
    r2 = Reader(Vault.open(vault), "dana", None)
    after = {p: r2.turn_counts(p) for p in _sessions(vault)}
    assert after.keys() == before.keys(), "the session was appended to, not made anew"
    grown = [p for p in after if after[p] != before[p]]
    assert len(grown) == 1, grown
    assert after[grown[0]]["quokkaflang"] == 1
    assert after[grown[0]] == _long_way(r2, grown[0])
    assert len(_entries(vault)) == 5, "the session's entry is written over, not added to"


def test_a_grown_session_has_only_its_new_turns_counted(vault: Path, tmp_path: Path) -> None:
    src, text, user, scope, mine = _fifth_session(vault, tmp_path)
    r = Reader(Vault.open(vault), "dana", None)
    assert r.turn_counts(mine) == _long_way(r, mine)
    # a mark in the kept counts of that session shows whether they were built on
    entry = termcache.entry_of(vault, mine)
    data = marshal.loads(entry.read_bytes())
    data["counts"]["zzmarkzz"] = 1
    entry.write_bytes(marshal.dumps(data))
    _grow(vault, src, text, user, scope)
    r2 = Reader(Vault.open(vault), "dana", None)
    got = r2.turn_counts(mine)
    assert got["quokkaflang"] == 1, "the new turn was not counted"
    assert got["zzmarkzz"] == 1, "the turns counted before were counted again"
    assert got - Counter({"zzmarkzz": 1}) == _long_way(r2, mine)


@pytest.mark.parametrize(
    "damage",
    [b"", b"\xe3\x01", marshal.dumps([]), marshal.dumps({"digest": 1}),
     "counts of another analyzer", "a count of 1.5", "counted from other turns"],
)
def test_a_damaged_or_foreign_entry_is_counted_again(vault: Path, damage: bytes | str) -> None:
    v = Vault.open(vault)
    p = _sessions(vault)[0]
    Reader(v, "dana", None).turn_counts(p)
    (entry,) = _entries(vault)
    if isinstance(damage, bytes):
        entry.write_bytes(damage)
    else:
        data = marshal.loads(entry.read_bytes())
        if damage == "counts of another analyzer":
            data["fingerprint"] = "0" * 16
            data["counts"]["zzmarkzz"] = 3
        elif damage == "counted from other turns":
            data["digest"], data["prefix"] = "1" * 32, "0" * 32
            data["counts"]["zzmarkzz"] = 3
        else:
            data["counts"]["egress"] = 1.5
        entry.write_bytes(marshal.dumps(data))
    termcache._MEMORY.clear()
    r = Reader(v, "dana", None)
    assert r.turn_counts(p) == _long_way(r, p)
    again = marshal.loads(entry.read_bytes())
    assert again["fingerprint"] == termcache.fingerprint() and "zzmarkzz" not in again["counts"]


def test_forget_takes_the_turns_words_out_of_the_cache(vault: Path) -> None:
    v = Vault.open(vault)
    r = Reader(v, "dana", None)
    paths = _sessions(vault)
    for p in paths:
        r.turn_counts(p)
    # a word only one turn of one session says, as the analyzer stems it
    counts = {p: r.turn_counts(p) for p in paths}
    word, path = next(
        (w, p) for p in paths for w, k in sorted(counts[p].items())
        if k == 1 and len(w) > 6 and all(w not in counts[o] for o in paths if o != p)
    )
    n = next(i for i, t in enumerate(r.contents(path), 1) if word in words.content_terms(t))
    assert any(word in marshal.loads(e.read_bytes())["counts"] for e in _entries(vault))
    ok("--vault", vault, "forget", f"{path}#t{n}")
    assert not any(word.encode() in e.read_bytes() for e in _entries(vault)), \
        "a forgotten word is kept"
    termcache._MEMORY.clear()
    r2 = Reader(Vault.open(vault), "dana", None)
    assert word not in r2.turn_counts(path)


def test_recall_is_the_same_with_and_without_kept_counts(vault: Path) -> None:
    queries = [("dana", "How do I cut NAT gateway costs?"), ("marco", "Datadog or Grafana?")]

    def answers() -> list[str]:
        termcache._MEMORY.clear()
        v = Vault.open(vault)
        return [v.recall(q, user=u).text for u, q in queries]

    first = answers()  # counts and keeps
    assert _entries(vault)
    assert answers() == first  # reads what it kept
    shutil.rmtree(termcache.folder(vault))
    assert answers() == first
