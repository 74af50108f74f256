"""A session in which the agent only talked: it looked at files, maybe, but changed and ran
nothing. Its answers are opinions and explanations, not facts the session established about
the code: each answer is kept once, as what the agent said in reply to what was asked (the
heads of its list, or its conclusion), citing both turns. Sentences of those answers are never
filed as project facts, and the asks they answer ("list 5 strengths", "keep it short") are
read through the answer instead of as requests of their own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from memctl.core.lazyre import lazy
from memctl.curate.builtin.coding.findings import about_itself, clean, sentences
from memctl.curate.builtin.coding.markup import has_markup
from memctl.curate.builtin.coding.structure import Coding
from memctl.curate.builtin.lexicon import table

# Tools that only look, and shell commands that only look: a session of these did no work.
_LOOKING_TOOLS = frozenset(
    ("Read", "Grep", "Glob", "LS", "WebFetch", "WebSearch", "TodoWrite", "TodoRead", "Task")
)
_LOOKING_SHELL = lazy(
    r"^\s*(?:ls|cat|head|tail|find|grep|rg|tree|pwd|wc|file|stat|which|echo|"
    r"git (?:log|status|diff|show|branch|remote))\b"
)
_HEAD = lazy(r"^\*\*(?P<h>[^*]{2,80}?)\*\*|^(?P<p>[^:—–]{2,60}?)\s*(?:—|–|:)\s")
# "In short: ...", "Overall, ...": where an answer says what it comes to.
_CONCLUSION = lazy(
    r"^(?:in short|in summary|to sum up|overall|bottom line|tl;?dr|in the end|all in all|"
    r"my (?:recommendation|take|verdict)|i(?:'d| would) recommend)\b[:,]?\s*",
    re.I,
)
_LINK = lazy(r"\]\(https?://|^https?://")
MAX_HEADS = 6


@dataclass
class Answer:
    """One answer: the claim's text, the answer's turn and quote, the ask's turn and quote."""

    text: str
    turn: int
    quote: str
    asked: tuple[int, str] | None


def is_discussion(s: Coding) -> bool:
    """The agent answered but changed and ran nothing (reading files is still talking)."""
    if not s.texts or s.subagent:
        return False
    for c in s.calls:
        if c.name in _LOOKING_TOOLS:
            continue
        if c.name == "Bash" and _LOOKING_SHELL.match(c.command):
            continue
        return False
    return True


@cache
def _asked_for() -> tuple[str, ...]:
    return tuple(sorted(table("answer_kinds"), key=len, reverse=True))


def answered(s: Coding) -> dict[int, int]:
    """The human prompt turns that an answer follows: prompt turn -> answer turn."""
    prompts = sorted(h.turn for h in s.humans if h.kind == "prompt")
    texts = [t for t, text in s.texts if not has_markup(text)]
    out = {}
    for i, p in enumerate(prompts):
        nxt = prompts[i + 1] if i + 1 < len(prompts) else 10**9
        between = [t for t in texts if p < t < nxt]
        if between:
            out[p] = between[-1]
    return out


def read(s: Coding) -> list[Answer]:
    out: list[Answer] = []
    humans = {h.turn: h for h in s.humans if h.kind == "prompt"}
    text_of = dict(s.texts)
    for asked, turn in answered(s).items():
        if turn < s.start:
            continue
        h = humans[asked]
        ask = h.sentences[-1] if h.sentences else None
        a = _listed(text_of[turn], s.agent, " ".join(h.sentences)) or _concluded(
            text_of[turn], s.agent
        )
        if a is None:
            continue
        text, quote = a
        out.append(Answer(text, turn, quote, (asked, ask) if ask else None))
    return out


_BULLET = lazy(r"^\s*(?:[-*+•]|\d+[.)])\s+")


def _lists(text: str) -> list[tuple[str, list[str]]]:
    """(lead-in, items) of each list; an answer's points are often a blank line apart."""
    out: list[tuple[str, list[str]]] = []
    lead, items = "", []
    for line in text.split("\n"):
        if not line.strip():
            continue
        m = _BULLET.match(line)
        if m and line[m.end() :].strip():
            items.append(line[m.end() :].strip())
            continue
        if items:
            out.append((lead, items))
            items = []
        lead = line.strip()
    if items:
        out.append((lead, items))
    return out


def _listed(text: str, agent: str, request: str) -> tuple[str, str] | None:
    """ "Claude listed strengths: Clear separation of concerns; Low adoption cost; ..." """
    best = max(_lists(text), key=lambda li: len(li[1]), default=None)
    if best is None or len(best[1]) < 3:
        return None
    lead, items = best
    heads = []
    for item in items:
        if _LINK.search(item):
            continue  # a list of links is sources looked up, not an answer to keep
        m = _HEAD.match(item)
        head = (m.group("h") or m.group("p")) if m else (item if len(item.split()) <= 10 else "")
        head = head.replace("**", "").strip().rstrip(".:")  # as written: `cli.py` stays
        if head:
            heads.append(head)
    if len(heads) < 3:
        return None
    low = request.lower()
    what = next((w for w in _asked_for() if re.search(rf"\b{re.escape(w)}\b", low)), None)
    if what is None:
        m = re.match(r"^(?:here are|these are)\s+(?P<w>.+?):?$", clean(lead), re.I)
        what = m.group("w") if m and len(m.group("w").split()) <= 12 else None
    said = f"{agent} listed {what}: " if what else f"{agent} listed: "
    return _end(said + "; ".join(heads[:MAX_HEADS])), items[0]


def _concluded(text: str, agent: str) -> tuple[str, str] | None:
    """ "Claude answered: the idea is sound, but ..." (its conclusion, else its first point)."""
    candidates = []
    for sentence, listed in sentences(text):
        body = clean(sentence).replace("*", "")
        if listed or "?" in sentence or len(body.split()) < 6 or body.endswith(":"):
            continue
        if about_itself(body) and not _CONCLUSION.match(body):
            continue  # "Wait, I need to check ...": the agent's own state, no answer
        candidates.append((sentence, body))
    if not candidates:
        return None
    sentence, body = next(((s, b) for s, b in candidates if _CONCLUSION.match(b)), candidates[0])
    body = _CONCLUSION.sub("", body, count=1)
    return _end(f"{agent} answered: {body[:1].upper()}{body[1:]}"), sentence


def _end(text: str) -> str:
    text = text.rstrip(" ,;:")
    if len(text) > 400:
        text = text[:397].rsplit(" ", 1)[0] + "…"
    return text if text.endswith((".", "!", ")", "…")) else text + "."
