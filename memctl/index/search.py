"""Search: any user text -> a query plan -> ranked, filtered, typed hits.

Ranking is BM25 over three views of each turn: its own words (with the speaker), a window
that adds the turns before it (answers usually reply to the previous turn) and its date as
words. Claim lines that match the query lift the turns they cite (`claim_keys`). The two
best scores of each session are then blended into its turns, so a turn from the
conversation that is about the topic beats a stray mention elsewhere, and a turn said by
a person the query names is lifted (`speakers_named`), and a turn that mostly asks is
ranked below the turns that say something (`asked_less`). A list question ("What European
countries has Maria been to?") also matches its kind noun against the WordNet kinds of each
turn's words (KINDS, memctl.index.kinds), so "Spain" answers it. bench/recall.py measures this
on LoCoMo; bench/README.md has the numbers behind each knob.
"""

from __future__ import annotations

import contextlib
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime
from typing import Any

from memctl.core.diskspace import out_of_space
from memctl.core.when import parse_when
from memctl.errors import InputError, MemctlError
from memctl.index import writer
from memctl.index.host import IndexedVault
from memctl.index.reader import IN_MEMORY, Candidate, Doc, Filters, Plan, Reader
from memctl.index.schema import BODY, EXACT, KINDS, WHEN, WINDOW, IndexBroken, analyze

STATUSES = ("active", "proposed", "superseded", "retracted")


# Ranking knobs, chosen on the LoCoMo dev split (bench/README.md).
W_WINDOW = 1.0  # the turn plus its two previous turns
W_WHEN = 1.0  # date words
W_EXACT = 2.0  # whole ids, names, titles, aliases, tags
W_SESSION = 0.3  # share of the session's two best scores added to each of its turns
MIN_CANDIDATES = 50  # ranked before blending; more did not change recall
W_SPEAKER = 0.5  # extra share of score for a turn said by a person the query names
W_CLAIM = 0.5  # a turn cited by a matching claim line scores at least this share of it
CLAIM_POOL = 20  # best-matching claim lines whose cited turns are lifted
W_PHRASE = 1.0  # extra weight of a quoted phrase in a query that has other words too
W_ASK = 0.6  # a turn made only of questions scores this share (W_ASK ** share asked)
W_ANSWER = 0.7  # the turn after one that asks scores at least this share of the asker's score
W_KIND = 1.0  # the kind noun of a list question, matched against the kinds of a turn's words
W_DATED = 0.3  # a question that asks when: a turn whose window says when scores (1 + this)x
W_VARIANT = 0.5  # the other stem of a word's noun/adjective pair ("allergies" -> "allergic")

# English function words plus question words: "what did Dana say about egress" must be
# carried by "dana", "egress", not by "what", "did", "about".
STOPWORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been
    before being below between both but by can can't cannot could couldn't did didn't do does
    doesn't doing don't down during each few for from further had hadn't has hasn't have
    haven't having he he'd he'll he's her here here's hers herself him himself his how how's i
    i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't my
    myself no nor not of off on once only or other ought our ours ourselves out over own same
    shan't she she'd she'll she's should shouldn't so some such than that that's the their
    theirs them themselves then there there's these they they'd they'll they're they've this
    those through to too under until up very was wasn't we we'd we'll we're we've were weren't
    what what's when when's where where's which while who who's whom why why's with won't
    would wouldn't you you'd you'll you're you've your yours yourself yourselves""".split()
)

# A question that asks for a list of a kind: "What European countries has Maria been to?",
# "Which books did she read?". Its plural noun phrase (up to three words) names the kind; the
# turns that answer name instances ("Spain"), found through their words' kinds (KINDS).
_LIST_KIND = re.compile(
    r"\s*(?:what|which)\s+((?:[a-z-]+\s+){0,2}?[a-z-]+s)\b\s+"
    r"(?:has|have|had|did|does|do|is|are|was|were|might|would|could)\b",
    re.IGNORECASE,
)
# A question that asks when: "When did ...", "How long has ...", "In what year ...", "How
# many weeks ...". Its answer is a date, told by the turn that says when ("last week").
_WHEN = re.compile(
    r"\s*(?:when\b|how\s+long\b|(?:in\s+|during\s+)?(?:what|which)\s+"
    r"(?:year|month|day|date|week|season|time)s?\b|how\s+many\s+(?:days|weeks|months|years)\b)",
    re.IGNORECASE,
)
_QUOTED = re.compile(r'"([^"]*)"|“([^”]*)”')
_WORD = re.compile(r"[\w'’]+")
_EDGE_PUNCT = ".,;:!?()[]{}<>\"'`“”‘’"


@dataclass(frozen=True)
class Hit:
    """One ranked result: a raw turn (`raw/...md#tN`) or a note (its path)."""

    ref: str
    kind: str  # "turn" | "note" | "claim"
    score: float
    snippet: str
    highlights: tuple[tuple[int, int], ...] = ()  # (start, end) char ranges in `snippet`
    text: str = ""
    user: str | None = None
    scope: str | None = None
    timestamp: str | None = None  # turns: the message's time; notes: updated or created
    # turns
    id: str | None = None  # the message's own id from the input, when it had one
    session: str | None = None
    speaker: str | None = None
    role: str | None = None
    rewound: int | None = None  # on a branch the user left: the turn that replaced it (not in JSON)
    # notes
    store: str | None = None
    title: str | None = None
    status: str | None = None
    cites: tuple[str, ...] = ()  # the turn refs its claims cite
    links: tuple[str, ...] = ()  # the note paths it links to (notes only)
    # claims
    section: str | None = None
    quotes: tuple[str, ...] = ()  # the verbatim words of each citation, in `cites` order
    inferred: bool = False
    observed: bool = False  # read from what the agent's or a tool's turn shows
    project: str | None = None  # notes, claims: the project id their note records (not in JSON)
    # turns: the notes whose claim lines matched the query and cite this turn (not in JSON)
    via: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The pinned JSON shape of a hit (see tests/test_search_cli.py)."""
        out: dict[str, Any] = {
            "ref": self.ref,
            "kind": self.kind,
            "score": round(self.score, 4),
            "snippet": self.snippet,
        }
        if self.kind == "turn":
            out.update(
                id=self.id,
                session=self.session,
                speaker=self.speaker,
                role=self.role,
                timestamp=self.timestamp,
            )
        else:
            out.update(
                store=self.store, title=self.title, status=self.status, cites=list(self.cites)
            )
        return out


@dataclass(frozen=True)
class SearchResult:
    """Ranked hits for a query, plus notices (e.g. "index rebuilt") for the caller to show."""

    query: str
    hits: list[Hit]
    notices: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "hits": [h.to_json() for h in self.hits],
        }


# ---- query text ---------------------------------------------------------------------------


@dataclass(frozen=True)
class ParsedQuery:
    """User text split into quoted phrases and loose words (stopwords already dropped)."""

    phrases: tuple[tuple[str, ...], ...]
    terms: tuple[str, ...]
    exact: tuple[str, ...]
    words: tuple[str, ...] = ()  # the loose content words, lowercased, unstemmed
    kind: tuple[str, ...] = ()  # analyzed kind noun phrase of a list-shaped question
    when: bool = False  # the question asks when (its answer is a date)


def _content_tokens(words: list[str]) -> list[str]:
    tokens = [t for w in words for t in analyze(w)]
    # a lone ASCII letter is what "Dana's" leaves behind ("s"), never what a question is about
    kept = [t for t in tokens if len(t) > 1 or not (t.isascii() and t.isalpha())]
    return kept or tokens


def parse_query(text: str) -> ParsedQuery:
    """Any string is a valid query: quotes make phrases, everything else is loose words."""
    text = text.replace("\x00", " ")
    phrases: list[tuple[str, ...]] = []
    exact: list[str] = []
    for m in _QUOTED.finditer(text):
        inner = m.group(1) if m.group(1) is not None else m.group(2)
        toks = tuple(analyze(inner))
        if toks:
            phrases.append(toks)
        if inner.strip():
            exact.append(" ".join(inner.split()).lower())
    loose = _QUOTED.sub(" ", text).replace('"', " ")
    words = [w.replace("’", "'").lower() for w in _WORD.findall(loose)]
    content = [w for w in words if w not in STOPWORDS]
    # a question made only of stopwords ("who was it?") still means something
    terms = _content_tokens(content or words)
    for raw in loose.split():
        w = raw.strip(_EDGE_PUNCT).lower()
        if w and w not in STOPWORDS and _id_like(w):
            exact.append(w)
    whole = " ".join(loose.split()).lower()
    if " " in whole and not phrases:
        exact.append(whole)  # a title, alias or speaker written out in full
    listed = _LIST_KIND.match(text)
    kind = tuple(dict.fromkeys(analyze(listed.group(1)))) if listed else ()
    return ParsedQuery(
        tuple(phrases),
        tuple(terms),
        tuple(dict.fromkeys(exact)),
        tuple(dict.fromkeys(content)),
        kind,
        _WHEN.match(text) is not None,
    )


def variant(stem: str) -> str | None:
    """The other stem of an English noun/adjective pair, as the analyzer leaves them.

    The Snowball stemmer keeps a noun's -y as -i ("allergies", "allergy" -> "allergi") and
    takes an adjective's -ic off ("allergic" -> "allerg"), so "any allergies?" shares no
    token with "Sam is allergic to peanuts"; the same split runs through economy/economic,
    strategy/strategic, history/historic. A query token gets its partner as a lighter
    extra term (claims, notes and turns are searched alike). Short stems
    ("parti", "copi") are left alone: dropping their -i names another word.
    """
    if not stem.isalpha() or not stem.isascii():
        return None
    if stem.endswith("i"):
        return stem[:-1] if len(stem) >= 6 else None
    return stem + "i" if len(stem) >= 5 else None


def _id_like(word: str) -> bool:
    """Words whose stemmed tokens would lose them: ids, refs, paths, tags, names with digits."""
    toks = analyze(word)
    return len(toks) != 1 or toks[0] != word or any(c.isdigit() for c in word)


def build_plan(parsed: ParsedQuery, filters: Filters) -> Plan:
    """Weighted terms over the fields; quoted phrases are required only when they are all.

    "What did Caroline take away from "Becoming Nicole"?" names a title, and the turn that
    answers ("It taught me self-acceptance") need not repeat it: in a question with words
    outside the quotes, a phrase's words count as loose words and the whole phrase as a
    bonus, so the turns that have it rank first and the others still rank.
    """
    terms = parsed.terms
    required = parsed.phrases
    near: tuple[tuple[tuple[str, ...], float], ...] = ()
    if parsed.phrases and parsed.words:
        terms += tuple(t for p in parsed.phrases for t in p)
        required = ()
        near = tuple((p, W_PHRASE) for p in parsed.phrases if len(p) > 1 and W_PHRASE > 0)
    should: list[tuple[str, str, float]] = []
    counts = Counter(terms)
    for tok, count in counts.items():
        should.append((BODY, tok, float(count)))
        should.append((WINDOW, tok, W_WINDOW * count))
        should.append((WHEN, tok, W_WHEN * count))
    if W_VARIANT > 0:
        for tok, count in counts.items():
            v = variant(tok)
            if v is not None and v not in counts:
                should.append((BODY, v, W_VARIANT * count))
                should.append((WINDOW, v, W_VARIANT * W_WINDOW * count))
    should.extend((EXACT, w, W_EXACT) for w in parsed.exact)
    if W_KIND > 0:  # only a list question has a kind: other queries never read the field
        should.extend((KINDS, tok, W_KIND) for tok in parsed.kind)
    return Plan(tuple(should), required, filters, near)


# ---- filters ------------------------------------------------------------------------------


def _values(v: str | Iterable[str] | None, lower: bool = False) -> tuple[str, ...]:
    if v is None:
        return ()
    items = [v] if isinstance(v, str) else list(v)
    out = [p.strip() for item in items for p in str(item).split(",") if p.strip()]
    return tuple(p.lower() for p in out) if lower else tuple(out)


def make_filters(
    *,
    kind: str | Iterable[str] | None = None,
    store: str | Iterable[str] | None = None,
    user: str | Iterable[str] | None = None,
    scope: str | Iterable[str] | None = None,
    speaker: str | Iterable[str] | None = None,
    status: str | Iterable[str] | None = "active",
    since: str | date | datetime | None = None,
    until: str | date | datetime | None = None,
    now: datetime | None = None,
    section: str | Iterable[str] | None = None,
    cite: str | Iterable[str] | None = None,
    link: str | Iterable[str] | None = None,
) -> Filters:
    now = now or datetime.now(UTC)
    kinds = _values(kind, lower=True)
    for k in kinds:
        if k not in ("turn", "note", "claim"):
            raise InputError(f"unknown kind {k!r}: use turn or note")
    statuses = _values(status, lower=True)
    if any(s in ("all", "any", "*") for s in statuses):
        statuses = ()
    for st in statuses:
        if st not in STATUSES:
            raise InputError(f"unknown status {st!r}: use {', '.join(STATUSES)} or all")
    return Filters(
        # turns and notes together are "anything": claim lines stay keys, never hits
        kinds=() if set(kinds) == {"turn", "note"} else tuple(sorted(set(kinds))),
        stores=_values(store),
        users=_values(user),
        scopes=_values(scope),
        speakers=_values(speaker, lower=True),
        statuses=statuses,
        sections=tuple(s.casefold() for s in _values(section)),
        cites=_values(cite),
        links=_values(link),
        since=parse_when(since, now),
        until=parse_when(until, now, end=True),
    )


# ---- ranking ------------------------------------------------------------------------------


def rank(cands: Sequence[Candidate]) -> list[tuple[float, Candidate]]:
    """Blend each session's two best scores into its turns; notes are sessions of their own.

    A conversation where two turns match is more likely about the topic than one stray
    mention; the sum of the two best beat the best alone on LoCoMo for every weight tried.
    """
    top: dict[int, list[float]] = {}
    for c in cands:
        two = top.setdefault(c.sess, [0.0, 0.0])
        if c.score > two[0]:
            two[0], two[1] = c.score, two[0]
        elif c.score > two[1]:
            two[1] = c.score
    scored = [(c.score + W_SESSION * sum(top[c.sess]), c) for c in cands]
    scored.sort(key=lambda sc: (-sc[0], sc[1].sess))
    return scored


def _addr(c: Candidate) -> tuple[int, int]:
    return (c.addr.segment_ord, c.addr.doc)


ROLES = frozenset(("user", "assistant", "system", "tool"))


def _person(word: str) -> str:
    """A name as a speaker is keyed: "melanie's" asks about Melanie."""
    for tail in ("'s", "'"):
        if word.endswith(tail) and len(word) > len(tail) + 1:
            return word[: -len(tail)]
    return word


def speakers_named(
    reader: Reader,
    plan: Plan,
    parsed: ParsedQuery,
    cands: list[Candidate],
    n: int,
) -> tuple[list[Candidate], set[tuple[int, int]]]:
    """The turns said by a person the query names, to be lifted after the session blend.

    "What activities does Melanie partake in?" is answered in Melanie's own words ("I'm
    off to the pottery class!"); her name is in every one of her turns, so BM25 gives it
    almost no weight. Her best turns for the query join the candidates, and each turn
    whose speaker the query names scores (1 + W_SPEAKER) times its blended score (on
    LoCoMo, +6 multi-hop and +2 overall R@10). Role names ("user", "assistant") never
    count. Returns the candidates and the addresses of the named speakers' turns.
    """
    f = plan.filters
    if f.kinds not in ((), ("turn",)) or f.speakers or W_SPEAKER <= 0:
        return cands, set()
    names = tuple(
        dict.fromkeys(
            n for n in (_person(w) for w in parsed.words) if n not in ROLES and reader.is_speaker(n)
        )
    )
    if not names:
        return cands, set()
    theirs = reader.candidates(
        replace(plan, filters=replace(f, kinds=("turn",), speakers=names)), n
    )
    have = {_addr(c) for c in cands}
    return cands + [c for c in theirs if _addr(c) not in have], {_addr(c) for c in theirs}


def asked_less(
    reader: Reader, ranked: list[tuple[float, Candidate]]
) -> list[tuple[float, Candidate]]:
    """Turns that mostly ask score lower than turns that say something.

    Memory questions are answered by what someone said, not by what they asked: "Cool! What
    type of music do you play?" matches a question about Melanie's instruments better than
    her answer "I play clarinet!" does, and both sit in the same session. A turn scores
    W_ASK ** (share of its sentences that are questions); on LoCoMo this gave +1 R@10
    overall and +3 multi-hop, on each of the three dev conversations. The session blend
    has run already: a question still tells which conversation is about the topic.

    The turn after one that asks is the likely answer: it scores at least W_ANSWER x the
    asker's score before the question weight, when both are candidates. "Love that color!
    For walking or running?" matches "What are Melanie's new shoes for?"; the reply
    "These are for running" says the answer without the question's words.
    """
    if W_ASK >= 1.0 or not ranked:
        return ranked
    addrs = [c.addr for _, c in ranked]
    shares = reader.asks(addrs)
    out = [
        (s * W_ASK ** (a / 100) if a else s, c) for (s, c), a in zip(ranked, shares, strict=True)
    ]
    if W_ANSWER <= 0 or not any(shares):
        return out
    pos = reader.positions(addrs)
    at = {(c.sess, p): i for i, ((_, c), p) in enumerate(zip(ranked, pos, strict=True)) if p}
    for (s, c), a, p in zip(ranked, shares, pos, strict=True):
        j = at.get((c.sess, p + 1)) if a and p else None
        if j is not None and out[j][0] < W_ANSWER * s:
            out[j] = (W_ANSWER * s, out[j][1])
    return out


def dated_more(
    reader: Reader, ranked: list[tuple[float, Candidate]]
) -> list[tuple[float, Candidate]]:
    """For a question that asks when, the turns that say when score (1 + W_DATED)x.

    "When did Melanie start her pottery class?" is answered by "I signed up for a pottery
    class last week"; a later turn that says more about pottery but no time outranks it on
    words alone. A turn is dated when it or one of the two turns before it (its window, the
    same exchange: "When was that?" "Last Friday!") has a time word (`schema.dated`, the
    `dated` fast field). On LoCoMo this moved temporal evidence up in two conversations of
    three and in none down, for every weight from 0.1 to 0.5 (bench/README.md); notes and
    claims are never dated.
    """
    flags = reader.dated([c.addr for _, c in ranked])
    lift = 1.0 + W_DATED
    return [(s * lift if f else s, c) for (s, c), f in zip(ranked, flags, strict=True)]


def claim_keys(
    reader: Reader, plan: Plan, cands: list[Candidate]
) -> tuple[list[Candidate], dict[str, tuple[str, ...]]]:
    """Lift the turns cited by the claim lines that match the query.

    A claim restates what a turn said with the names and dates the turn leaves out ("I
    signed up!" is "Melanie signed up for a pottery class"), so a question worded like the
    claim reaches the turn through it. Each cited turn scores at least W_CLAIM x the best
    such claim's score (a sum double-counts the words claim and turn share: -1 R@10 on
    LoCoMo); a cited turn the query did not find on its own joins the candidates. Returns
    the candidates and, per lifted turn's ref, the notes whose claims lifted it.
    """
    f = plan.filters
    if f.kinds not in ((), ("turn",)) or f.stores or W_CLAIM <= 0:
        return cands, {}  # a search for notes, or within a store: no turn to lift
    keys = Filters(kinds=("claim",), users=f.users, scopes=f.scopes, statuses=("active",))
    claims = reader.candidates(replace(plan, filters=keys), CLAIM_POOL)
    if not claims:
        return cands, {}
    lift: dict[str, float] = {}
    via: dict[str, list[str]] = {}
    for c in claims:
        fields = reader.stored(c.addr)
        for ref in fields.get("cites") or ():
            lift[ref] = max(lift.get(ref, 0.0), W_CLAIM * c.score)
            via.setdefault(ref, []).append(str(fields.get("ref", "")))
    # the turns must pass the search's own filters (kind, scope, speaker, dates)
    turn_filters = replace(f, kinds=("turn",), statuses=())
    found = reader.turns_at(sorted(lift), turn_filters)
    by_addr = {_addr(c): ref for ref, c in found.items()}
    out: list[Candidate] = []
    seen: set[str] = set()
    for c in cands:
        ref = by_addr.get(_addr(c))
        if ref is None:
            out.append(c)
            continue
        seen.add(ref)
        out.append(Candidate(max(c.score, lift[ref]), c.sess, c.addr))
    for ref, c in found.items():
        if ref not in seen:
            out.append(Candidate(lift[ref], c.sess, c.addr))
    return out, {ref: tuple(dict.fromkeys(via[ref])) for ref in found}


def _hit(score: float, doc: Doc) -> Hit:
    f = doc.fields
    kind = str(f.get("kind", ""))

    def opt(key: str) -> str | None:
        v = f.get(key)
        return None if v is None or v == "" else str(v)

    common: dict[str, Any] = {
        "ref": str(f.get("ref", "")),
        "kind": kind,
        "score": score,
        "snippet": doc.snippet,
        "highlights": doc.highlights,
        "text": str(f.get("text", "")),
        "user": opt("user"),
        "scope": opt("scope"),
        "timestamp": opt("timestamp"),
    }
    if kind == "turn":
        return Hit(
            **common,
            id=opt("id"),
            session=opt("session"),
            speaker=opt("speaker"),
            role=opt("role"),
            rewound=int(f["rewound"]) if isinstance(f.get("rewound"), int) else None,
        )
    if kind == "claim":
        return Hit(
            **common,
            store=opt("store"),
            title=opt("title"),
            status=opt("status"),
            cites=tuple(str(c) for c in f.get("cites") or ()),
            section=opt("section"),
            quotes=tuple(str(q) for q in f.get("quotes") or ()),
            inferred=bool(f.get("inferred")),
            observed=bool(f.get("observed")),
            project=opt("project"),
        )
    return Hit(
        **common,
        store=opt("store"),
        title=opt("title"),
        status=opt("status"),
        cites=tuple(str(c) for c in f.get("cites") or ()),
        links=tuple(str(x) for x in f.get("links") or ()),
        project=opt("project"),
    )


class Held:
    """One snapshot of the index for a caller's searches: a recall makes six or more, and
    opening a snapshot for each (generation, meta.json, a searcher) cost a twentieth of a
    warm recall. Its searches also read one state of the index, whatever commits meanwhile."""

    def __init__(self) -> None:
        self.reader: Reader | None = None


def search(
    vault: IndexedVault,
    query: str,
    *,
    kind: str | Iterable[str] | None = None,
    store: str | Iterable[str] | None = None,
    user: str | Iterable[str] | None = None,
    scope: str | Iterable[str] | None = None,
    speaker: str | Iterable[str] | None = None,
    status: str | Iterable[str] | None = "active",
    since: str | date | datetime | None = None,
    until: str | date | datetime | None = None,
    limit: int = 10,
    sync: bool = True,
    now: datetime | None = None,
    section: str | Iterable[str] | None = None,
    cite: str | Iterable[str] | None = None,
    link: str | Iterable[str] | None = None,
    snippets: bool = True,
    held: Held | None = None,
) -> SearchResult:
    """Ranked hits over turns and notes. Filters take one value, a list, or "a,b".

    `kind="claim"` searches claim lines one by one (their note's path is the ref, their
    citations `cites`), optionally within note sections (`section`) or only those citing
    given turns (`cite`); `link` keeps notes that link to one of the given note paths.
    `snippets=False` leaves every hit's snippet empty: recall reads the whole text and
    never shows one, and building them was a tenth of its time on a large vault.
    `held`: the snapshot the caller's last search read, searched again unless this search
    brings the index in step (`sync`).
    """
    if limit < 1:
        raise InputError(f"--limit must be at least 1, got {limit}")
    filters = make_filters(
        kind=kind,
        store=store,
        user=user,
        scope=scope,
        speaker=speaker,
        status=status,
        since=since,
        until=until,
        now=now,
        section=section,
        cite=cite,
        link=link,
    )
    query = query if isinstance(query, str) else str(query)
    parsed = parse_query(query)
    plan = build_plan(parsed, filters)
    via: dict[str, tuple[str, ...]] = {}
    notices: list[str] = []
    if sync:
        try:
            notices.extend(writer.sync(vault).notices)
        except BaseException as exc:
            # a read-only or full disk must not stop a search: answer from the last commit
            if not (isinstance(exc, OSError) or out_of_space(exc)):
                raise
            notices.append(f"search index not updated ({writer.why(exc)}); results may be stale")
            IN_MEMORY.pop(str(vault.root), None)  # one held in memory is rebuilt from the files
    if plan.empty and query.strip():
        return SearchResult(query, [], notices)  # only punctuation: nothing to look for
    for attempt in (1, 2):
        try:
            if held is not None and held.reader is not None and not sync and attempt == 1:
                reader = held.reader
            else:
                reader = Reader(vault)
                if held is not None:
                    held.reader = reader
            if plan.empty:
                # no words to rank by: the newest matching items first
                cands = reader.candidates(plan, limit)
                ranked = [(0.0, c) for c in cands]
            else:
                n = max(MIN_CANDIDATES, limit + 20)
                cands = reader.candidates(plan, n)
                cands, theirs = speakers_named(reader, plan, parsed, cands, n)
                cands, via = claim_keys(reader, plan, cands)
                ranked = rank(cands)
                if theirs:
                    # after the session blend: her turn beats its neighbours in her session
                    lift = 1.0 + W_SPEAKER
                    ranked = [(s * lift if _addr(c) in theirs else s, c) for s, c in ranked]
                ranked = asked_less(reader, ranked)
                if parsed.when and W_DATED > 0:
                    ranked = dated_more(reader, ranked)
                ranked.sort(key=lambda sc: (-sc[0], sc[1].sess))
                ranked = ranked[:limit]
            docs = reader.load([c for _, c in ranked], plan, snippets=snippets)
            break
        except IndexBroken as exc:
            if held is not None:
                held.reader = None
            if attempt == 2:
                raise MemctlError(f"search index unusable after a rebuild: {exc}") from None
            try:
                notices.append(writer.repair(vault))
            except BaseException as err:
                if not (isinstance(err, OSError) or out_of_space(err)):
                    raise
                if out_of_space(err) and attempt == 1:
                    # no room for an index on disk: one in memory answers this process
                    IN_MEMORY[str(vault.root)] = writer.in_memory(vault)
                    notices = [n for n in notices if "search index" not in n]
                    notices.append(f"search index not built ({writer.why(err)}); answered "
                                   "from an index held in memory")  # fmt: skip
                    continue
                raise MemctlError(
                    f"cannot build the search index: {writer.why(err)}",
                    getattr(err, "filename", None),
                ) from None
    if sync and reader.moved:
        with contextlib.suppress(OSError):  # shown as they are now; ranked right next time
            notices.extend(writer.refresh(vault, reader.moved).notices)
    hits = [
        _hit(score, doc)
        for (score, _), doc in zip(ranked, docs, strict=True)
        if doc is not None  # its file vanished after the last sync
    ]
    if via:
        hits = [replace(h, via=via[h.ref]) if h.ref in via else h for h in hits]
    if not plan.empty:
        hits.sort(key=_tie_order)
    return SearchResult(query, hits, notices)


def _tie_order(hit: Hit) -> tuple[float, str, int]:
    """Equal scores fall back to file and turn order, not to where tantivy put the documents.

    An index fed by ingest and one rebuilt from the files lay documents out differently; without
    this, the same query over the same files could list tied turns in two orders.
    """
    path, _, anchor = hit.ref.partition("#t")
    return (-round(hit.score, 9), path, int(anchor) if anchor.isdigit() else 0)
