"""Words as recall compares them: stemmed exactly as the index stems them, stopwords out."""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable
from itertools import compress

# ---- words --------------------------------------------------------------------------------


_STOP_STEMS: set[str] | None = None


@functools.lru_cache(maxsize=8192)
def content_terms(text: str) -> frozenset[str]:
    """Content tokens, stemmed exactly as the index stems them, stopwords dropped.

    Cached: one recall compares the same claims and turns several times, and a long-lived
    process recalls the same notes prompt after prompt.
    """
    global _STOP_STEMS
    from memctl.index.schema import analyze

    if _STOP_STEMS is None:
        from memctl.index.search import STOPWORDS

        _STOP_STEMS = {t for w in STOPWORDS for t in analyze(w)} | {"s", "t"}
    # set operations in C over the distinct tokens, not a Python test per token;
    # `difference` walks the text's words, where `-=` would walk every stopword
    terms = frozenset(analyze(text)).difference(_STOP_STEMS)
    if terms and min(map(len, terms)) < 2:
        terms = frozenset(t for t in terms if len(t) > 1)
    return terms


def stop_stems() -> frozenset[str]:
    """The stems `content_terms` leaves out."""
    if _STOP_STEMS is None:
        content_terms("")  # fills _STOP_STEMS
    assert _STOP_STEMS is not None
    return frozenset(_STOP_STEMS)


def turn_counts(texts: list[str]) -> Counter[str]:
    """For each content term (as `content_terms` gives them), in how many of `texts` it is,
    with one analyzer call for all of them (memctl.index.token_counts). Stopwords and
    one-character tokens are taken out of the count once, not out of every text's set.
    (memctl.recall.termcache keeps a session's counts between asks.)
    """
    from memctl.index.schema import token_counts

    return content_counts(token_counts(texts))


def content_counts(counts: Counter[str]) -> Counter[str]:
    """`counts` of every token with stopwords and one-character tokens taken out, in place."""
    if _STOP_STEMS is None:
        content_terms("")  # fills _STOP_STEMS
    stop = _STOP_STEMS
    assert stop is not None
    for t in stop & counts.keys():
        del counts[t]
    keys = list(counts)
    for t in compress(keys, map((2).__gt__, map(len, keys))):  # one-character tokens, in C
        del counts[t]
    return counts


# Words that frame a question rather than say what it is about ("what should I know about
# X", "tell me about X"); search's stopwords cover the rest. Dropped unless nothing is left.
_FRAMING = frozenset(
    "know tell need want think explain remember recall help please anything something thing "
    "things show give like get say said ask look find".split()
)
_FRAMING_STEMS: set[str] | None = None


def query_terms(query: str) -> frozenset[str]:
    global _FRAMING_STEMS
    from memctl.index.schema import analyze

    if _FRAMING_STEMS is None:
        _FRAMING_STEMS = {t for w in _FRAMING for t in analyze(w)}
    terms = content_terms(query)
    return (terms - _FRAMING_STEMS) or terms


def plain(text: str) -> str:
    from memctl.core.notes import strip_links

    return " ".join(strip_links(text).split())


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    # |a | b| is |a| + |b| - |a & b|: the same integers, so the same float, one set fewer
    # (recall compares each claim with every line kept before it)
    if not a or not b:
        return 0.0
    shared = len(a & b)
    return shared / (len(a) + len(b) - shared)


_NEGATION = re.compile(
    r"\b(?:not|no|never|nothing|none|nobody|neither|nor|cannot|without)\b|n['’]t\b", re.IGNORECASE
)


@functools.lru_cache(maxsize=8192)
def negated(text: str) -> bool:
    """Whether a text says no to something: two lines with the same content words and
    different answers to this are opposites, not copies. Cached as `content_terms` is:
    recall asks both of each turn it weighs, prompt after prompt in a resident process."""
    return _NEGATION.search(text) is not None


def near_copy(kept: frozenset[str], new: frozenset[str], asked: frozenset[str], at: float) -> bool:
    """Whether `new` only repeats `kept`: most words shared, and none the query asks added.

    Word overlap alone folds "the alert migration uses Terraform" into "the alert migration"
    and so drops the very line a question about Terraform wants; the shorter line is kept
    only when the longer adds nothing asked.
    """
    a, b = len(kept), len(new)
    if a and b and min(a, b) / max(a, b) < at:
        # the overlap is at most the smaller set, the union at least the larger: jaccard
        # is at most this ratio (and rounding keeps the order), so below `at` too
        return False
    return jaccard(kept, new) >= at and not ((new - kept) & asked)


def near_copy_of(kept: Iterable[frozenset[str]], new: frozenset[str], asked: frozenset[str],
                 at: float) -> int:  # fmt: skip
    """The index of the first of `kept` that `new` is a `near_copy` of, else -1.

    `near_copy` over a list in one call: recall asks it of each claim against every claim
    kept before (~1,000 times a 100k recall), and a call per pair cost more than the test.
    The same comparisons in the same order, so the same answer.
    """
    b = len(new)
    for i, k in enumerate(kept):
        a = len(k)
        if a and b:
            if min(a, b) / max(a, b) < at:
                continue
            shared = len(k & new)
            score = shared / (a + b - shared)
        else:
            score = 0.0
        if score >= at and not ((new - k) & asked):
            return i
    return -1
