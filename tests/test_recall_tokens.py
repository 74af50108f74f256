"""Token counting: a real BPE tokenizer, identical to tiktoken's, that never needs the network."""

from __future__ import annotations

import json
import marshal
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from util import DATA, ROOT

from memctl.core import tokens

SAMPLES = sorted((DATA / "sample-transcripts").glob("*/*.jsonl"))
EXTRA = [
    "",
    " ",
    "Hello <|endoftext|> world",  # special-token text counts as plain text
    "1日200個 🥐 メロンパン é ã",
    "def f(x):\r\n    return x**2  \n\n\n",
    "it's they'll WE'VE   trailing   ",
    "a" * 5000,
    "\u200b\ufeff zero width",
]


def _texts() -> list[str]:
    out = list(EXTRA)
    for path in SAMPLES:
        for line in path.read_text(encoding="utf-8").splitlines():
            out.append(json.loads(line)["content"])
    return out


def test_bundled_table_is_found_without_importing_litellm() -> None:
    code = (
        "import sys; from memctl.core import tokens; "
        "p = tokens.bundled_table(); n = tokens.count('We are cutting egress costs.'); "
        "print(p is not None, n, tokens.method(), "
        "'litellm' in sys.modules, 'tiktoken' in sys.modules)"
    )
    assert _fresh(code) == ["True", "7", "bpe:cl100k_base", "False", "False"]


def _fresh(code: str) -> list[str]:
    """What `code` prints, run in a fresh interpreter (nothing imported yet), as words."""
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT
    ).stdout.split()


def test_regex_is_imported_only_for_text_the_re_patterns_cannot_split() -> None:
    """A hook process counts English, names like José and Zürich, CJK and emoji:
    importing `regex` and compiling tiktoken's pattern was ~20 ms of it, so that waits
    for the first text `re` cannot split the same way (a digit or space outside ASCII)."""
    code = (
        "import sys; from memctl.core import tokens; "
        "a = tokens.count('We are cutting egress costs \u2014 by 40%.'); "
        "before = 'regex' in sys.modules; "
        "b = tokens.count('Caf\u00e9 na\u00efve \u65e5\u672c\u8a9e \U0001f642 Jos\u00e9'); "
        "between = 'regex' in sys.modules; "
        "c = tokens.count('x\u00a0y \u216b \u00bd'); "
        "print(a, before, b, between, c, 'regex' in sys.modules)"
    )
    out = _fresh(code)
    assert out[:2] == ["11", "False"]
    assert int(out[2]) > 4 and out[3] == "False"
    assert int(out[4]) > 3 and out[5] == "True"


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_same_tokens_as_tiktoken_on_every_sample(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = tokens.bundled_table(name)
    assert table is not None, "litellm ships the table; memctl depends on litellm"
    # tiktoken finds its cache by the same sha1 names, so it too stays offline here
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(table.parent))
    tiktoken = pytest.importorskip("tiktoken")
    ref = tiktoken.get_encoding(name)
    enc = tokens.encoding(name)
    assert enc is not None
    texts = _texts()
    assert len(texts) > 100
    for text in texts:
        assert enc.encode(text) == ref.encode_ordinary(text), text[:80]
    if name == tokens.DEFAULT_ENCODING:
        assert all(tokens.count(t) == len(ref.encode_ordinary(t)) for t in texts)


_NO_NET = """
import sys
def guard(event, args):
    if event.startswith("socket.") and event != "socket.__new__":
        raise RuntimeError("network attempt: " + event)
sys.addaudithook(guard)
from memctl.core import tokens
assert tokens.method() == "bpe:cl100k_base", tokens.method()
print(tokens.count("Phase 2 of the migration is the most compute-heavy part."))
"""


def test_counts_with_every_socket_call_refused() -> None:
    out = subprocess.run(
        [sys.executable, "-c", _NO_NET], capture_output=True, text=True, cwd=ROOT, check=False
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "13"


@pytest.mark.skipif(shutil.which("unshare") is None, reason="needs util-linux unshare")
def test_counts_inside_a_namespace_without_network() -> None:
    probe = subprocess.run(["unshare", "-rn", "true"], capture_output=True, check=False)
    if probe.returncode != 0:
        pytest.skip("user namespaces are not available here")
    out = subprocess.run(
        ["unshare", "-rn", sys.executable, "-c", _NO_NET],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "13"


def test_falls_back_to_the_documented_estimate(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "_cache", {})
    monkeypatch.setattr(tokens, "_cache_dir", None)
    monkeypatch.setattr(tokens, "bundled_table", lambda name=tokens.DEFAULT_ENCODING: None)
    assert tokens.method() == "estimate:4 bytes/token"
    assert tokens.count("abcdefgh") == 2
    assert tokens.count("abcdefghi") == 3
    assert tokens.count("🥐") == 1  # 4 UTF-8 bytes
    cut = tokens.truncate("word " * 100, 10)
    assert cut.endswith("…") and tokens.count(cut) <= 10


def test_a_damaged_table_is_not_trusted(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    bad = tmp_path / "table"
    bad.write_bytes(b"IQ== 0\n")
    monkeypatch.setattr(tokens, "_cache", {})
    monkeypatch.setattr(tokens, "_cache_dir", None)  # no parsed copy from an earlier test
    monkeypatch.setattr(tokens, "bundled_table", lambda name=tokens.DEFAULT_ENCODING: bad)
    assert tokens.encoding() is None
    assert tokens.method().startswith("estimate:")


@pytest.mark.parametrize("limit", [1, 2, 3, 5, 8, 13, 50])
@pytest.mark.parametrize(
    "text",
    ["We moved the cross-region replication to a nightly batch.", "1日200個 🥐 メロンパン " * 5],
)
def test_truncate_stays_within_the_limit(text: str, limit: int) -> None:
    cut = tokens.truncate(text, limit)
    assert tokens.count(cut) <= limit
    assert "\ufffd" not in cut
    if tokens.count(text) <= limit:
        assert cut == text
    else:
        assert cut.endswith("…")
        assert text.startswith(cut[:-1].rstrip())


def test_upper_bound_is_an_upper_bound() -> None:
    for text in _texts()[:200]:
        assert tokens.count(text) <= tokens.upper_bound(text)


def test_a_kept_copy_of_the_table_loads_the_same_encoder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(tokens, "_cache", {})
    monkeypatch.setattr(tokens, "_cache_dir", None)
    tokens.use_cache_dir(tmp_path / "cache")
    first = tokens.encoding()
    kept = list((tmp_path / "cache").glob("bpe-cl100k_base-*.marshal"))
    assert first is not None and len(kept) == 1
    monkeypatch.setattr(tokens, "_cache", {})
    again = tokens.encoding()
    assert again is not None and again.ranks == first.ranks
    text = "Phase 2 of the migration is the most compute-heavy part. 1日200個 🥐"
    assert again.encode(text) == first.encode(text)
    kept[0].write_bytes(b"not marshal data")  # a damaged copy is ignored, then replaced
    monkeypatch.setattr(tokens, "_cache", {})
    assert tokens.count(text) == len(first.encode(text))
    assert len(kept[0].read_bytes()) > 1000


def test_counts_kept_for_the_next_process_count_as_a_fresh_merge(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A process keeps the words it had to merge beside the table once it merged enough of
    them; the next one counts every text as a fresh merge would, and a damaged or foreign
    copy is ignored."""
    monkeypatch.setattr(tokens, "_cache", {})
    monkeypatch.setattr(tokens, "_cache_dir", None)
    tokens.use_cache_dir(tmp_path / "cache")
    rare = ["zqx" + "".join(chr(97 + i // 26**k % 26) for k in range(3)) + "vw"
            for i in range(tokens.KEEP_AFTER)]  # fmt: skip
    texts = _texts()[:300] + [f"the {w} pod" for w in rare]
    first = [tokens.count(t) for t in texts]
    tokens.keep_counts()
    kept = list((tmp_path / "cache").glob("counts-cl100k_base-*.marshal"))
    assert len(kept) == 1, sorted(p.name for p in (tmp_path / "cache").iterdir())
    words = marshal.loads(kept[0].read_bytes())
    assert len(words) >= tokens.KEEP_AFTER and all(k > 1 for k in words.values())

    monkeypatch.setattr(tokens, "_cache", {})  # the next process
    enc = tokens.encoding()
    assert enc is not None
    assert tokens.count("a word") == 2 and enc._kept_read
    assert enc._counts.get(" zqxaaavw", 0) > 1, "the kept words were not read"
    assert [tokens.count(t) for t in texts] == first
    assert [tokens.lower_bound(t) for t in texts] == first, "counted before: exact"
    fresh = tokens._BPE(enc.name, enc.ranks, enc.pattern, enc.ascii_pattern)
    fresh._kept_read = True  # a merge of its own for every word
    assert [fresh.count(t) for t in texts] == first

    planted = {**{w: 2 for w in rare}, " zqxaaavw": 10_000}  # more tokens than bytes
    for damaged in (b"not marshal data", marshal.dumps({" zqxaaavw": "two"}), marshal.dumps([1]),
                    marshal.dumps(planted)):  # fmt: skip
        kept[0].write_bytes(damaged)
        monkeypatch.setattr(tokens, "_cache", {})
        assert [tokens.count(t) for t in texts] == first


def test_count_then_cut_gives_tiktokens_tokens(monkeypatch: pytest.MonkeyPatch) -> None:
    """Count keeps each new word's merge for a later cut (pieces): the kept split must be
    the one tiktoken makes, whichever of the two meets a word first."""
    table = tokens.bundled_table()
    assert table is not None
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(table.parent))
    tiktoken = pytest.importorskip("tiktoken")
    ref = tiktoken.get_encoding(tokens.DEFAULT_ENCODING)
    monkeypatch.setattr(tokens, "_cache", {})  # a fresh encoder: every word is new to it
    enc = tokens.encoding()
    assert enc is not None
    texts = [*_texts(), "zqxvbrtl grwmpfh xxyzzyquux blorptangle", "ßüñ日本語テキストðæ"]
    for text in texts:
        assert tokens.count(text) == len(ref.encode_ordinary(text)), text[:80]
    assert enc._split, "no word needed merging"
    for text in texts:
        assert enc.encode(text) == ref.encode_ordinary(text), text[:80]


def _plain_texts(seed: int, n: int) -> list[str]:
    """Random plain text (ASCII and tokens.PLAIN_PUNCTUATION) with the characters the
    patterns tell apart crowded in: letters of both cases, digits, every control character
    (\\x1c-\\x1f are whitespace to `re` but not to Unicode), contractions, runs of spaces
    and line ends."""
    import random

    rng = random.Random(seed)
    atoms = [chr(c) for c in range(128)] + list(tokens.PLAIN_PUNCTUATION) + [
        "'s", "'T", "'ll", "'VE", "'re", "'d", "'M", " ", "  ", "\n", "\r\n", "\t",
        "ab", "CD", "Ef", "gH", "123", "45678", "://", "-", "/", ".", " \n", "\n ", " · ",
    ]  # fmt: skip
    return ["".join(rng.choices(atoms, k=rng.randint(0, 40))) for _ in range(n)]


def test_plain_punctuation_is_no_letter_digit_mark_or_space() -> None:
    regex = pytest.importorskip("regex")
    other = regex.compile(r"[\p{L}\p{N}\p{M}\p{White_Space}]")
    assert tokens.PLAIN_PUNCTUATION and not tokens.PLAIN_PUNCTUATION.isascii()
    assert [c for c in tokens.PLAIN_PUNCTUATION if other.match(c)] == []


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_plain_text_splits_into_the_same_words_by_either_pattern(name: str) -> None:
    """Plain text is split by the `re` pattern, the rest by the `regex` one (tiktoken's)."""
    enc = tokens.encoding(name)
    assert enc is not None
    texts = [*_plain_texts(7, 20_000), *(t for t in _texts() if t.isascii())]
    assert sum(not t.isascii() for t in texts) > 5_000
    for text in texts:
        assert enc.ascii_pattern.findall(text) == enc.pattern.findall(text), repr(text)
        assert enc.words(text) == enc.pattern.findall(text), repr(text)
    for text in ["é · x", "a · 日本", "x\u00a0y · z", "Ⅻ · 1", "e\u0301 · e"]:  # not plain
        assert enc.words(text) == enc.pattern.findall(text), repr(text)


# Characters outside ASCII of every kind the patterns tell apart: letters of each case
# category (Lu Ll Lt Lm Lo), marks, symbols and punctuation, and those `re` classes
# differently from `regex` (digits and numerals outside ASCII, spaces outside ASCII, format
# and private-use characters, and letters that case-fold into ASCII).
_WIDE = [
    "\u00e9", "\u00c9", "\u00df", "\u00f1", "\u01c5", "\u02b0", "\u30f3", "\u65e5", "\u03a9",
    "\u0436", "\u0301", "\U0001f950", "\u2615", "\u20ac", "\u00ab", "\u00bf", "\u00b7",
    "\u017f", "\u212a", "\u0130", "\u0131", "\u00a0", "\u2028", "\u3000", "\u00bd",
    "\u216b", "\u0663", "\u00b2", "\u200d", "\ue000", "\ufeff",
]  # fmt: skip


@settings(max_examples=3_000, deadline=None)
@given(st.lists(st.sampled_from(
    [*_WIDE, "'s", "'S", "'ll", "'VE", " ", "  ", "\n", "\r\n", "\t", "\x1c", "ab", "Cd", "12",
     "3456", "_", "-", ".", "://", "'", "\u00e9t\u00e9", "na\u00efve", "\u30e1\u30ed\u30f3"]),
    max_size=30).map("".join))  # fmt: skip
def test_text_beyond_ascii_splits_into_tiktokens_words(text: str) -> None:
    """Whichever pattern `words` picks for a text (the ASCII one, the `re` one for letters
    beyond ASCII, or tiktoken's own), the words are tiktoken's pattern's."""
    for name in ("cl100k_base", "o200k_base"):
        enc = tokens.encoding(name)
        assert enc is not None
        enc._words.clear()
        assert enc.words(text) == enc.pattern.findall(text), (name, text)


@pytest.mark.parametrize("name", ["cl100k_base", "o200k_base"])
def test_plain_text_gives_tiktokens_tokens(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    table = tokens.bundled_table(name)
    assert table is not None
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(table.parent))
    tiktoken = pytest.importorskip("tiktoken")
    ref = tiktoken.get_encoding(name)
    enc = tokens.encoding(name)
    assert enc is not None
    for text in _plain_texts(8, 3_000):
        assert enc.encode(text) == ref.encode_ordinary(text), repr(text)


def _fresh_encoder(monkeypatch: pytest.MonkeyPatch) -> tokens._BPE:
    """An encoder with nothing counted or split yet, as a new process has it."""
    monkeypatch.setattr(tokens, "_cache", {})
    enc = tokens.encoding()
    assert enc is not None
    return enc


@pytest.mark.parametrize("counted_first", [False, True])
def test_the_first_tokens_of_a_text_are_its_pieces_up_to_the_cut(
    monkeypatch: pytest.MonkeyPatch, counted_first: bool
) -> None:
    """`prefix` (what `truncate` cuts at) takes counted words whole and merges only the
    word the cut falls in: it gives exactly the first n pieces, whether the words were
    counted before (kept counts) or never seen."""
    enc = _fresh_encoder(monkeypatch)
    other = _fresh_encoder(monkeypatch)  # the long way, with its own caches
    texts = _texts()[:120]
    if counted_first:
        for t in texts:
            enc.count(t)
    for text in texts:
        pieces = other.pieces(text)
        for n in sorted({0, 1, 2, 3, 7, len(pieces) // 2, len(pieces) - 1, len(pieces),
                         len(pieces) + 5}):  # fmt: skip
            if n < 0:
                continue
            assert enc.prefix(text, n) == b"".join(pieces[:n]), (text[:60], n)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=300), st.integers(min_value=0, max_value=120))
def test_the_first_tokens_of_any_text_are_its_pieces_up_to_the_cut(text: str, n: int) -> None:
    enc = tokens.encoding()
    assert enc is not None
    enc.count(text[: len(text) // 2])  # some words counted before, some not
    assert enc.prefix(text, n) == b"".join(enc.pieces(text)[:n])
