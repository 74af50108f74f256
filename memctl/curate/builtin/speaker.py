"""The speaker's sentence as a claim in the third person, or in their own words.

"I always write X" becomes "Dana always writes X"; "we decided" names the speaker's team. A
rewrite that fails `faithful`'s check is not written: the claim keeps what the person said,
verbatim, with who said it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date

from memctl.curate.builtin.classification import WORK
from memctl.curate.builtin.faithful import faithful, verbatim
from memctl.curate.builtin.resolution import (
    LY,
    addressee_voice,
    anchor,
    conj,
    group_voice,
    has_addressee,
    has_group,
    prose_only,
    second_verb,
    speaker_voice,
)
from memctl.curate.builtin.sentences import cap, end


class VoiceRules:
    """The rewriting half of the extractor; `claims.Extractor` mixes it in and owns the state."""

    name: str
    we: str
    org: str | None
    team: bool
    said: str
    addressee: str | None
    humans: set[str]
    talks_to_agent: bool
    _day: Callable[[int], date]

    def third(self, core: str, said: str | None = None) -> str:
        """Rewrite first person into third: "I always write X" -> "Dana always writes X".

        A rewrite that fails `faithful`'s check keeps the person's words (`said`, else the
        sentence being rewritten) verbatim, with who said them: never another sentence of the
        turn, which would quote words the claim is not about.
        """
        out = self._third(core)
        if faithful(core, out, self._names()):
            return out
        return end(verbatim(self.name, said or core))

    def _names(self) -> tuple[str, ...]:
        """Who a rewrite may name: the speaker, their team, the person they talk to."""
        return (self.name, self.we, f"{self.name}'s team", "the team", f"{self.name} and others",
                self.addressee or "", self.decider())  # fmt: skip

    def decider(self) -> str:
        """Who "we decided" names: the speaker's team, never their employer ("At Zalando we
        decided" is a team's call, not the company's)."""
        if self.org is None:
            return self.we
        return "The team" if self.team else f"{self.name}'s team"

    def _third(self, core: str) -> str:
        who, text = self.name, core
        lead = {"I'm": "is", "I am": "is", "I've": "has", "I'd": "would", "I'll": "will"}
        for head, verb in lead.items():
            if re.match(rf"^{head}\b", text):
                text = f"{who} {verb}" + text[len(head) :]
                break
        else:
            m = re.match(
                r"^I ((?:very much |so much |" + LY + r" |still |just |also |always |never |"
                r"often |only )*)(\S+)",
                text,
            )
            if m:
                habitual = bool(re.search(r"always|never|usually|often|ly ", m.group(1)))
                text = f"{who} {m.group(1)}{conj(m.group(2), habitual)}" + text[m.end() :]
                text = second_verb(text)
        we_lead = {"We're": "is", "We are": "is", "We've": "has", "We'll": "will"}
        for head, verb in we_lead.items():
            if re.match(rf"^{head}\b", text):
                text = f"{self.we} {verb}" + text[len(head) :]
                break
        else:
            m = re.match(r"^We ((?:" + LY + r" |still |just |also |already |all )*)(\S+)", text)
            if m:
                text = f"{self.we} {m.group(1)}{conj(m.group(2))}" + text[m.end() :]
            elif text.startswith("Our "):
                noun = self.we.rsplit(" ", 1)[-1]
                if self.we != noun and text.startswith(f"Our {noun} "):
                    text = self.we + text[4 + len(noun) :]  # "Our team" is "the team", once
                else:
                    text = f"{self.we}'s" + text[3:]
        return end(cap(self._inner(text, who)))

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

        def plain(seg: str) -> str:
            for pat, rep in subs:
                seg = re.sub(pat, rep, seg)
            return seg

        return prose_only(text, plain)

    def voice(self, core: str, turn: int) -> str | None:
        """The sentence as a third-person claim, or None when it cannot be resolved."""
        said = self.said
        for name in (self.addressee, *sorted(self.humans)):
            if name and core.startswith(f"{name}, ") and len(core) > len(name) + 12:
                core = cap(
                    core[len(name) + 2 :]
                )  # "John, I ..." speaks to John; it is not about him
                said = said.removeprefix(f"{name}, ")
                break
        text = anchored = anchor(core, self._day(turn))
        if has_addressee(text):
            if self.addressee is None:
                return None  # "you" is the assistant: what it was told is no fact about anyone
            text = addressee_voice(text, self.addressee)
        if has_group(text):
            if (self.team and WORK.search(core)) or self.talks_to_agent:
                text = group_voice(text, self.we)
            else:
                text = group_voice(text, f"{self.name} and others", mine=f"{self.name}'s")
        text = speaker_voice(text, self.name)
        cut = r"\s+[-–—]\s+|,\s+(?:so|which|since then|but|because)\s+"
        if not faithful(anchored, text, self._names()):
            # what it cannot rewrite right it quotes: true, and its own citation
            # the typed sentence this claim is read from, never a neighbour of it in the turn
            words = said if _head(core) in _head(said, 400) else core
            return end(verbatim(self.name, re.split(cut, words)[0].rstrip("!").strip()))
        text = re.split(cut, text)[0]
        return end(cap(text.rstrip("!").strip()))


def _head(text: str, n: int = 24) -> str:
    """The first `n` letters and digits of a text, lower case: enough to tell two sentences
    of one turn apart when links or a greeting were taken off one of them."""
    plain = re.sub(r"\[\[[^\]|]*\|([^\]]*)\]\]", r"\1", text)
    return re.sub(r"[^0-9a-z]+", "", plain.lower())[:n]
