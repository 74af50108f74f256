"""Ranking: which notes and turns are candidates, and how each claim scores.

1. Candidates. BM25 over notes and over raw turns (memctl.index.search), restricted to what the
   asking user may see. Then one hop out: entity notes the query names bring their aliases,
   the notes they link to and the notes that link to them; the best turns bring the notes
   whose claims cite them (a memory filed under another framing is still found through the
   words that were actually said); the words those turns share become feedback terms.
2. Claims. Each candidate note is read from its file: only active claims (never its History
   unless asked), each scored by the note's rank, how much of the query (and, at half weight,
   of the feedback terms) it carries, whether it cites one of the best turns, its store and
   its age. Claims citing a turn the user may not see are dropped: a team note cannot smuggle
   a private quote out.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime
from itertools import repeat
from typing import TYPE_CHECKING, Any

from memctl.recall.graph import Reader
from memctl.recall.results import AGENT_TAG, Cite, Decision
from memctl.recall.words import content_terms, plain, query_terms

if TYPE_CHECKING:
    from memctl.core.notes import Claim as NoteClaim
    from memctl.core.notes import Note
    from memctl.index.search import Hit

# ---- ranking knobs (tests/test_recall*.py pin the behaviour they buy) ---------------------
NOTE_POOL = 20  # notes taken from BM25
TURN_POOL = 20  # turns taken from BM25
DEEPER = 5  # the pool drawn again this much deeper when most of it is another project's
ENTITY_POOL = 10  # entity notes looked at for "does the query name this?"
CITING_TURNS = 8  # best turns whose citing notes become candidates
FEEDBACK_TURNS = 5  # best turns whose sessions the feedback terms come from
FEEDBACK_SESSIONS = 2
FEEDBACK_TERMS = 10
DF_BATCH = 16  # feedback words whose document frequency is asked at a time
BACKGROUND_CLAIMS = 2  # claims of a note that carry none of the query's words
W_LINK = 0.6  # a note one hop from a named entity, relative to the entity
W_CITE = 0.7  # a note citing a top turn, relative to that turn
W_FEEDBACK = 0.5  # a feedback term in a claim, relative to a query term
# What feedback terms alone may add to a claim, as a share of a full match: a line dense
# with the found sessions' topic words ("bob", "round", "branch") but none of the question's
# is about the same sessions, not an answer, and must not outrank one that carries the ask.
FEEDBACK_MAX = 0.5
W_TURN = 0.8  # turns rank below notes that say the same thing
W_NOTE = 0.4  # share of a claim's score that comes from its note's rank (the rest: the claim)
HALF_LIFE_DAYS = 180.0
RECENCY_SHARE = 0.25  # at most this much of a score depends on age
MIN_RELATIVE = 0.08  # candidates scoring below this share of the best are dropped
# Mild on purpose: these order claims of similar relevance, they do not outvote the query.
STORE_WEIGHT = {
    "decisions": 1.05,
    "knowledge": 1.05,
    "profile": 1.05,
    "entities": 1.0,
    "instructions": 1.0,
    "feedback": 0.95,
    "sessions": 0.9,
}
# What a claim's section says about how load-bearing it is: a team's goal or a decision
# frames any question in its area; progress notes date quickly.
SECTION_WEIGHT = {
    "goal": 1.15,
    "goals": 1.15,
    "decision": 1.1,
    "identity": 1.1,
    "why": 1.05,
    "preferences": 1.05,
    "how they work": 1.05,
    "open threads": 1.05,
    "facts": 1.0,
    "relations": 0.95,
    "alternatives": 0.9,
    "plan": 0.9,
    "progress": 0.9,
}
MAX_CLAIMS_PER_NOTE = 8
MAX_TURNS_PER_SESSION = 2
# Share of the budget claims leave to turns when the query found any. Claims are read
# first and are short, so without a share a vault of many sessions fills the budget with
# near-relevant claims of the project and the turn that holds the answer, which no claim
# restates, never gets in; what turns do not use goes back to nobody, as every item is
# packed in rank order.
TURN_SHARE = 0.3
TURN_TOKENS = 120  # a turn is cut to this many tokens around what it says
DUP_JACCARD = 0.7  # word overlap at which two claims count as one fact


def age_days(day: str | None, now: datetime) -> float | None:
    if not day:
        return None
    try:
        d = date.fromisoformat(str(day)[:10])
    except ValueError:
        return None
    return max((now.date() - d).days, 0)


def recency(day: str | None, now: datetime) -> float:
    """1.0 for today, 0.5 one half-life ago; unknown dates count as half-life old."""
    age = age_days(day, now)
    r = 0.5 if age is None else 0.5 ** (age / HALF_LIFE_DAYS)
    return (1 - RECENCY_SHARE) + RECENCY_SHARE * r


# ---- candidates ---------------------------------------------------------------------------


@dataclass
class NoteCand:
    path: str
    score: float
    why: str


@dataclass
class ClaimCand:
    """A claim line that may answer the question (a candidate, as `NoteCand` is a note):
    where it stands, what it rests on, and how it scored."""

    path: str
    note: Note
    section: str
    text: str
    basis: str
    refs: tuple[tuple[str, str], ...]  # (turn ref, quote), checked when packed
    date: str | None
    score: float
    why: str
    terms: frozenset[str]
    rel: float = 0.0


def normalise(hits: list[Hit]) -> list[tuple[Hit, float]]:
    top = max((h.score for h in hits), default=0.0)
    if top <= 0:
        return [(h, 1.0 / (i + 1)) for i, h in enumerate(hits)]
    return [(h, h.score / top) for h in hits]


def _names(note: Note) -> list[str]:
    names = [note.title, *note.aliases]
    return [n for n in dict.fromkeys(plain(n) for n in names) if n]


def _named(names: list[str], qterms: frozenset[str]) -> str | None:
    """The first name of an entity that the query names (at least half of its words)."""
    for name in names:
        nt = content_terms(name)
        if nt and len(nt & qterms) * 2 >= len(nt):
            return name
    return None


def _feedback(r: Reader, turns: list[tuple[Hit, float]], known: frozenset[str]) -> dict[str, float]:
    """Words the best sessions keep using that are rare elsewhere (relevance feedback).

    "Datadog or Grafana?" finds the session where that was discussed; that session also
    talks about egress, and egress is what the team's goal note is filed under.
    """
    sessions: dict[str, float] = {}
    for h, s in turns[:FEEDBACK_TURNS]:
        path = h.ref.split("#", 1)[0]
        sessions[path] = max(sessions.get(path, 0.0), s)
    picked_sessions = sorted(sessions.items(), key=lambda kv: -kv[1])[:FEEDBACK_SESSIONS]
    # per session: in how many of its turns each word is (cut from the text recall reads
    # anyway); `spread`: in how many turns of them all
    per_turn = [r.turn_counts(path) for path, _ in picked_sessions]
    for c in per_turn:
        for t in known & c.keys():
            del c[t]
    spread: Counter[str] = Counter()
    for c in sorted(per_turn, key=len, reverse=True):
        spread.update(c)  # the first is copied in C, the rest walked
    # only words two turns share can be picked: the rest are never weighed
    cands = [t for t, k in spread.items() if k >= 2 and len(t) >= 3 and not t.isdigit()]
    if not cands:
        return {}
    # tf: each session's weight once per turn holding the word, session by session, as a
    # running sum (the order fixes the float); words with the same counts share the sum
    # (each session's counts of all the words looked up by map in C: a genexpr per word
    # cost more than the sums)
    counts = list(zip(*(map(c.get, cands, repeat(0)) for c in per_turn), strict=True))
    sums: dict[tuple[int, ...], float] = {}
    for key in set(counts):
        x = 0.0
        for (_, w), k in zip(picked_sessions, key, strict=True):
            for _ in range(k):
                x += w
        sums[key] = x
    tf = dict(zip(cands, map(sums.__getitem__, counts), strict=True))
    # Asking the index for a word's document frequency is most of the cost, and two long
    # sessions share hundreds of words: ask in order of tf, and stop once no word left can
    # reach the best FEEDBACK_TERMS even at df 1 (its weight is at most tf * log(1 + n)).
    cands.sort(key=tf.__getitem__, reverse=True)  # stable: equal tf keep their order
    weight: dict[str, float] = {}
    n = 1
    for at in range(0, len(cands), DF_BATCH):
        batch = cands[at : at + DF_BATCH]
        if len(weight) >= FEEDBACK_TERMS:
            floor = sorted(weight.values(), reverse=True)[FEEDBACK_TERMS - 1]
            if tf[batch[0]] * math.log(1 + n) < floor:
                break
        n, df = r.doc_freqs(batch)
        weight.update((t, tf[t] * math.log(1 + n / max(df.get(t, 1), 1))) for t in batch)
    picked = sorted(weight, key=lambda t: (-weight[t], t))[:FEEDBACK_TERMS]
    top = weight[picked[0]]
    return {t: weight[t] / top for t in picked}


def gather(
    r: Reader, query: str, explain: list[Decision], here: Callable[[str], bool] | None = None
) -> tuple[
    dict[str, NoteCand], list[tuple[Hit, float]], frozenset[str], set[str], dict[str, float]
]:
    """Notes and turns worth reading, with the query's terms and its feedback terms.

    `here(ref)`: whether a turn may be shown where the prompt is made (not another
    project's session). When most of the best turns may not, as in a vault of many code
    bases where another one says the question's words more often, the pool is drawn again,
    deeper, from the turns that may: else it would hold nothing this project said."""
    qterms = query_terms(query)
    notes: dict[str, NoteCand] = {}

    def offer(path: str, score: float, why: str) -> None:
        cur = notes.get(path)
        if cur is None:
            notes[path] = NoteCand(path, score, why)
        elif why not in cur.why:
            # keep every reason a note was found, the best one first
            first, second = (why, cur.why) if score > cur.score else (cur.why, why)
            notes[path] = NoteCand(path, max(score, cur.score), f"{first}; {second}")

    note_hits = normalise(r.search(query, kind="note", status="active", limit=NOTE_POOL))
    for h, s in note_hits:
        offer(h.ref, s, f"matches the query (bm25 {h.score:.2f})")
    found = r.search(query, kind="turn", limit=TURN_POOL)
    if here is not None and len(found) == TURN_POOL:
        mine = [h for h in found if here(h.ref)]
        if len(mine) * 2 < len(found):
            deeper = r.search(query, kind="turn", limit=TURN_POOL * DEEPER)
            found = [h for h in deeper if here(h.ref)][:TURN_POOL]
    turn_hits = [(h, s * W_TURN) for h, s in normalise(found) if r.visible(h.scope)]

    # one hop from the entities the query names: their aliases, links and backlinks
    entity_hits = [(h, s) for h, s in note_hits if h.store == "entities"]
    if query.strip():
        more = r.search(query, kind="note", store="entities", status="active", limit=ENTITY_POOL)
        known = {h.ref for h, _ in entity_hits}
        entity_hits += [(h, s * 0.9) for h, s in normalise(more) if h.ref not in known]
    expansion: set[str] = set()
    for h, s in entity_hits:
        note = r.note(h.ref)
        if note is None or not r.visible(note.scope):
            continue
        name = _named(_names(note), qterms)
        if name is None:
            continue
        offer(h.ref, max(s, 0.8), f"the query names {name!r}")
        for n in _names(note):
            expansion |= content_terms(n)
        linked = set(h.links) | set(r.backlinks(h.ref))
        for p in sorted(linked - {h.ref}):
            offer(p, max(s, 0.8) * W_LINK, f"linked with entity {note.title!r}")

    # notes whose claims cite the best turns: the same words, filed under another framing
    citing = r.citing([h.ref for h, _ in turn_hits[:CITING_TURNS]])
    for h, s in turn_hits[:CITING_TURNS]:
        for p in citing.get(h.ref, ()):
            offer(p, s * W_CITE, f"cites {h.ref}")

    # (each candidate's scope is checked again on its file when its claims are read)
    feedback = _feedback(r, turn_hits, qterms | expansion)
    return notes, turn_hits, qterms, expansion, feedback


def query_weights(r: Reader, qterms: frozenset[str]) -> tuple[dict[str, float], float]:
    """Each query word's weight by how rare it is, and what a full match adds up to.

    In "the cloud migration", "migration" says more than "cloud", which also names
    Grafana Cloud and Cloud CDN. A full match is the three heaviest words.
    """
    n, df = r.doc_freqs(sorted(qterms)) if qterms else (1, {})
    idf = {t: math.log(1 + n / max(df.get(t, 1), 1)) for t in qterms}
    top = max(idf.values(), default=1.0) or 1.0
    weight = {t: w / top for t, w in idf.items()}
    full = sum(sorted(weight.values(), reverse=True)[:3]) if weight else 1.0
    return weight, max(full, 1e-9)


def coverage(terms: frozenset[str], weight: dict[str, float], full: float) -> float:
    return min(1.0, sum(weight[t] for t in terms & weight.keys()) / full)


# A line that states an answer: a command to run, a setting, where something runs, a
# pitfall, a decision; narration about the same words (a session's goal, an agent's
# "insight") ranks below it when both carry the question.
ANSWER_SECTIONS = frozenset(("commands", "environments", "gotchas", "settings", "decision"))
W_ANSWER = 1.25
_CODE_SPAN = re.compile(r"`[^`\n]{2,}`")


def answers(section: str, text: str) -> bool:
    """Does a claim state an answer (see ANSWER_SECTIONS), not narrate around one?"""
    return section.casefold() in ANSWER_SECTIONS or _CODE_SPAN.search(text) is not None


@dataclass(slots=True)
class _Row:
    """A claim line as ranking reads it, minus the query: worked out once per parsed note."""

    section: str
    claim: NoteClaim
    is_hist: bool
    text: str
    refs: tuple[tuple[str, str], ...]
    terms: frozenset[str]
    quoted: tuple[tuple[str, frozenset[str]], ...]  # each cited turn, the words quoted from it
    day: str | None
    answer: bool
    _unsupported: bool | None = None

    def unsupported(self, r: Reader) -> bool:
        # kept only when the line and its quotes decide it: turns read for an inference
        # are read again (a raw file changed in place is not this note's to vouch for)
        if self._unsupported is not None:
            return self._unsupported
        c = self.claim
        decided = quotes_decide(self.terms, self.refs, c.inferred or c.observed, self.text,
                                [q for _, q in self.quoted])  # fmt: skip
        if decided is not None:
            self._unsupported = decided
            return decided
        return unsupported(r, self.terms, self.refs, c.inferred or c.observed, self.text)


# A parsed note is kept while its file holds (memctl.recall.graph), and what ranking reads
# from each of its lines does not depend on the prompt: a resident process (memctl serve)
# scores the same notes prompt after prompt. The note itself is held beside its rows, so its
# id is not reused while the entry stands.
_ROWS: dict[int, tuple[Note, list[_Row]]] = {}
ROWS_LIMIT = 4096  # notes


def _items(note: Note) -> list[tuple[str, NoteClaim, bool]]:
    items = [(name, c, False) for name, c in note.current_claims()]
    return items + [("History", c, True) for c in note.history_claims()]


_IS_STR = str.__instancecheck__  # in C: marshal, the rows' source, makes no str subclass


def _all_str(values: Any) -> bool:
    return all(map(_IS_STR, values))


def _fitted(items: list[tuple[str, NoteClaim, bool]], kept: list[Any]) -> list[_Row] | None:
    """The rows kept between processes for a note's lines (memctl.recall.notecache), or
    None when they do not fit them (then they are worked out again)."""
    if len(kept) != len(items):
        return None
    rows: list[_Row] = []
    for (section, c, is_hist), k in zip(items, kept, strict=True):
        if not isinstance(k, tuple) or len(k) != 6:
            return None
        text, refs, terms, quoted, day, answer = k
        if (
            type(text) is not str
            or type(refs) is not tuple
            or not all(type(r) is tuple and len(r) == 2 and _all_str(r) for r in refs)
            or type(terms) is not frozenset
            or not _all_str(terms)
            or type(quoted) is not tuple
            or len(quoted) != len(refs)
            or not all(type(q) is tuple and len(q) == 2 and type(q[0]) is str
                       and type(q[1]) is frozenset and _all_str(q[1]) for q in quoted)
            or not (day is None or type(day) is str)
            or type(answer) is not bool
        ):  # fmt: skip
            return None  # damaged (or planted): worked out again, never a crash later
        rows.append(_Row(section, c, is_hist, text, refs, terms, quoted, day, answer))
    return rows


def _keep_rows(note: Note, rows: list[_Row]) -> None:
    if len(_ROWS) >= ROWS_LIMIT:
        _ROWS.clear()
    _ROWS[id(note)] = (note, rows)


def _rows(note: Note) -> list[_Row]:
    got = _ROWS.get(id(note))
    if got is not None and got[0] is note:
        return got[1]
    from memctl.recall import notecache

    items = _items(note)
    kept = notecache.kept_rows(note)
    if kept is not None and (fitted := _fitted(items, kept)) is not None:
        notecache.settled(note)
        _keep_rows(note, fitted)
        return fitted
    rows: list[_Row] = []
    updated = str(note.meta.get("updated") or "") or None
    for section, c, is_hist in items:
        text = plain(c.text)
        # Citations are checked (scope, existence) and dated from their turns only when
        # the claim is about to be packed: a large vault's candidates cite hundreds of
        # sessions. For ranking, a turn's day is its session's, from the raw path.
        refs = tuple((cit.ref, cit.quote) for cit in note.citations(c) if cit.ref)
        dates = sorted(d for d in (path_day(ref) for ref, _ in refs) if d)
        rows.append(
            _Row(section, c, is_hist, text, refs, content_terms(text),
                 tuple((ref, content_terms(q)) for ref, q in refs),
                 dates[-1] if dates else updated, bool(text) and answers(section, text))
        )  # fmt: skip
    _keep_rows(note, rows)
    notecache.keep(note, [(w.text, w.refs, w.terms, w.quoted, w.day, w.answer) for w in rows])
    return rows


def score_claims(
    r: Reader,
    cands: dict[str, NoteCand],
    top_turns: dict[str, float],
    qterms: frozenset[str],
    expansion: set[str],
    feedback: dict[str, float],
    history: bool,
    explain: list[Decision],
) -> list[ClaimCand]:
    """Score every active claim of every candidate note."""
    out: list[ClaimCand] = []
    qweight, denom = query_weights(r, qterms)
    for cand in sorted(cands.values(), key=lambda c: -c.score):
        note = r.note(cand.path)
        if note is None:
            explain.append(Decision(cand.path, "note", False, "unreadable note", cand.score))
            continue
        if not r.visible(note.scope):
            explain.append(Decision(cand.path, "note", False, f"out of scope ({note.scope})"))
            continue
        if note.status != "active":
            explain.append(Decision(cand.path, "note", False, f"note is {note.status}", cand.score))
            continue
        explain.append(Decision(cand.path, "note", True, cand.why, cand.score))
        store = note.store or ""
        weight = STORE_WEIGHT.get(store, 1.0)
        rows = _rows(note)
        if not history:
            explain.extend(
                Decision(cand.path, "claim", False, "History: no longer true", 0, row.text)
                for row in rows
                if row.is_hist
            )
        for row in rows:
            c, section, is_hist, text, refs, terms = (
                row.claim, row.section, row.is_hist, row.text, row.refs, row.terms
            )
            if (is_hist and not history) or not text:
                continue
            fb_hit = sum(feedback.get(t, 0.0) for t in terms) + len(terms & expansion - qterms)
            fb = min(W_FEEDBACK * fb_hit, FEEDBACK_MAX * denom)
            rel = (sum(qweight[t] for t in terms & qterms) + fb) / denom
            # a top turn lends its rank through the words the claim quotes from it: a line
            # read from one corner of a long report does not inherit what the rest matched
            hop = max((top_turns.get(ref, 0.0) for ref, q in row.quoted if q & qterms),
                      default=0.0)  # fmt: skip
            rel = min(1.0, rel + 0.5 * hop)
            day = row.day
            # additive, so a claim that says what was asked beats a bystander in a top note
            score = (W_NOTE * cand.score + (1 - W_NOTE) * rel) * weight * recency(day, r.now)
            score *= SECTION_WEIGHT.get(section.casefold(), 1.0)
            if rel > 0 and row.answer:
                score *= W_ANSWER  # the line that says how, above the narration around it
            if is_hist:
                score *= 0.5
                lt = c.lifetime
                basis = "history"
                if lt is not None:
                    text = f"{text} ({lt.kind}; held {lt.since} → {lt.until})"
            elif text.endswith(AGENT_TAG) and not refs:
                # the agent's own line, if this clone's agent wrote it (memctl.core.lineage)
                basis = "unverified" if c.key in r.foreign(cand.path) else "agent"
                text = text[: -len(AGENT_TAG)].rstrip()
            elif c.human:
                # a line that cites nothing is the user's only if they added it (git blame)
                basis = "unverified" if c.key in r.foreign(cand.path) else "human"
            elif row.unsupported(r):
                basis = "unverified"  # quotes that share no word with the claim support nothing
            elif c.observed:
                basis = "observed"  # what the agent's tools show, never said by anyone
            else:
                basis = "inferred" if c.inferred else "stated"
            if basis != "agent" and text.endswith(AGENT_TAG):
                text = text[: -len(AGENT_TAG)].rstrip()  # a cited line's tag claims nothing
            if note.store == "instructions" and not is_hist:
                steer = steering(r, cand.path, c.text, basis)
                if steer is None:
                    explain.append(Decision(cand.path, "claim", False, "an instruction someone "
                                            "else added, not accepted", 0, text))  # fmt: skip
                    continue
                basis = steer
            why = cand.why + (f"; claim carries {sorted(terms & qterms)}" if terms & qterms else "")
            out.append(
                ClaimCand(cand.path, note, section, text, basis, refs, day, score, why, terms, rel)
            )
    return out


def steering(r: Reader, path: str, text: str, basis: str) -> str | None:
    """The label of a line of an instructions/ note, or None when it is not to be shown.
    The block tells the model to follow these lines, so one is there only if the user
    wrote it, memctl wrote it from the user's own words, or the user accepted it
    (`accepted`); a line someone else added waits for `memctl sync --accept-config`."""
    from memctl.core.notes import claim_key

    key = claim_key(text)
    if key in r.foreign(path):
        return "accepted" if key in r.accepted(path) else None
    return None if basis == "unverified" else basis


def quotes_decide(
    terms: frozenset[str], refs: tuple[tuple[str, str], ...], inferred: bool, text: str = "",
    quoted: list[frozenset[str]] | None = None,
) -> bool | None:
    """`unsupported` as the claim and its quotes alone decide it, or None when the turns it
    was read from must be read (an inference whose quotes share no word with it).
    `quoted`: each quote's content terms, when the caller has them (a note's rows keep
    them between processes: memctl.recall.notecache)."""
    from memctl.core.provenance import unquoted_links

    if not refs:
        return False
    quotes = [q for _, q in refs]
    links = unquoted_links(text, quotes) if text else []
    said = quoted if quoted is not None else map(content_terms, quotes)
    if (not terms or any(terms & q for q in said)) and not links:
        return False
    return None if inferred else True


def unsupported(
    r: Reader, terms: frozenset[str], refs: tuple[tuple[str, str], ...], inferred: bool,
    text: str = "",
) -> bool:
    """Quotes that share no content word with their claim support nothing, nor do quotes
    that lack a link or code span the claim states. An inference may share no word with
    its quote, but one with the turns it was read from (the cited turn and those just
    before it: what "Yes, the second one." answers), and its links must be there; the same
    test as `memctl verify` (memctl.core.provenance). Turns are read only in that rare case."""
    decided = quotes_decide(terms, refs, inferred, text)
    if decided is not None:
        return decided
    from memctl.core.provenance import context_refs, unquoted_links

    quotes = [q for _, q in refs]
    links = unquoted_links(text, quotes) if text else []
    texts = [t for t in (r.turn_text(x) for ref, _ in refs for x in context_refs(ref)) if t]
    worded = not terms or any(terms & content_terms(x) for x in [*quotes, *texts])
    return not worded or bool(links and unquoted_links(text, [*quotes, *texts]))


_PATH_DAY = re.compile(r"^raw/(\d{4})/(\d{2})/(\d{2})/")


def path_day(ref: str) -> str | None:
    m = _PATH_DAY.match(ref)
    return f"{m.group(1)}-{m.group(2)}-{m.group(3)}" if m else None


def check_cites(
    r: Reader, refs: tuple[tuple[str, str], ...]
) -> tuple[tuple[Cite, ...], str | None]:
    """The citations with their turns' speakers and dates, or why the claim cannot be shown."""
    cites: list[Cite] = []
    for ref, quote in refs:
        scope = r.turn_scope(ref)
        if scope is None:
            return (), f"cites {ref}, which does not exist"
        if not r.visible(scope):
            return (), f"cites a turn outside {r.user}'s scope ({scope})"
        cites.append(r.cite(ref, quote))
    return tuple(cites), None
