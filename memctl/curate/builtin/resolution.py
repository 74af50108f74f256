"""Who said what, in whose words: the speaker's voice rewritten into the third person.

A claim must read well out of context, so "I prefer X" becomes "Dana prefers X", "you" the
person addressed, "we" the team (or the speaker's company), and "yesterday" the date it was.
"""

from __future__ import annotations

from memctl.curate.builtin.lexicon import IRREGULAR, MODALS, PAST_IRREGULAR


def conj(verb: str, habitual: bool = False) -> str:
    """Third person singular of an English verb as people type it ("write" -> "writes").

    `habitual` (after "always", "never", ...) means present tense even for "set" or "put".
    """
    low = verb.lower()
    if low in IRREGULAR:
        return IRREGULAR[low]
    if (
        low in MODALS
        or (low in PAST_IRREGULAR and not habitual)
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
