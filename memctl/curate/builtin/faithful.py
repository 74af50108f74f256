"""Is a third-person rewrite still the person's sentence? A check, word by word.

The offline curator rewrites "I rely on X" as "Calvin relies on X" with regular expressions
that never saw most sentences they meet, so it must not write what it cannot get right
("Calvin rely ons X", "Evan doeses ...", "Dana's team's team", "At Zalando they decided").
A rewrite passes only when every word it changed is a known rewrite: a first- or second-
person word that became a name, "they"/"their" after the name, an auxiliary that agrees, or a
verb given its third-person ending by `conj` (a verb, not a preposition). Everything else is
kept word for word. A rewrite that fails is not written: the caller keeps the person's words
verbatim, with who said them (`verbatim`), which is true and cites itself.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from difflib import SequenceMatcher
from itertools import pairwise

from memctl.curate.builtin.lexicon import table
from memctl.curate.builtin.resolution import conj

# The person's own words a rewrite may replace or drop.
_PERSON = frozenset(
    "i i'm im i've ive i'd i'll me my mine myself we we're we've we'll we'd our ours "
    "ourselves us you you're you've you'll you'd your yours yourself yourselves let's lets "
    "let".split()
)
# Auxiliaries, which agree with whatever subject they get ("we are" -> "Acme is").
_AUX = frozenset(
    "am is are was were have has do does don't doesn't dont haven't hasn't aren't isn't "
    "wasn't weren't will would not".split()
)
# What a rewrite may write in their place, besides a name.
_THIRD = frozenset(
    "they they're they've they'd they'll them their theirs themself themselves it its to "
    "and others".split()
)
_ANAPHOR = frozenset("they they're they've they'd they'll them their theirs themself".split())
_SUBJECTS = frozenset("i i'm im i've ive i'd i'll we we're we've we'll we'd you".split())
_TOKEN = re.compile(r"[\w'’-]+|[^\w\s]")
_NAME = "\x00"  # a name phrase, as one token


def _tokens(text: str) -> list[str]:
    return [t.lower().replace("’", "'") for t in _TOKEN.findall(text)]


def _named(tokens: list[str], names: list[list[str]]) -> list[str]:
    """Each name phrase ("Dana's team", "the assistant") as one token, "'s" kept on it."""
    out: list[str] = []
    i = 0
    while i < len(tokens):
        for name in names:
            k = len(name)
            head, last = tokens[i : i + k - 1], tokens[i + k - 1] if i + k - 1 < len(tokens) else ""
            if head == name[:-1] and last in (name[-1], name[-1] + "'s"):
                out.append(_NAME + ("'s" if last.endswith("'s") and last != name[-1] else ""))
                i += k
                break
        else:
            out.append(tokens[i])
            i += 1
    return out


def _agrees(old: str, new: str) -> bool:
    """`new` is `old` given its third-person ending, and `old` is a verb that can take one."""
    if old in table("function_words") or not old.replace("'", "").isalpha():
        return False
    if old.endswith("es") and new.startswith(old):
        return False  # "does" -> "doeses": an ending on an ending
    return new in (conj(old), conj(old, True))


def _changes_ok(a: list[str], b: list[str], kept: frozenset[str]) -> bool:
    """One changed stretch: what went is the person's words, what came is a known rewrite.
    `kept` are the words of the name phrases: "our team" -> "the team" keeps "team"."""
    spoken = _PERSON | _AUX | kept
    if any(t not in spoken and t != _NAME for t in a if t not in b):
        # a content word went; it may only have changed into its agreeing form
        left = [t for t in a if t not in spoken and t not in b]
        news = [t for t in b if t not in a and t not in _THIRD and t not in _AUX]
        news = [t for t in news if not t.startswith(_NAME)]
        return len(left) == len(news) and all(
            _agrees(o, n) for o, n in zip(left, news, strict=True)
        )
    return all(t in a or t in _THIRD or t in _AUX or t.startswith(_NAME) for t in b)


def faithful(before: str, after: str, names: Iterable[str], named: bool = False) -> bool:
    """Is `after` the sentence `before` in the third person, every other word kept?

    `names` are the phrases the rewrite may put in ("Dana", "Dana's team", "Claude");
    `named` says the claim names the speaker before `after` begins ("Dana asked Claude to").
    """
    phrases = sorted({n.strip() for n in names if n.strip()}, key=len, reverse=True)
    split = [_tokens(n) for n in phrases]
    a, b = _named(_tokens(before), split), _named(_tokens(after), split)
    kept = frozenset(w.removesuffix("'s") for n in split for w in n)
    subjects: list[int] = []  # where in `after` a name stands for the person's "I", "we", "you"
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            continue
        if not _changes_ok(a[i1:i2], b[j1:j2], kept):
            return False
        # word for word when the stretch kept its length ("you I" -> "Maria they"), else
        # the name that opens it ("I'm" -> "Dana is")
        same = i2 - i1 == j2 - j1
        pairs = list(zip(range(i1, i2), range(j1, j2), strict=True)) if same else [(i1, j1)]
        subjects += [j for i, j in pairs if j < j2 and _subject(a, i) and b[j] == _NAME]
    return _reads_right(a, b, named) and all(_verb_next(b, j) for j in subjects)


def _subject(a: list[str], i: int) -> bool:
    """Is `a[i]` a subject pronoun: "I", "we", or a "you" that opens a clause?"""
    if a[i] not in _SUBJECTS:
        return False
    opens = ("and", "but", "so", "that", "if", "when", "because", "or")
    return a[i] != "you" or i == 0 or not a[i - 1].isalpha() or a[i - 1] in opens


def _reads_right(a: list[str], b: list[str], named: bool) -> bool:
    """No "they" before anyone is named, no word or possessive said twice that the person
    did not say twice."""
    seen = named
    for i, t in enumerate(b):
        if t.startswith(_NAME):
            seen = True
        elif t in _ANAPHOR and t not in a[: i + 1] and not seen:
            return False  # "At Zalando they decided": they who?
    for x, y in pairwise(b):
        if x == y and x.isalpha() and (x, y) not in pairwise(a):
            return False  # "Claude Claude could"
    possessive = [(x[:-2], y) for x, y in pairwise(b) if x.endswith("'s")]
    doubled = any(x == y or (x == _NAME and y == "team") for x, y in possessive)
    return not doubled or any(t.endswith("'s") for t in a)  # not "Dana's team's team"


def _verb_next(b: list[str], j: int) -> bool:
    """A name put where the person said "I", "we" or a leading "you" is followed by a verb,
    not by "the" or "on" ("Marco suggested that the assistant the logs")."""
    j += 1
    while j < len(b) and (b[j].endswith("ly") or b[j] in table("plain_adverbs")):
        j += 1
    nxt = b[j] if j < len(b) else ""
    return nxt not in table("function_words") or nxt in ("and", "or", "not")


def verbatim(who: str, words: str) -> str:
    """The person's words as they said them: `Dana said: "…"`."""
    return f'{who} said: "{words.strip()}"'
