"""One point, one line: the claims of a session that say the same thing become one.

A session says most things more than once. The agent finds the cause ("`SystemTranscriptEntry`
has a `content` field, not `message`"), changes the code, and its closing summary reports the
fix ("System messages were trying to access a `message` field instead of `content` - Fixed
..."). Three lines in the session's note would say one point three times, and the reader
would have to work out that they do. They become one line: the last saying, which is the
session's end state (the fix supersedes the finding that led to it), citing every turn that
said it, so each of them is still one click away.

Two claims say the same point when they name the same thing in the code (a code span, a file,
an identifier) and most of their other content words are the same. Only findings, problems
and outcomes fold, and only within one note: a command, a commit, a request or a decision is
its own point by construction, and a project's gotcha is kept beside the session's fix.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache

from memctl.core.lazyre import lazy
from memctl.curate import Proposal, Quote
from memctl.curate.builtin.lexicon import table

# The kinds of claim that fold (see the module docstring).
FOLDS = frozenset(("outcome", "problem", "edited", "fact"))
SAME = 0.3  # share of content words (Dice) two claims about the same thing must have

_NAMED = lazy(
    r"`([^`\n]+)`|\b[\w-]+\.(?:py|js|ts|tsx|jsx|json|toml|ya?ml|md|html|css|go|rs|rb|sh)\b|"
    r"\b[a-z]+_[a-z_]+\b|\b[a-z]+[A-Z]\w+\b|\b[A-Z][a-z]+[A-Z]\w+\b|\b\w+\(\)"
)
_WORD = lazy(r"[a-z0-9]+")


def _named(text: str) -> frozenset[str]:
    """What the claim names in the code: code spans, files, identifiers (lower case)."""
    return frozenset(
        (m.group(1) or m.group(0)).strip().lower().rstrip("()") for m in _NAMED.finditer(text)
    )


@cache
def _skip() -> frozenset[str]:
    return table("function_words") | table("change_verbs")


def content(text: str) -> frozenset[str]:
    """Content words, without the words every report of a change uses ("fixed", "added")."""
    skip = _skip()
    words = (w for w in _WORD.findall(text.lower()) if len(w) > 2 and w not in skip)
    return frozenset(re.sub(r"(?:ed|ing|es|s)$", "", w) or w for w in words)


Key = tuple[frozenset[str], frozenset[str]]  # (what it names, its content words)


def _same(a: Key, b: Key) -> bool:
    if not a[0] & b[0]:
        return False
    both = len(a[1]) + len(b[1])
    return bool(both) and 2 * len(a[1] & b[1]) / both >= SAME


def fold(claims: list[tuple[str, Proposal]]) -> list[Proposal]:
    """The claims as (kind, proposal) pairs, each point once: see the module docstring."""
    keys = [(_named(p.text), content(p.text)) for _, p in claims]
    group: list[int] = list(range(len(claims)))  # each claim's representative
    for i, (kind, p) in enumerate(claims):
        if kind not in FOLDS:
            continue
        for j in range(i):
            k, q = claims[j]
            if (
                group[j] == j
                and k in FOLDS
                and (q.store, q.note) == (p.store, p.note)
                and any(_same(keys[i], keys[m]) for m in range(i) if group[m] == j)
            ):
                group[i] = j
                break
    out: list[Proposal] = []
    for i, (_, p) in enumerate(claims):
        if group[i] != i:
            continue
        said = [claims[m][1] for m in range(len(claims)) if group[m] == i]
        if len(said) == 1:
            out.append(p)
            continue
        last = max(said, key=lambda q: max(c.turn for c in q.citations))
        cites: list[Quote] = []
        for q in sorted(said, key=lambda q: max(c.turn for c in q.citations)):
            cites += [c for c in q.citations if c not in cites]
        out.append(replace(last, citations=tuple(cites)))
    return out
