"""The built-in curator: deterministic, offline, extractive.

It reads only what users said (never the assistant, never pasted documents, code or HTML
comments) and recognises the sentence shapes people use to state durable facts:

- about themselves: identity ("I'm a ... at Org", "I live in ..."), preferences ("I prefer
  X over Y", "I hate ..."), habits ("I always ...", "I bill by the day"), plans ("I'll ...",
  "Next I need to ..."), progress ("I shipped ...") and corrections ("Actually, I meant X,
  not Y");
- about their team: goals ("We're trying to ..."), facts ("Our bill is ...", "We manage
  ...", "The lake is about 600 TB"), decisions ("We decided to ... because ...");
- about other people and organisations: roles ("Alex is our CTO", "my client Alex Chen",
  "Alex's analyst, Inês"), what they want or lead, "it's called X";
- standing instructions ("Always ...", "From now on ..."), only ever as proposals.

Every claim quotes the whole sentence it came from, so every claim verifies. Claims are
rewritten into the third person ("I prefer" -> "Dana prefers") so a note reads well out of
context; names are kept as said and linked to the entity they were resolved to. A first
name is resolved only when exactly one person with that first name is known in the scope;
otherwise nothing is claimed about them (two people who share a name are never merged).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memctl.curate import Batch, Entity, Extraction, Proposal, Quote
from memctl.notes import claim_key, strip_links
from memctl.raw import parse_time, slugify

if TYPE_CHECKING:
    from memctl.vault import Vault

# ---- vocabulary -------------------------------------------------------------------------------

_UP = "A-ZÀ-ÖØ-Þ"
_LO = "a-zà-öø-ÿ"
NAME = rf"[{_UP}][{_LO}'’-]*[{_LO}]"
FULL = rf"{NAME}(?: {NAME})?"
ORG = rf"[{_UP}][\w&-]*(?: [{_UP}][\w&-]*)*"
_ROLE_WORDS = (
    "cto|ceo|cfo|coo|cio|ciso|vp|founder|co-founder|cofounder|manager|boss|lead|head|engineer|"
    "developer|designer|analyst|scientist|consultant|client|customer|colleague|teammate|"
    "director|architect|intern|mentor|friend|partner|contractor|sre|pm|owner|admin|"
    "accountant|lawyer|advisor|investor|recruiter|researcher|editor|writer|tester|doctor"
)
ROLE = rf"(?:[A-Z]{{2,4}}|(?:[a-z-]+ ){{0,2}}(?:{_ROLE_WORDS}))"


def _wordset(text: str) -> frozenset[str]:
    """Word lists read best as prose."""
    return frozenset(text.split())


STOP_NAMES = _wordset(
    """I The A An This That These Those It He She They We You Our My Their His Her Its There
    Here What When Where Why How Who Which Hi Hey Hello Morning Thanks Thank OK Okay Yes No So
    And But Or Now Then Also Wait Good Great Perfect Last Next One Related Bad Ugh Ha Done Oh Wow
    Right Different Update Most Roughly About After Before Whatever Should Can Could Would Will
    Is Are Does Do Did Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February
    March April May June July August September October November December Phase Today Tomorrow
    Yesterday Please Let Sure Nice Cool Sorry Actually Anyway Just Still Once Maybe Every Each
    All Some Any Not Never Always"""
)
_MODALS = _wordset("can could will would should shall might may must")
_PAST_IRREGULAR = _wordset(
    "ran went came got made took set put cut shipped moved built wrote began did had was were "
    "said told found left kept sent spent paid split read led"
)
_COMMON_VERBS = _wordset(
    "move write run test use set put build check keep start make ship deploy cache split add "
    "fix review read try work prefer like hate need want bill charge go do have create rotate "
    "tell look open close send track throw bake sell plan lead own manage handle maintain "
    "love avoid"
)
_IRREGULAR = {"be": "is", "am": "is", "are": "is", "have": "has", "do": "does", "go": "goes"}


def _re(*parts: str, flags: int = 0) -> re.Pattern[str]:
    return re.compile("".join(parts), flags)


# ---- sentence shapes --------------------------------------------------------------------------

_DISCOURSE = _re(
    r"^(?:(?i:OK|Okay|So|Well|Oh|And|But|Also|Wait|Yes|Yeah|No|Right|Actually|Hmm|Now|Anyway|",
    r"Plus|Then|Honestly|Basically|Sorry|Oops|Correction|Ugh|Ha|Wow|Great|Perfect|Cool|Sure)",
    r"\b[,!:]?\s+|(?:Bad|Good|Great) news(?: too)?:\s+|(?:Last|One more) (?:one|thing):\s+|",
    r"[A-Z][a-z]+ (?:problem|question|update|note):\s+)",
)
_CORRECTION_CUE = _re(r"^(?:Actually|Sorry|Correction|Oops|Wait|No)\b", flags=re.I)
_CORRECTION = _re(
    r"^(?:I meant|it's|it is|that's|that should be|make that)\s+(?P<new>.+?),?\s+",
    r"not\s+(?P<old>[^,.;!]+?)\s*[.!]?$",
    flags=re.I,
)
_REL_TIME = _re(
    r"\b(?:(?:this|next|last|coming|previous) (?:week|month|quarter|year|sprint)|today|",
    r"tomorrow|yesterday|tonight|right now|currently|now|ago|so far|these days)\b",
    flags=re.I,
)
_OPTIONS = _re(
    rf"\b(?:go with|use|pick|choose|between|deciding between) (?P<a>{ORG}) ",
    rf"(?:or|and|vs\.?) (?P<b>{ORG})",
)
_DECISION = _re(
    r"^(?P<who>We|I)(?:'ve| have)? (?:decided|agreed|chose|settled) (?:to |on |that )?",
    r"(?P<what>.+?)[.!]?$|",
    r"^(?P<who2>We|I)(?:'re| are|'m| am) going (?:to go )?with (?P<what2>.+?)[.!]?$",
)
_INSTRUCTION = _re(
    r"^(?:[Pp]lease )?(?:[Aa]lways|[Nn]ever|[Ff]rom now on|[Gg]oing forward|",
    r"[Ii]n (?:the )?future|[Rr]emember to|[Dd]on't ever|[Dd]o not ever)\b",
)
_ORG_OF_USER = _re(
    rf"\bI(?:'m| am) (?:an?|the) [^.!?]*? at (?P<org>{ORG})|\bI work (?:at|for) (?P<org2>{ORG})"
)
_FIRST_PERSON = _re(r"^I(?:'m|'ve|'d|'ll| )")
_WE = _re(r"^(?:We(?:'re|'ve|'ll| )|Our )")
_ROLE_OF_USER = _re(
    rf"^I(?:'m| am) (?P<art>an?|the) (?P<role>[^,.;!]+?)(?: at (?P<org>{ORG}))?\s*[.!]?$"
)
_NOT_A_ROLE = _re(r"\b(?:trying|going|looking|working on|about to)\b")
_LOCATION = _re(
    r"^I (?:live|am based|reside|'m based|live and work) in |^I(?:'m| am) based in |",
    rf"^I (?:just |recently )?(?:moved|relocated) to {NAME}",
)
_DUTIES = _re(r"^I work (?:at|for|as) |^I (?:own|run|lead|manage|maintain|handle) ")
_PREFERENCE = _re(
    r"^I (?:\w+ly |still |also |really )*",
    r"(?:prefer|like|love|hate|dislike|avoid|can't stand) .+$",
)
_HABIT = _re(
    r"^I (?:\w+ly )?(?:always|never|usually|typically|generally|normally|tend to|mostly) |",
    r"^I(?:'m| am) on call|",
    r"^I (?:bill|charge|invoice|work) (?:by|per|hourly|daily|remotely|from|async)",
)
_WANT = _re(r"^I (?:still )?(?:want|need|'d like|would like) (?:to |a |an |something |some )")
_WILL = _re(r"^I(?:'ll| will|'m going to) ")
_DID = _re(
    r"^I (?:just )?(?:shipped|fixed|moved|added|deployed|finished|migrated|set up|rotated|",
    r"created|built|merged|released|launched|re-ran|reran|cut|reduced|split|rolled out|",
    r"switched)\b",
)
_WE_GOAL = _re(
    r"^We(?:'re| are) (?:trying|aiming|planning|hoping|working) to |",
    r"^We (?:need|want|plan|hope) to ",
)
_WE_DID = _re(
    r"^We (?:just |already )?(?:moved|shipped|cut|reduced|migrated|finished|launched|",
    r"rolled out|switched|deployed|added|fixed|built)\b",
)
_WE_FACT = _re(
    r"^(?:We(?:'re| are| have|'ve| use| manage| run| keep| own| store| deploy| pay| spend|",
    r" host| build| ship| bill| track)\b|",
    r"Our [\w\s/-]+? (?:is|are|was|were|runs|run|has|have|costs|comes|lives)\b)",
)
_PLAN = _re(r"^(?:the )?plan(?: is)?:\s*(?P<what>.+)$", flags=re.I)
_OPEN_ITEMS = _re(
    r"^(?:Open items|Open questions|TODO|To do|Still to do|Remaining|Next steps|Follow-ups?):",
    r"\s*(?P<what>.+)$",
    flags=re.I,
)
_NEXT = _re(r"^(?:Next|Then|After that),? I (?:still )?(?:need|have|want) to (?P<what>.+)$")
_THREAD = _re(r"\bneeds? to (?:\w+ )(?:at |on |into |to )?(?P<obj>[\w ./-]+?)[.(]")
_FILLER = _wordset("the our their its his her this that these those and for with from into")
_RESOLVED = _re(r"\b(?:back to|parked|done with|finished|fixed|shipped|closed|resolved)\b")
_FACT = _re(
    r"^(?P<subj>(?:[Tt]he |[A-Z0-9$][\w$./%-]*)[^,:;]*?) ",
    r"(?P<verb>is|are|was|were|has been|have been|runs|went|goes|comes|come|sits|costs|takes|",
    r"dropped|fell|rose)\b",
)
_NOT_A_FACT = _re(r"\b(?:you|your|I|I'm|me|my|would|could|should|might|maybe|if)\b")
_PRONOUN_SUBJECT = _re(
    r"\b(?:it|this|that|these|those|they|he|she|there|here|what|which|who)\b", flags=re.I
)
_HEARSAY = _re(r"\b(?:says|said|thinks|thought|mentioned|told|heard|asked|reckons)\b")
_PROGRESS = _re(
    r"\b(?:went in|went from|went fine|dropped|is down|are down|down to|down from|cut .* by|",
    r"is live|has been live|shipped)\b",
)
_GOOD = _re(
    r"^(?:Good (?:catch|call|point|idea)|Perfect|Great|Nice|That worked|That fixed it|",
    r"That did it|This works|It works|Works)\b",
)
_BETTER = _re(r"\b(?:sounds|looks|seems) (?:much |a lot |way )?(?:better|good|great|right)\b")
_BAD = _re(
    r"\b(?:didn't|did not|doesn't|does not) (?:work|help|fix)\b|",
    r"\btoo (?:long|verbose|slow|complicated)\b|\bthat's wrong\b|\bnot what I\b",
)
# Entities.
_IS_OUR_ROLE = _re(
    rf"^(?P<name>{FULL}) is (?P<poss>our|my|their|the) ",
    rf"(?P<role>{ROLE}(?: of (?:the )?[\w-]+(?: [{_UP}][\w-]*)*)?)",
    r"(?:,? and (?:he|she|they)(?:'s| is|'re| are) (?P<rest>[^.;!]+))?\s*[.!]?$",
)
_MY_ROLE_NAME = _re(
    rf"\b(?P<poss>[Mm]y|[Oo]ur) (?P<role>{ROLE}),? (?P<name>{FULL})",
    r"(?:,? (?P<verb>runs|leads|owns|manages|wants|works (?:at|for|on)|is) (?P<rest>[^.;!]+))?",
)
_OWNERS_ROLE = _re(rf"\b(?P<owner>{FULL})'s (?P<role>{ROLE}), (?P<name>{FULL})\b")
_CALLED = _re(
    rf"^It(?:'s| is) called (?P<name>{ORG})",
    r"(?:,? and it(?:'s| is) (?P<rest>[^.;!]+))?\s*[.!]?$",
)
_PERSON_DOES = _re(
    rf"^(?P<name>{FULL}|He|She)(?P<mod> on (?:our|the|my) [\w -]+? team)? ",
    r"(?P<verb>wants|is leading|leads|runs|owns|manages|added|joined|left|is now|",
    r"already added|is)\b(?P<rest>[^.;!]*)",
)
_IS_WHAT = _re(r"^ (?:leading|running|on|in charge|responsible|the (?:one|owner|lead))\b")
_PERSONS_THING = _re(
    rf"^(?P<name>{FULL})'s (?P<what>team|company|startup|product|customers|business|clients)",
    rf"(?: (?:in|at) {ORG})? (?:is|are|was|were|has|have|cares?|wants?|needs?)\b",
)
_LINK = _re(r"\[\[.*?\]\]")
_WORD = _re(r"[A-Za-z][\w-]{2,}")


def conj(verb: str, habitual: bool = False) -> str:
    """Third person singular of an English verb as people type it ("write" -> "writes").

    `habitual` (after "always", "never", ...) means present tense even for "set" or "put".
    """
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if (
        low in _MODALS
        or (low in _PAST_IRREGULAR and not habitual)
        or (low.endswith("ed") and not low.endswith("eed"))
        or "'" in low
        or not low.isalpha()
    ):
        return verb
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return verb + "es"
    if low.endswith("y") and len(low) > 1 and low[-2] not in "aeiou":
        return verb[:-1] + "ies"
    return verb + "s"


# ---- reading user text ------------------------------------------------------------------------

_FENCE = _re(r"^\s*(```|~~~)")
_PASTE = _re(r"^\s*-{2,}\s*\S.*?-{2,}\s*$")
_NOT_PROSE = _re(r"^(?:#|\||>|    |\t|\s*(?:[-*+]|\d+[.)])\s)")
_SPLIT = _re(r"(?<=[.!?])[)\"'”’]?\s+")


def prose_sentences(content: str) -> list[str]:
    """Sentences of the prose a person typed: no code, no pastes, no HTML comments, no lists.

    Each sentence is an exact substring of `content`, so it can be quoted verbatim.
    """
    out: list[str] = []
    in_fence = in_comment = in_paste = False
    for line in content.split("\n"):
        if in_comment:
            in_comment = "-->" not in line
            continue
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        if "<!--" in line:
            in_comment = "-->" not in line.split("<!--", 1)[1]
            continue
        if _PASTE.match(line):
            in_paste = not in_paste
            continue
        if in_paste or not line.strip() or _NOT_PROSE.match(line):
            continue
        start = 0
        for m in _SPLIT.finditer(line):
            piece = line[start : m.start() + 1].strip()
            if piece:
                out.append(piece)
            start = m.end()
        tail = line[start:].strip()
        if tail:
            out.append(tail)
    return out


def core_of(sentence: str) -> str:
    """The sentence without leading discourse markers ("OK, so", "Bad news:")."""
    core = sentence
    while True:
        m = _DISCOURSE.match(core)
        if not m or m.end() >= len(core):
            return core
        core = core[m.end() :]


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _end(text: str) -> str:
    text = re.sub(r"[\s,;:]+$", "", text.rstrip())
    return text if text.endswith((".", "!", "?", ")")) else text + "."


def _trim_so(text: str) -> str:
    """Drop a trailing consequence (", so ...", ", which ...") a claim does not need."""
    return re.split(r",\s+(?:so|which|since then)\s+", text, maxsplit=1)[0]


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


def _fact_subject(text: str, we: str) -> str | None:
    """ "Acme's egress bill is about $14k" -> "egress bill": two facts about one subject."""
    plain = strip_links(text)
    m = re.match(rf"^(?:{re.escape(we)}'s|The|the) (?P<np>[\w\s/-]+?) (?:is|are|was|were) ", plain)
    return m.group("np").lower() if m else None


# ---- the curator ------------------------------------------------------------------------------


@dataclass
class _Ent:
    title: str
    type: str
    path: str | None
    aliases: set[str] = field(default_factory=set)


@dataclass
class _Emitted:
    store: str
    note: str
    section: str
    text: str
    turn: int
    quote: str


class BuiltinCurator:
    """Deterministic, offline, extractive; see the module docstring for what it extracts."""

    name = "builtin"

    def __init__(self, vault: Vault | None = None, model: str | None = None) -> None:
        self.model = None  # no model: the same turns always give the same notes
        del vault, model

    def extract(self, batch: Batch) -> Extraction:
        return Extraction(_Extractor(batch).run())


class _Extractor:
    """One pass over one batch; state is what this session has said so far."""

    def __init__(self, batch: Batch) -> None:
        self.b = batch
        self.ctx = batch.context
        self.stores = batch.stores
        self.out: list[Proposal] = []
        self.emitted: list[_Emitted] = []
        h = batch.header
        named = [m.name for m in batch.messages if m.role == "user" and m.name]
        self.name = next((n for n in named if n.lower() != "user"), "") or _cap(h.user)
        self.team = h.scope in ("team", "global")
        self.org = self._find_org()
        self.we = self.org or ("The team" if self.team else f"{self.name}'s team")
        self.ents = {
            e.title.casefold(): _Ent(e.title, e.type, e.path, set(e.aliases))
            for e in self.ctx.entities()
        }
        self.people = set(self.ctx.people())
        self.session_names = self._full_names()
        self.last_person: str | None = None
        self.goals = 0
        self.options: tuple[int, str, str, str] | None = None
        self.pending_org: tuple[str, str, int, str] | None = None

    # -- setup ----------------------------------------------------------------------------------

    def _user_turns(self, all_turns: bool = False) -> list[tuple[int, str]]:
        return [
            (i, m.content)
            for i, m in enumerate(self.b.messages, 1)
            if m.role == "user" and (all_turns or i >= self.b.start)
        ]

    def _find_org(self) -> str | None:
        """The user's organisation: said in this session, else already known to memory."""
        for _, content in self._user_turns(all_turns=True):
            m = _ORG_OF_USER.search(content)
            if m:
                return m.group("org") or m.group("org2")
        for c in self.ctx.claims("profile"):
            if c.section == "Identity" and c.note.casefold().endswith(self.b.user.casefold()):
                m = re.search(rf" at (?P<org>{ORG})", strip_links(c.text))
                if m:
                    return m.group("org")
        if self.team:
            # The team's knowledge note is named after the organisation: keep using it.
            for c in self.ctx.claims("knowledge"):
                m = re.match(rf"^(?P<org>{ORG}) team knowledge$", c.note)
                if m:
                    return m.group("org")
        return None

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
    ) -> None:
        if store not in self.stores:
            return
        if dated and _REL_TIME.search(strip_links(text)) and "(as of " not in text:
            # "next quarter" means nothing a year later: say when it was said.
            text = text.rstrip(".") + f" (as of {self._date(turn)})."
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
            )
        )
        self.emitted.append(_Emitted(store, note, section, text, turn, quote))

    def session(self, section: str, text: str, turn: int, quote: str, link: bool = True) -> None:
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
        spans = [m.span() for m in _LINK.finditer(text)]
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
                    spans = [x.span() for x in _LINK.finditer(text)]
                    break
        return text

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

    def entity(self, title: str, type_: str, alias: str | None = None) -> _Ent:
        ent = self.ents.setdefault(title.casefold(), _Ent(title, type_, None))
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
            _end(text),
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
        pat = re.compile(rf"^{re.escape(title)} is (?P<poss>\S+'s|an?|the) ")
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
        path = self.ctx.path_for("profile", self._title("profile"), self.b.user)
        return f"[[{path[:-3]}|{self.name}]]"

    # -- third person ---------------------------------------------------------------------------

    def third(self, core: str) -> str:
        """Rewrite first person into third: "I always write X" -> "Dana always writes X"."""
        who, text = self.name, core
        lead = {"I'm": "is", "I am": "is", "I've": "has", "I'd": "would", "I'll": "will"}
        for head, verb in lead.items():
            if re.match(rf"^{head}\b", text):
                text = f"{who} {verb}" + text[len(head) :]
                break
        else:
            m = re.match(
                r"^I ((?:\w+ly |still |just |also |always |never |often |only )*)(\S+)", text
            )
            if m:
                habitual = bool(re.search(r"always|never|usually|often|ly ", m.group(1)))
                text = f"{who} {m.group(1)}{conj(m.group(2), habitual)}" + text[m.end() :]
                text = re.sub(
                    r"\b(and|or) (\w+)\b",
                    lambda k: (
                        f"{k.group(1)} {conj(k.group(2), True)}"
                        if k.group(2).lower() in _COMMON_VERBS
                        else k.group(0)
                    ),
                    text,
                    count=1,
                )
        we_lead = {"We're": "is", "We are": "is", "We've": "has", "We'll": "will"}
        for head, verb in we_lead.items():
            if re.match(rf"^{head}\b", text):
                text = f"{self.we} {verb}" + text[len(head) :]
                break
        else:
            m = re.match(r"^We ((?:\w+ly |still |just |also |already |all )*)(\S+)", text)
            if m:
                text = f"{self.we} {m.group(1)}{conj(m.group(2))}" + text[m.end() :]
            elif text.startswith("Our "):
                text = f"{self.we}'s" + text[3:]
        return _end(_cap(self._inner(text, who)))

    def _inner(self, text: str, who: str) -> str:
        """First person after the subject: "they" when it is the user, else the user's name."""
        me = who == self.name
        n = self.name
        subs = [
            (r"\bI'm\b", "they're" if me else f"{n} is"),
            (r"\bI am\b", "they are" if me else f"{n} is"),
            (r"\bI've\b", "they've" if me else f"{n} has"),
            (r"\bI'd\b", "they'd" if me else f"{n} would"),
            (r"\bI'll\b", "they'll" if me else f"{n} will"),
            (r"\bI\b", "they" if me else n),
            (r"\bmyself\b", "themself" if me else n),
            (r"\bme\b", "them" if me else n),
            (r"\b[Mm]y\b", "their" if me else f"{n}'s"),
            (r"\bmine\b", "theirs" if me else f"{n}'s"),
            (r"\bour\b", "its" if text.startswith(self.we) else f"{self.we}'s"),
            (r"\bus\b", self.we),
        ]
        for pat, rep in subs:
            text = re.sub(pat, rep, text)
        return text

    # -- the pass -------------------------------------------------------------------------------

    def run(self) -> list[Proposal]:
        for turn, content in self._user_turns():
            self.last_person = None
            prev: str | None = None
            for sentence in prose_sentences(content):
                if len(sentence) >= 8 and len(sentence.split()) <= 60:
                    self.sentence(turn, sentence, core_of(sentence), prev)
                prev = sentence
        return self.out

    def sentence(self, turn: int, s: str, core: str, prev: str | None) -> None:
        if "?" in core:
            m = _OPTIONS.search(core)  # a question is no fact; its options feed decisions
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
        if _FIRST_PERSON.match(core):
            self.first_person(turn, s, core)
        elif _WE.match(core):
            self.we_statement(turn, s, core)
        elif not self.session_lists(turn, s, core):
            self.fact(turn, s, core)
        self.feedback(turn, s, core)

    # -- corrections and decisions --------------------------------------------------------------

    def correction(self, turn: int, s: str, core: str) -> bool:
        """ "Actually, I meant $14k a month, not $40k." corrects the claim that said $40k."""
        m = _CORRECTION.match(core)
        if not m or not (core.lower().startswith("i meant") or _CORRECTION_CUE.match(s)):
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
        m = _DECISION.match(core)
        if not m:
            return False
        what = m.group("what") or f"go with {m.group('what2')}"
        who = m.group("who") or m.group("who2")
        reason = None
        r = re.match(r"^(?P<what>.+?),? because (?P<why>.+)$", what)
        if r:
            what, reason = r.group("what"), r.group("why")
        topic = _cap(" ".join(re.split(r",\s+|\s+(?:since|so that|so)\s+", what)[0].split()[:9]))
        date = self._date(turn)
        title = self._title("decisions", topic=topic) if "decisions" in self.stores else topic
        slug = f"{date}-{slugify(topic, 50)}"
        meta = (("valid_from", date),)
        subject = self.we if who == "We" else self.name

        def claim(section: str, text: str, t: int = turn, q: str = s, link: bool = True) -> None:
            self.emit("decisions", title, section, text, t, q, slug=slug, meta=meta, link=link)

        claim("Decision", f"{subject} decided to {self._inner(what, self.name)}.")
        claim("Decision", f"Decided on {date}, stated by {self.name}.", link=False)
        if reason:
            claim("Why", _cap(self._inner(reason, self.name)).rstrip(".") + ".")
        if self.options:
            oturn, osent, a, b = self.options
            if any(x.split()[0].lower() in what.lower() for x in (a, b)):
                claim("Alternatives", f"Considered {a} and {b}.", oturn, osent)
        if "decisions" in self.stores:
            path = self.ctx.path_for("decisions", title, slug)
            self.session("Progress", f"Decided: [[{path[:-3]}|{topic}]].", turn, s, link=False)
        return True

    def instruction(self, turn: int, s: str, core: str) -> bool:
        """ "Always ...", "From now on ...": standing instructions, only ever proposed."""
        if not _INSTRUCTION.match(core):
            return False
        scope_name = "team" if self.team else self.b.user
        if "instructions" in self.stores:
            title = self._title("instructions", topic=scope_name)
            title = f"Instructions ({scope_name})" if title == "Instructions" else title
            self.emit(
                "instructions",
                title,
                "Instructions",
                _end(_cap(core)),
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

    # -- first person ---------------------------------------------------------------------------

    def first_person(self, turn: int, s: str, core: str) -> None:
        text = self.third(core)
        prof = self._title("profile") if "profile" in self.stores else ""

        def profile(section: str, slot: str | None = None) -> None:
            body, replaces = self._slot_match(prof, slot, text) if slot else (text, None)
            self.emit(
                "profile",
                prof,
                section,
                body,
                turn,
                s,
                slug=self.b.user,
                action="supersede" if replaces else "add",
                replaces=replaces,
                link=body == text,
            )

        m = _ROLE_OF_USER.match(core)
        if m and not _NOT_A_ROLE.search(core):
            if m.group("org") and self.team and "entities" in self.stores:
                org = m.group("org")
                rel = f"{self.profile_link()} is {m.group('art')} {m.group('role')} at {org}"
                self.ent_claim(org, "organisation", "Relations", rel, turn, s)
                text = self.third(core)  # now with a link to the organisation
            profile("Identity", "role")
        elif _LOCATION.match(core):
            profile("Identity", "location")
        elif _DUTIES.match(core):
            profile("Identity")
        elif _PREFERENCE.match(core):
            profile("Preferences", "pref")
        elif _HABIT.match(core):
            profile("How they work")
        elif _WANT.match(core) and self.goals < 2:
            self.goals += 1
            self.session("Goal", text, turn, s)
        elif _WILL.match(core):
            self.session("Plan", text, turn, s)
        elif _DID.match(core):
            self.session("Progress", _end(_trim_so(text)), turn, s)
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
        text = _end(_trim_so(self.third(core)) if ", so " in core else self.third(core))
        if _WE_GOAL.match(core):
            self.knowledge("Goals", text, turn, s)
            if self.goals < 2:
                self.goals += 1
                self.session("Goal", text, turn, s)
        elif _WE_DID.match(core):
            self.knowledge("Progress", text, turn, s)
            self.session("Progress", text, turn, s)
        elif _WE_FACT.match(core):
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
        if not 4 <= len(core.split()) <= 40 or _NOT_A_FACT.search(core):
            return
        m = _FACT.match(core)
        if not m or len(m.group("subj").split()) > 7:
            return
        subj = m.group("subj")
        if _PRONOUN_SUBJECT.search(subj) or _HEARSAY.search(subj):
            return  # "it is ...": no referent; "Marco says ...": Marco is the source
        if subj.split()[0] in STOP_NAMES and subj.split()[0] not in ("The", "Phase"):
            return
        if re.fullmatch(FULL, subj) and self.is_person(subj):
            return
        text = _end(_cap(_trim_so(self._inner(core, self.name))))
        self.knowledge("Progress" if _PROGRESS.search(core) else "Facts", text, turn, s)

    # -- sessions -------------------------------------------------------------------------------

    def session_title(self) -> str:
        title = self.b.header.title
        while True:  # "Morning! I'm a ..." -> "I'm a ...": greetings make poor titles
            m = re.match(r"^\S+(?: \S+){0,2}?[.!]\s+(?=\S)", title)
            if not m or len(title) - m.end() < 12:
                break
            title = title[m.end() :]
        return self._title("sessions", title=title)

    def session_slug(self) -> str:
        stem = self.b.session.rsplit("/", 1)[-1][:-3]
        m = re.search(r"-([0-9a-f]{6})$", stem)
        short = stem[: m.start()] if m else stem
        started = parse_time(self.b.header.started)
        date = started.date().isoformat() if started else self._date(1)
        return f"{date}-{short[:40].rstrip('-')}" + (f"-{m.group(1)}" if m else "")

    def session_lists(self, turn: int, s: str, core: str) -> bool:
        m = _PLAN.match(core)
        if m:
            self.session("Plan", _end("Plan: " + m.group("what")), turn, s)
            return True
        m = _OPEN_ITEMS.match(core)
        if m:
            self.session(
                "Open threads", _end(_cap(self._inner(m.group("what"), self.name))), turn, s
            )
            return True
        m = _NEXT.match(core)
        if m:
            what = self._inner(m.group("what"), self.name)
            self.session("Open threads", _end(f"{self.name} needs to {what}"), turn, s)
            return True
        return False

    def _resolve_threads(self, turn: int, s: str, core: str) -> None:
        """A later session that ships what an earlier one left open closes that thread."""
        said = {w.lower() for w in _WORD.findall(core)}
        content = self.b.messages[turn - 1].content
        if _RESOLVED.search(content):
            said |= {w.lower() for w in _WORD.findall(content)}
        for c in self.ctx.claims("sessions"):
            if c.section != "Open threads" or c.note == self.session_title():
                continue
            plain = strip_links(c.text)
            thread = _THREAD.search(plain + ".")
            if not plain.startswith(self.name + " ") or not thread:
                continue
            obj = {w.lower() for w in _WORD.findall(thread.group("obj"))} - _FILLER
            if obj and obj <= said:
                self.out.append(
                    Proposal(
                        "sessions",
                        c.note,
                        c.section,
                        "",
                        (Quote(turn, s),),
                        action="resolve",
                        replaces=c.text,
                    )
                )

    def feedback(self, turn: int, s: str, core: str) -> None:
        """What the user said worked ("Good catch ...") or did not ("too long")."""
        good = _GOOD.match(s) or _BETTER.search(core)
        bad = _BAD.search(core)
        if not (good or bad) or len(s.split()) < 5 or "?" in s or "feedback" not in self.stores:
            return
        when = self._date(turn)
        if "sessions" in self.stores:
            path = self.ctx.path_for("sessions", self.session_title(), self.session_slug())
            when = f"[[{path[:-3]}|{when}]]"
        text = f"{self.third(core if core.startswith('I') else s)} ({when})"
        title = self._title("feedback", topic=self.name)
        section = "Did not work" if bad else "Worked"
        self.emit("feedback", title, section, text, turn, s, slug=self.b.user, link=False)

    # -- entities -------------------------------------------------------------------------------

    def entities(self, turn: int, s: str, core: str, prev: str | None) -> None:
        # "Alex is our CTO and he's leading the migration."
        m = _IS_OUR_ROLE.match(core)
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
        for m in _MY_ROLE_NAME.finditer(s):
            title = (
                None if m.group("name").split()[0] in STOP_NAMES else self.resolve(m.group("name"))
            )
            if not title:
                continue
            poss, role = m.group("poss").lower(), m.group("role")
            role_text = f"{title} is {self.poss(poss)} {role}"
            self.ent_claim(title, "person", "Facts", role_text, turn, s, alias=m.group("name"))
            if m.group("verb"):
                rest = _trim_so(self._inner(m.group("rest"), title))
                self.ent_claim(
                    title, "person", "Facts", f"{title} {m.group('verb')} {rest}", turn, s
                )
                if m.group("verb") == "runs":
                    self.pending_org = (title, m.group("rest").strip(), turn, s)
            self._relate(title, role, poss, turn, s)
        # "Alex's analyst, Inês"
        for m in _OWNERS_ROLE.finditer(s):
            owner, title = self.resolve(m.group("owner")), self.resolve(m.group("name"))
            if not owner or not title or m.group("name") in STOP_NAMES:
                continue
            self.entity(owner, "person")
            rel = f"{title} is {m.group('owner')}'s {m.group('role')}"
            self.ent_claim(title, "person", "Relations", rel, turn, s, alias=m.group("name"))
            self.ent_claim(owner, "person", "Relations", rel, turn, s)
        # "It's called Crumbwise and it's based in Porto."
        m = _CALLED.match(core)
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
        m = _PERSON_DOES.match(core)
        if m:
            mention = m.group("name")
            pronoun = mention in ("He", "She")
            if pronoun:
                title = self.last_person
            else:
                title = self.resolve(mention) if self.is_person(mention) else None
            if title is None or (m.group("verb") == "is" and not _IS_WHAT.match(m.group("rest"))):
                return
            body = re.split(r",? and I(?:'m| am)? ", core[m.end("name") :], maxsplit=1)[0]
            body = self._inner(_trim_so(body), title)
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
        m = _PERSONS_THING.match(core)
        if m and self.is_person(m.group("name")):
            title = self.resolve(m.group("name"))
            if title:
                body = self._inner(_trim_so(core[m.start("what") :]), title)
                self.ent_claim(
                    title,
                    "person",
                    "Facts",
                    f"{m.group('name')}'s {body}",
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
            note = self._title("profile")
            self.emit("profile", note, "People", text, turn, s, slug=self.b.user, link=False)
        elif poss == "our" and self.org and self.team:
            self.entity(self.org, "organisation")
            self.ent_claim(
                self.org, "organisation", "Relations", f"{who} is {self.org}'s {role}", turn, s
            )
