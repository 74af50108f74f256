"""Token counting with a real BPE tokenizer, offline and fast to start.

Budgets are counted in cl100k_base tokens (the encoding of GPT-4 and the embeddings models;
counts for current chat models sit close to it). The BPE table comes from litellm, a memctl
dependency, which ships tiktoken's tables in `litellm/litellm_core_utils/tokenizers/` named by
the sha1 of their download URL (tiktoken's own cache key). We find that folder with
`importlib.util.find_spec` (litellm itself is never imported), check the table's sha256
against the published hash, and run the byte-pair merge here in Python with the same
pre-tokenizer pattern tiktoken uses (the `regex` module, a tiktoken dependency). No network
and no environment variable changed; the only write is an optional parsed copy of the table
in a vault's git-ignored `.memctl/cache/` (`use_cache_dir`), which recall turns on.

Why not `tiktoken.Encoding`: building one costs ~120 ms of Rust setup on every process start,
and this runs on the Claude Code hook path for every prompt. Recall counts a few thousand
tokens per call, where the Python merge takes milliseconds. tests/test_recall_tokens.py
checks token-for-token agreement with tiktoken on every sample transcript.

If the table or `regex` cannot be had, counting falls back to a documented estimate,
`ESTIMATE_BYTES_PER_TOKEN` UTF-8 bytes per token rounded up, and `method()` says so.
"""

from __future__ import annotations

import binascii
import hashlib
import importlib.util
import itertools
import marshal
import math
import re
import sys
import threading
from pathlib import Path
from typing import Any

DEFAULT_ENCODING = "cl100k_base"
ESTIMATE_BYTES_PER_TOKEN = 4  # English prose averages ~4 bytes per cl100k token; code a bit less

_BLOB = "https://openaipublic.blob.core.windows.net/encodings/{}.tiktoken"

# The constants tiktoken_ext.openai_public uses for these encodings (its constructors would
# download the table, so they cannot be called offline). tests/test_recall_tokens.py checks
# that our encodings give the same tokens as tiktoken's own when its cache is pointed at the
# same files.
_SPECS: dict[str, dict[str, Any]] = {
    "cl100k_base": {
        "sha256": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        "pat_str": "|".join(
            [
                r"""'(?i:[sdmt]|ll|ve|re)""",
                r"""[^\r\n\p{L}\p{N}]?+\p{L}++""",
                r"""\p{N}{1,3}+""",
                r""" ?[^\s\p{L}\p{N}]++[\r\n]*+""",
                r"""\s++$""",
                r"""\s*[\r\n]""",
                r"""\s+(?!\S)""",
                r"""\s""",
            ]
        ),
        # the same pattern for plain text (ASCII and PLAIN_PUNCTUATION), where \p{L} is
        # [A-Za-z], \p{N} is [0-9] and \s is [\t-\r ] (Unicode White_Space; `re`'s \s
        # also takes \x1c-\x1f); for `re`, which has no Unicode property classes
        "ascii_pat": "|".join(
            [
                r"""'(?i:[sdmt]|ll|ve|re)""",
                r"""[^\r\nA-Za-z0-9]?+[A-Za-z]++""",
                r"""[0-9]{1,3}+""",
                r""" ?[^\t-\r A-Za-z0-9]++[\r\n]*+""",
                r"""[\t-\r ]++$""",
                r"""[\t-\r ]*[\r\n]""",
                r"""[\t-\r ]+(?![^\t-\r ])""",
                r"""[\t-\r ]""",
            ]
        ),
        "special": {
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    },
    "o200k_base": {
        "sha256": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        "pat_str": "|".join(
            [
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""\p{N}{1,3}""",
                r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
                r"""\s*[\r\n]+""",
                r"""\s+(?!\S)""",
                r"""\s+""",
            ]
        ),
        "ascii_pat": "|".join(
            [
                r"""[^\r\nA-Za-z0-9]?[A-Z]*[a-z]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[^\r\nA-Za-z0-9]?[A-Z]+[a-z]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
                r"""[0-9]{1,3}""",
                r""" ?[^\t-\r A-Za-z0-9]+[\r\n/]*""",
                r"""[\t-\r ]*[\r\n]+""",
                r"""[\t-\r ]+(?![^\t-\r ])""",
                r"""[\t-\r ]+""",
            ]
        ),
        "special": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    },
}


def _letters_pattern(ascii_pat: str) -> str:
    """cl100k's ASCII pattern widened to letters beyond ASCII, for `re`: \\p{L} is
    `[^\\W\\d_]` (what `re` counts as a word character, less digits and `_`, is a letter
    when the text holds no numeral beyond ASCII) and the classes that exclude letters and
    digits exclude those too. Right only for text `_letters_only` passes."""
    return (
        ascii_pat.replace("[A-Za-z]", "[^\\W\\d_]")
        .replace("[^\\r\\nA-Za-z0-9]", "(?:[^\\r\\n\\w]|_)")
        .replace("[^\\t-\\r A-Za-z0-9]", "(?:[^\\t-\\r \\w]|_)")
    )


_SPECS["cl100k_base"]["letters_pat"] = _letters_pattern(_SPECS["cl100k_base"]["ascii_pat"])
_NON_ASCII = re.compile("[^\\x00-\\x7f]")
# letters that case-fold into ASCII: `re` and `regex` may disagree on `(?i:s)` against them
_FOLDS_TO_ASCII = frozenset("\u017f\u212a\u0130\u0131")


def _letters_only(text: str) -> bool:
    """Is every character of `text` beyond ASCII a letter, or printable and neither
    letter, digit, numeral nor space (a mark, symbol or punctuation)? Then `re`'s Unicode
    classes split it as tiktoken's `regex` pattern does (tests/test_recall_tokens.py
    checks both on generated text), and `regex` need not be imported."""
    for c in set(_NON_ASCII.findall(text)):
        if c in _FOLDS_TO_ASCII:
            return False
        if not (c.isalpha() or (not c.isalnum() and c.isprintable() and not c.isspace())):
            return False
    return True


# Punctuation outside ASCII that is no letter, digit, mark or whitespace: each pattern's
# classes treat it as they treat "-" or ".", so text that holds only these beside ASCII
# splits the same by the ASCII pattern (recall's own labels hold "·"; prose holds the rest).
PLAIN_PUNCTUATION = "\u00b7\u00d7\u2013\u2014\u2018\u2019\u201c\u201d\u2022\u2026\u2192"
_not_plain = re.compile(f"[^\\x00-\\x7f{PLAIN_PUNCTUATION}]").search

_lock = threading.Lock()
_NO_RANK = 1 << 62  # above every rank: the pair is not in the table
_BYTE = [bytes((b,)) for b in range(256)]
_cache: dict[str, _BPE | None] = {}
WORDS_KEPT = 4096  # texts whose split is kept (recall bounds a few hundred lines a prompt)
# Words of more than one token (names, paths, ids) and their counts are kept between
# processes beside the parsed table (`keep_counts`): every prompt's hook is a new process
# that counts the same notes' lines, and merging their rare words was a sixth of a first
# recall. At most COUNTS_KEPT words; written back once KEEP_AFTER new ones were merged.
COUNTS_KEPT = 50_000
KEEP_AFTER = 64
_cache_dir: Path | None = None


class _BPE:
    """tiktoken's byte-pair encoding (encode_ordinary), for counting and cutting text."""

    def __init__(
        self,
        name: str,
        ranks: dict[bytes, int],
        pattern: Any,
        ascii_pattern: re.Pattern[str],
        letters_pattern: re.Pattern[str] | None = None,
    ) -> None:
        self.name = name
        self.ranks = ranks
        # the full pattern as source text until text the ASCII pattern cannot split comes:
        # importing `regex` and compiling it cost ~20 ms, a tenth of a hook's process
        self._pattern = pattern
        # Most of what recall counts is ASCII (or ASCII and PLAIN_PUNCTUATION), where `re`
        # splits the same words ~3x faster than `regex` with its Unicode property tables.
        self.ascii_pattern = ascii_pattern
        # and beyond ASCII, text of letters, marks, symbols and punctuation (names like
        # José, CJK, emoji) by a `re` pattern too, where the encoding's classes allow it
        self.letters_pattern = letters_pattern
        self._counts: dict[str, int] = {}
        self._kept_read = False  # the counts kept by earlier processes, merged in once
        self._merged: dict[str, int] = {}  # words of 2+ tokens this process merged
        self._split: dict[str, list[bytes]] = {}  # words not in the table -> their tokens
        self._words: dict[str, list[str]] = {}  # texts lately split -> their words

    @property
    def pattern(self) -> Any:
        """tiktoken's pre-tokenizer pattern, compiled with `regex` (\\p{L}, possessives)."""
        if isinstance(self._pattern, str):
            import regex

            self._pattern = regex.compile(self._pattern)
        return self._pattern

    def words(self, text: str) -> list[str]:
        """The pre-tokenizer's words of `text`. The texts lately split are kept: recall
        bounds a line, then counts it, and cuts what it counted (the split is a tenth of a
        count), and a resident process bounds the same lines prompt after prompt."""
        got = self._words.get(text)
        if got is None:
            if text.isascii() or _not_plain(text) is None:
                got = self.ascii_pattern.findall(text)
            elif self.letters_pattern is not None and _letters_only(text):
                got = self.letters_pattern.findall(text)
            else:
                got = self.pattern.findall(text)
            if len(self._words) >= WORDS_KEPT:
                self._words.clear()
            self._words[text] = got
        return got

    def _merge(self, piece: bytes) -> list[bytes]:
        # Merge the adjacent pair with the lowest rank until none is in the table; ties go
        # to the leftmost pair, exactly as tiktoken's _byte_pair_merge does. Only the two
        # pairs beside a merge change, so only those are looked up again, and the lowest
        # rank is found by min() in C (a name or a pasted log line is tens of bytes).
        get = self.ranks.get
        parts = [_BYTE[b] for b in piece]
        none = _NO_RANK
        pair = [get(a + b, none) for a, b in itertools.pairwise(parts)]
        while pair:
            best = min(pair)
            if best == none:
                break
            i = pair.index(best)  # the leftmost of equal ranks
            parts[i : i + 2] = [parts[i] + parts[i + 1]]
            del pair[i]
            if i < len(pair):
                pair[i] = get(parts[i] + parts[i + 1], none)
            if i > 0:
                pair[i - 1] = get(parts[i - 1] + parts[i], none)
        return parts

    def pieces(self, text: str) -> list[bytes]:
        """The tokens of `text`, as the bytes each one stands for."""
        out: list[bytes] = []
        ranks = self.ranks
        split = self._split
        for word in self.words(text):
            b = word.encode("utf-8", "surrogatepass")
            if b in ranks:
                out.append(b)
                continue
            parts = split.get(word)
            if parts is None:
                parts = self._merge(b)
                self._keep_split(word, parts)
            out.extend(parts)
        return out

    def _keep_split(self, word: str, parts: list[bytes]) -> None:
        # recall counts a turn, then cuts it: the words count met are split once
        if len(self._split) > 20_000:
            self._split.clear()
        self._split[word] = parts

    def count(self, text: str) -> int:
        # Per pre-tokenized word, its token count, keyed by the str itself: recall counts
        # the same names, paths and phrasing many times over, and a text whose every word
        # was seen before is summed in C without encoding anything.
        words = self.words(text)
        seen = self._counts
        try:
            return sum(map(seen.__getitem__, words))
        except KeyError:
            pass
        if not self._kept_read:
            self._read_kept()
        ranks = self.ranks
        n = 0
        for word in words:
            k = seen.get(word)
            if k is None:
                b = word.encode("utf-8", "surrogatepass")
                if b in ranks:
                    k = 1
                else:
                    parts = self._merge(b)
                    self._keep_split(word, parts)
                    k = len(parts)
                    if len(self._merged) < COUNTS_KEPT:
                        self._merged[word] = k
                if len(seen) > 50_000:
                    seen.clear()
                seen[word] = k
            n += k
        return n

    def _read_kept(self) -> None:
        self._kept_read = True
        path = _counts_file(self.name)
        if path is None:
            return
        try:
            from memctl.core.localstate import read_bounded_bytes

            got = marshal.loads(read_bounded_bytes(path, 64 << 20))
        except (OSError, EOFError, ValueError, TypeError):
            return
        # memctl wrote it, but a damaged (or planted) one must not crash a count or make
        # a word cost less than a merge can: every entry is checked, then it is dropped
        if isinstance(got, dict) and all(
            type(k) is str and type(v) is int and 1 < v <= len(k.encode("utf-8", "surrogatepass"))
            for k, v in got.items()
        ):
            got.update(self._counts)
            self._counts = got

    def keep_counts(self) -> None:
        """Write the words merged here back beside the table, with those kept before."""
        if len(self._merged) < KEEP_AFTER:
            return
        path = _counts_file(self.name)
        if path is None:
            return
        if not self._kept_read:
            self._read_kept()
        kept = {w: k for w, k in self._counts.items() if k > 1}
        if len(kept) > COUNTS_KEPT:
            kept = dict(itertools.islice(kept.items(), len(kept) - COUNTS_KEPT, None))
        self._merged = {}
        try:
            from memctl.core.store import atomic_write

            atomic_write(path, marshal.dumps(kept), durable=False)  # a cache: no fsync
        except OSError:
            pass  # a read-only vault only loses the speed-up

    def lower_bound(self, text: str) -> int:
        """At most `count(text)`, and no word merged: a word counted before counts as it
        did, any other as 1 if the table holds it whole, else 2 (a word not in the table
        is at least two bytes, and merging never ends in one part that is not a token)."""
        if not self._kept_read:
            self._read_kept()
        seen = self._counts
        ranks = self.ranks
        n = 0
        for word in self.words(text):
            k = seen.get(word)
            if k is None:
                k = 1 if word.encode("utf-8", "surrogatepass") in ranks else 2
            n += k
        return n

    def prefix(self, text: str, n: int) -> bytes:
        """The bytes of the first `n` tokens of `text`: `b"".join(self.pieces(text)[:n])`,
        with only the word the cut falls in merged. A word counted before (here, or by an
        earlier process: `keep_counts`) is taken whole by its count; cutting a long turn
        merged every word of it, a tenth of a first recall."""
        if not self._kept_read:
            self._read_kept()
        seen = self._counts
        ranks = self.ranks
        out: list[bytes] = []
        left = n
        for word in self.words(text):
            if left <= 0:
                break
            b = word.encode("utf-8", "surrogatepass")
            k = seen.get(word)
            if k is None and b in ranks:
                k = 1
            if k is not None and k <= left:
                out.append(b)
                left -= k
                continue
            parts = self._split.get(word)
            if parts is None:
                parts = [b] if b in ranks else self._merge(b)
                self._keep_split(word, parts)
            out.extend(parts[:left])
            left -= len(parts)
        return b"".join(out)

    def encode(self, text: str) -> list[int]:
        return [self.ranks[p] for p in self.pieces(text)]


def bundled_table(name: str = DEFAULT_ENCODING) -> Path | None:
    """The BPE table litellm ships for `name`, if it is installed; litellm is not imported."""
    try:
        spec = importlib.util.find_spec("litellm")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    key = hashlib.sha1(_BLOB.format(name).encode()).hexdigest()
    for base in spec.submodule_search_locations:
        cand = Path(base) / "litellm_core_utils" / "tokenizers" / key
        if cand.is_file():
            return cand
    return None


def has_cache_dir() -> bool:
    """Has a caller said where the parsed table may be kept (see `use_cache_dir`)?"""
    return _cache_dir is not None


def use_cache_dir(path: Path | None) -> None:
    """Where a parsed copy of the table may be kept (a vault's git-ignored .memctl/cache).

    Parsing 100k base64 lines costs ~80 ms per process; loading the kept copy ~30 ms, and
    the hook pays this on every prompt. Without a cache dir nothing is written.
    """
    global _cache_dir
    _cache_dir = path


def _cache_file(name: str, sha: str) -> Path | None:
    if _cache_dir is None:
        return None
    # marshal's format belongs to the Python version; the table is fixed by its hash
    return (
        _cache_dir / f"bpe-{name}-{sha[:16]}-py{sys.version_info[0]}{sys.version_info[1]}.marshal"
    )


def _counts_file(name: str) -> Path | None:
    spec = _SPECS.get(name)
    table = _cache_file(name, spec["sha256"]) if spec is not None else None
    return table.with_name("counts-" + table.name.removeprefix("bpe-")) if table else None


def keep_counts() -> None:
    """Keep the multi-token words this process counted for the next one (see COUNTS_KEPT)."""
    for enc in list(_cache.values()):
        if enc is not None:
            enc.keep_counts()


def _cached_ranks(name: str, sha: str) -> dict[bytes, int] | None:
    path = _cache_file(name, sha)
    if path is None:
        return None
    try:
        from memctl.core.localstate import read_bounded_bytes

        keys = marshal.loads(read_bounded_bytes(path, 64 << 20))  # a pipe there: passed over
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if (
        not isinstance(keys, list)
        or len(keys) < 256
        or not all(isinstance(k, bytes) for k in keys[:256])
    ):
        return None
    return dict(zip(keys, range(len(keys)), strict=True))


def _keep_ranks(name: str, sha: str, ranks: dict[bytes, int]) -> None:
    path = _cache_file(name, sha)
    if path is None or list(ranks.values())[-1] != len(ranks) - 1:
        return
    try:
        from memctl.core.store import atomic_write

        atomic_write(path, marshal.dumps(list(ranks)))
    except OSError:
        pass  # a read-only vault only loses the speed-up


def _load(name: str) -> _BPE | None:
    """The encoder for `name` from the bundled table, or None when that cannot be done."""
    spec = _SPECS.get(name)
    path = bundled_table(name)
    if spec is None or path is None:
        return None
    if importlib.util.find_spec("regex") is None:
        return None
    pattern = spec["pat_str"]  # compiled when first needed (_BPE.pattern)
    ascii_pattern = re.compile(spec["ascii_pat"])
    letters = spec.get("letters_pat")
    letters_pattern = None if letters is None else re.compile(letters)
    ranks = _cached_ranks(name, spec["sha256"])
    if ranks is not None:
        return _BPE(name, ranks, pattern, ascii_pattern, letters_pattern)
    data = path.read_bytes()
    if hashlib.sha256(data).hexdigest() != spec["sha256"]:
        return None  # a damaged or different table would count wrong: estimate instead
    lines = data.split(b"\n")
    if lines and not lines[-1]:
        lines.pop()
    a2b = binascii.a2b_base64
    # The tables list tokens in rank order (line i has rank i); check the ends, then trust it.
    if not lines or int(lines[0].split()[1]) != 0 or int(lines[-1].split()[1]) != len(lines) - 1:
        ranks = {a2b(tok): int(r) for tok, r in (line.split() for line in lines)}
    else:
        ranks = {a2b(line[: line.index(b" ")]): i for i, line in enumerate(lines)}
    _keep_ranks(name, spec["sha256"], ranks)
    return _BPE(name, ranks, pattern, ascii_pattern, letters_pattern)


def encoding(name: str = DEFAULT_ENCODING) -> _BPE | None:
    """The encoder for `name` (built once per process), or None."""
    with _lock:
        if name not in _cache:
            _cache[name] = _load(name)
        return _cache[name]


def method(name: str = DEFAULT_ENCODING) -> str:
    """How `count` counts: `bpe:<encoding>` or `estimate:<n> bytes/token`."""
    return f"bpe:{name}" if encoding(name) is not None else _estimate_label()


def _estimate_label() -> str:
    return f"estimate:{ESTIMATE_BYTES_PER_TOKEN} bytes/token"


def estimate(text: str) -> int:
    """The documented fallback: UTF-8 bytes / ESTIMATE_BYTES_PER_TOKEN, rounded up."""
    return math.ceil(len(text.encode("utf-8", "surrogatepass")) / ESTIMATE_BYTES_PER_TOKEN)


def upper_bound(text: str) -> int:
    """Never fewer tokens than this: a byte-level BPE token covers at least one byte."""
    return len(text.encode("utf-8", "surrogatepass"))


def lower_bound(text: str, name: str = DEFAULT_ENCODING) -> int:
    """Never more tokens than `count` says, at a fraction of its cost for words it has not
    counted yet: enough to refuse what cannot fit without tokenizing all of it."""
    if not text:
        return 0
    enc = encoding(name)
    return estimate(text) if enc is None else enc.lower_bound(text)


def count(text: str, name: str = DEFAULT_ENCODING) -> int:
    """Tokens in `text` (special-token strings count as plain text)."""
    if not text:
        return 0
    enc = encoding(name)
    return estimate(text) if enc is None else enc.count(text)


def truncate(text: str, limit: int, name: str = DEFAULT_ENCODING, marker: str = "…") -> str:
    """`text` cut to at most `limit` tokens (marker included), on a character boundary."""
    if limit <= 0:
        return ""
    if count(text, name) <= limit:
        return text
    room = max(limit - count(marker, name), 0)
    enc = encoding(name)
    if enc is None:
        raw = text.encode("utf-8")[: room * ESTIMATE_BYTES_PER_TOKEN]
    else:
        raw = enc.prefix(text, room)
    # a token can end inside a multi-byte character: drop the partial character
    cut = raw.decode("utf-8", "ignore").rstrip()
    while cut and count(cut + marker, name) > limit:
        cut = cut[:-1].rstrip()
    return cut + marker
