"""Who said what, in whose words: the speaker's voice rewritten into the third person.

A claim must read well out of context, so "I prefer X" becomes "Dana prefers X", "you" the
person addressed, "we" the team (or the speaker's company), and "yesterday" the date it was.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date, timedelta

from memctl.core.lazyre import lazy
from memctl.curate.builtin.lexicon import (
    COMMON_VERBS,
    IRREGULAR,
    MODALS,
    PAST_IRREGULAR,
    alternation,
    table,
)

# An adverb in -ly ("really", "usually"), unless a preposition or article follows it: then it
# is the verb ("I rely on", "I apply for", "I reply to"), and the rewrite must conjugate it.
LY = rf"\w+ly(?! (?:{alternation('function_words')})\b)"

# Spans that are code, names of things or someone's exact words: pronouns in them stay as typed
# ("danieldemmel.me" is a domain, not "me"; `my_var` is code; "I said 'you'" quotes someone;
# "us-east-1" and "my-app" are names, hyphen and all).
PROTECTED = lazy(
    r"`[^`]*`|\"[^\"]*\"|“[^”]*”|'[^'\s][^']*'(?!\w)|https?://\S+|\S+@\S+|"
    r"[\w~.-]*[/\\][\w~./\\-]*|\w+(?:[._:-]\w+)+|@\S+|\w*[A-Z]\w*[A-Z]\w*"
)


def prose_only(text: str, fn: Callable[[str], str]) -> str:
    """Apply `fn` to the plain-prose stretches of `text`, leaving protected spans as typed."""
    out: list[str] = []
    last = 0
    for m in PROTECTED.finditer(text):
        out.append(fn(text[last : m.start()]))
        out.append(m.group())
        last = m.end()
    out.append(fn(text[last:]))
    return "".join(out)


def conj(verb: str, habitual: bool = False) -> str:
    """Third person singular of an English verb as people type it ("write" -> "writes").

    `habitual` (after "always", "never", ...) means present tense even for "set" or "put".
    """
    low = verb.lower()
    if low in IRREGULAR:
        return IRREGULAR[low]
    past = low in PAST_IRREGULAR or (low[:2] in ("re", "un") and low[2:] in PAST_IRREGULAR)
    if (
        low in MODALS
        or (past and not habitual)
        or (low.endswith("ed") and not low.endswith("eed"))
        or "'" in low
        or "’" in low
        or not low.isalpha()
    ):
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


# ---- the speaker's first person ---------------------------------------------------------------

_LEAD = {
    "i'm": "is",
    "i am": "is",
    "i've": "has",
    "i have": "has",
    "i'd": "would",
    "i'll": "will",
    "i was": "was",
    "i don't": "doesn't",
    "i do not": "does not",
    "i haven't": "hasn't",
    "i have not": "has not",
    "i'm not": "is not",
    "i wasn't": "wasn't",
}
_LEAD_RE = lazy(
    r"\b(?P<head>I(?:['’](?:m|ve|d|ll)(?: not)?| am(?: not)?| have(?: not)?| was(?:n['’]t)?|"
    r" haven['’]t| don['’]t| do not)?)(?![\w'’])(?P<rest> (?P<adv>(?:(?:just|also|still|really|"
    r"recently|finally|actually|already|always|never|often|usually|sometimes|even|only|"
    r"totally|definitely|very much|so much|" + LY + r") )*)(?P<verb>[\w'’-]+))?",
)
_NEGATED = {"don't": "doesn't", "haven't": "hasn't", "aren't": "isn't", "do": "does"}
_INNER = (
    (r"\bI['’]m\b", "they're"),
    (r"\bI am\b", "they are"),
    (r"\bI was\b", "they were"),
    (r"\bI['’]ve\b", "they've"),
    (r"\bI['’]d\b", "they'd"),
    (r"\bI['’]ll\b", "they'll"),
    (r"\bI\b", "they"),
    (r"\bmyself\b", "themself"),
    (r"\bme\b", "them"),
    (r"\bmine\b", "theirs"),
)
_INNER_RE = tuple((lazy(p), r) for p, r in _INNER)
_MY = lazy(r"(?<![\w-])[Mm]y(?![\w-])")
_YOU = lazy(r"\b(?:[Yy]ou(?:['’](?:re|ve|ll|d)| are| were| have| do)?|[Yy]our(?:s|self)?)\b")
_WE = lazy(r"\b(?:[Ww]e(?:['’](?:re|ve|ll|d))?|[Oo]ur(?:s|selves)?|us)\b")


_MY_AND_I = lazy(r"^(?P<pre>(?:[\w'’,-]+ ){0,3}?)[Mm]y (?P<np>[\w'’ -]{1,30}?) and I\b")


def speaker_voice(text: str, speaker: str) -> str:
    """First person -> third: the first mention is the speaker's name, the rest 'they'."""
    m = _MY_AND_I.match(text)
    if m:  # "My colleagues and I went" -> "John and their colleagues went"
        text = f"{m.group('pre')}{speaker} and their {m.group('np')}{text[m.end() :]}"
        return speaker_voice_rest(text)
    out = text
    m = _outside(_LEAD_RE, out)
    my = _outside(_MY, out)
    if m and (not my or m.start() < my.start()):
        head = m.group("head").replace("’", "'")
        key = head.lower()
        if key in _LEAD:
            repl = f"{speaker} {_LEAD[key]}"
            if m.group("rest"):
                repl += m.group("rest")
        elif m.group("verb"):
            verb = m.group("verb")
            habitual = bool(
                re.search(r"always|never|usually|often|sometimes", m.group("adv") or "")
            )
            low = verb.lower().replace("’", "'")
            # "I do" -> "does" agrees already: conjugating it again wrote "doeses"
            verb = _NEGATED[low] if low in _NEGATED else conj(verb, habitual)
            repl = f"{speaker} {m.group('adv') or ''}{verb}"
        else:
            repl = speaker
        out = out[: m.start()] + repl + out[m.end() :]
        tail_at = m.start() + len(repl)
        out = out[:tail_at] + second_verb(out[tail_at:])
    elif my:
        out = out[: my.start()] + f"{speaker}'s" + out[my.end() :]
    return speaker_voice_rest(out)


def _outside(pat: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The first match of `pat` that is prose: not inside code, a quote, a path or a name."""
    spans = [m.span() for m in PROTECTED.finditer(text)]
    for m in pat.finditer(text):
        if not any(a <= m.start() < b for a, b in spans):
            return m
    return None


def speaker_voice_rest(text: str) -> str:
    """First person after the speaker is named: "they", "them", "their" (in prose only)."""

    def plain(seg: str) -> str:
        for pat, rep in _INNER_RE:
            seg = pat.sub(rep, seg)
        return _MY.sub("their", seg)

    return prose_only(text, plain)


def addressee_voice(text: str, addressee: str) -> str:
    """'you' and 'your' -> the person the speaker was talking to."""

    def sub(m: re.Match[str]) -> str:
        w = " ".join(m.group(0).lower().replace("’", "'").split())
        return {
            "you're": f"{addressee} is",
            "you are": f"{addressee} is",
            "you were": f"{addressee} was",
            "you have": f"{addressee} has",
            "you do": f"{addressee} does",
            "you've": f"{addressee} has",
            "you'll": f"{addressee} will",
            "you'd": f"{addressee} would",
            "your": f"{addressee}'s",
            "yours": f"{addressee}'s",
            "yourself": addressee,
        }.get(w, addressee)

    return prose_only(text, lambda seg: _YOU.sub(sub, seg))


def group_voice(text: str, we: str, mine: str | None = None) -> str:
    """'we', 'our', 'us' -> the group the speaker belongs to (the team, or "Dana and others")."""

    named = False

    def sub(m: re.Match[str]) -> str:
        nonlocal named
        w = m.group(0).lower().replace("’", "'")
        if named:  # the group is named once; after that it is "they"
            return {"our": "their", "ours": "theirs", "us": "them", "we're": "they're",
                    "we've": "they've", "we'll": "they'll", "we'd": "they'd",
                    "ourselves": "themselves"}.get(w, "they")  # fmt: skip
        named = w not in ("us", "ourselves")
        if w in ("our", "ours"):
            return mine or f"{we}'s"
        if w == "ourselves":
            return "themselves"
        if w == "we're":
            return f"{we} are"  # "Acme are" is made singular below when "we" is one subject
        if w == "we've":
            return f"{we} have"
        if w == "we'll":
            return f"{we} will"
        if w == "we'd":
            return f"{we} would"
        return "them" if w == "us" else we

    out = prose_only(text, lambda seg: _WE.sub(sub, seg))
    if " and " in we or we.lower() in ("they", "the team") or not named:
        return out
    # One team or company is one subject: "Acme always charts", "Dana's team is" (not "are").
    return _agree_after(out, we)


_NOT_VERBS = table("we_not_verbs")
_PLAIN_ADVERBS = "|".join(sorted(table("plain_adverbs"), key=len, reverse=True))
_SINGULAR = {"are": "is", "were": "was", "have": "has", "do": "does", "don't": "doesn't",
             "haven't": "hasn't", "aren't": "isn't", "weren't": "wasn't"}  # fmt: skip


def _agree_after(text: str, subject: str) -> str:
    """The verb after `subject` in the third person singular, adverbs between kept."""
    pat = re.compile(
        rf"(?<![\w'’]){re.escape(subject)} (?P<adv>(?:(?:usually|really|{_PLAIN_ADVERBS}|"
        rf"{LY}) )*)(?P<verb>[a-z]+?(?:n['’]t)?)(?![\w'’])"
    )

    def fix(m: re.Match[str]) -> str:
        verb = m.group("verb")
        low = verb.replace("’", "'")
        if low in _SINGULAR:
            new = _SINGULAR[low]
        elif low in MODALS or low in _NOT_VERBS or "'" in low:
            new = verb
        else:
            habitual = bool(re.search(r"always|never|usually|often", m.group("adv")))
            new = conj(verb, habitual)
        return f"{subject} {m.group('adv')}{new}"

    return pat.sub(fix, text)


def has_addressee(text: str) -> bool:
    return bool(_YOU.search(text))


def has_group(text: str) -> bool:
    return bool(_WE.search(text))


# ---- relative time ----------------------------------------------------------------------------

_MONTHS = (
    "January February March April May June July August September October November December"
).split()
_DAYS = "monday tuesday wednesday thursday friday saturday sunday".split()
_DAY_ABBR = {d[:3]: i for i, d in enumerate(_DAYS)}
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
            "a couple of": 2, "a few": 3, "few": 3, "several": 3}  # fmt: skip
_WHEN = lazy(
    r"\b(?:(?P<rel>last|this|next|coming|past) (?P<unit>week|weekend|month|year|summer|winter|"
    r"spring|fall|autumn|(?:mon|tue|wed|thu|fri|sat|sun)[a-z]*)|"
    r"(?:about |around |roughly |nearly |almost |over )?"
    r"(?P<n>\d+|a couple of|a few|few|several|an?|one|two|three|four|five|six) "
    r"(?P<unit2>days?|weeks?|months?|years?) ago|"
    r"(?P<word>yesterday|today|tonight|tomorrow|the other day|the day before yesterday))\b",
    re.I,
)


def _month(d: date, delta: int) -> str:
    idx = d.year * 12 + d.month - 1 + delta
    return f"{_MONTHS[idx % 12]} {idx // 12}"


def anchor(text: str, said: date) -> str:
    """Relative time -> the date it meant on the day it was said ("yesterday" -> "on 2023-05-07").

    "Next quarter" means nothing a year later; the claim keeps the quote verbatim, and its
    text says the absolute date so it stays true when read in another year.
    """

    def sub(m: re.Match[str]) -> str:
        word = (m.group("word") or "").lower()
        if word:
            if word == "yesterday":
                return f"on {said - timedelta(days=1)}"
            if word == "the day before yesterday":
                return f"on {said - timedelta(days=2)}"
            if word in ("today", "tonight"):
                return f"on {said}"
            if word == "tomorrow":
                return f"on {said + timedelta(days=1)}"
            return f"shortly before {said}"
        if m.group("unit2"):
            n = _NUMBERS.get(m.group("n").lower()) or int(m.group("n"))
            unit = m.group("unit2").lower().rstrip("s")
            if unit == "day":
                return f"around {said - timedelta(days=n)}"
            if unit == "week":
                return f"around {said - timedelta(weeks=n)}"
            if unit == "month":
                return f"around {_month(said, -n)}"
            return f"around {said.year - n}"
        rel, unit = m.group("rel").lower(), m.group("unit").lower()
        step = -1 if rel in ("last", "past") else 1 if rel in ("next", "coming") else 0
        if unit == "week":
            return f"the week {'of' if step == 0 else 'before' if step < 0 else 'after'} {said}"
        if unit == "weekend":
            if step == 0:
                return f"the weekend after {said}"
            return f"the weekend {'before' if step < 0 else 'after'} {said}"
        if unit == "month":
            return f"in {_month(said, step)}"
        if unit == "year":
            return f"in {said.year + step}"
        if unit[:3] in _DAY_ABBR:
            wd = _DAY_ABBR[unit[:3]]
            if step <= 0:
                back = (said.weekday() - wd) % 7 or 7
                return f"on {said - timedelta(days=back)}"
            ahead = (wd - said.weekday()) % 7 or 7
            return f"on {said + timedelta(days=ahead)}"
        season = unit if unit != "autumn" else "fall"
        year = said.year + (step if step else 0)
        return f"in {season} {year}"

    return _WHEN.sub(sub, text)


def second_verb(text: str) -> str:
    """The verb after the first "and"/"or" agrees with the named subject too: "Dana writes
    tests and fix bugs" -> "... and fixes bugs" (common verbs only)."""
    return re.sub(
        r"\b(and|or) (\w+)\b",
        lambda k: (
            f"{k.group(1)} {conj(k.group(2), True)}"
            if k.group(2).lower() in COMMON_VERBS
            else k.group(0)
        ),
        text,
        count=1,
    )
