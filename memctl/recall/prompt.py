"""Recall for one prompt: rank the candidates, then pack notes, their turns, other turns.

Diversity and packing: near-copies of a kept claim are dropped, no note takes more than its
share, and items are packed in rank order into the token budget: notes first, then the
turns behind them, then other turns.
"""

from __future__ import annotations

import functools
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING

from memctl.core import tokens
from memctl.index.toolcalls import calls_text
from memctl.recall import standing, turns
from memctl.recall.graph import Reader
from memctl.recall.pack import Packer, count_cached, finish
from memctl.recall.project import Where
from memctl.recall.rank import (
    BACKGROUND_CLAIMS,
    DUP_JACCARD,
    MAX_CLAIMS_PER_NOTE,
    MAX_TURNS_PER_SESSION,
    MIN_RELATIVE,
    TURN_SHARE,
    TURN_TOKENS,
    W_TURN,
    ClaimCand,
    NoteCand,
    answers,
    check_cites,
    coverage,
    gather,
    query_weights,
    score_claims,
)
from memctl.recall.render import Renderer, as_data
from memctl.recall.results import Cite, Decision, Memory, RecallResult, resolve
from memctl.recall.words import content_terms, near_copy, near_copy_of, negated, plain

if TYPE_CHECKING:
    from memctl.core.floor import Floor
    from memctl.index.search import Hit


# A turn's body cut to TURN_TOKENS: the same turns come back prompt after prompt in a
# resident process, and cutting one counts it whole, then again up to the cut.
_truncated = functools.lru_cache(maxsize=1024)(tokens.truncate)


def _turn_memory(r: Reader, ref: str, score: float, why: str, hit: Hit | None) -> Memory | None:
    text = hit.text if hit is not None else r.turn_text(ref)
    if text is None:
        return None
    if not text.strip():
        text = calls_text(r.turn_calls(ref))  # a turn that only ran a command
    cite = r.cite(ref)
    # a turn can be a whole pasted log: cut it to a prefix that surely holds more than
    # TURN_TOKENS tokens (BPE tokens average ~4 characters) before tokenizing any of it
    long = len(text) > TURN_CHARS
    if long and "<!--" in text:
        text = as_data(text)  # a comment may close past the prefix: strip it from the whole
        long = len(text) > TURN_CHARS
    body = as_data(text[:TURN_CHARS]) if long else as_data(text)
    if long or tokens.upper_bound(body) > TURN_TOKENS:
        cut = _truncated(body, TURN_TOKENS)
        # a prefix that fits still lacks the rest of the turn: say so; a whole turn that
        # fits (over TURN_TOKENS bytes, not tokens) is shown as it was said
        body = _truncated(body + " …", TURN_TOKENS) if long and cut == body else cut
    return Memory(
        kind="turn",
        text=body,
        basis="rewound" if hit is not None and hit.rewound else "said",
        ref=ref,
        score=score,
        date=cite.date,
        citations=(cite,),
        scope=(hit.scope if hit is not None else r.turn_scope(ref)),
        speaker=cite.speaker or (hit.speaker if hit is not None else None),
        why=why,
    )


TURN_MIN = 40  # tokens of a turn worth showing when the budget has no room for more


def _cut_to_fit(packer: Packer, m: Memory) -> Memory | None:
    """`m`, a turn that does not fit, added cut to what the budget has left, when that keeps
    at least TURN_MIN tokens of it: the best turn left is shortened, not dropped for the
    smaller ones after it. None (nothing added) when even that does not fit."""
    if packer.budget - packer.used < TURN_MIN:
        return None  # no room for TURN_MIN tokens of text, whatever else the item costs
    over = packer.used + packer.cost(m) - packer.budget
    n = tokens.count(m.text)
    for slack in (1, 8):
        keep = n - over - slack
        if keep < TURN_MIN:
            return None
        added = packer.add(replace(m, text=tokens.truncate(m.text, keep)))
        if added is not None:
            return added
    return None


def _turn_floor(r: Reader, packer: Packer, ref: str, hit: Hit | None) -> int | None:
    """Tokens adding this turn costs at the least, whatever its body turns out to be; None
    where that cannot be proved (not md, or no BPE to count with).

    A md turn item is `- [<cite>] "<body>"` and a newline. cl100k's pre-tokenizer has no
    look-behind, and none of its pieces runs from a `]` on into a space, so the item's
    count is the count of `- [<cite>]` plus that of the rest, which holds at least one
    piece: at least one token. The group heading and source lines come on top, counted as
    the packer counts them. A turn over the budget by this floor is refused without
    cutting and tokenizing its body, with the packer's own reason. A lower floor, with
    every part bounded by `tokens.lower_bound` and nothing counted, is tried first: what
    it refuses the counted floor refuses too.
    """
    if packer.r.fmt != "md" or tokens.encoding() is None:
        return None
    cite = r.cite(ref)
    shell = Memory(
        kind="turn",
        text="",
        basis="said",
        ref=ref,
        score=0.0,
        date=cite.date,
        citations=(cite,),
        speaker=cite.speaker or (hit.speaker if hit is not None else None),
    )  # what _turn_memory gives but the body: the same cite, date and speaker
    head = packer.r.turn_head(shell)
    room = packer.budget - packer.used
    least = tokens.lower_bound(head) + 1
    if least > room:
        return least  # over already: the heading and source lines only add to it
    least += packer.extra(shell, floor=True, room=room - least)
    if least > room:
        return least
    return count_cached(head) + 1 + packer.extra(shell)


def _claim_memory(c: ClaimCand, cites: tuple[Cite, ...]) -> Memory:
    """A claim as packed: dated by its newest cited turn, else by its note."""
    dates = sorted(d for d in (ct.date for ct in cites) if d)
    return Memory(
        kind="claim",
        text=c.text,
        basis=c.basis,
        ref=c.path,
        score=c.score,
        date=dates[-1] if dates else c.date,
        citations=cites,
        title=plain(c.note.title),
        store=c.note.store,
        scope=c.note.scope,
        section=c.section,
        why=c.why,
    )


def _claim_floor(packer: Packer, c: ClaimCand) -> int | None:
    """Tokens adding this claim costs at the least, before its citations are read; None
    where that cannot be proved (not md, or no BPE to count with).

    A md claim item is `- <text> [<basis> · <speaker> <date> <ref>; ...]` and a newline.
    Reading the cited turns only adds each one's speaker and date, space-separated words
    between pieces that are there already, and cl100k's pre-tokenizer starts a piece at
    each of those spaces: the item without them has a subset of the full item's pieces,
    so its `lower_bound` (a sum over pieces) is at most the full item's count. The group
    heading and source lines depend on the note and the cited sessions only and are
    counted as the packer counts them. A claim over the budget by this floor is refused
    with the packer's own reason, its sessions never read. Those lines are bounded by
    `tokens.lower_bound` first, and counted only when that does not refuse the claim.
    """
    if packer.r.fmt != "md" or tokens.encoding() is None:
        return None
    room = packer.budget - packer.used
    # the item is at least a token, and the sessions it cites that no line named yet each
    # add a source line: once the budget is nearly spent that refuses most claims, before
    # any of the item is rendered
    quick = 1 + packer.sources_floor([ref.split("#", 1)[0] for ref, _ in c.refs])
    if quick > room:
        return quick
    shell = _claim_memory(c, tuple(Cite(ref, None, None, quote) for ref, quote in c.refs))
    item = tokens.lower_bound(packer.r.item(shell))
    if item > room:
        return item  # over already: the heading and source lines only add to it
    least = item + packer.extra(shell, floor=True, room=room - item)
    if least > room:
        return least
    return item + packer.extra(shell)


def _make_room(
    r: Reader, packer: Packer, c: ClaimCand, n_standing: int, explain: list[Decision]
) -> str | None:
    """Give up standing lines, the lowest first, until the best answer fits; None when it
    then fits (it is packed by the caller), else why not. A standing line governs every
    prompt; the line that answers this one matters more to it."""
    cites, reason = check_cites(r, c.refs)
    if reason is not None:
        return reason
    m = _claim_memory(c, cites)
    while n_standing > 0 and packer.used + packer.cost(m) > packer.budget:
        n_standing -= 1
        gone = packer.remove(n_standing)
        explain.append(Decision(gone.ref, "claim", False, "standing line given up for the "
                                "line that answers", gone.score, gone.text))  # fmt: skip
    return None if packer.used + packer.cost(m) <= packer.budget else "over the token budget"


# ---- recall -------------------------------------------------------------------------------


MATCHES = "matches the query"


def _turn_why(h: Hit) -> str:
    """Why search found a turn: its own words, and any claim line that led to it."""
    if not h.via:
        return MATCHES
    return f"{MATCHES}; claim key: a claim in {', '.join(h.via)} cites it"


W_SUPPORT = 0.9  # a turn a kept claim cites ranks at least this share of the claim's score
Queued = tuple[str, float, str, "Hit | None", "str | None"]  # ref, score, why, hit, refusal


def _turn_queue(
    r: Reader,
    turn_hits: list[tuple[Hit, float]],
    kept: list[ClaimCand],
    query: str,
    qweight: dict[str, float],
    full: float,
    openings: Sequence[tuple[str, float, str]] = (),
) -> tuple[list[Queued], list[Queued]]:
    """The turns to offer, best first: what people said, then tool output.

    One list for the turns the query found and the turns the kept claims cite: a claim
    lifts the turn it cites to W_SUPPORT of its own score times the share of the question
    the turn carries, and a turn that scores better still comes first (the claim itself is
    already packed, citing its turn). Tool output comes in the second list, which is not
    packed: it ranks below every conversation turn, unless the query asks for output, and
    then it competes, the latest run first (memctl.recall.turns).
    """
    got: dict[str, tuple[float, str, Hit | None]] = {}
    for h, s in turn_hits:
        if h.ref not in got:
            got[h.ref] = (s, _turn_why(h), h)
    for ref, s, why in openings:
        cur = got.get(ref)
        text = cur[2].text if cur is not None and cur[2] is not None else r.turn_text(ref)
        lift = s * coverage(content_terms(text or ""), qweight, full)
        if cur is None:
            got[ref] = (lift, why, None)
        elif lift > cur[0]:
            got[ref] = (lift, f"{cur[1]}; {why}", cur[2])
    for c in kept:
        for ref, _ in c.refs[:1]:
            cur = got.get(ref)
            text = cur[2].text if cur is not None and cur[2] is not None else r.turn_text(ref)
            # scaled by how much of the question the turn itself speaks to: a claim that
            # matches the question does not make its turn about the question
            lift = c.score * W_SUPPORT * coverage(content_terms(text or ""), qweight, full)
            if cur is None:
                got[ref] = (lift, f"supports {c.path}", None)
            elif lift > cur[0]:
                got[ref] = (lift, f"{cur[1]}; supports {c.path}", cur[2])
    _later_beats_earlier(r, got)
    _lead_ins_give_way(r, got, frozenset(qweight))
    for ref, (score, why, hit) in list(got.items()):
        if hit is not None and hit.rewound:
            got[ref] = (score * turns.W_REWOUND,
                        f"{why}; on a branch the user went back from (t{hit.rewound} replaced it)",
                        hit)  # fmt: skip
    conv: list[Queued] = []
    output: list[tuple[str, float, str, Hit | None, str | None]] = []
    for ref, (score, why, hit) in got.items():
        role = hit.role if hit is not None else r.turn_role(ref)
        text = hit.text if hit is not None else (r.turn_text(ref) or "")
        refused = None
        if role not in ("user", "assistant", "tool"):
            refused = (
                f"a {role or 'unreadable'} turn: no person, assistant or tool said it"
            )
        elif not text.strip() and not r.turn_calls(ref):
            refused = "says nothing"
        if refused is None and turns.is_output(role, text):
            output.append((ref, score, f"{why}; tool output", hit, None))
        else:
            conv.append((ref, score, why, hit, refused))
    if output and turns.asks_output(query):
        lifted = turns.latest_first(
            [(ref, s, h.timestamp if h is not None else None) for ref, s, _, h, _ in output]
        )
        conv += [
            (ref, lifted.get(ref, s), why + ("; latest run" if ref in lifted else ""), h, x)
            for ref, s, why, h, x in output
        ]
        output = []
    conv.sort(key=lambda q: (-q[1], q[0]))
    output.sort(key=lambda q: (-q[1], q[0]))
    if output and turns.asks_why_failed(query):
        # the failure as printed is evidence for why it failed: offered after everything
        # people said (room is held for it when it answers best: _failure_room)
        return conv + output, []
    return conv, output


OPENING_NOTES = 3  # the best session notes whose opening request is offered as a turn
OPENING_MIN = 0.5  # ... when the note scores at least this share of the best note


def _openings(r: Reader, cands: dict[str, NoteCand]) -> list[tuple[str, float, str]]:
    """(ref, score, why) of the opening request of each session the query finds by its
    note: a session note is titled after the request that opened it, so a question that
    matches the title asks about that request, which no claim of the note cites. Among many
    sessions of one project, a long one that mentions everything (a lead agent's log of
    its teammates' work) otherwise fills the turn pool and the session that did the work is
    never heard from."""
    best = sorted(cands.values(), key=lambda c: -c.score)
    out: list[tuple[str, float, str]] = []
    for c in best:
        if len(out) >= OPENING_NOTES or c.score < OPENING_MIN * best[0].score:
            break
        note = r.note(c.path) if c.path.startswith("sessions/") else None
        if note is None or note.store != "sessions":
            continue
        raws = {f.ref.split("#", 1)[0] for f in note.footnotes.values() if f.ref}
        if len(raws) != 1:
            continue  # a note of more than one session, or of none: no one opening
        raw = raws.pop()
        # a sub-agent is heard through its report, not the brief its lead wrote for it
        report = r.report(raw)
        if report is not None:
            out.append((report, c.score * W_TURN, f"reports {c.path}, which the query found"))
            continue
        ref = _first_prompt(r, raw)
        if ref is not None:
            out.append((ref, c.score * W_TURN, f"opens {c.path}, which the query found"))
    return out


OPENING_SCAN = 6  # harness and shell lines a session may open with before its first prompt


def _first_prompt(r: Reader, raw: str) -> str | None:
    """The ref of the session's opening request (the prompt its note is titled after): its
    first user turn that is neither what the harness wrote (a `/clear` it ran, a command's
    output) nor a command the person ran in the harness's shell (`!uv run pytest`); None
    when the session opens with something else (an assistant turn)."""
    for n in range(1, OPENING_SCAN + 1):
        ref = f"{raw}#t{n}"
        role = r.turn_role(ref)
        if role != "user":
            return None
        text = r.turn_text(ref) or ""
        if not turns.is_output(role, text) and not turns.is_shell_input(text):
            return ref
    return None


def _failure_room(r: Reader, packer: Packer, queue: list[Queued], query: str) -> tuple[int, int]:
    """(where in `queue` the printed failure stands, the tokens held for it until then), or
    (-1, 0): for a why-did-it-fail question whose best printed failure scores at least as
    well as anything people said. It still comes after their explanation, but their weaker
    talk (other sessions about the same tests, say) no longer takes its room."""
    if not turns.asks_why_failed(query):
        return -1, 0
    said = [q for q in queue if q[4] is None]
    for i, (ref, score, why, hit, refused) in enumerate(queue):
        role = hit.role if hit is not None else r.turn_role(ref)
        text = hit.text if hit is not None else (r.turn_text(ref) or "")
        if refused is not None or not turns.is_output(role, text):
            continue
        if said and said[0][1] > score:
            return -1, 0
        held = 0
        for ref2, hit2 in ((ref, hit), (r.call_of(ref), None)):
            tm = _turn_memory(r, ref2, score, why, hit2) if ref2 is not None else None
            held += packer.cost(tm) if tm is not None else 0
        return i, held
    return -1, 0


def _later_beats_earlier(r: Reader, got: dict[str, tuple[float, str, Hit | None]]) -> None:
    """A turn corrected a few turns later ranks below its correction, which joins the
    candidates at the corrected turn's score if it was not found on its own: "You're working
    on April 20th" carries the question's words, "No, it's the 21st" carries the answer."""
    fixes: list[tuple[str, str]] = []
    best = sorted(got.items(), key=lambda kv: -kv[1][0])[: turns.CORRECTION_CANDIDATES]
    for ref, (_, _, hit) in best:
        later = r.following(ref, turns.CORRECTION_REACH)
        if not later:
            continue
        role = hit.role if hit is not None else r.turn_role(ref)
        text = hit.text if hit is not None else (r.turn_text(ref) or "")
        by = turns.corrected_by((role, text), later, content_terms)
        if by is not None:
            fixes.append((ref, by))
    for ref, by in fixes:
        score, why, hit = got[ref]
        cur = got.get(by)
        if cur is None or cur[0] < score:
            got[by] = (score, f"corrects {ref}" if cur is None else f"{cur[1]}; corrects {ref}",
                       None if cur is None else cur[2])  # fmt: skip
        got[ref] = (got[by][0] * turns.W_CORRECTED, f"{why}; corrected later by {by}", hit)


def _lead_ins_give_way(r: Reader, got: dict[str, tuple[float, str, Hit | None]],
                       asked: frozenset[str]) -> None:  # fmt: skip
    """An agent's lead-in ("Now let me check the SessionCacheData model:") ranks at
    W_LEAD_IN of its score; the call it leads in to (the next turn, the agent's, with
    tool calls: "[Grep] class SessionCacheData") takes its score when the call names a
    word the question asks."""
    best = sorted(got.items(), key=lambda kv: -kv[1][0])[: turns.CORRECTION_CANDIDATES]
    for ref, (score, why, hit) in best:
        role = hit.role if hit is not None else r.turn_role(ref)
        text = hit.text if hit is not None else (r.turn_text(ref) or "")
        if role != "assistant" or not turns.is_lead_in(text) or r.turn_calls(ref):
            continue
        after = r.following(ref, 1)
        if not after or after[0][1] != "assistant":
            continue
        call = after[0][0]
        calls = r.turn_calls(call)
        if not calls:
            continue
        got[ref] = (score * turns.W_LEAD_IN, f"{why}; a lead-in to the call in {call}", hit)
        cur = got.get(call)
        if content_terms(calls_text(calls)) & asked and (cur is None or cur[0] < score):
            got[call] = (score, f"the call {ref} leads in to" if cur is None
                         else f"{cur[1]}; the call {ref} leads in to",
                         None if cur is None else cur[2])  # fmt: skip


STANDING_MISSES = 3  # standing lines tried after the first that does not fit its share
TURN_CHARS = TURN_TOKENS * 12  # characters of a turn tokenized at most


def _pack_standing(
    r: Reader,
    packer: Packer,
    qweight: dict[str, float],
    full: float,
    query: str,
    notes: dict[str, float],
    explain: list[Decision],
    project: str | None = None,
    keep: Callable[[Hit], bool] | None = None,
) -> dict[tuple[str, str], frozenset[str]]:
    """Pack standing lines into their share of the budget; returns what was given."""
    share = r.vault.config.recall_standing
    given: dict[tuple[str, str], frozenset[str]] = {}
    if share <= 0 or packer.budget <= 0:
        return given
    cap = packer.used + int(packer.budget * share)
    misses = 0
    asked = frozenset(qweight)
    ranked = standing.standing(r, qweight, full, query, notes, project, keep)
    for m in standing.memories(r, ranked, explain):
        terms = content_terms(m.text)
        if any(near_copy(t, terms, asked, DUP_JACCARD) for t in given.values()):
            explain.append(Decision(m.ref, "claim", False, f"{m.why}; near-copy", m.score, m.text))
            continue
        if packer.used + packer.cost(m) > cap:
            explain.append(
                Decision(
                    m.ref, "claim", False, f"{m.why}; over its share ({share:.0%})", m.score, m.text
                )
            )
            misses += 1
            if misses > STANDING_MISSES:
                break
            continue
        packer.add(m)
        given[(m.ref, m.text)] = terms
        explain.append(Decision(m.ref, "claim", True, m.why, m.score, m.text))
    return given


def recall(
    vault: Floor,
    query: str,
    *,
    user: str | None = None,
    budget: int | None = None,
    fmt: str = "md",
    history: bool = False,
    enabled: bool = True,
    now: datetime | None = None,
    project: str | None = None,
    session: str | None = None,
) -> RecallResult:
    """Cited memories for `query`, visible to `user`, packed into `budget` tokens.

    `project` is the working directory the prompt is made in: that project's note (the
    projects store) is standing context for it, and another project's notes and sessions
    are left out unless the prompt names that project (memctl.recall.project). `session`
    is the id of the session the prompt is made in: its turns are in the agent's context
    already, so neither they nor what was learned only from them are given again."""
    started = time.perf_counter()
    user, budget = resolve(vault, user, budget, fmt)
    query = query if isinstance(query, str) else str(query)
    if not enabled:
        return RecallResult(query, user, budget, fmt, "", [], 0, "", disabled=True)
    if not query.strip():
        # nothing asked, nothing recalled; the session-start block is context()
        return RecallResult(query, user, budget, fmt, "", [], 0, tokens.method())
    r = Reader(vault, user, now)
    explain: list[Decision] = []
    where = Where(r, project, session, query)
    cands, turn_hits, qterms, expansion, feedback = gather(
        r, query, explain, (lambda ref: where.turn_elsewhere(ref) is None) if project else None
    )
    # a claim citing a top turn inherits that turn's rank, scaled by how much of the
    # question the turn itself speaks to (a turn that only shares "cloud" lends little)
    qweight, full = query_weights(r, qterms)
    asked = frozenset(qweight)
    top_turns = {h.ref: s * coverage(content_terms(h.text), qweight, full) for h, s in turn_hits}
    claims = score_claims(r, cands, top_turns, qterms, expansion, feedback, history, explain)
    claims.sort(key=lambda c: (-c.score, c.path, c.text))

    renderer = Renderer(
        fmt, f"Memory for {user}: {_heading(query)}", {"user": user, "query": query}
    )
    packer = Packer(renderer, budget)
    notes = {p: c.score for p, c in cands.items()}
    given = _pack_standing(
        r, packer, qweight, full, query, notes, explain, where.note, where.keeps_hit
    )
    n_standing = len(packer.items)  # the standing lines packed, first in the packer
    best = max([c.score for c in claims] + [s for _, s in turn_hits] + [0.0])
    floor = best * MIN_RELATIVE
    kept: list[ClaimCand] = []
    kept_terms: list[frozenset[str]] = []  # each kept claim's terms, for near_copy_of
    per_note: Counter[str] = Counter()
    background: Counter[str] = Counter()
    # after the best claim, claims leave the turns their share (see TURN_SHARE)
    full_budget = budget
    claim_budget = full_budget - int(full_budget * TURN_SHARE) if turn_hits else full_budget
    for c in claims:
        budget = packer.budget = claim_budget if kept else full_budget
        reason = where.claim_elsewhere(c)
        if reason is not None:
            pass
        elif c.score < floor:
            reason = f"scores below {MIN_RELATIVE:.0%} of the best"
        elif per_note[c.path] >= MAX_CLAIMS_PER_NOTE:
            reason = f"note already gives {MAX_CLAIMS_PER_NOTE} claims"
        elif c.rel <= 0 and background[c.path] >= BACKGROUND_CLAIMS:
            reason = f"carries nothing the query asks; note already gives {BACKGROUND_CLAIMS} such"
        elif (c.path, c.text) in given or (
            near_copy_of(given.values(), c.terms, asked, DUP_JACCARD) >= 0
        ):
            reason = "near-copy of a line already given as standing context"
        else:
            i = near_copy_of(kept_terms, c.terms, asked, DUP_JACCARD)
            if i >= 0:
                dup = kept[i]
                reason = f"near-copy of a kept claim in {dup.path}: {dup.text[:60]!r}"
        cites: tuple[Cite, ...] = ()
        if (
            reason is None
            # bytes bound tokens from above: while they fit, the count cannot say no
            and packer.used + tokens.upper_bound(c.text) > budget
            and (  # and a floor that says no spares counting it
                packer.used + tokens.lower_bound(c.text) > budget
                or packer.used + tokens.count(c.text) > budget
            )
        ):
            reason = "over the token budget"  # known before its citations are even read
        least = _claim_floor(packer, c) if reason is None else None
        if least is not None and packer.used + least > budget:
            reason = "over the token budget"  # known before its citations are read
        if reason is None:
            cites, reason = check_cites(r, c.refs)
        if reason is None and packer.add(_claim_memory(c, cites)) is None:
            reason = "over the token budget"
        if reason == "over the token budget" and not kept and answers(c.section, c.text):
            reason = _make_room(r, packer, c, n_standing, explain)  # never the best answer
            n_standing = min(n_standing, len(packer.items))
            if reason is None:
                cites, reason = check_cites(r, c.refs)
                if reason is None and packer.add(_claim_memory(c, cites)) is None:
                    reason = "over the token budget"
        if reason is None:
            kept.append(c)
            kept_terms.append(c.terms)
            per_note[c.path] += 1
            background[c.path] += c.rel <= 0
        explain.append(Decision(c.path, "claim", reason is None, reason or c.why, c.score, c.text))

    budget = packer.budget = full_budget
    # then the turns: the query's and the kept claims', one list in score order
    queue, output = _turn_queue(r, turn_hits, kept, query, qweight, full,
                                _openings(r, cands))  # fmt: skip
    shown: set[str] = set()
    per_session: Counter[str] = Counter()
    kept_turn_terms: list[tuple[frozenset[str], bool]] = []  # (content words, negated)
    kept_turn_refs: list[tuple[str, str]] = []  # (ref, when said), beside kept_turn_terms
    deferred: list[tuple[str, float, str, Hit | None]] = []
    cap = MAX_TURNS_PER_SESSION
    failure_at, held = _failure_room(r, packer, queue, query)
    failed_ref = queue[failure_at][0] if failure_at >= 0 else ""

    def try_turn(ref: str, score: float, why: str, hit: Hit | None, capped: bool) -> None:
        session = ref.split("#", 1)[0]
        reason = None
        scope = hit.scope if hit is not None else r.turn_scope(ref)
        if not r.visible(scope):
            reason = f"out of scope ({scope})"
        elif (away := where.turn_elsewhere(ref)) is not None:
            reason = away
        elif score < floor:
            reason = f"scores below {MIN_RELATIVE:.0%} of the best"
        elif capped and per_session[session] >= cap:
            # spread over sessions first; what the others leave comes back to this one
            deferred.append((ref, score, why, hit))
            explain.append(Decision(ref, "turn", False, f"session already gives {cap} turns: "
                                    "waits for what other sessions leave", score))  # fmt: skip
            return
        if (
            reason is None
            and not kept_turn_terms  # else a near-copy would be refused as that first
            and (hit is not None or r.turn_text(ref) is not None)  # else: cannot be read
        ):
            least = _turn_floor(r, packer, ref, hit)
            if least is not None and packer.used + least > packer.budget:
                reason = "over the token budget"  # as packer.add would say, body never cut
        tm = None if reason else _turn_memory(r, ref, score, why, hit)
        if reason is None and tm is None:
            reason = "turn cannot be read"
        if tm is not None and reason is None:
            terms, neg = content_terms(tm.text), negated(tm.text)
            # "I don't like it" shares every content word with "I like it" and says the
            # opposite: a copy only when both say it the same way round
            when = (hit.timestamp if hit is not None else None) or tm.date or ""
            copy = next((i for i, (t, n) in enumerate(kept_turn_terms)
                         if near_copy(t, terms, asked, DUP_JACCARD) and n == neg), -1)  # fmt: skip
            if copy >= 0:
                reason = "near-copy of a kept turn"
                if (
                    _said_later(when, kept_turn_refs[copy][1])
                    # and says all the question asks that the earlier one said
                    and not (kept_turn_terms[copy][0] - terms) & asked
                    and _replace(packer, kept_turn_refs[copy][0], tm)
                ):
                    # the same thing said again later (the command run again, the fact
                    # restated): the later saying is the current one, in the earlier's place
                    old = kept_turn_refs[copy][0]
                    explain.append(Decision(old, "turn", False, f"near-copy of {ref}, said "
                                            "later, which takes its place", score))  # fmt: skip
                    per_session[old.split("#", 1)[0]] -= 1
                    per_session[session] += 1
                    kept_turn_terms[copy] = (terms, neg)
                    kept_turn_refs[copy] = (ref, when)
                    reason = None
                    why = f"{why}; said later than its near-copy {old}"
            elif (whole := packer.add(tm) is not None) or _cut_to_fit(packer, tm) is not None:
                if not whole:
                    why = f"{why}; cut to what the budget left"
                kept_turn_terms.append((terms, neg))
                kept_turn_refs.append((ref, when))
                per_session[session] += 1
            else:
                reason = "over the token budget"
        explain.append(Decision(ref, "turn", reason is None, reason or why, score))
        if reason is not None or tm is None:
            return
        role = hit.role if hit is not None else r.turn_role(ref)
        call = r.call_of(ref) if turns.is_output(role, tm.text) else None
        if call is not None and call not in shown:
            # output alone does not say what printed it: the call that ran it, right after
            shown.add(call)
            try_turn(call, score * (1 - 1e-3), f"ran what {ref} printed", None, False)

    def rival(at: int, session: str) -> float:
        """The best turn still to come from another session the cap lets in."""
        for ref2, s2, _, _, refused2 in queue[at:]:
            other = ref2.split("#", 1)[0]
            if refused2 is None and ref2 not in shown and other != session and (
                per_session[other] < cap
            ):
                return s2
        return 0.0

    for i, (ref, score, why, hit, refused) in enumerate(queue):
        if ref in shown:
            continue
        shown.add(ref)
        if refused is not None:
            explain.append(Decision(ref, "turn", False, refused, score))
            continue
        # spread over sessions among turns that score alike; a turn well above everything
        # other sessions have left is not held back for them
        session = ref.split("#", 1)[0]
        # room is held for the printed failure, but not against what was said after it in
        # its session: that is what was made of that very run
        held_now = held if i < failure_at and not _said_after(ref, failed_ref) else 0
        packer.budget = full_budget - held_now
        spread = per_session[session] < cap or rival(i + 1, session) >= SPREAD_TIE * score
        try_turn(ref, score, why, hit, capped=spread)
    packer.budget = full_budget
    for ref, score, why, hit in deferred:
        try_turn(ref, score, why, hit, capped=False)
    for ref, score, _, _, _ in output:  # evidence, given when the question asks for output
        if ref not in shown:
            shown.add(ref)
            explain.append(Decision(ref, "turn", False, "tool output, and the question does "
                                    "not ask for output", score))  # fmt: skip

    return finish(packer, explain, r.notices, query, user, budget, fmt, started, "recall")


# A session's turn past the cap waits for other sessions' turns only when one of them
# scores at least this share of it: spreading is for near ties, not for weaker answers.
SPREAD_TIE = 0.9
SAID_AGAIN = 60  # seconds: closer than this, two turns are one burst (parallel tool calls)


def _said_after(ref: str, than: str) -> bool:
    """Is `ref` a later turn of `than`'s session."""
    path, _, n = ref.partition("#t")
    path2, _, n2 = than.partition("#t")
    return path == path2 and n.isdigit() and n2.isdigit() and int(n) > int(n2)


def _said_later(when: str, than: str) -> bool:
    """Was `when` (an ISO timestamp, or a day) said on a later occasion than `than`: known,
    after it, and not in the same burst (an agent's parallel calls carry one moment)?"""
    if not when or not than or when <= than:
        return False
    try:
        a = datetime.fromisoformat(when.replace("Z", "+00:00"))
        b = datetime.fromisoformat(than.replace("Z", "+00:00"))
        if (a.tzinfo is None) != (b.tzinfo is None):
            a, b = a.replace(tzinfo=None), b.replace(tzinfo=None)
        return (a - b).total_seconds() >= SAID_AGAIN
    except ValueError:
        return True  # later by the text's order (two days)


def _replace(packer: Packer, ref: str, m: Memory) -> bool:
    """Put `m` where the packed turn `ref` is, if it fits there; else change nothing."""
    i = next((k for k, item in enumerate(packer.items) if item.ref == ref), -1)
    if i < 0:
        return False
    gone = packer.remove(i)
    fits = packer.add(m) is not None
    if not fits:
        packer.add(gone)  # it fitted before with the others: it fits again
    packer.items.insert(i, packer.items.pop())  # the earlier turn's place in the order
    return fits


HEADING_CHARS = 80


def _heading(query: str) -> str:
    """The prompt as the block's heading names it: one line (a prompt's line breaks would
    end the heading and spill its rest into the block; a markdown hard break's backslash goes
    with its line break), cut at a word, marked when cut."""
    text = as_data(query.replace("\\\r\n", "\n").replace("\\\n", "\n"))
    if len(text) <= HEADING_CHARS:
        return text
    cut = text[:HEADING_CHARS].rsplit(" ", 1)[0] or text[:HEADING_CHARS]
    return cut.rstrip(" ,;:\\") + "…"
