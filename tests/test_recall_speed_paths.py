"""The shortcuts recall takes for speed give exactly what the long way gives, and follow edits.

Each test pits one shortcut against the plain computation it replaces (or against a change
made by hand between two recalls of one open Vault, as an MCP server or learning loop
sees them): relevance feedback that asks the index for only the document frequencies it
needs, and its per-session term counts kept by the index while the file's stat holds, the
newest standing lines kept while the index has not moved, as_data's check for hidden ASCII
characters, and turns refused by the token floor of their fixed parts.
"""

from __future__ import annotations

import math
import os
import shutil
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from searchutil import make_vault, note, transcript, turn_ref
from util import DATA, ok

from memctl.core import raw
from memctl.core.notes import Note, render_note
from memctl.index import schema
from memctl.index.search import Hit
from memctl.recall import graph, prompt, rank, standing, words
from memctl.recall.graph import Reader
from memctl.recall.render import as_data
from memctl.recall.words import content_terms
from memctl.vault import Vault

SAMPLES = DATA / "sample-transcripts"


def _feedback_the_long_way(
    r: Reader, turns: list[tuple[Hit, float]], known: frozenset[str]
) -> tuple[dict[str, float], int]:
    """rank._feedback as it was (every shared word's document frequency, then the best),
    and how many words it asked about."""
    sessions: dict[str, float] = {}
    for h, s in turns[: rank.FEEDBACK_TURNS]:
        path = h.ref.split("#", 1)[0]
        sessions[path] = max(sessions.get(path, 0.0), s)
    tf: dict[str, float] = {}
    spread: Counter[str] = Counter()
    for path, w in sorted(sessions.items(), key=lambda kv: -kv[1])[: rank.FEEDBACK_SESSIONS]:
        for content in r.contents(path):
            for t in content_terms(content) - known:
                if len(t) >= 3 and not t.isdigit():
                    tf[t] = tf.get(t, 0.0) + w
                    spread[t] += 1
    cands = [t for t in tf if spread[t] >= 2]
    if not cands:
        return {}, 0
    n, df = r.doc_freqs(cands)
    weight = {t: tf[t] * math.log(1 + n / max(df.get(t, 1), 1)) for t in cands}
    picked = sorted(cands, key=lambda t: (-weight[t], t))[: rank.FEEDBACK_TERMS]
    top = weight[picked[0]]
    return {t: weight[t] / top for t in picked}, len(cands)


def _sample_vault(v: Path, curate: bool = False) -> Path:
    """The ten sample sessions ingested through the CLI as their users, then curated if asked."""
    ok("init", v)
    for row in (SAMPLES / "sessions.tsv").read_text(encoding="utf-8").splitlines()[1:]:
        path, user, scope = row.split("\t")
        ok("--vault", v, "ingest", SAMPLES / path, "--user", user, "--scope", scope)
    if curate:
        ok("--vault", v, "curate")
    return v


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The ten sample sessions, ingested as their users (longer talks than make_vault's)."""
    return _sample_vault(tmp_path_factory.mktemp("speed") / "vault")


QUERIES = [
    ("marco", "Datadog or Grafana?"),
    ("newhire", "What should I know about the cloud migration?"),
    ("dana", "How do I cut NAT gateway costs?"),
    ("marco", "Why is the cost exporter crashlooping?"),
    ("priya", "How should I quote for the offsite?"),
    ("dana", "What is still open on the CDN?"),
    ("priya", "polars or pandas for the bakery forecast?"),
]


@pytest.mark.parametrize("batch", [1, 2, 5, rank.DF_BATCH])
def test_feedback_asks_fewer_frequencies_and_picks_the_same_words(
    sample: Path, batch: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rank, "DF_BATCH", batch)
    v = Vault.open(sample)
    pruned = 0
    for user, query in QUERIES:
        r = Reader(v, user, None)
        turns = rank.normalise(r.search(query, kind="turn", limit=rank.TURN_POOL))
        assert turns, query
        want, words = _feedback_the_long_way(r, turns, frozenset())
        asked: list[int] = []
        counts = r.doc_freqs

        def counting(
            terms: list[str], asked: list[int] = asked, counts: Any = counts
        ) -> tuple[int, dict[str, int]]:
            asked.append(len(terms))
            return counts(terms)

        r.doc_freqs = counting  # type: ignore[method-assign]
        assert rank._feedback(r, turns, frozenset()) == want, query
        assert all(k <= batch for k in asked)
        pruned += sum(asked) < words
    assert pruned, "no query had words left unasked: the shortcut was never taken"


def test_every_ascii_character_is_kept_or_dropped_as_before() -> None:
    for i in range(128):
        c = chr(i)
        text = f"a{c}b {c}"
        plain = "".join(ch for ch in text if ch.isprintable() or ch.isspace())
        assert as_data(text) == " ".join(plain.split()), repr(c)


def _standing_texts(v: Vault, user: str) -> list[str]:
    res = v.recall("write a haiku about autumn", user=user)
    return [m.text for m in res.memories if m.why.startswith("standing")]


def test_newest_standing_lines_follow_every_change(tmp_path: Path) -> None:
    """One open Vault keeps the newest standing lines while the index stands still; a goal
    written, edited or removed by hand between two recalls is what the next one shows."""
    vault = make_vault(tmp_path)
    ref = turn_ref(vault, "marco-exporter", 1)
    body = (
        "## Goals\n\n- Keep the cost exporter under 512Mi of memory [^g1]\n\n"
        f'[^g1]: {ref} "The cost exporter pod is in a crashloop again"\n'
    )
    p = note(vault, "knowledge/exporter-goals.md", "knowledge", "Exporter goals", "active", body)
    v = Vault.open(vault)
    first = _standing_texts(v, "marco")
    assert any("512Mi" in t for t in first)
    assert standing._NEWEST, "the newest standing lines were not kept"
    assert _standing_texts(v, "marco") == first  # answered from what was kept

    p.write_text(p.read_text(encoding="utf-8").replace("512Mi", "768Mi"), encoding="utf-8")
    again = _standing_texts(v, "marco")
    assert any("768Mi" in t for t in again) and not any("512Mi" in t for t in again)

    note(vault, "knowledge/alerting-goals.md", "knowledge", "Alerting goals", "active",
         body.replace("Keep the cost exporter under 512Mi of memory",
                      "Page nobody for the exporter at night"))  # fmt: skip
    assert any("Page nobody" in t for t in _standing_texts(v, "marco"))

    p.unlink()
    assert not any("768Mi" in t for t in _standing_texts(v, "marco"))

    # what was kept for one user's scopes is never another user's answer
    for user, line in (("marco", "Hand the exporter to the platform team"),
                       ("dana", "Move the analytics bucket first")):  # fmt: skip
        note(vault, f"knowledge/{user}-goals.md", "knowledge", f"{user}'s goals", "active",
             body.replace("Keep the cost exporter under 512Mi of memory", line),
             scope=f"user:{user}")  # fmt: skip
    marco = _standing_texts(v, "marco")
    dana = _standing_texts(v, "dana")
    assert any("Hand the exporter" in t for t in marco)
    assert not any("Move the analytics" in t for t in marco)
    assert any("Move the analytics" in t for t in dana)
    assert not any("Hand the exporter" in t for t in dana)
    assert any("Page nobody" in t for t in dana)


# ---- parsed notes and read sessions are kept per process while their stat holds ---------


def _settle() -> None:
    time.sleep(schema.RACY_NS / 1e9 + 0.05)


def _rewrite_in_place(p: Path, old: bytes, new: bytes, mtime_ns: int | None = None) -> None:
    """As an editor that writes in place: same file, new bytes; optionally a chosen mtime."""
    st = p.stat()
    data = p.read_bytes().replace(old, new)
    assert data != p.read_bytes()
    with p.open("r+b") as fh:
        fh.write(data)
        fh.truncate()
    if mtime_ns is not None:
        os.utime(p, ns=(st.st_atime_ns, mtime_ns))


def _kept_note(tmp_path: Path) -> tuple[Path, str, Vault, Note]:
    """make_vault's egress note read once it settled: (vault, its path, the open Vault,
    the note as kept)."""
    vault = make_vault(tmp_path)
    rel = "knowledge/egress-levers.md"
    v = Vault.open(vault)
    _settle()
    first = Reader(v, "dana", None).note(rel)
    assert first is not None
    assert ("note", str((vault / rel).resolve())) in graph._PARSED, "a settled note is kept"
    assert Reader(v, "dana", None).note(rel) is first  # the kept parse, not a new read
    return vault, rel, v, first


def test_a_kept_note_is_read_again_once_it_changes(tmp_path: Path) -> None:
    vault, rel, v, first = _kept_note(tmp_path)
    st = (vault / rel).stat()
    # same size, mtime a second later: only the stat can tell
    later = st.st_mtime_ns + 10**9
    _rewrite_in_place(vault / rel, b"Gateway endpoints", b"Pangolin gateways", later)
    again = Reader(v, "dana", None).note(rel)
    assert again is not None and again is not first
    assert "Pangolin gateways" in (vault / rel).read_text(encoding="utf-8")
    assert "Pangolin gateways" in render_note(again)
    (vault / rel).unlink()
    assert Reader(v, "dana", None).note(rel) is None


def test_a_note_read_in_the_tick_it_was_written_is_not_kept(tmp_path: Path) -> None:
    """A file changed again within its mtime's clock tick keeps its stat: one read that
    close to a write is never kept, so the second write is seen."""
    vault = make_vault(tmp_path)
    rel = "knowledge/egress-levers.md"
    p = vault / rel
    # opened first: opening may catch up with git (memctl.gitops.follow), which takes longer
    # than a clock tick and is not what this test times
    v = Vault.open(vault)
    p.write_text(p.read_text(encoding="utf-8"), encoding="utf-8")  # written just now
    first = Reader(v, "dana", None).note(rel)
    assert first is not None
    mtime = p.stat().st_mtime_ns
    _rewrite_in_place(p, b"Gateway endpoints", b"Pangolin gateways", mtime)  # same stat
    again = Reader(v, "dana", None).note(rel)
    assert again is not None
    assert "Pangolin gateways" in render_note(again)


def test_a_kept_session_is_read_again_once_it_changes(tmp_path: Path) -> None:
    vault = make_vault(tmp_path)
    ref = turn_ref(vault, "marco-exporter", 1)
    p = vault / ref.split("#")[0]
    v = Vault.open(vault)
    _settle()
    before = Reader(v, "marco", None).turn_text(ref)
    assert before is not None and "crashloop" in before
    assert ("raw", str(p.resolve())) in graph._PARSED, "a settled session is kept"
    _rewrite_in_place(p, b"in a crashloop again", b"in a bootloop again!")  # a tamper
    after = Reader(v, "marco", None).turn_text(ref)
    assert after is not None and "bootloop again!" in after
    scope_line = b"scope: team"
    _rewrite_in_place(p, scope_line, b"scope: user:marco")  # moved out of dana's sight
    assert Reader(v, "dana", None).turn_scope(ref) == "user:marco"


def test_a_kept_note_whose_folder_turns_into_a_link_out_is_confined_again(
    tmp_path: Path,
) -> None:
    """A kept note is served on its stat alone; once the stat moves, its path is confined
    again before any read: a folder swapped for a link out of the vault leads nowhere,
    even to a file that holds the same name (and a file a link points to has its own stat)."""
    vault, rel, v, _ = _kept_note(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    text = (vault / rel).read_text(encoding="utf-8")
    (outside / "egress-levers.md").write_text(
        text.replace("Gateway endpoints", "Exfiltrated secret"), encoding="utf-8"
    )
    (vault / "knowledge").rename(tmp_path / "knowledge-was")
    (vault / "knowledge").symlink_to(outside, target_is_directory=True)
    _settle()
    assert Reader(v, "dana", None).note(rel) is None
    # the same for a raw session whose day folder is swapped for a link out
    ref = turn_ref(vault, "marco-exporter", 1)
    day = (vault / ref.split("#")[0]).parent
    assert Reader(v, "marco", None).turn_text(ref) is not None
    copy = tmp_path / "day-copy"
    shutil.copytree(day, copy)
    for f in copy.iterdir():
        f.write_text(f.read_text(encoding="utf-8").replace("crashloop", "leaked"), "utf-8")
    shutil.rmtree(day)
    day.symlink_to(copy, target_is_directory=True)
    _settle()
    assert Reader(v, "marco", None).turn_text(ref) is None


def test_searches_that_hold_a_snapshot_answer_as_fresh_ones_until_one_syncs(
    tmp_path: Path,
) -> None:
    """A recall's searches share one index snapshot (`Held`): each answers as a search on
    its own snapshot would, and the next search that brings the index in step opens the
    new one, with what changed in it."""
    from memctl.index.search import Held, search

    vault = make_vault(tmp_path)
    v = Vault.open(vault)
    held = Held()
    first = search(v, "gateway endpoints", held=held)
    kept = held.reader
    assert kept is not None and first.hits
    asks: list[tuple[str, dict[str, Any]]] = [
        ("gateway endpoints", {}), ("crashloop", {"kind": "turn"}), ("", {"kind": "note"})
    ]
    for q, kw in asks:
        again = search(v, q, held=held, sync=False, **kw)
        assert held.reader is kept, "a search that does not sync reads the held snapshot"
        fresh = search(v, q, sync=False, **kw)
        assert [(h.ref, h.score, h.text) for h in again.hits] == [
            (h.ref, h.score, h.text) for h in fresh.hits
        ]
    note(vault, "knowledge/pangolins.md", "knowledge", "Pangolins", "active",
         "- Pangolin gateway endpoints cut the bill.")  # fmt: skip
    ok("--vault", vault, "reindex")
    stale = search(v, "pangolin", held=held, sync=False)
    assert held.reader is kept and not stale.hits, "the held snapshot is the one searched"
    now = search(v, "pangolin", held=held)
    assert held.reader is not kept
    assert [h.ref for h in now.hits] == ["knowledge/pangolins.md"]


def test_one_analyzer_call_counts_each_texts_terms(sample: Path) -> None:
    """turn_counts (one analyzer call, stopwords and short tokens taken out of the count)
    against content_terms of each text, counted one by one."""
    v = Vault.open(sample)
    r = Reader(v, "dana", None)
    texts = [t for s in v.sessions() for t in r.contents(s["path"])]
    assert len(texts) > 20
    odd = ["", "   ", "Ünïcödé wörds and 日本語", "it's DANA's NAT-gateway; 42 x 1.5", "a b c"]
    odd += ["the the THE", "x", "I a s t", "x9 9x", "naïve café"]

    def one_by_one(batch: list[str]) -> Counter[str]:
        return Counter(t for text in batch for t in content_terms(text))

    for batch in (texts, odd, texts[:3] + odd, odd[:1], []):
        got = words.turn_counts(batch)
        assert got == one_by_one(batch)
        assert all(k > 0 for k in got.values())
        got["egress"] = 99  # a copy: the caller may change it
        assert words.turn_counts(batch) == one_by_one(batch), "kept counts unchanged"
    # a text that holds the break token itself is analyzed on its own
    tricky = ["egress costs", f"we said {schema._BREAK.upper()} twice", "NAT gateway"]
    assert words.turn_counts(tricky) == one_by_one(tricky)
    assert words.turn_counts(tricky)[schema._BREAK] == 1



def _recalls(v: Vault, user: str, query: str, budgets: range) -> list[dict[str, Any]]:
    out = []
    for b in budgets:
        j = v.recall(query, user=user, budget=b).to_json(explain=True)
        j.pop("seconds", None)
        out.append(j)
    return out


def test_a_turn_refused_by_its_floor_is_refused_as_the_packer_would(
    sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every budget from nearly nothing to roomy: the same memories, text and decisions
    (reasons included) with the floor as when every turn is cut, counted and offered."""
    v = Vault.open(sample)
    floored = 0
    real = prompt._turn_floor

    def counting(*a: Any) -> int | None:
        nonlocal floored
        got = real(*a)
        packer = a[1]
        floored += got is not None and packer.used + got > packer.budget
        return got

    budgets = range(40, 900, 23)
    fast: list[dict[str, Any]] = []
    monkeypatch.setattr(prompt, "_turn_floor", counting)
    for user, q in QUERIES:
        fast += _recalls(v, user, q, budgets)
    monkeypatch.setattr(prompt, "_turn_floor", lambda *a: None)
    slow = [j for user, q in QUERIES for j in _recalls(v, user, q, budgets)]
    assert floored > 50, "the floor refused turns without building them"
    assert fast == slow
    assert any(
        not d["kept"] and d["kind"] == "turn" and d["reason"] == "over the token budget"
        for j in fast
        for d in j["explain"]
    )


def test_the_floor_never_tops_what_a_turn_costs(sample: Path) -> None:
    """The floor (cite, one token, heading and source lines) against the real cost of
    every turn of the sample sessions, packed into a fresh and a part-filled packer."""
    v = Vault.open(sample)
    r = Reader(v, "dana", None)
    renderer = prompt.Renderer("md", "Memory for dana: q", {"user": "dana", "query": "q"})
    refs = [f"{s['path']}#t{n}" for s in v.sessions() for n in range(1, int(s["turns"]) + 1)]
    assert len(refs) > 100
    checked = 0
    for first in (None, refs[0], refs[-1]):
        packer = prompt.Packer(renderer, 10_000)
        if first is not None:
            m = prompt._turn_memory(r, first, 1.0, "", None)
            assert m is not None and packer.add(m) is not None
        for ref in refs:
            m = prompt._turn_memory(r, ref, 1.0, "", None)
            floor = prompt._turn_floor(r, packer, ref, None)
            if m is None:
                continue
            assert floor is not None and 1 <= floor <= packer.cost(m), ref
            checked += 1
    assert checked > 300


def test_a_small_turn_still_fits_after_bigger_ones_were_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Turns are tried in rank order: one whose floor no longer fits (a long-named
    speaker's) must not stop a lower-ranked one that does: the floor is per turn."""
    vault = tmp_path / "vault"
    ok("init", vault)
    big = "Bartholomew Featherstonehaugh-Wolfeschlegelsteinhausen"
    transcript(tmp_path / "a.jsonl", "zeph-a", [
        ("user", big, "zephyrine rollout window: zephyrine rollout window, zephyrine rollout."),
        ("assistant", None, "Noted."),
    ], 3)  # fmt: skip
    transcript(tmp_path / "b.jsonl", "zeph-b", [
        ("user", "Al", "zephyrine rollout done."), ("assistant", None, "Good."),
    ], 2)  # fmt: skip
    for name in ("a", "b"):
        src = tmp_path / f"{name}.jsonl"
        ok("--vault", vault, "ingest", src, "--user", "al", "--scope", "team")
    v = Vault.open(vault)
    first, small = turn_ref(vault, "zeph-a", 1), turn_ref(vault, "zeph-b", 1)
    floored: set[str] = set()
    real = prompt._turn_floor

    def watching(r: Reader, packer: prompt.Packer, ref: str, hit: Hit | None) -> int | None:
        got = real(r, packer, ref, hit)
        if got is not None and packer.used + got > packer.budget:
            floored.add(ref)
        return got

    monkeypatch.setattr(prompt, "_turn_floor", watching)
    seen = []
    for b in range(20, 200):
        floored.clear()
        res = v.recall("zephyrine rollout window", user="al", budget=b)
        said = [d.ref for d in res.explain if d.kind == "turn"]
        assert first in said and small in said and said.index(first) < said.index(small)
        if first in floored and small in [m.ref for m in res.memories]:
            seen.append(b)
            why = next(d.reason for d in res.explain if d.ref == first)
            assert why == "over the token budget"
    assert seen, "some budget refuses the long-named turn by its floor, yet fits the short"


def test_the_token_floor_never_tops_the_count(
    sample: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tokens.lower_bound against tokens.count on every sample turn and odd text, with
    no word counted before (the guessing path) and after (then the two agree)."""
    from memctl.core import tokens

    enc = tokens.encoding()
    assert enc is not None
    monkeypatch.setattr(enc, "_counts", {})
    monkeypatch.setattr(enc, "_split", {})
    v = Vault.open(sample)
    r = Reader(v, "dana", None)
    texts = [t for s in v.sessions() for t in r.contents(s["path"])]
    texts += [
        "", " ", "naisouhe fica zephyrine Wolfeschlegelsteinhausen", "日本語のテキスト",
        "1234567 3.14159 0xDEADBEEF", "it's they're we'll", "\t\n\r  \n", "🙂🙃 é ñ",
        "- [Dana · 2026-09-01 · ab12cd#t3]", "a" * 300, "```py\nx = {'k': [1, 2]}\n```",
    ]  # fmt: skip
    lower = [tokens.lower_bound(t) for t in texts]
    exact = [tokens.count(t) for t in texts]
    assert all(lo <= n for lo, n in zip(lower, exact, strict=True))
    assert sum(lo < n for lo, n in zip(lower, exact, strict=True)) > 10, "it guesses low"
    assert sum(lower) > 0.6 * sum(exact), "and not so low it never refuses anything"
    assert [tokens.lower_bound(t) for t in texts] == exact, "counted words count exactly"


@pytest.fixture(scope="module")
def curated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample sessions ingested and curated: notes full of cited claims."""
    return _sample_vault(tmp_path_factory.mktemp("claims") / "vault", curate=True)


def test_a_claim_refused_by_its_floor_is_refused_as_the_packer_would(
    curated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The claim floor, its citations unread, against each claim's real cost once they are
    read; and every budget gives the same memories and decisions with it as without."""
    v = Vault.open(curated)
    real = prompt._claim_floor
    refused = checked = 0
    readers: dict[str, Reader] = {}

    def checking(packer: prompt.Packer, c: Any) -> int | None:
        nonlocal refused, checked
        got = real(packer, c)
        assert got is not None
        r = readers[packer.r.attrs["user"]]
        cites, why = rank.check_cites(r, c.refs)
        if why is None:
            m = prompt._claim_memory(c, cites)
            assert got <= packer.cost(m), (c.text, got, packer.cost(m))
            checked += 1
        refused += packer.used + got > packer.budget
        return got

    budgets = range(40, 900, 23)
    monkeypatch.setattr(prompt, "_claim_floor", checking)
    fast: list[dict[str, Any]] = []
    for user, q in QUERIES:
        readers[user] = Reader(v, user, None)
        fast += _recalls(v, user, q, budgets)
    monkeypatch.setattr(prompt, "_claim_floor", lambda *a: None)
    slow = [j for user, q in QUERIES for j in _recalls(v, user, q, budgets)]
    assert checked > 200 and refused > 50, (checked, refused)
    assert fast == slow


def test_the_uncounted_floor_of_heading_and_sources_never_tops_their_count(
    curated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`Packer.extra(m, floor=True)` (lower bounds, nothing counted) against `extra(m)`
    for every claim and turn of the curated sample, into a fresh and a part-filled packer;
    the floors try it first and refuse on it alone."""
    v = Vault.open(curated)
    r = Reader(v, "dana", None)
    renderer = prompt.Renderer("md", "Memory for dana: q", {"user": "dana", "query": "q"})
    mems = _floor_mems(v, r)
    assert sum(m.kind == "claim" for m in mems) > 20 and len(mems) > 100
    from memctl.core import tokens

    enc = tokens.encoding()
    assert enc is not None
    lower = 0
    for first in (None, mems[0], mems[-1]):
        packer = prompt.Packer(renderer, 100_000)
        if first is not None:
            assert packer.add(first) is not None
        monkeypatch.setattr(enc, "_counts", {})  # no word counted before: the guessing path
        cheap = [packer.extra(m, floor=True) for m in mems]
        prompt.count_cached.cache_clear()  # counted now, word by word
        exact = [packer.extra(m) for m in mems]
        for m, lo, n in zip(mems, cheap, exact, strict=True):
            assert 0 <= lo <= n, (m.ref, lo, n)
        lower += sum(lo < n for lo, n in zip(cheap, exact, strict=True))
        assert [packer.extra(m, floor=True) for m in mems] == exact, "counted words: exact"
    assert lower > 50, "the cheap floor is a floor, not the count under another name"


def test_the_floors_refuse_without_counting_sources(
    curated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At small budgets most claims and turns are refused by the uncounted floor: the
    same recalls (decisions and reasons too) as with every floor counted, for a fraction
    of the source lines (paths, words never seen) counted."""
    from memctl.recall import pack

    counted: list[str] = []
    real_count, real_extra = pack._count, pack.Packer.extra

    def counting(text: str) -> int:
        counted.append(text)
        return int(real_count(text))

    def always_counted(self: pack.Packer, m: Any, floor: bool = False, **_: Any) -> int:
        return real_extra(self, m)

    def run() -> tuple[list[dict[str, Any]], int]:
        counted.clear()
        out = [j for user, q in QUERIES for j in _recalls(v, user, q, range(60, 260, 40))]
        return out, sum(line.startswith("- ") and " = raw/" in line for line in counted)

    monkeypatch.setattr(pack, "_count", counting)
    v = Vault.open(curated)
    fast, cheap = run()
    monkeypatch.setattr(pack.Packer, "extra", always_counted)
    slow, full = run()
    assert fast == slow
    assert any(d["reason"] == "over the token budget" for j in fast for d in j["explain"])
    assert cheap * 2 < full, (cheap, full)


def test_a_turn_found_once_per_recall_answers_as_a_fresh_look(sample: Path) -> None:
    """Reader._turn keeps each heading it found for the rest of the recall: scope, cite,
    role and text asked again (and in another order) equal a fresh Reader's first answer,
    for every turn of the sample sessions, refs that do not exist included."""
    v = Vault.open(sample)
    r = Reader(v, "dana", None)
    refs = [f"{s['path']}#t{n}" for s in v.sessions() for n in range(0, int(s["turns"]) + 2)]
    refs += ["raw/nowhere.md#t1", "knowledge/team.md#t1", f"{refs[0].split('#')[0]}#tx"]
    assert len(refs) > 100

    def look(reader: Reader, ref: str) -> tuple[object, ...]:
        return (reader.turn_scope(ref), reader.cite(ref, "q"), reader.turn_role(ref),
                reader.turn_text(ref))  # fmt: skip

    first = {ref: look(r, ref) for ref in refs}
    again = {ref: look(r, ref) for ref in reversed(refs)}
    fresh = {ref: look(Reader(v, "dana", None), ref) for ref in refs}
    assert first == again == fresh
    assert sum(f[0] is None for f in first.values()) == 2 * len(v.sessions()) + 3
    assert sum(f[3] is not None for f in first.values()) > 100


def test_turn_headings_are_found_where_the_heading_regex_finds_them(sample: Path) -> None:
    """raw.turn_heads (str.find, then the regex on candidate lines) against
    `TURN_HEAD.finditer` on every sample session and on random heading-like text."""
    import random

    v = Vault.open(sample)
    texts = [(sample / s["path"]).read_text(encoding="utf-8") for s in v.sessions()]
    texts += ["", "## t", "## t1 · a\n## t2 · b", "x\n## t1 · \n", "## t1 · a\r\n## t2 · b\n"]
    texts += ["\n## t3 · x\n## tx · y\n\\## t4 · z\n## t5 · w", "## t1 ·\n## t2 · last"]
    rng = random.Random(7)
    bits = ["\n", "## t", "1", "23", " · ", " ", "x", "\\", "#", "·"]
    texts += ["".join(rng.choice(bits) for _ in range(rng.randint(0, 40))) for _ in range(3000)]
    found = 0
    for text in texts:
        want = [m.start() for m in raw.TURN_HEAD.finditer(text)]
        assert raw.turn_heads(text) == want, repr(text[:80])
        found += len(want)
    assert found > 100


def test_the_words_kept_for_a_text_count_and_cut_as_a_fresh_split(sample: Path) -> None:
    """_BPE.words keeps the last texts' pre-tokenized words: counts, floors and pieces
    from it equal those of an encoder that splits every text anew, before and after the
    kept texts are dropped (more than it keeps)."""
    from memctl.core import tokens

    enc = tokens.encoding()
    assert enc is not None
    v = Vault.open(sample)
    r = Reader(v, "dana", None)
    turns = [t for s in v.sessions() for t in r.contents(s["path"])]
    texts = turns + [f"{t} #{i}" for i, t in enumerate(turns)] + [t[:40] for t in turns]
    texts += ["", " ", "naisouhe fica", "- [Dana · 2026-09-01 · ab12cd#t3]", "日本語 🙂"]
    k = 0
    while len(texts) <= tokens.WORDS_KEPT + 50:  # more than it keeps
        texts += [f"{t[:60]} v{k}" for t in turns]
        k += 1

    def split_anew(t: str) -> tuple[int, list[bytes]]:
        f = tokens._BPE(enc.name, enc.ranks, enc.pattern, enc.ascii_pattern)
        return f.count(t), f.pieces(t)

    for _ in range(2):  # the second pass meets the kept words (and drops some)
        low = [enc.lower_bound(t) for t in texts]
        got = [(enc.count(t), enc.pieces(t)) for t in texts]
        # every seventh text against a fresh split: the kept words are dropped in between
        assert got[::7] == [split_anew(t) for t in texts[::7]]
        assert all(lo <= n for lo, (n, _) in zip(low, got, strict=True))
        assert [enc.lower_bound(t) for t in texts] == [n for n, _ in got], "counted: exact"
        assert all(enc.words(t) == enc.pattern.findall(t) for t in texts)
    assert len(enc._words) <= tokens.WORDS_KEPT


def test_near_copy_refused_by_sizes_alone_is_refused_by_the_overlap_too() -> None:
    """near_copy returns at once when the two sets' sizes alone keep their overlap below
    the threshold; against the plain jaccard test on random sets and every threshold
    recall uses or might."""
    import random

    def the_long_way(kept: frozenset[int], new: frozenset[int], asked: frozenset[int],
                     at: float) -> bool:  # fmt: skip
        both, either = len(kept & new), len(kept | new)
        return (both / either if kept and new else 0.0) >= at and not ((new - kept) & asked)

    rng = random.Random(11)
    near = 0
    for _ in range(100_000):
        pool = range(rng.randint(1, 25))
        kept, new = (frozenset(rng.sample(pool, rng.randint(0, len(pool)))) for _ in "ab")
        asked = frozenset(rng.sample(pool, rng.randint(0, min(3, len(pool)))))
        at = rng.choice([0.0, 0.3, 0.5, 2 / 3, 0.7, rank.DUP_JACCARD, 0.75, 1.0])
        got = words.near_copy(kept, new, asked, at)  # type: ignore[arg-type]
        assert got == the_long_way(kept, new, asked, at), (kept, new, asked, at)
        near += got
    assert 5_000 < near < 95_000


def _floor_mems(v: Vault, r: Reader) -> list[prompt.Memory]:
    """Every turn and cited claim of a vault as a memory, for pitting costs against floors."""
    mems = []
    for s in v.sessions():
        for n in range(1, int(s["turns"]) + 1):
            m = prompt._turn_memory(r, f"{s['path']}#t{n}", 1.0, "", None)
            if m is not None:
                mems.append(m)
    for store in v.config.stores:
        for path in v.notes(store):
            rel = path.relative_to(v.root).as_posix()
            note = r.note(rel)
            if note is None:
                continue
            for _, c in note.active_claims():
                refs = tuple((cit.ref, cit.quote) for cit in note.citations(c) if cit.ref)
                cites, why = rank.check_cites(r, refs)
                if why is None and cites:
                    mems.append(prompt.Memory(kind="claim", text=c.text, basis="stated",
                                              ref=rel, score=1.0, citations=cites,
                                              title=note.title))  # fmt: skip
    return mems


def test_extra_with_room_is_exact_when_it_fits_and_over_when_the_whole_is(
    curated: Path,
) -> None:
    """`Packer.extra(m, room=k)` stops adding source lines once over `k`: for every claim
    and turn of the curated sample, fresh and part-filled packers, counted and floored,
    and every room around the answer, it gives the whole when that is at most `k` and more
    than `k` when the whole is, and sometimes stops short."""
    v = Vault.open(curated)
    r = Reader(v, "dana", None)
    renderer = prompt.Renderer("md", "Memory for dana: q", {"user": "dana", "query": "q"})
    mems = _floor_mems(v, r)
    assert sum(m.kind == "claim" for m in mems) > 20 and len(mems) > 100
    # and claims citing several sessions, whose source lines can stop short
    by_session = {m.citations[0].ref.split("#")[0]: m.citations[0] for m in mems
                  if m.kind == "turn"}  # fmt: skip
    cites = list(by_session.values())
    assert len(cites) >= 4
    for k in range(2, len(cites) + 1):
        mems.append(prompt.Memory(kind="claim", text="a claim", basis="stated",
                                  ref=f"knowledge/many-{k}.md", score=1.0,
                                  citations=tuple(cites[:k]), title="Many"))  # fmt: skip
    short = checked = 0
    for first in (None, mems[0], mems[-1]):
        packer = prompt.Packer(renderer, 100_000)
        if first is not None:
            assert packer.add(first) is not None
        for m in mems:
            for floor in (True, False):
                whole = packer.extra(m, floor=floor)
                for room in (*range(0, whole, max(1, whole // 25)), whole, whole + 1):
                    got = packer.extra(m, floor=floor, room=room)
                    if whole <= room:
                        assert got == whole, (m.ref, floor, room, got, whole)
                    else:
                        assert room < got <= whole, (m.ref, floor, room, got, whole)
                        short += got < whole
                    checked += 1
    assert checked > 10_000 and short > 1_000, (checked, short)


def test_the_floors_stopped_early_refuse_what_the_whole_floor_refuses(
    curated: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The claim and turn floors return as soon as the item (or the item and part of its
    heading and source lines) is over the room left: against the whole floor of the same
    parts, every call at every budget refuses alike, and gives the same number when it
    does not refuse; and the early return is taken."""
    v = Vault.open(curated)
    real_claim, real_turn = prompt._claim_floor, prompt._turn_floor
    calls = early = 0

    def whole(packer: prompt.Packer, item: int, m: prompt.Memory) -> int | None:
        least = item + packer.extra(m, floor=True)
        if packer.used + least > packer.budget:
            return least
        return None

    def same(packer: prompt.Packer, got: int | None, least: int | None, full: int) -> None:
        nonlocal calls, early
        assert got is not None
        over = packer.used + got > packer.budget
        assert over == (least is not None), (got, least)
        if least is None:
            assert got == full, (got, full)
        else:
            assert got <= least, (got, least)
            early += got < least
        calls += 1

    def claim(packer: prompt.Packer, c: Any) -> int | None:
        got = real_claim(packer, c)
        shell = prompt._claim_memory(c, tuple(prompt.Cite(f, None, None, q) for f, q in c.refs))
        item = prompt.tokens.lower_bound(packer.r.item(shell))
        same(packer, got, whole(packer, item, shell), item + packer.extra(shell))
        return got

    def turn(r: Reader, packer: prompt.Packer, ref: str, hit: Hit | None) -> int | None:
        got = real_turn(r, packer, ref, hit)
        cite = r.cite(ref)
        shell = prompt.Memory(kind="turn", text="", basis="said", ref=ref, score=0.0,
                              date=cite.date, citations=(cite,),
                              speaker=cite.speaker or (hit.speaker if hit else None))  # fmt: skip
        head = packer.r.turn_head(shell)
        least = whole(packer, prompt.tokens.lower_bound(head) + 1, shell)
        same(packer, got, least, prompt.count_cached(head) + 1 + packer.extra(shell))
        return got

    monkeypatch.setattr(prompt, "_claim_floor", claim)
    monkeypatch.setattr(prompt, "_turn_floor", turn)
    for user, q in QUERIES:
        _recalls(v, user, q, range(40, 900, 23))
    assert calls > 500 and early > 100, (calls, early)


def test_near_copy_of_a_list_is_the_first_near_copy_in_it() -> None:
    """near_copy_of(list, ...) against `near_copy` pair by pair: the same first index (or
    none) for random lists of random sets, empty sets among them, at every threshold
    recall uses or might."""
    import random

    rng = random.Random(12)
    found = missed = 0
    for _ in range(20_000):
        pool = range(rng.randint(1, 12))

        def pick(pool: range = pool) -> frozenset[int]:
            return frozenset(rng.sample(pool, rng.randint(0, len(pool))))

        kept = [pick() for _ in range(rng.randint(0, 6))]
        new, asked = pick(), frozenset(rng.sample(pool, rng.randint(0, min(2, len(pool)))))
        at = rng.choice([0.0, 0.3, 0.5, 2 / 3, rank.DUP_JACCARD, 0.75, 1.0])
        want = next((i for i, k in enumerate(kept) if words.near_copy(k, new, asked, at)), -1)  # type: ignore[arg-type]
        got = words.near_copy_of(kept, new, asked, at)  # type: ignore[arg-type]
        assert got == want, (kept, new, asked, at)
        found += want >= 0
        missed += want < 0 and bool(kept)
    assert found > 1_000 and missed > 1_000, (found, missed)


# ---- what one process keeps between prompts follows every change -------------------------


def _recall_lines(v: Vault, query: str, user: str = "dana", project: str | None = None) -> str:
    return v.recall(query, user=user, project=project).text


def test_claim_rows_kept_for_a_note_follow_its_edits(tmp_path: Path) -> None:
    """Ranking keeps what it reads from a parsed note's lines while the note holds; a line
    edited by hand between two recalls of one open Vault is ranked as it now reads."""
    vault = make_vault(tmp_path)
    rel = "knowledge/egress-levers.md"
    v = Vault.open(vault)
    _settle()
    rank._ROWS.clear()
    first = _recall_lines(v, "How do we remove NAT processing charges?")
    assert "Gateway endpoints remove NAT processing charges" in first
    assert rank._ROWS, "the rows of the notes ranked were not kept"
    assert _recall_lines(v, "How do we remove NAT processing charges?") == first
    _rewrite_in_place(vault / rel, b"Gateway endpoints remove", b"Pangolin tunnels remove",
                      (vault / rel).stat().st_mtime_ns + 10**9)  # fmt: skip
    again = _recall_lines(v, "How do we remove NAT processing charges?")
    assert "Pangolin tunnels remove NAT processing charges" in again
    assert "Gateway endpoints remove" not in again


def test_stored_fields_kept_for_a_snapshot_follow_a_commit(tmp_path: Path) -> None:
    """What the index stored for a document is kept while its snapshot is the live one;
    a note changed between two searches is found with what it now says."""
    from memctl.index import reader

    vault = make_vault(tmp_path)
    v = Vault.open(vault)
    reader._DOCS.clear()
    hits = v.search("NAT processing charges", kind="note").hits
    assert any("Gateway endpoints" in h.text for h in hits)
    assert reader._DOCS, "the stored fields read were not kept"
    assert [h.text for h in v.search("NAT processing charges", kind="note").hits] == [
        h.text for h in hits
    ]
    p = vault / "knowledge/egress-levers.md"
    p.write_text(p.read_text(encoding="utf-8").replace("Gateway endpoints", "Pangolin tunnels"),
                 encoding="utf-8")  # fmt: skip
    texts = [h.text for h in v.search("NAT processing charges", kind="note").hits]
    assert any("Pangolin tunnels" in t for t in texts)
    assert not any("Gateway endpoints" in t for t in texts)
    # a rebuilt index numbers its documents afresh: an address kept from before is no key
    p.write_text(p.read_text(encoding="utf-8").replace("Pangolin tunnels", "Otter bridges"),
                 encoding="utf-8")  # fmt: skip
    v.reindex()
    texts = [h.text for h in v.search("NAT processing charges", kind="note").hits]
    assert any("Otter bridges" in t for t in texts)
    assert not any("Pangolin tunnels" in t for t in texts)


def test_the_project_note_kept_for_a_place_follows_a_new_note(tmp_path: Path) -> None:
    """The project note for a working directory is kept while the index stands still; a
    project note written for it between two prompts is the next prompt's standing context."""
    from memctl.recall import project

    vault = make_vault(tmp_path)
    work = tmp_path / "work" / "billing-api"
    work.mkdir(parents=True)
    v = Vault.open(vault)
    project._NOTE_FOR.clear()
    before = _recall_lines(v, "How do we cut NAT gateway costs?", project=str(work))
    assert "Gateway endpoints" in before and "uv run pytest -x" not in before
    assert project._NOTE_FOR, "the project note found for the place was not kept"
    ref = turn_ref(vault, "marco-exporter", 3)
    body = ("## Commands\n\n- Raise the limit to 512Mi with `uv run pytest -x` [^c1]\n\n"
            f'[^c1]: {ref} "Raised the limit to 512Mi"\n')  # fmt: skip
    p = note(vault, "projects/billing-api.md", "projects", "Billing API", "active", body)
    # a folder outside the home folder is recorded by its name (memctl.core.raw.portable_path)
    text = p.read_text(encoding="utf-8")
    p.write_text(text.replace("derived_by:", "cwd: billing-api\nderived_by:"), encoding="utf-8")
    after = _recall_lines(v, "How do we cut NAT gateway costs?", project=str(work))
    assert "uv run pytest -x" in after


def test_an_inference_read_from_its_turns_is_checked_again_when_they_change(
    tmp_path: Path,
) -> None:
    """What ranking keeps of a note's lines includes whether their quotes support them, but
    not when that took reading the turns an inference was drawn from: a turn changed in
    place between two prompts of one open Vault is read again."""
    vault = make_vault(tmp_path)
    t1, t3 = turn_ref(vault, "dana-egress", 1), turn_ref(vault, "dana-egress", 3)
    body = ("## Facts\n\n- Dana wants to cut egress costs. #inferred [^i1]\n\n"
            f'[^i1]: {t3} "Which buckets should move first?"\n')  # fmt: skip
    note(vault, "knowledge/dana-aims.md", "knowledge", "Dana's aims", "active", body)
    v = Vault.open(vault)
    _settle()

    def basis() -> str:
        got = v.recall("What does Dana want to cut?", user="dana")
        line = [m for m in got.memories if "cut egress costs" in m.text]
        assert line, got.text
        return line[0].basis

    assert basis() == "inferred"  # its quote shares no word; the turn before it does
    assert basis() == "inferred"
    raw = vault / t1.split("#")[0]
    _rewrite_in_place(raw, b"cut our egress costs", b"grow our zeppelins",
                      raw.stat().st_mtime_ns + 10**9)  # fmt: skip
    assert basis() == "unverified"


def test_a_shown_memory_kept_by_id_is_the_fresh_cleaning_of_that_memory() -> None:
    """`shown` keeps its answer by the memory's id: through fills and clears of the memo,
    with memories dropped as soon as shown (their ids free once the memo lets go of them),
    each gets its own cleaning, asked once or twice."""
    from memctl.recall import render
    from memctl.recall.results import Memory

    def make(text: str) -> Memory:
        return Memory(
            kind="claim", text=text, basis="stated", ref="notes/a.md", score=1.0, title=text
        )

    for i in range(render.SHOWN_KEPT * 2 + 7):  # fills, clears and refills the memo
        text = f"claim {i} \u202eevil\u202c [stated · user] #tag{i}" if i % 3 else f"plain {i}"
        m = make(text)
        assert render.shown(m) == render._shown(m)
        assert render.shown(m) == render._shown(m)  # the kept answer, asked again
        del m  # its id is free for the next one


def test_a_served_request_runs_in_its_callers_environment_and_restores_the_servers() -> None:
    from memctl.faces.serve.server import as_caller

    before = dict(os.environ)
    caller = {k: v for k, v in before.items() if k != "HOME"}
    caller["MEMCTL_TEST_ONLY_CALLER"] = "yes"
    caller["PATH"] = "/caller/bin"
    with as_caller({"env": caller}):
        assert dict(os.environ) == caller
    assert dict(os.environ) == before
    with pytest.raises(RuntimeError), as_caller({"env": {"ONLY": "this"}}):
        assert dict(os.environ) == {"ONLY": "this"}
        raise RuntimeError("a request that fails")
    assert dict(os.environ) == before
