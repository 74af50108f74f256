"""Words as recall compares them: stemmed exactly as the index stems them, stopwords out."""

from __future__ import annotations

import functools

# ---- words --------------------------------------------------------------------------------


_STOP_STEMS: set[str] | None = None


@functools.lru_cache(maxsize=8192)
def content_terms(text: str) -> frozenset[str]:
    """Content tokens, stemmed exactly as the index stems them, stopwords dropped.

    Cached: one recall compares the same claims and turns several times, and a long-lived
    process recalls the same notes prompt after prompt.
    """
    global _STOP_STEMS
    from memctl.index import analyze

    if _STOP_STEMS is None:
        from memctl.search import STOPWORDS

        _STOP_STEMS = {t for w in STOPWORDS for t in analyze(w)} | {"s", "t"}
    # set operations in C over the distinct tokens, not a Python test per token
    terms = set(analyze(text))
    terms -= _STOP_STEMS
    if terms and min(map(len, terms)) < 2:
        terms = {t for t in terms if len(t) > 1}
    return frozenset(terms)


# Words that frame a question rather than say what it is about ("what should I know about
# X", "tell me about X"); search's stopwords cover the rest. Dropped unless nothing is left.
_FRAMING = frozenset(
    "know tell need want think explain remember recall help please anything something thing "
    "things show give like get say said ask look find".split()
)
_FRAMING_STEMS: set[str] | None = None


def query_terms(query: str) -> frozenset[str]:
    global _FRAMING_STEMS
    from memctl.index import analyze

    if _FRAMING_STEMS is None:
        _FRAMING_STEMS = {t for w in _FRAMING for t in analyze(w)}
    terms = content_terms(query)
    return (terms - _FRAMING_STEMS) or terms


def plain(text: str) -> str:
    from memctl.notes import strip_links

    return " ".join(strip_links(text).split())


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def near_copy(kept: frozenset[str], new: frozenset[str], asked: frozenset[str], at: float) -> bool:
    """Whether `new` only repeats `kept`: most words shared, and none the query asks added.

    Word overlap alone folds "the alert migration uses Terraform" into "the alert migration"
    and so drops the very line a question about Terraform wants; the shorter line is kept
    only when the longer adds nothing asked.
    """
    return jaccard(kept, new) >= at and not ((new - kept) & asked)
