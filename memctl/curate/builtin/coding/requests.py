"""What the human asked for, chose, wanted and refused, in their words, third person.

A coding session's human turns are short and often lower-case ("use pnpm", "let's do vite",
"would you mind fixing the type issues?"); each shape in `tables/coding_requests.txt` says what
kind of steering a sentence is. A plain statement about the work ("We've just done a big
refactoring ...") is kept as context. Questions that ask for nothing, chatter and pastes are not.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from memctl.core.lazyre import lazy
from memctl.core.pasted import without_pastes
from memctl.core.provenance import quote_in
from memctl.curate.builtin.classification import is_chatter
from memctl.curate.builtin.coding.structure import Coding, Human
from memctl.curate.builtin.coding.voice import base_form, checked
from memctl.curate.builtin.faithful import verbatim
from memctl.curate.builtin.lexicon import COMMON_VERBS, lines, table
from memctl.curate.builtin.sentences import cap, core_of, end, points_outside

_GREETING = lazy(
    r"^(?:(?:hey|hi|hello|ok|okay|so|and|also|great|thanks|cool|alright|right)\b[,!.]?\s+)+(?:claude\b,?\s*)?",
    re.I,
)
_PLEASE = lazy(r"\b(?:please|pls|plz),?\s+", re.I)
_DEICTIC = lazy(r"(?:much )?(?:this|that|these|those|it|them)\b", re.I)
# A request whose object is the sentence before it: "... Can you find out why?", "fix it".
_POINTS_BACK = lazy(
    r"\b(?:(?P<wh>why|how come|what(?:['’]s| is) (?:wrong|going on|happening|causing it))"
    r"|(?P<it>it|this|that))$",
    re.I,
)
# A statement and then its ask, in one sentence: "X, can you find out why?", "X - pls fix it".
_ASK_TAIL = lazy(
    r"^(?P<a>.{12,}?)\s*(?:,|;|\s[-–—])\s*"
    r"(?P<b>(?:(?:so|and) )?(?:(?:can|could|would|will) you|please|pls|plz)\b.+"
    r"|(?:fix|check|debug|investigate|handle|look into) (?:it|this|that)\b.*)$",
    re.I,
)
_PLAIN_WORD = lazy(r"[a-z]{2,}[a-z'’]*[,;:]?|[ai]")
# Words that may open a sentence and still read right in lower case mid-sentence.
_LOWER_OPENERS = frozenset(
    "the a an this that these those my our its some all every no each when after since "
    "there".split()
)
_TO_VERB = lazy(r"\b(?:to|should)\s*$", re.I)  # "want to X", "should X": X is a verb
_CONDITIONAL = lazy(r"^(?:if|when|once|unless|in case)\b", re.I)
# An ask this short after a question ("check and summarise", "fix it") is about the question.
_BARE_ASK = 3


# A turn that opens by saying the agent got something wrong ("no, CI runs on Postgres").
_CORRECTION = lazy(
    r"^\s*(?:no|nope|nah|actually|not quite|that's (?:not (?:right|it|true)|wrong)|wrong)\b"
    r"[,.!:;]?\s",
    re.I,
)
# ... unless what follows is about the person or the conversation, not the project.
_PERSONAL = lazy(r"^(?:I|I'm|I'd|I've|we|you|it|this|that|there|please|just|wait)\b", re.I)


# Softeners before an ask: "to be fair, maybe also list ...", "perhaps just add ...".
_HEDGE = lazy(
    r"^(?:(?:to be fair|in that case|then|so|ok|okay|also|and),?\s+)*"
    r"(?:maybe|perhaps|possibly)\s+(?:also\s+|just\s+)?",
    re.I,
)


def corrects(h: Human) -> bool:
    """Does the person's turn open by overruling what the agent just did or said?"""
    return h.kind == "prompt" and bool(h.sentences) and bool(_CORRECTION.match(h.sentences[0]))


def _bare(s: str) -> str:
    return _CORRECTION.sub("", s, count=1).strip()


@cache
def _shapes() -> tuple[tuple[str, re.Pattern[str]], ...]:
    out = []
    for line in lines("coding_requests"):
        kind, _, pat = line.partition("\t")
        out.append((kind.strip(), lazy(pat.strip(), re.I)))
    return tuple(out)


@cache
def _lower_case_tools() -> frozenset[str]:
    """Tools written in lower case (npm, pnpm, uv): a sentence that opens with one keeps it."""
    names = (line.split("\t", 1)[0].strip() for line in lines("coding_stack"))
    return frozenset(n for n in names if n.islower())


@dataclass
class Said:
    """One sentence of steering: its kind, the claim's text, the turn and verbatim quote."""

    kind: str
    text: str
    turn: int
    quote: str
    # "These don't pass": a subject that points outside the sentence, kept only when an ask
    # after it takes it in ("... Can you find out why?")
    alone: bool = True


def _imperative(s: str) -> bool:
    """ "use pnpm", "add a test for it": a sentence that opens with a verb."""
    first = s.split()[0].lower().strip(",.:;") if s.split() else ""
    return (
        first in COMMON_VERBS
        or first in table("change_verbs")
        or first in table("imperative_verbs")
    )


def read(session: Coding, user: str) -> list[Said]:
    """Every steering sentence of every human turn (and tool-result answer), in order."""
    out: list[Said] = []
    for h in sorted(session.humans, key=lambda h: h.turn):
        if h.turn < session.start:
            continue
        if h.kind == "answer":
            for q, a in h.answers:
                text = f"{user} chose {a.rstrip('.')} when {session.agent} asked: {q}"
                out.append(Said("choose", end(text), h.turn, f'"{q}"="{a}"'))
            continue
        correcting = corrects(h)
        before: Said | None = None
        # with output pasted in the turn, "why" and "it" are about the paste
        pasted = "```" in h.text or without_pastes(h.text) != h.text
        question: str | None = None  # the sentence just before, when it was a question
        for whole in h.sentences:
            for s in _split_ask(whole):
                said = _one(s, h, user, session.agent)
                asked, question = question, (s.strip() if s.rstrip().endswith("?") else None)
                if said is None:
                    before = None
                    continue
                if said.kind == "request" and asked is not None and not pasted:
                    both = f"{asked} {s.strip()}"
                    ask = said.text.split(f" {session.agent} to ", 1)[-1]
                    if len(ask.split()) <= _BARE_ASK and quote_in(both, h.text):
                        # "Can the deploy push to staging? Check and summarise.": the ask's
                        # object is the question before it; both as typed, not "asked to check"
                        said.text, said.quote = end(verbatim(user, both)), both
                if correcting and said.kind == "state" and not _PERSONAL.match(_bare(s)):
                    said.kind = "gotcha"  # "no, CI runs on Postgres": how the project works
                if before is not None and said.kind == "request" and not pasted:
                    # the two quoted as one: one sentence split at its ask, or two sentences
                    # with nothing cut between them
                    both = whole if s is not whole else f"{before.quote} {said.quote}"
                    if quote_in(both, whole if s is not whole else h.text) and _points_back(
                        said, before, both
                    ):
                        out.remove(before)  # now part of the request it explains
                out.append(said)
                before = said if said.kind == "state" else None
    return [said for said in out if said.alone]


def _split_ask(s: str) -> list[str]:
    """ "the tests are flaky on CI, can you find out why?": a statement and an ask in one
    sentence, read as two (each a verbatim part of it)."""
    m = _ASK_TAIL.match(s)
    if not m:
        return [s]
    return [s[: m.end("a")], s[m.start("b") :]]


def _points_back(said: Said, before: Said, quote: str) -> bool:
    """ "The tests are flaky on CI. Can you find out why?": the request alone says nothing,
    so it takes in the statement it points at, and its quote spans both sentences."""
    body = said.text.rstrip(".!")
    m = _POINTS_BACK.search(body)
    if not m:
        return False
    what = before.text.rstrip(".!,;")
    head = what.split(" ", 1)[0]
    typed = before.quote.split(" ", 1)[0].lower() == head.lower()  # not "we" -> "Dana's team"
    if head.lower() in _LOWER_OPENERS or (typed and before.quote[:1].islower()):
        what = head[:1].lower() + what[1:]  # as typed, or a plain word: "the", not "The"
    said.text = end(f"{body} {what}" if m.group("wh") else f"{body}: {what}")
    said.quote = quote
    return True


# "we should ...", "we need to ...", "we're going to ...": in a session with an agent, "we" is
# the person and the agent, and the modal makes it a step to take (English's closed class of
# modals of obligation and intent), not a fact of the person's team.
_WE_NEXT = lazy(
    r"(?i)(?<![\w'’])we(?:['’]re)?\s+(?:[\w'’]+\s+){0,2}?(?:should|must|shall|need\s+to|"
    r"have\s+to|ought\s+to|going\s+to|gonna)\b|(?<![\w'’])we['’]ll\b"
)


def _one(s: str, h: Human, user: str, agent: str) -> Said | None:
    core = core_of(_GREETING.sub("", s.strip()))  # "To be fair, maybe ..." -> "maybe ..."
    core = _PLEASE.sub("", core).strip()
    core = core.rstrip("\\ ")
    if len(core) < 6 or len(core.split()) > 60:
        return None
    if core.endswith(":") or _CONDITIONAL.match(core):
        return None  # "Here's the error:" introduces a paste; "if you need ..." is no fact
    # What the person said, word for word: a claim whose rewrite fails its check says this.
    said = verbatim(user, core if core in s else s.strip())
    for kind, pat in _shapes():
        m = pat.match(core)
        if not m:
            continue
        if "ing" in m.groupdict() and m.group("ing"):
            head, _, tail = m.group("ing").partition(" ")
            x: str | None = f"{base_form(head)} {tail}".strip()
        else:
            x = m.group("x")
        assert x is not None
        x = checked(x.rstrip("?.! "), user, agent, named=True)
        if kind in ("switch", "rather"):
            # "im switching the build to bun, webpack is too slow for us": the whole sentence,
            # its reason too, in the third person ("Dana is switching the build to bun, ...").
            whole = checked(core, user, agent)
            return Said(kind, end(cap(whole) if whole else said), h.turn, s)
        if kind == "prefer":
            # "I very much like X" keeps its own verb: "Dana very much likes X". Liking "this
            # idea" means nothing out of the session: it stays in the session's note.
            kind = "state" if _DEICTIC.match(m.group("x")) else kind
            return Said(kind, end(checked(core, user, agent) or said), h.turn, s)
        if x is None:
            return Said(kind, end(said), h.turn, s)
        if kind == "suggest" and x.split(" ", 1)[0].endswith("ing"):
            head, _, tail = x.partition(" ")
            x = f"{base_form(head)} {tail}".strip()  # "how about using Redis": use Redis
        if kind == "suggest" and not _imperative(x):
            if core.rstrip().endswith("?"):
                return None  # "What about the logs?": a question about a topic, no suggestion
            return Said(kind, end(said), h.turn, s)  # not a verb after it: as typed
        if kind == "want" and "x" in m.groupdict() and not _TO_VERB.search(core[: m.start("x")]):
            return Said(kind, end(f"{user} wants {x}"), h.turn, s)  # "I want short answers"
        text = _phrase(kind, x, user, agent, h.kind)
        return Said(kind, end(text), h.turn, s)
    if core.endswith("?") or is_chatter(core):
        return None  # a question asks for nothing to be remembered; thanks are no fact
    if h.kind == "rejection":
        what = f"`{h.refused}`" if h.refused else f"{agent}'s tool call"
        why = checked(core, user, agent, named=True) or f'"{core}"'
        return Said("reject", end(f"{user} refused {what}: {why}"), h.turn, s)
    hedged = _HEDGE.match(core)
    if hedged and _imperative(core[hedged.end() :]) and len(core[hedged.end() :].split()) >= 2:
        core = core[hedged.end() :]  # "to be fair, maybe also list 5 risks": an ask
    if _imperative(core) and len(core.split()) >= 2:
        x = checked(core[0].lower() + core[1:], user, agent, named=True)
        text = f"{user} asked {agent} to {x.rstrip('.!')}" if x else said
        return Said("request", end(text), h.turn, s)
    if len(core.split()) >= 5:
        if core.endswith(("...", "…")):
            return None  # trailing off: a thought, not a fact
        # "we run X" -> "Dana's team runs X"; but what "we" should, must or are going to do
        # is the person and the agent's next step: their words, not their team's habit
        text = said if _WE_NEXT.search(core) else checked(core, user, agent) or said
        first = text.split(" ", 1)[0]
        if _PLAIN_WORD.fullmatch(first) and first not in _lower_case_tools():  # not `Npm`
            text = text[:1].upper() + text[1:]
        return Said("state", end(text), h.turn, s, alone=not points_outside(core))
    return None


def _phrase(kind: str, x: str, user: str, agent: str, where: str) -> str:
    if kind == "request":
        return f"{user} asked {agent} to {x}"
    if kind == "want":
        return f"{user} wants to {x}"
    if kind == "prefer":
        return f"{user} prefers {x}"
    if kind == "reject":
        return f"{user} does not want {agent} to {x}"
    if kind == "suggest":
        if x.startswith(f"{agent} "):
            return f"{user} suggested that {x}"  # "maybe you could ...": the agent, once
        return f"{user} suggested that {agent} {x}"
    if kind == "choose":
        return f"{user} chose to {x}" if _imperative(x) else f"{user} chose {x}"
    if kind == "instruct":
        return f"{user} told {agent}: {x[:1].upper()}{x[1:]}"
    return x


def steering_kind(sentence: str) -> str | None:
    """The kind of steering a sentence is by its shape alone (choose, switch, request, ...):
    the prose reader asks, so "lets go with X, Y was too slow" is a choice, not feedback."""
    core = core_of(_GREETING.sub("", sentence.strip()))
    for kind, pat in _shapes():
        if pat.match(core):
            return kind
    return None
