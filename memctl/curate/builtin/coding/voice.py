"""The human's words in the third person, touching prose only.

"I very much like it" becomes "Dana very much likes it"; "can you add X" becomes "asked Claude
to add X". Pronouns are rewritten only in plain words: never inside backticks, quotes, URLs,
paths, e-mail addresses or identifiers ("danieldemmel.me" stays as typed). A sentence-final
"me." is prose, though: a dot followed by a letter is a domain, a dot that ends a sentence is not.

The result must read as English: a subject the rewrite names takes a verb that agrees with it
("we run" -> "Dana's team runs", "you give" -> "Claude gives"), and a clause of its own after
"and"/"but" ("... and I agree") names the person again rather than an ambiguous "they".
"""

from __future__ import annotations

import re

from memctl.core.lazyre import lazy
from memctl.curate.builtin.faithful import faithful
from memctl.curate.builtin.lexicon import COMMON_VERBS, MODALS, table
from memctl.curate.builtin.resolution import LY, PROTECTED, conj, prose_only

_ADVERBS = (
    r"(?:(?:very much|so much|really|just|also|still|actually|already|always|never|often|usually|"
    r"sometimes|only|even|kind of|sort of|somewhat|mostly|" + LY + "|"
    + "|".join(sorted(table("plain_adverbs"), key=len, reverse=True))  # "we then ran"
    + r") )*"
)
# A pronoun is a word of prose: not part of a path, domain, address or identifier.
_B = r"(?<![\w.@/-])"
_E = r"(?![\w@/'’-]|\.\w)"
_SUBJECT = lazy(
    rf"^(?P<lead>[Ii](?:['’](?:m|ve|d|ll))?|[Ii]m|[Ii]ve|I am|I have|I was)(?![\w'’])"
    rf"(?P<adv> {_ADVERBS})?(?P<verb>[\w'’-]+)?"
)
_AUX = {
    "i'm": "is", "im": "is", "i am": "is", "i've": "has", "ive": "has", "i have": "has",
    "i'd": "would", "i'll": "will", "i was": "was",
}  # fmt: skip
_NEG = {"don't": "doesn't", "dont": "doesn't", "do": "does", "haven't": "hasn't", "am": "is",
        "are": "is", "were": "was", "aren't": "isn't", "weren't": "wasn't"}  # fmt: skip
# "We" / "Our" heading a sentence: the person's team.
_WE = lazy(
    rf"^(?P<lead>[Ww]e(?:['’](?:re|ve|ll|d))?|[Oo]ur)(?![\w'’])(?P<adv> {_ADVERBS})?"
    r"(?P<verb>[\w'’-]+)?"
)
_WE_AUX = {"we're": "is", "we've": "has", "we'll": "will", "we'd": "would"}
_MY = lazy(rf"^(?:[Mm]y){_E}")
# A clause of its own inside a sentence, opened by the speaker: "..., and I agree".
_CLAUSE_I = lazy(
    r"(?:[,;]\s+(?:and\s+|but\s+|so\s+)?|\s(?:and|but|so|because|though)\s+)"
    r"(?=(?:I|[Ii]m|I['’](?:m|ve|d|ll))(?![\w'’])\s)"
)
_WORDS = (
    (lazy(rf"{_B}[Ii]['’]m{_E}"), "they're"),
    (lazy(rf"{_B}[Ii]['’]ve{_E}"), "they've"),
    (lazy(rf"{_B}[Ii]['’]d{_E}"), "they'd"),
    (lazy(rf"{_B}[Ii]['’]ll{_E}"), "they'll"),
    (lazy(rf"{_B}I am{_E}"), "they are"),
    (lazy(rf"{_B}I(?![\w@/'’-]|\.\w)"), "they"),
    (lazy(rf"{_B}i(?= [a-z])"), "they"),  # typed lower case: "and i think"
    (lazy(rf"{_B}[Mm]yself{_E}"), "themself"),
    (lazy(rf"{_B}[Mm]ine{_E}"), "theirs"),
    (lazy(rf"{_B}[Ww]e['’]re{_E}"), "they're"),
    (lazy(rf"{_B}[Ww]e['’]ve{_E}"), "they've"),
    (lazy(rf"{_B}[Ww]e['’]ll{_E}"), "they'll"),
    (lazy(rf"{_B}[Ww]e['’]d{_E}"), "they'd"),
    (lazy(rf"{_B}[Ww]e(?![\w@/'’-]|\.\w)"), "they"),
    (lazy(rf"{_B}[Oo]ur{_E}"), "their"),
    (lazy(rf"{_B}us{_E}"), "them"),
)
# After these "you" is the object of a verb that takes a bare infinitive, or the subject of
# a question: "can you add", "let you decide", "do you need" keep the verb as it is.
_BARE_BEFORE = frozenset(
    "do does did don't doesn't didn't let lets make makes made help helps have has had see saw "
    "watch hear would could should will can may might must shall won't can't couldn't "
    "wouldn't shouldn't".split()
)
# Verbs a person often puts after "you" besides the common ones ("every example you give").
_GIVE = table("you_verbs")
_YOU = lazy(
    rf"{_B}[Yy]ou(?![\w@/'’-]|\.\w)(?P<adv>(?: (?:really|just|also|still|always|never|often|"
    r"usually|only|even|" + LY + r")(?= ))*)(?: (?P<verb>[a-z]+(?:['’]t)?)(?![\w'’]))?"
)


def _agree(verb: str, habitual: bool) -> str:
    low = verb.lower().replace("’", "'")
    return _NEG.get(low) or conj(verb, habitual)


def _head(m: re.Match[str], text: str) -> tuple[str, str, str, str]:
    """A sentence head's parts as `_SUBJECT` and `_WE` match them: (lead word, adverb or a
    space, verb, the rest of the sentence)."""
    lead = m.group("lead").replace("’", "'").lower()
    return lead, m.group("adv") or " ", m.group("verb") or "", text[m.end() :]


def subject(text: str, who: str) -> str:
    """ "I very much like X" -> "Dana very much likes X"; other sentences unchanged."""
    m = _SUBJECT.match(text)
    if not m:
        return text
    lead, adv, verb, rest = _head(m, text)
    if lead in _AUX:
        return f"{who} {_AUX[lead]}{adv}{verb}{rest}".replace("  ", " ")
    habitual = bool(re.search(r"always|never|usually|often", adv))
    return f"{who}{adv}{_agree(verb, habitual)}{rest}"


def _team(text: str, who: str) -> str:
    """ "we run X" -> "Dana's team runs X", "our CI" -> "Dana's team's CI" (sentence head)."""
    m = _WE.match(text)
    if not m:
        return text
    lead, adv, verb, rest = _head(m, text)
    if lead == "our":
        if verb.lower() == "team" and adv == " ":
            return f"{who}'s team{rest}"  # "our team decided": not "Dana's team's team"
        return f"{who}'s team's{adv}{verb}{rest}"
    if lead in _WE_AUX:
        return f"{who}'s team {_WE_AUX[lead]}{adv}{verb}{rest}".replace("  ", " ")
    low = verb.lower().replace("’", "'")
    if not re.fullmatch(r"[a-z]+(?:n['’]t)?", low) or low in table("we_not_verbs"):
        return text  # "we all ...", "We, the ...": not a plain subject and verb
    habitual = bool(re.search(r"always|never|usually|often", adv))
    return f"{who}'s team{adv}{_agree(verb, habitual)}{rest}"


def _quoted_at(text: str, at: int) -> bool:
    return any(m.start() < at < m.end() for m in PROTECTED.finditer(text))


def _clauses(text: str, who: str) -> str:
    """Each clause the speaker opens inside the sentence names them: "and I agree" ->
    "and Dana agrees" (rightmost first, so earlier offsets stay valid)."""
    for m in reversed(list(_CLAUSE_I.finditer(text))):
        if not _quoted_at(text, m.end()):
            text = text[: m.end()] + subject(text[m.end() :], who)
    return text


def third_person(text: str, who: str, agent: str) -> str:
    """The whole sentence in the third person: the speaker by name, "you" as the agent."""
    text = text.strip()
    text = _clauses(subject(text, who), who)
    text = _team(text, who)
    if _MY.match(text):
        text = f"{who}'s{text[2:]}"

    def you(m: re.Match[str]) -> str:
        before = text_before(m)
        verb = m.group("verb") or ""
        adv = m.group("adv") or ""
        agrees = verb in COMMON_VERBS or verb in _NEG or verb in _GIVE
        if verb and before not in _BARE_BEFORE and agrees and verb not in MODALS:
            habitual = bool(re.search(r"always|never|usually|often", adv))
            return f"{agent}{adv} {_agree(verb, habitual)}"
        return f"{agent}{adv}" + (f" {verb}" if verb else "")

    def text_before(m: re.Match[str]) -> str:
        words = m.string[: m.start()].split()
        return words[-1].lower().strip(",.;:!?") if words else ""

    def plain(seg: str) -> str:
        for pat, rep in _WORDS:
            seg = pat.sub(rep, seg)
        seg = re.sub(rf"{_B}[Mm]e{_E}", who, seg)
        seg = re.sub(rf"{_B}[Mm]y{_E}", f"{who}'s", seg)
        seg = re.sub(rf"{_B}[Yy]ou['’]re{_E}", f"{agent} is", seg)
        seg = re.sub(rf"{_B}[Yy]our{_E}", f"{agent}'s", seg)
        seg = _YOU.sub(you, seg)
        seg = re.sub(rf"{_B}[Ll]et['’]s{_E}", "to", seg)
        return seg

    return prose_only(text, plain)


def checked(text: str, who: str, agent: str, named: bool = False) -> str | None:
    """`third_person`, or None when the rewrite does not pass `faithful`'s check: then the
    caller keeps the person's words verbatim rather than write what it cannot get right.
    `named`: the claim names the person before this text ("Dana asked Claude to ...")."""
    out = third_person(text, who, agent)
    return out if faithful(text, out, (who, agent, f"{who}'s team"), named) else None


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
