"""Claims from one batch: the pass over the session that turns sentences into proposals."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date
from typing import Any

from memctl.core.notes import claim_key, strip_links
from memctl.core.raw import parse_time, slugify
from memctl.curate import Batch, Entity, Proposal, Quote
from memctl.curate.builtin.classification import (
    CORRECTION,
    CORRECTION_CUE,
    DECISION,
    DID,
    DUTIES,
    EMOTIVE,
    FACT,
    FIRST_PERSON,
    HABIT,
    HEARSAY,
    INSTRUCTION,
    INTRO,
    LINK,
    LOCATION,
    MAXIM,
    MIN_FACT_WEIGHT,
    NAMED_INTRO,
    NOT_A_FACT,
    NOT_A_ROLE,
    OPTIONS,
    ORG_OF_USER,
    PREFERENCE,
    PROGRESS,
    PRONOUN_SUBJECT,
    REL_TIME,
    ROLE_OF_USER,
    TECHNICAL,
    WANT,
    WE,
    WE_DID,
    WE_FACT,
    WE_GOAL,
    WILL,
    WORK,
    conversational_fact,
    fact_weight,
    is_chatter,
)
from memctl.curate.builtin.entities import Ent
from memctl.curate.builtin.intro import describes_self, introduced, introduction, names_only
from memctl.curate.builtin.lexicon import FULL, NAME, STOP_NAMES
from memctl.curate.builtin.resolution import (
    has_addressee,
)
from memctl.curate.builtin.sentences import (
    cap,
    core_of,
    end,
    points_outside,
    prose_sentences,
    topic_words,
    trim_so,
    typed_case,
)
from memctl.curate.builtin.sessions import SessionRules
from memctl.curate.builtin.speaker import VoiceRules


def _slot(text: str, slot: str) -> str | None:
    """What a profile claim is about, so a new claim on the same thing can supersede it."""
    plain = strip_links(text)
    if slot == "role":
        return "role" if re.match(r"^\S+ is (?:an?|the) ", plain) else None
    if slot == "location":
        found = re.search(r"\b(?:lives|is based|resides|moved|relocated) (?:in|to) ", plain)
        return "location" if found else None
    if slot == "pref":
        m = re.search(
            r"\b(?:prefers|likes|loves) (?P<obj>.+?)(?: for | when | because |\.|$)", plain
        )
        return m.group("obj").lower().strip() if m else None
    return None


_DECIDED = re.compile(r" (?:decided|agreed|chose|settled) ")


def _fact_subject(text: str, we: str) -> str | None:
    """ "Acme's egress bill is about $14k" -> "egress bill": two facts about one subject."""
    plain = strip_links(text)
    m = re.match(rf"^(?:{re.escape(we)}'s|The|the) (?P<np>[\w\s/-]+?) (?:is|are|was|were) ", plain)
    return m.group("np").lower() if m else None


# ---- the curator ------------------------------------------------------------------------------


@dataclass
class _Emitted:
    store: str
    note: str
    section: str
    text: str
    turn: int
    quote: str


class Extractor(SessionRules, VoiceRules):
    """One pass over one batch; state is what this session has said so far."""

    def __init__(self, batch: Batch) -> None:
        self.b = batch
        self.ctx = batch.context
        self.stores = batch.stores
        self.out: list[Proposal] = []
        self.emitted: list[_Emitted] = []
        h = batch.header
        named = [m.name for m in batch.messages if m.role == "user" and m.name]
        self.name = next((n for n in named if n.lower() != "user"), "") or cap(h.user)
        self.team = h.scope in ("team", "global")
        self.ents = {
            e.title.casefold(): Ent(e.title, e.type, e.path, set(e.aliases))
            for e in self.ctx.entities()
        }
        self.people = set(self.ctx.people())
        self.session_names = self._full_names()
        self.last_person: str | None = None
        self.said = ""  # the sentence being read, as typed (discourse markers off)
        self.goals = 0
        self.options: tuple[int, str, str, str] | None = None
        self.pending_org: tuple[str, str, int, str] | None = None
        self.default_name = self.name
        self.humans = {m.name for m in batch.messages if m.role == "user" and m.name}
        # A conversation between people (two named humans, no assistant) is read for facts
        # about each speaker; anything else is a person telling an agent about their work.
        self.talks_to_agent = len(self.humans) < 2 or any(
            m.role == "assistant" for m in batch.messages
        )
        self.addressee: str | None = None
        self.about: str | None = None  # whose profile this turn's claims go to (None: the user)
        self.owner = batch.user  # whose profile "the user" is: the session's, or who said "I'm X"
        self.intro_turn = 0
        if self.talks_to_agent and not any(n.lower() != "user" for n in named):
            # No speaker is named: the person who says "I'm Lena" is Lena, not the login name.
            got = introduced(self._user_turns(all_turns=True))
            if got:
                self.name, self.intro_turn = got
                # the profile is the named human's, not the login's or the flag's
                self.owner = slugify(self.name, 40) or h.user
        self.rename(self.name)

    def rename(self, name: str) -> None:
        """Who the user is in this session's claims, and so whose team "we" is."""
        self.name = self.default_name = name
        self.org = self._find_org()
        self.we = self.org or ("The team" if self.team else f"{self.name}'s team")

    # -- setup ----------------------------------------------------------------------------------

    def _user_turns(self, all_turns: bool = False) -> list[tuple[int, str]]:
        return [
            (i, m.content)
            for i, m in enumerate(self.b.messages, 1)
            if m.role == "user" and (all_turns or i >= self.b.start)
        ]

    def _full_names(self) -> set[str]:
        names = set()
        for _, content in self._user_turns(all_turns=True):
            for m in re.finditer(rf"\b({NAME} {NAME})\b", content):
                if m.group(1).split()[0] not in STOP_NAMES:
                    names.add(m.group(1))
        return names

    # -- output ---------------------------------------------------------------------------------

    def _title(self, store: str, **values: str) -> str:
        values.setdefault("user", self.b.user)
        values.setdefault("topic", values.get("name", store))
        values.setdefault("title", self.b.header.title)
        values.setdefault("name", values["topic"])
        try:
            return self.stores[store].title.format(**values)
        except (KeyError, IndexError, ValueError):
            return values["topic"]

    def emit(
        self,
        store: str,
        note: str,
        section: str,
        text: str,
        turn: int,
        quote: str,
        *,
        action: str = "add",
        replaces: str | None = None,
        entity: Entity | None = None,
        slug: str | None = None,
        more: tuple[Quote, ...] = (),
        meta: tuple[tuple[str, Any], ...] = (),
        link: bool = True,
        dated: bool = True,
        about: str | None = None,
    ) -> None:
        if store not in self.stores:
            return
        if dated and REL_TIME.search(strip_links(text)) and "(as of " not in text:
            # "next quarter" means nothing a year later: say when it was said.
            text = text.rstrip(".") + f" (as of {self._date(turn)})."
        if store in ("knowledge", "profile", "decisions", "sessions") and action == "add":
            self.mentions(turn, quote, text)
        if link:
            text = self._link(text, skip=note if store == "entities" else None)
        self.out.append(
            Proposal(
                store=store,
                note=note,
                section=section,
                text=text,
                citations=(*more, Quote(turn, quote)),
                action=action,
                replaces=replaces,
                entity=entity,
                slug=slug,
                meta=meta,
                about=about,
            )
        )
        self.emitted.append(_Emitted(store, note, section, text, turn, quote))

    def session(
        self,
        section: str,
        text: str,
        turn: int,
        quote: str,
        link: bool = True,
        dated: bool = True,
    ) -> None:
        """A claim in this session's note."""
        self.emit(
            "sessions",
            self.session_title(),
            section,
            text,
            turn,
            quote,
            slug=self.session_slug(),
            link=link,
            dated=dated,
        )

    def knowledge(self, section: str, text: str, turn: int, quote: str) -> None:
        """A claim in the team's (or the user's) knowledge note; a new value supersedes."""
        note, slug = self.knowledge_note()
        replaces = self._fact_slot(note, text) if section == "Facts" else None
        self.emit(
            "knowledge",
            note,
            section,
            text,
            turn,
            quote,
            slug=slug,
            action="supersede" if replaces else "add",
            replaces=replaces,
        )

    def _date(self, turn: int) -> str:
        ts = parse_time(self.b.messages[turn - 1].timestamp) or parse_time(self.b.header.started)
        return ts.date().isoformat() if ts else self.b.today

    def _link(self, text: str, skip: str | None) -> str:
        """Link the first mention of each known entity to its note: `[[entities/x|Alex]]`."""
        spans = [m.span() for m in LINK.finditer(text)]
        for ent in sorted(self.ents.values(), key=lambda e: -len(e.title)):
            if ent.path is None or (skip and ent.title.casefold() == skip.casefold()):
                continue
            if ent.title == self.name:
                continue  # the speaker is their own profile, not an entity to link to
            forms = [ent.title]
            first = ent.title.split()[0]
            if ent.type == "person" and first != ent.title and self._unique_first(first):
                forms.append(first)
            for form in forms:
                pat = rf"(?<![\w\[|/-]){re.escape(form)}(?![\w\]-])"
                free = (
                    c
                    for c in re.finditer(pat, text)
                    if not any(a <= c.start() < b for a, b in spans)
                )
                m = next(free, None)
                if m:
                    text = f"{text[: m.start()]}[[{ent.path[:-3]}|{form}]]{text[m.end() :]}"
                    spans = [x.span() for x in LINK.finditer(text)]
                    break
        return text

    # -- the pass -------------------------------------------------------------------------------

    def run(self) -> list[Proposal]:
        for turn, content in self._user_turns():
            self.speaking(turn)
            self.last_person = None
            prev: str | None = None
            facts: list[tuple[float, int, str, str, str]] = []
            for sentence in prose_sentences(content):
                if len(sentence) >= 8 and len(sentence.split()) <= 60:
                    self.said = core_of(sentence).strip()  # as typed, for a verbatim claim
                    core = typed_case(cap(self.said))  # "OK, so we decided" -> "We decided"
                    before = len(self.out)
                    self.sentence(turn, sentence, core, prev)
                    if len(self.out) == before:
                        kind = conversational_fact(core)
                        if kind:
                            facts.append(
                                (fact_weight(core, kind), len(facts), kind, sentence, core)
                            )
                prev = sentence
            # A turn states one or two facts worth keeping; the rest of it is conversation.
            keep = sorted(facts, key=lambda f: (-f[0], f[1]))[: 2 if len(facts) > 3 else 1]
            for weight, _, kind, sentence, core in sorted(keep, key=lambda f: f[1]):
                if weight >= MIN_FACT_WEIGHT:
                    self.life_fact(turn, sentence, core, kind)
        return self.out

    # -- who is speaking ------------------------------------------------------------------------

    def speaking(self, turn: int) -> None:
        """The named speaker of this turn, who they talk to, and whose profile they feed.

        A transcript between two people (or a team chat) names its speakers: each one's "I" is
        that person, and "you" is the person they answer, never the vault's user by default.
        """
        msgs = self.b.messages
        me = msgs[turn - 1].name or self.default_name
        self.name = me
        self.addressee = None
        for i in (*range(turn - 2, -1, -1), *range(turn, len(msgs))):
            other = msgs[i]
            if other.role != "user":
                if i < turn - 1:
                    break  # answering the assistant: "you" is the agent
                continue
            if other.name and other.name != me:
                self.addressee = other.name
                break
        mine = slugify(me) if me else self.b.user
        self.about = None if len(self.humans) < 2 or mine == self.b.user else mine

    def sentence(self, turn: int, s: str, core: str, prev: str | None) -> None:
        if is_chatter(core):
            self.feedback(turn, s, core)  # "Thanks, that fixed it" is feedback to an agent
            return
        if "?" in core:
            m = OPTIONS.search(core)  # a question is no fact; its options feed decisions
            if m:
                self.options = (turn, s, m.group("a"), m.group("b"))
            return
        if "entities" in self.stores:
            self.entities(turn, s, core, prev)
        if self.correction(turn, s, core) or self.decision(turn, s, core):
            return
        if self.instruction(turn, s, core):
            return
        self.custom(turn, s, core)
        intro = INTRO.match(core) or NAMED_INTRO.match(core)
        if intro and self.talks_to_agent:
            if introduction(self, turn, s, intro.group("rest")):
                return  # "I'm Lena, I teach ...": profile lines, never "Lena is Lena"
            core = intro.group("rest")  # the name is known from the transcript already
        elif self.talks_to_agent and turn == self.intro_turn:
            if names_only(core):
                return  # "hey, ines here.": the name, which is who the user is
            if describes_self(core) and introduction(self, turn, s, core):
                return  # "im a nurse at X in Lisbon": more of the same introduction
        if FIRST_PERSON.match(core):
            self.first_person(turn, s, core)
        elif WE.match(core):
            self.we_statement(turn, s, core)
        elif not self.session_lists(turn, s, core):
            self.fact(turn, s, core)
        self.feedback(turn, s, core)

    # -- corrections and decisions --------------------------------------------------------------

    def correction(self, turn: int, s: str, core: str) -> bool:
        """ "Actually, I meant $14k a month, not $40k." corrects the claim that said $40k."""
        m = CORRECTION.match(core)
        if not m or not (core.lower().startswith("i meant") or CORRECTION_CUE.match(s)):
            return False
        old, new = m.group("old").strip(), m.group("new").strip()
        target = self._claim_containing(old)
        if target is None:
            return True
        e, more = target
        idx = e.text.find(old)
        after = e.text[idx + len(old) :].lstrip()
        words = new.split()
        # "$14k a month" replacing "$40k" in "... about $40k a month.": keep what follows.
        keep = (k for k in range(1, len(words)) if after.startswith(" ".join(words[k:])))
        core_new = " ".join(words[: next(keep, len(words))])
        fixed = e.text[:idx] + core_new + e.text[idx + len(old) :]
        self.emit(
            e.store,
            e.note,
            e.section,
            fixed,
            turn,
            s,
            action="correct",
            replaces=e.text,
            more=more,
            link=False,
        )
        return True

    def _claim_containing(self, old: str) -> tuple[_Emitted, tuple[Quote, ...]] | None:
        for e in reversed(self.emitted):
            if old in e.text:
                return e, (Quote(e.turn, e.quote),)
        for c in reversed(self.ctx.claims()):
            if old in c.text and c.store in self.stores:
                more = tuple(
                    Quote(int(ref.rsplit("#t", 1)[1]), q)
                    for ref, q in c.cites
                    if ref.split("#", 1)[0] == self.b.session
                )
                return _Emitted(c.store, c.note, c.section, c.text, 0, ""), more
        return None

    def decision(self, turn: int, s: str, core: str) -> bool:
        """ "We decided to X because Y": what, why, alternatives weighed, when, by whom."""
        m = DECISION.match(core)
        if not m or not (self.talks_to_agent or WORK.search(core)):
            return False  # "I decided to adopt a puppy": an event in a life, not a decision
        what = m.group("what") or f"go with {m.group('what2')}"
        who = m.group("who") or m.group("who2")
        reason = None
        r = re.match(r"^(?P<what>.+?),? because (?P<why>.+)$", what)
        if r:
            what, reason = r.group("what"), r.group("why")
        topic = cap(" ".join(re.split(r",\s+|\s+(?:since|so that|so)\s+", what)[0].split()[:9]))
        date = self._date(turn)
        title = self._title("decisions", topic=topic) if "decisions" in self.stores else topic
        slug = f"{date}-{slugify(topic, 50)}"
        meta = (("valid_from", date),)
        subject = self.decider() if who == "We" else self.name

        def claim(section: str, text: str, t: int = turn, q: str = s, link: bool = True) -> None:
            self.emit("decisions", title, section, text, t, q, slug=slug, meta=meta, link=link)

        same = self._same_decision(topic)
        if same is not None:
            # "Use Decimal for all money amounts" restates "Use Decimal for money": the same
            # decision, reinforced with this citation, never a second note.
            title, known = same
            claim("Decision", known, link=False)
            if reason:
                claim("Why", cap(self._inner(reason, self.name)).rstrip(".") + ".")
            return True
        prep = (m.group("prep") or "to ") if m.group("what") else "to "
        verb = (m.group("verb") or "decided") if m.group("what") else "decided"
        claim("Decision", f"{subject} {verb} {prep}{self._inner(what, self.name)}.")
        claim("Decision", f"Decided on {date}, stated by {self.name}.", link=False)
        if reason:
            claim("Why", cap(self._inner(reason, self.name)).rstrip(".") + ".")
        if self.options:
            oturn, osent, a, b = self.options
            if any(x.split()[0].lower() in what.lower() for x in (a, b)):
                claim("Alternatives", f"Considered {a} and {b}.", oturn, osent)
        if "decisions" in self.stores:
            path = self.ctx.path_for("decisions", title, slug)
            self.session("Progress", f"Decided: [[{path[:-3]}|{topic}]].", turn, s, link=False)
        return True

    def _same_decision(self, topic: str) -> tuple[str, str] | None:
        """(title, decision claim) of a known decision this topic restates, if any."""
        words = topic_words(topic)
        if not words:
            return None
        known = [(c.note, c.section, c.text) for c in self.ctx.claims("decisions")]
        known += [(e.note, e.section, e.text) for e in self.emitted if e.store == "decisions"]
        for note, section, text in known:
            if section != "Decision" or not _DECIDED.search(text):
                continue
            old = topic_words(note.split(":", 1)[-1])
            if (
                old
                and len(words & old) / len(words | old) >= 0.5
                and (old <= words or words <= old)
            ):
                return note, text
        return None

    def instruction(self, turn: int, s: str, core: str) -> bool:
        """ "Always ...", "From now on ...": standing instructions, only ever proposed."""
        if not INSTRUCTION.match(core) or not self.talks_to_agent or len(core.split()) < 4:
            return False  # "Never say never!" to a friend is no instruction to an agent
        scope_name = "team" if self.team else self.b.user
        if "instructions" in self.stores:
            title = self._title("instructions", topic=scope_name)
            title = f"Instructions ({scope_name})" if title == "Instructions" else title
            self.emit(
                "instructions",
                title,
                "Instructions",
                end(cap(core)),
                turn,
                s,
                slug=scope_name,
                link=False,
                dated=False,  # an instruction holds until changed; "from now on" is no date
            )
        return True

    def custom(self, turn: int, s: str, core: str) -> None:
        """Custom stores declared in config with `match` patterns get the sentences they match."""
        for name, spec in self.stores.items():
            if spec.config.custom and spec.match and any(re.search(p, s, re.I) for p in spec.match):
                scope_name = "team" if self.team else self.b.user
                title = self._title(name, topic=scope_name, name=scope_name)
                self.emit(
                    name, title, spec.sections[0], self.third(core), turn, s, slug=slugify(title)
                )

    # -- facts in conversation ------------------------------------------------------------------

    def profile_note(self) -> tuple[str, str]:
        """(title, slug) of the speaker's profile note: the user's, or another named human's."""
        who = self.about or self.owner
        return self._title("profile", user=who), who

    def life_fact(self, turn: int, s: str, core: str, kind: str) -> None:
        """A fact a person states about their own life, work, people or plans."""
        if points_outside(core):
            return  # "Those are from the trip": about something said before, not a fact
        text = self.voice(core, turn)
        if text is None or len(text.split()) < 4:
            return
        quoted = text.startswith(f'{self.name} said: "')  # its time words are as typed
        if kind in ("identity", "relation", "preference", "habit") and "profile" in self.stores:
            section = {
                "identity": "Identity",
                "relation": "People",
                "preference": "Preferences",
                "habit": "How they work",
            }[kind]
            title, slug = self.profile_note()
            self.emit("profile", title, section, text, turn, s, slug=slug, about=self.about,
                      dated=quoted)  # fmt: skip
        elif kind == "plan":
            self.session("Plan", text, turn, s, dated=quoted)
        else:
            self.session("Events", text, turn, s, dated=quoted)

    def _day(self, turn: int) -> date:
        ts = parse_time(self.b.messages[turn - 1].timestamp) or parse_time(self.b.header.started)
        return ts.date() if ts else date.fromisoformat(self.b.today)

    # -- first person ---------------------------------------------------------------------------

    def first_person(self, turn: int, s: str, core: str) -> None:
        if not self.talks_to_agent:
            return  # between people, `life_fact` resolves "I", "you" and "we" per speaker
        text = self.third(core)
        prof, owner = self.profile_note() if "profile" in self.stores else ("", self.owner)

        def profile(section: str, slot: str | None = None) -> None:
            body, replaces = self._slot_match(prof, slot, text) if slot else (text, None)
            self.emit(
                "profile",
                prof,
                section,
                body,
                turn,
                s,
                slug=owner,
                action="supersede" if replaces else "add",
                replaces=replaces,
                link=body == text,
            )

        m = ROLE_OF_USER.match(core)
        if m and not NOT_A_ROLE.search(core):
            if m.group("org") and self.team and "entities" in self.stores:
                org = m.group("org")
                rel = f"{self.profile_link()} is {m.group('art')} {m.group('role')} at {org}"
                self.ent_claim(org, "organisation", "Relations", rel, turn, s)
                text = self.third(core)  # now with a link to the organisation
            profile("Identity", "role")
        elif LOCATION.match(core):
            profile("Identity", "location")
        elif DUTIES.match(core):
            at = ORG_OF_USER.search(core)
            org = (at and at.group("org3")) or (at and at.group("org2"))
            if org and self.team and "entities" in self.stores and org not in STOP_NAMES:
                rel = f"{self.profile_link()} {self.third(core).split(' ', 1)[1].rstrip('.')}"
                self.ent_claim(org, "organisation", "Relations", rel, turn, s)
                text = self.third(core)  # now with a link to the organisation
            profile("Identity")
        elif PREFERENCE.match(core):
            profile("Preferences", "pref")
        elif HABIT.match(core):
            profile("How they work")
        elif WANT.match(core) and self.goals < 2:
            self.goals += 1
            self.session("Goal", text, turn, s)
        elif WILL.match(core):
            if self.addressee and has_addressee(core):
                return  # "I'll send it to you!": a courtesy to the other person, not a plan
            self.session("Plan", text, turn, s)
        elif DID.match(core):
            self.session("Progress", end(trim_so(text)), turn, s)
            self._resolve_threads(turn, s, core)

    def _slot_match(self, note: str, slot: str, text: str) -> tuple[str, str | None]:
        """(text to write, claim it supersedes): same slot and a different fact supersedes;
        restating a known preference ("I still prefer polars") reinforces the known claim."""
        new = _slot(text, slot)
        if new is None:
            return text, None
        olds = [c.text for c in self.ctx.claims("profile") if c.note == note]
        olds += [e.text for e in self.emitted if e.store == "profile" and e.note == note]
        for old in reversed(olds):
            o = _slot(old, slot)
            if o is None or claim_key(old) == claim_key(text):
                continue
            if slot != "pref":
                return text, old
            new_pair, old_pair = new.split(" over "), o.split(" over ")
            if len(new_pair) == 2 and len(old_pair) == 2 and new_pair[::-1] == old_pair:
                return text, old
            if len(new_pair) == 1 and new_pair[0].split()[:1] == old_pair[0].split()[:1]:
                return old, None
        return text, None

    # -- the team -------------------------------------------------------------------------------

    def we_statement(self, turn: int, s: str, core: str) -> None:
        if not WORK.search(core) and not (self.talks_to_agent and TECHNICAL.search(core)):
            return  # "we" with family or friends: a fact about the speaker, not the team
        text = end(trim_so(self.third(core)) if ", so " in core else self.third(core))
        if WE_GOAL.match(core):
            self.knowledge("Goals", text, turn, s)
            if self.goals < 2:
                self.goals += 1
                self.session("Goal", text, turn, s)
        elif WE_DID.match(core):
            self.knowledge("Progress", text, turn, s)
            self.session("Progress", text, turn, s)
        elif WE_FACT.match(core):
            self.knowledge("Facts", text, turn, s)

    def _fact_slot(self, note: str, text: str) -> str | None:
        new = _fact_subject(text, self.we)
        if new is None:
            return None
        olds = [c.text for c in self.ctx.claims("knowledge") if c.note == note]
        olds += [e.text for e in self.emitted if e.store == "knowledge" and e.note == note]
        for old in reversed(olds):
            if _fact_subject(old, self.we) == new and claim_key(old) != claim_key(text):
                return old
        return None

    def knowledge_note(self) -> tuple[str, str]:
        if self.team:
            topic = f"{self.org} team knowledge" if self.org else "Team knowledge"
            return self._title("knowledge", topic=topic), slugify(self.org or "team")
        return self._title("knowledge", topic=f"{self.name}'s working knowledge"), self.b.user

    def fact(self, turn: int, s: str, core: str) -> None:
        """A plain statement about the work ("The analytics lake is about 600 TB.")."""
        if not 4 <= len(core.split()) <= 40 or NOT_A_FACT.search(core):
            return
        if not self.talks_to_agent:
            return  # between friends, "Giving a home to kids is a loving way..." is no knowledge
        if "!" in core or EMOTIVE.search(core) or MAXIM.search(core):
            return  # "The sky was so gorgeous!", "Confidence is key": the moment, a maxim
        if not WORK.search(core) and not (self.talks_to_agent and TECHNICAL.search(core)):
            return  # between friends, "The lake was calm" is no team knowledge
        m = FACT.match(core)
        if not m or len(m.group("subj").split()) > 7:
            return
        subj = m.group("subj")
        if PRONOUN_SUBJECT.search(subj) or HEARSAY.search(subj):
            return  # "it is ...": no referent; "Marco says ...": Marco is the source
        if subj.split()[0] in STOP_NAMES and subj.split()[0] not in ("The", "Phase"):
            return
        if re.fullmatch(FULL, subj) and self.is_person(subj):
            return
        text = end(cap(trim_so(self._inner(core, self.name))))
        self.knowledge("Progress" if PROGRESS.search(core) else "Facts", text, turn, s)

    # -- sessions -------------------------------------------------------------------------------
