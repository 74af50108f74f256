"""A person introducing themself: "I'm Lena, I teach chemistry in Porto, our school just
switched to Google Classroom." Each clause is a line of their profile in their own words, in
the third person ("Lena teaches chemistry in Porto."), and the places and products it names
get entity notes (Porto, Google Classroom). The name itself is who the user is: it is never
claimed as a fact about them ("Lena is Lena")."""

from __future__ import annotations

import re
from typing import Any, Protocol

from memctl.core.lazyre import lazy
from memctl.curate.builtin.lexicon import NAME, STOP_NAMES
from memctl.curate.builtin.resolution import conj
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
_NAMED = lazy(
    rf"^(?:[Hh]i[,!]? |[Hh]ello[,!]? |[Hh]ey[,!]? )?(?:I(?:'m|’m| am)|[Mm]y name is|[Cc]all me|"
    rf"[Tt]his is) (?P<name>{NAME})(?=[,.!;]| and | -|$)"
)
_CLAUSE = lazy(
    r",\s+(?:and\s+)?(?=(?:I|[Mm]y|[Oo]ur|we)\b)|\s+and\s+(?=(?:I|[Mm]y|[Oo]ur)\b)"
)
_IN_PLACE = lazy(rf"\b(?:in|from|near|based in|outside) (?P<place>{PLACE})\b(?!['’]s)")
_ADVERBS = r"(?:(?:just|also|still|really|recently|currently|now|mostly|mainly|\w+ly) )*"


def introduced_name(turns: list[str]) -> str | None:
    """The name a person gives themself ("I'm Lena, ..."), if any of their turns gives one."""
    for s in (cap(core_of(s)) for t in turns for s in prose_sentences(t)):
        m = _NAMED.match(s.strip())
        if m and m.group("name") not in STOP_NAMES:
            return m.group("name")
    return None


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
        quote = clause if clause in s and len(clause) >= 8 else s
        title, slug = ex.profile_note()
        ex.emit("profile", title, "Identity", end(text), turn, quote, slug=slug, dated=False)
        done = True
        if "entities" not in ex.stores:
            continue
        for m in _IN_PLACE.finditer(clause):
            place = m.group("place")
            if place.split()[0] not in STOP_NAMES and place != ex.name:
                ex.ent_claim(place, "place", "Facts", text, turn, quote)
    return done


def _clause(clause: str, name: str) -> str | None:
    """ "I teach chemistry in Porto" -> "Lena teaches chemistry in Porto"; "our school just
    switched to X" -> "Lena's school just switched to X"; None for anything else."""
    m = re.match(rf"^I ({_ADVERBS})(\w+)\b(.*)$", clause)
    if m and len(clause.split()) >= 3:
        return f"{name} {m.group(1)}{conj(m.group(2))}{m.group(3)}"
    m = re.match(r"^I(?:'m|’m| am) (.+)$", clause)
    if m and len(clause.split()) >= 3:
        return f"{name} is {m.group(1)}"
    m = re.match(r"^(?:[Mm]y|[Oo]ur) (\w+(?: \w+)?) (.+)$", clause)
    if m and len(clause.split()) >= 4:
        return f"{name}'s {m.group(1)} {m.group(2)}"
    return None


__all__ = ["introduced_name", "introduction"]
