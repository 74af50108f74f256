"""The agent's own decisions, with the reason it gave or the option it turned down.

"I went with a per-test transaction rather than recreating the database, because ..." says
what was decided and why; "I'll use `patch.object()` instead of assigning to `query_one`"
names the option rejected. Both are kept, attributed to the agent and cited to its turn
(`observed`: the session shows the agent deciding). A plan with neither a reason nor a rejected
option is the purpose of an edit (`changes`), and narration ("Let me look at ...", "I'll
check X instead") is never a decision.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from memctl.core.lazyre import lazy
from memctl.curate.builtin.coding.findings import sentences
from memctl.curate.builtin.coding.structure import Coding
from memctl.curate.builtin.coding.voice import third_person
from memctl.curate.builtin.lexicon import table

_OPEN = r"^(?:(?:so|now|then|instead|in the end|ultimately|finally),?\s+)?"
# "I went with X", "I decided to Y", "We opted for Z": a choice made, said as made.
_CHOSE = lazy(
    _OPEN + r"(?:I|we)(?:'ve| have)?\s+(?:went with|gone with|chose|chosen|opted (?:for|to)|"
    r"decided (?:to|on|against)|picked|settled on|(?:am|'m) going with)\b",
    re.I,
)
# "I'll use X instead of Y": a plan, a decision only when it names what it turns down.
_PLAN = lazy(
    _OPEN + r"(?:I'll|I will|I'm going to|I am going to|let me|let's|we'll|I can)\s+"
    r"(?:also\s+|instead\s+|just\s+|directly\s+)?(?P<what>(?P<verb>\w+)\b.+)$",
    re.I,
)
_REJECTED = lazy(r"\b(?:rather than|instead of)\b", re.I)
_REASON = lazy(
    r"\b(?:because|since|so that|to avoid|which (?:keeps|avoids|means)|as (?:it|this|that))\b",
    re.I,
)
# A plan to look, check or ask is how the agent works, not a decision about the code.
_LOOKING = frozenset(
    "look check read see search find run test try explore investigate examine understand "
    "verify inspect review start help ask confirm debug trace grep open wait".split()
)


@dataclass
class Choice:
    """One decision of the agent's: the claim's text, the turn and the verbatim quote."""

    text: str
    turn: int
    quote: str


@cache
def _doing() -> frozenset[str]:
    return table("change_verbs") | {"keep", "go", "store", "skip", "pass", "return", "mark"}


def read(session: Coding, user: str) -> list[Choice]:
    out: list[Choice] = []
    seen: set[str] = set()
    for turn, text in session.texts:
        if turn < session.start:
            continue
        for sentence, listed in sentences(text):
            s = sentence.strip().strip("*").strip()
            words = s.split()
            if listed or "?" in s or not 6 <= len(words) <= 60 or s.endswith(":"):
                continue
            choice = _choice(s, session.agent, user)
            if choice is None or choice.lower() in seen:
                continue
            seen.add(choice.lower())
            out.append(Choice(choice, turn, sentence.strip()))
    return out


def _choice(s: str, agent: str, user: str) -> str | None:
    """The sentence as the agent's decision, in the third person, or None."""
    if _CHOSE.match(s):
        if not (_REASON.search(s) or _REJECTED.search(s)):
            return None
        body = re.sub(_OPEN, "", s, count=1, flags=re.I)
        return _end(third_person(body[:1].upper() + body[1:], agent, user))
    m = _PLAN.match(s)
    if not m or not _REJECTED.search(m.group("what")):
        return None
    verb = m.group("verb").lower()
    if verb in _LOOKING or verb not in _doing():
        return None
    return _end(f"{agent} chose to {third_person(m.group('what'), agent, user)}")


def _end(text: str) -> str:
    text = text.rstrip(" ,;:")
    return text if text.endswith((".", "!", ")")) else text + "."
