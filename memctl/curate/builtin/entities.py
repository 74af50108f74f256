"""Entities: people, organisations and things named with a fact, one note each.

A first name is resolved only when exactly one person with that first name is known in the
scope; otherwise nothing is claimed about them, so two people who share a name are never merged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from memctl.core.lazyre import lazy
from memctl.core.notes import claim_key, strip_links
from memctl.core.raw import slugify
from memctl.curate import Batch, Context, Entity, Quote, StoreSpec
from memctl.curate.builtin.classification import (
    CALLED,
    IS_OUR_ROLE,
    IS_WHAT,
    MY_ROLE_NAME,
    ORG_MENTION,
    ORG_OF_USER,
    OWNERS_ROLE,
    PERSON_DOES,
    PERSONS_THING,
    PLACE_MENTION,
    TOOL_MENTION,
)
from memctl.curate.builtin.lexicon import ORG, STOP_NAMES
from memctl.curate.builtin.sentences import cap, core_of, end, trim_so, typed_case

if TYPE_CHECKING:
    from collections.abc import Callable


@dataclass
class Ent:
    title: str
    type: str
    path: str | None
    aliases: set[str] = field(default_factory=set)


class EntityRules:
    """The entity half of the extractor; `claims.Extractor` mixes it in and owns the state."""

    b: Batch
    ctx: Context
    stores: dict[str, StoreSpec]
    ents: dict[str, Ent]
    people: set[str]
    humans: set[str]
    session_names: set[str]
    last_person: str | None
    pending_org: tuple[str, str, int, str] | None
    name: str
    we: str
    org: str | None
    team: bool
    emit: Callable[..., None]
    _inner: Callable[[str, str], str]
    third: Callable[..., str]
    _title: Callable[..., str]
    _user_turns: Callable[..., list[tuple[int, str]]]

    def _find_org(self) -> str | None:
        """The user's organisation: said in this session, else already known to memory."""
        for _, content in self._user_turns(all_turns=True):
            m = ORG_OF_USER.search(content)
            if m:
                return m.group("org") or m.group("org2") or m.group("org3")
        for c in self.ctx.claims("profile"):
            if c.section == "Identity" and c.note.casefold().endswith(self.b.user.casefold()):
                # Only a line about this very person: a login's profile may hold lines about
                # someone else who introduced themself (Tomasz at Kolejka is not Sanne's "we").
                plain = strip_links(c.text)
                if not re.match(rf"{re.escape(self.name)}\b", plain):
                    continue
                m = re.search(rf" at (?P<org>{ORG})", plain)
                if m:
                    return m.group("org")
        if self.team:
            # The team's knowledge note is named after the organisation: keep using it.
            for c in self.ctx.claims("knowledge"):
                m = re.match(rf"^(?P<org>{ORG}) team knowledge$", c.note)
                if m:
                    return m.group("org")
        return None

    # -- people and entities --------------------------------------------------------------------

    def _first_name_candidates(self, first: str) -> set[str]:
        cands = {
            e.title
            for e in self.ents.values()
            if " " in e.title and e.title.split()[0] == first and e.type == "person"
        }
        return cands | {n for n in self.session_names if n.split()[0] == first}

    def _unique_first(self, first: str) -> bool:
        return len(self._first_name_candidates(first)) == 1

    def resolve(self, mention: str) -> str | None:
        """A mention -> the entity title it denotes, or None when it is ambiguous."""
        mention = mention.strip()
        if " " in mention:
            return mention
        cands = self._first_name_candidates(mention)
        if len(cands) > 1:
            return None
        return next(iter(cands)) if cands else mention

    def is_person(self, mention: str) -> bool:
        if mention.split()[0] in STOP_NAMES:
            return False
        title = self.resolve(mention)
        if title is None:
            return True  # ambiguous among people: a person, but not which one
        ent = self.ents.get(title.casefold())
        if ent is not None:
            return ent.type == "person"
        first = mention.split()[0]
        return mention in self.people or first in self.people or title in self.session_names

    def entity(self, title: str, type_: str, alias: str | None = None) -> Ent:
        ent = self.ents.setdefault(title.casefold(), Ent(title, type_, None))
        if ent.path is None and "entities" in self.stores:
            ent.path = self.ctx.path_for("entities", title, slugify(title))
        if alias and alias != title:
            ent.aliases.add(alias)
        if type_ == "person":
            self.last_person = title
        return ent

    def ent_claim(
        self,
        title: str,
        type_: str,
        section: str,
        text: str,
        turn: int,
        quote: str,
        alias: str | None = None,
        more: tuple[Quote, ...] = (),
    ) -> None:
        ent = self.entity(title, type_, alias)
        aliases = set(ent.aliases)
        if type_ == "person" and " " in title:
            aliases.add(title.split()[0])
        replaces = self._ent_role_slot(title, text)
        self.emit(
            "entities",
            title,
            section,
            end(text),
            turn,
            quote,
            entity=Entity(type_, tuple(sorted(aliases))),
            slug=slugify(title),
            more=more,
            action="supersede" if replaces else "add",
            replaces=replaces,
        )

    def _ent_role_slot(self, title: str, text: str) -> str | None:
        """An entity's role claim replaces an older, different role claim of the same kind."""
        pat = lazy(rf"^{re.escape(title)} is (?P<poss>\S+'s|an?|the) ")
        m = pat.match(strip_links(text))
        if not m:
            return None
        for c in self.ctx.claims("entities"):
            if c.note.casefold() != title.casefold():
                continue
            old = pat.match(strip_links(c.text))
            if (
                old
                and old.group("poss") == m.group("poss")
                and claim_key(c.text) != claim_key(text)
            ):
                return c.text
        return None

    def poss(self, word: str) -> str:
        """'our' -> "Acme's", 'my' -> "Dana's"."""
        return f"{self.we}'s" if word.lower() == "our" else f"{self.name}'s"

    def profile_link(self) -> str:
        if "profile" not in self.stores:
            return self.name
        path = self.ctx.path_for("profile", *self.profile_note())
        return f"[[{path[:-3]}|{self.name}]]"

    # -- entities -------------------------------------------------------------------------------

    def entities(self, turn: int, s: str, core: str, prev: str | None) -> None:
        # "Alex is our CTO and he's leading the migration."
        m = IS_OUR_ROLE.match(core)
        if m and m.group("name").split()[0] not in STOP_NAMES:
            title = self.resolve(m.group("name"))
            if title:
                poss, role = m.group("poss"), m.group("role")
                owner = self.poss(poss) if poss in ("our", "my") else poss
                self.ent_claim(
                    title,
                    "person",
                    "Facts",
                    f"{title} is {owner} {role}",
                    turn,
                    s,
                    alias=m.group("name"),
                )
                if m.group("rest"):
                    rest = self._inner(m.group("rest"), title)
                    self.ent_claim(title, "person", "Facts", f"{title} is {rest}", turn, s)
                self._relate(title, role, poss, turn, s)
        # "my client Alex Chen runs ...", "our CTO Alex Morgan, wants ..."
        for m in MY_ROLE_NAME.finditer(s):
            title = (
                None if m.group("name").split()[0] in STOP_NAMES else self.resolve(m.group("name"))
            )
            if not title:
                continue
            poss, role = m.group("poss").lower(), m.group("role")
            role_text = f"{title} is {self.poss(poss)} {role}"
            self.ent_claim(title, "person", "Facts", role_text, turn, s, alias=m.group("name"))
            if m.group("verb"):
                rest = trim_so(self._inner(m.group("rest"), title))
                self.ent_claim(
                    title, "person", "Facts", f"{title} {m.group('verb')} {rest}", turn, s
                )
                if m.group("verb") == "runs":
                    self.pending_org = (title, m.group("rest").strip(), turn, s)
            self._relate(title, role, poss, turn, s)
        # "Alex's analyst, Inês"
        for m in OWNERS_ROLE.finditer(s):
            owner, title = self.resolve(m.group("owner")), self.resolve(m.group("name"))
            if not owner or not title or m.group("name") in STOP_NAMES:
                continue
            self.entity(owner, "person")
            rel = f"{title} is {m.group('owner')}{m.group('poss')} {m.group('role')}"
            self.ent_claim(title, "person", "Relations", rel, turn, s, alias=m.group("name"))
            self.ent_claim(owner, "person", "Relations", rel, turn, s)
        # "It's called Crumbwise and it's based in Porto."
        m = CALLED.match(core)
        if m:
            org = m.group("name")
            if self.pending_org and prev and self.pending_org[3] == prev:
                owner, desc, pturn, psent = self.pending_org
                more = (Quote(pturn, psent),)
                self.ent_claim(
                    org,
                    "organisation",
                    "Facts",
                    f"{org} is {desc} run by {owner}",
                    turn,
                    s,
                    more=more,
                )
                self.ent_claim(
                    owner, "person", "Relations", f"{owner} runs {org}", turn, s, more=more
                )
            if m.group("rest"):
                self.ent_claim(org, "organisation", "Facts", f"{org} is {m.group('rest')}", turn, s)
            return
        # "He wants a weekly report.", "Dana on our platform team is leading ..."
        m = PERSON_DOES.match(core)
        if m:
            mention = m.group("name")
            pronoun = mention in ("He", "She")
            if pronoun:
                title = self.last_person
            else:
                title = self.resolve(mention) if self.is_person(mention) else None
            if title is None or (m.group("verb") == "is" and not IS_WHAT.match(m.group("rest"))):
                return
            body = re.split(r",? and I(?:'m| am)? ", core[m.end("name") :], maxsplit=1)[0]
            body = self._inner(trim_so(body), title)
            self.ent_claim(
                title,
                "person",
                "Facts",
                f"{title if pronoun else mention}{body}",
                turn,
                s,
                alias=None if pronoun else mention,
            )
            self.last_person = title
            return
        # "Alex Chen's team in Porto is now an hour behind me."
        m = PERSONS_THING.match(core)
        if m and self.is_person(m.group("name")):
            title = self.resolve(m.group("name"))
            if title:
                body = self._inner(trim_so(core[m.start("what") :]), title)
                self.ent_claim(
                    title,
                    "person",
                    "Facts",
                    f"{m.group('name')}{m.group('poss')} {body}",
                    turn,
                    s,
                    alias=m.group("name"),
                )

    def _relate(self, title: str, role: str, poss: str, turn: int, s: str) -> None:
        """Say who a person is to the user (profile) or to the team's organisation."""
        path = self.ents[title.casefold()].path
        who = f"[[{path[:-3]}|{title}]]" if path else title
        if poss == "my" and "profile" in self.stores:
            text = f"{self.name}'s {role} is {who}."
            note, slug = self.profile_note()
            self.emit("profile", note, "People", text, turn, s, slug=slug, link=False)
        elif poss == "our" and self.org and self.team:
            self.entity(self.org, "organisation")
            self.ent_claim(
                self.org, "organisation", "Relations", f"{who} is {self.org}'s {role}", turn, s
            )

    def mentions(self, turn: int, quote: str, text: str) -> None:
        """Organisations, places and tools named with a fact get a note of their own.

        Each holds the claim that named it, so the entity's note lists what is known about it
        and the claim links to it; a name already known as a person is left to the people
        rules (never two entities from one first name).
        """
        if "entities" not in self.stores:
            return
        found: list[tuple[str, str, str]] = []
        for m in ORG_MENTION.finditer(quote):
            found.append((m.group("org") or m.group("org2") or "", "organisation", "Relations"))
        for m in PLACE_MENTION.finditer(quote):
            found.append((m.group("place"), "place", "Facts"))
        for m in TOOL_MENTION.finditer(quote):
            found.append((m.group("tool"), "tool", "Facts"))
        for name, kind, section in found:
            words = name.split()
            if not words or words[0] in STOP_NAMES or name in self.people or len(name) < 3:
                continue
            # "switched to Google Classroom" names a product, whatever its two names; a known
            # person's name is a person's, and what they own ("use Alex's product") no tool.
            ent = self.ents.get(name.casefold())
            known_person = name.split()[0] in self.people or (
                ent is not None and ent.type == "person"
            )
            if name in self.humans or (self.is_person(name) and (kind != "tool" or known_person)):
                continue
            known = self.ents.get(name.casefold())
            if known is not None and known.type != kind:
                continue  # "Acme" the organisation is not also a place
            fact = self.third(typed_case(cap(core_of(quote))), said=core_of(quote).strip())
            fact = fact if kind == "organisation" else text  # "we" of the sentence is the org
            self.ent_claim(name, kind, section, fact, turn, quote)
