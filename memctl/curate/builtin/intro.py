"""A person introducing themself: "I'm Lena, I teach chemistry in Porto, our school just
switched to Google Classroom." Each clause is a line of their profile in their own words, in
the third person ("Lena teaches chemistry in Porto."), and the places, organisations and
products it names get entity notes (Porto; the school or company they work at; Google
Classroom). The name itself is who the user is: it is never claimed as a fact about them
("Lena is Lena").

People introduce themselves in many shapes: "hey, ines here. im a nurse at ...", "My name is
Kofi and I'm a developer at Paystack in Lagos. Our team recently switched from Heroku to
Fly.io." Every self-describing sentence of the turn that gives the name is read as part of
the introduction, clauses split at commas, semicolons and "and" before I/we/my/our.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from memctl.core.lazyre import lazy
from memctl.curate.builtin.coding.voice import third_person
from memctl.curate.builtin.lexicon import NAME, ORG, STOP_NAMES
from memctl.curate.builtin.resolution import LY, conj
from memctl.curate.builtin.sentences import cap, core_of, end, prose_sentences


class Extractor(Protocol):
    """What an introduction needs of the prose reader (`claims.Extractor` is one)."""

    stores: dict[str, Any]
    name: str

    def profile_note(self) -> tuple[str, str]: ...

    def emit(self, store: str, note: str, section: str, text: str, turn: int, quote: str,
             **kw: Any) -> None: ...  # fmt: skip

    def ent_claim(self, title: str, type_: str, section: str, text: str, turn: int,
                  quote: str) -> None: ...  # fmt: skip


PLACE = r"[A-ZÀ-ÖØ-Þ][a-zà-öø-ÿ]+(?:[ -](?:[A-ZÀ-ÖØ-Þ][a-zà-öø-ÿ]+|de|do|da|del|la|le))*"
_GREET = r"(?:[Hh]i|[Hh]ello|[Hh]ey|[Hh]owdy|[Mm]orning|[Gg]ood (?:morning|afternoon|evening))"
_NAMED = lazy(
    rf"^(?:{_GREET}[,!]? )?(?:I(?:'m|’m| am)|[Ii]m|[Mm]y name is|[Cc]all me|"
    rf"[Tt]his is) (?P<name>{NAME})(?=[,.!;]| and | -|$)"
)
# "hey, ines here": a name typed in lower case, alone with its greeting ("Bug here." is none).
_HERE = lazy(rf"^{_GREET}[,!]? (?P<name>[A-Za-zÀ-ÖØ-öø-ÿ][a-zà-öø-ÿ'’-]+) here[.!]?$")
_CLAUSE = lazy(
    r"(?:,|;|\s+-)\s+(?:and\s+)?(?=(?:I|[Ii]m|[Mm]y|[Oo]ur|[Ww]e)\b)"
    r"|\s+and\s+(?=(?:I|[Ii]m|[Mm]y|[Oo]ur|[Ww]e)\b)"
)
# A sentence that describes its speaker: read as more of the introduction in that turn.
SELF = lazy(r"^(?:I|[Ii]m|I['’]m|[Mm]y|[Oo]ur|[Ww]e(?:['’]re|['’]ve)?)\b")
_IN_PLACE = lazy(rf"\b(?:in|from|near|based in|outside) (?P<place>{PLACE})\b(?!['’]s)")
_AT_ORG = lazy(rf"\b(?:at|for|with|joined|join) (?P<org>{ORG})\b(?!['’]s)")
# A change of product or vendor: "switched from Heroku to Fly.io", "moved to ClickHouse".
_PRODUCT = r"[A-ZÀ-ÖØ-Þ][\w.+#-]*[\w+#](?: [A-ZÀ-ÖØ-Þ][\w.+#-]*[\w+#])?"
_SWITCH = lazy(
    r"\b(?:switch(?:ed|ing)?|migrat(?:ed|ing|e)|mov(?:ed|ing|e)|chang(?:ed|ing|e)|went|"
    r"port(?:ed|ing)?)(?: (?:over|everything|all|it|us))?"
    rf"(?: from (?P<old>{_PRODUCT}))?(?: (?:to|onto) (?P<new>{_PRODUCT}))?"
)
_ADVERBS = (
    r"(?:(?:very much|so much|just|also|still|really|recently|currently|now|mostly|mainly|"
    + LY
    + r") )*"
)
_TEAM = lazy(rf"^(?:[Ww]e|[Oo]ur (?:team|company|startup|group|lab|shop)) ({_ADVERBS})(\w+)\b(.*)$")


def introduced(turns: list[tuple[int, str]]) -> tuple[str, int] | None:
    """The name a person gives themself ("I'm Lena, ...", "ines here") and the turn."""
    for turn, text in turns:
        for s in prose_sentences(text):
            m = _NAMED.match(cap(core_of(s)).strip()) or _HERE.match(s.strip())
            if m and cap(m.group("name")) not in STOP_NAMES:
                return cap(m.group("name")), turn
    return None


def describes_self(core: str) -> bool:
    """ "im a nurse at X in Lisbon", "we just switched to Epic": a sentence about the speaker
    that names where they are, who they work for or what they switched to. A preference
    ("I very much like short answers") is not more of an introduction."""
    if not SELF.match(core):
        return False
    return bool(
        _IN_PLACE.search(core)
        or _AT_ORG.search(core)
        or any(m.group("new") or m.group("old") for m in _SWITCH.finditer(core))
    )


def names_only(core: str) -> bool:
    """ "hey, ines here.", "I'm Lena.": the sentence says the name and nothing else."""
    m = _HERE.match(core.strip()) or _NAMED.match(core.strip())
    return bool(m) and len(core.strip()[m.end() :].strip(" .!,")) == 0


def introduction(ex: Extractor, turn: int, s: str, rest: str) -> bool:
    """Profile lines and entity notes from the clauses after the name; True when any came."""
    if "profile" not in ex.stores:
        return False
    done = False
    for clause in _CLAUSE.split(rest.strip().rstrip(".!")):
        clause = clause.strip()
        text = _clause(clause, ex.name)
        if text is None:
            continue
        # Each line quotes its own clause, so what it names is found in that clause alone.
        typed = _as_typed(clause, s)
        quote = typed if typed and len(typed) >= 8 else s
        if "entities" in ex.stores:
            # Before the profile line: it links them, and a vendor is never taken for a place.
            name_entities(ex, clause, end(text), turn, quote)
        title, slug = ex.profile_note()
        ex.emit("profile", title, "Identity", end(text), turn, quote, slug=slug, dated=False)
        done = True
    return done


def _as_typed(clause: str, s: str) -> str | None:
    """The clause as the person typed it in `s` ("im a nurse ...", read as "I'm a nurse ...")."""
    if clause in s:
        return clause
    _, _, tail = clause.partition(" ")
    if len(tail) < 8 or tail not in s:
        return None
    i = s.index(tail)
    return s[s.rfind(" ", 0, max(i - 1, 0)) + 1 : i + len(tail)]


def name_entities(ex: Extractor, clause: str, text: str, turn: int, quote: str) -> None:
    """Places, organisations and products the clause names, each a note holding the line."""
    seen: set[str] = set()

    def add(name: str, kind: str, section: str) -> None:
        if not name or name in seen or name == ex.name or name.split()[0] in STOP_NAMES:
            return
        seen.add(name)
        ex.ent_claim(name, kind, section, text, turn, quote)

    masked = clause
    for m in _SWITCH.finditer(clause):
        for key in ("old", "new"):
            if m.group(key):
                add(m.group(key), "tool", "Facts")
                a, b = m.span(key)
                masked = masked[:a] + "_" * (b - a) + masked[b:]
    for m in _IN_PLACE.finditer(masked):
        add(m.group("place"), "place", "Facts")
    for m in _AT_ORG.finditer(masked):
        org = m.group("org")
        place = _IN_PLACE.search(masked[m.start() :])
        if place and place.group("place") == org:
            continue
        add(org, "organisation", "Relations")


def _clause(clause: str, name: str) -> str | None:
    """ "I teach chemistry in Porto" -> "Lena teaches chemistry in Porto"; "our school just
    switched to X" -> "Lena's school just switched to X"; "we just moved to X" -> "Lena's
    team just moved to X"; None for anything else."""
    def rest(text: str) -> str:  # "... for me" -> "... for Lena", never inside a URL or path
        lead = text[: len(text) - len(text.lstrip())]
        return lead + third_person(text, name, "the assistant") if text.strip() else text

    m = re.match(r"^(?:I(?:'m|’m| am)|[Ii]m) (.+)$", clause)
    if m and len(clause.split()) >= 3:
        return f"{name} is {rest(m.group(1))}"
    m = re.match(rf"^I ({_ADVERBS})(\w+)\b(.*)$", clause)
    if m and len(clause.split()) >= 3:
        return f"{name} {m.group(1)}{conj(m.group(2))}{rest(m.group(3))}"
    m = _TEAM.match(clause)
    if m and len(clause.split()) >= 3:
        return f"{name}'s team {m.group(1)}{conj(m.group(2))}{rest(m.group(3))}"
    m = re.match(r"^(?:[Mm]y|[Oo]ur) (\w+(?: \w+)?) (.+)$", clause)
    if m and len(clause.split()) >= 4:
        return f"{name}'s {m.group(1)} {rest(m.group(2))}"
    return None


__all__ = [
    "SELF", "describes_self", "introduced", "introduction", "name_entities",
    "names_only",
]  # fmt: skip
