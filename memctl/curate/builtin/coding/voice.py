"""The human's words in the third person, touching prose only.

"I very much like it" becomes "Dana very much likes it"; "can you add X" becomes "asked Claude
to add X". Pronouns are rewritten only in plain words: never inside backticks, quotes, URLs,
paths, e-mail addresses or identifiers ("danieldemmel.me" stays as typed).
"""

from __future__ import annotations

import re

from memctl.core.lazyre import lazy
from memctl.curate.builtin.lexicon import COMMON_VERBS
from memctl.curate.builtin.resolution import conj, prose_only

_ADVERBS = (
    r"(?:(?:very much|really|just|also|still|actually|already|always|never|often|usually|"
    r"sometimes|only|even|kind of|sort of|somewhat|mostly|\w+ly) )*"
)
_SUBJECT = lazy(
    rf"^(?P<lead>I(?:['’](?:m|ve|d|ll))?|I am|I have|I was)\b(?P<adv> {_ADVERBS})?"
    r"(?P<verb>[\w'’-]+)?"
)
_AUX = {
    "i'm": "is", "i am": "is", "i've": "has", "i have": "has", "i'd": "would",
    "i'll": "will", "i was": "was",
}  # fmt: skip
_NEG = {"don't": "doesn't", "dont": "doesn't", "do": "does", "haven't": "hasn't", "am": "is"}
_WORDS = (
    (lazy(r"(?<![\w.@/-])I['’]m(?![\w.@/-])"), "they're"),
    (lazy(r"(?<![\w.@/-])I['’]ve(?![\w.@/-])"), "they've"),
    (lazy(r"(?<![\w.@/-])I['’]d(?![\w.@/-])"), "they'd"),
    (lazy(r"(?<![\w.@/-])I['’]ll(?![\w.@/-])"), "they'll"),
    (lazy(r"(?<![\w.@/-])I am(?![\w.@/-])"), "they are"),
    (lazy(r"(?<![\w.@/-])I(?![\w.@/'’-])"), "they"),
    (lazy(r"(?<![\w.@/-])[Mm]yself(?![\w.@/-])"), "themself"),
    (lazy(r"(?<![\w.@/-])[Mm]e(?![\w.@/-])"), "them"),
    (lazy(r"(?<![\w.@/-])[Mm]y(?![\w.@/-])"), "their"),
    (lazy(r"(?<![\w.@/-])[Mm]ine(?![\w.@/-])"), "theirs"),
    (lazy(r"(?<![\w.@/-])[Ww]e['’]re(?![\w.@/-])"), "they're"),
    (lazy(r"(?<![\w.@/-])[Ww]e['’]ve(?![\w.@/-])"), "they've"),
    (lazy(r"(?<![\w.@/-])[Ww]e(?![\w.@/'’-])"), "they"),
    (lazy(r"(?<![\w.@/-])[Oo]ur(?![\w.@/-])"), "their"),
    (lazy(r"(?<![\w.@/-])us(?![\w.@/-])"), "them"),
)


def subject(text: str, who: str) -> str:
    """ "I very much like X" -> "Dana very much likes X"; other sentences unchanged."""
    m = _SUBJECT.match(text)
    if not m:
        return text
    lead = m.group("lead").replace("’", "'").lower()
    adv = m.group("adv") or " "
    verb = m.group("verb") or ""
    rest = text[m.end() :]
    if lead in _AUX:
        return f"{who} {_AUX[lead]}{adv}{verb}{rest}".replace("  ", " ")
    low = verb.lower().replace("’", "'")
    if low in _NEG:
        return f"{who}{adv}{_NEG[low]}{rest}"
    habitual = bool(re.search(r"always|never|usually|often", adv))
    return f"{who}{adv}{conj(verb, habitual)}{rest}"


def third_person(text: str, who: str, agent: str) -> str:
    """The whole sentence in the third person: the speaker by name, "you" as the agent."""
    text = subject(text.strip(), who)

    def plain(seg: str) -> str:
        for pat, rep in _WORDS:
            seg = pat.sub(rep, seg)
        seg = re.sub(r"(?<![\w.@/-])[Yy]ou['’]re(?![\w.@/-])", f"{agent} is", seg)
        seg = re.sub(r"(?<![\w.@/-])[Yy]our(?![\w.@/-])", f"{agent}'s", seg)
        seg = re.sub(r"(?<![\w.@/-])[Yy]ou(?![\w.@/'’-])", agent, seg)
        seg = re.sub(r"(?<![\w.@/-])[Ll]et['’]s(?![\w.@/-])", "to", seg)
        return seg

    return prose_only(text, plain)


def base_form(word: str) -> str:
    """ "fixing" -> "fix", "making" -> "make": the verb after "would you mind"."""
    low = word.lower()
    if not low.endswith("ing") or len(low) < 5:
        return word
    stem = low[:-3]
    if len(stem) > 2 and stem[-1] == stem[-2] and stem[-1] not in "lsz":
        return stem[:-1]
    if stem + "e" in COMMON_VERBS or re.search(
        r"(?:[^aeiou][aeiou][cgksvz]|[^aeiou]at|ur|iz)$", stem
    ):
        return stem + "e"
    return stem
