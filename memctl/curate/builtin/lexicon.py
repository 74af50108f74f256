"""The curator's word tables, read once from the data files beside this module.

The tables are data, not code: a reviewer can read and extend `tables/*.txt` (one entry a line,
`#` comments) without touching a regular expression.
"""

from __future__ import annotations

from functools import cache
from importlib import resources


@cache
def table(name: str) -> frozenset[str]:
    """The entries of `tables/<name>.txt`."""
    text = resources.files(__package__).joinpath("tables", f"{name}.txt").read_text("utf-8")
    return frozenset(
        line.strip() for line in text.splitlines() if line.strip() and not line.startswith("#")
    )


@cache
def lines(name: str) -> tuple[str, ...]:
    """The entries of `tables/<name>.txt` in file order (for tables where order decides)."""
    text = resources.files(__package__).joinpath("tables", f"{name}.txt").read_text("utf-8")
    return tuple(
        line.rstrip() for line in text.splitlines() if line.strip() and not line.startswith("#")
    )


def alternation(name: str) -> str:
    """A table as a regex alternation, longest entries first so "co-founder" beats "founder"."""
    import re

    return "|".join(re.escape(w) for w in sorted(table(name), key=lambda w: (-len(w), w)))


UP = "A-ZÀ-ÖØ-Þ"
LO = "a-zà-öø-ÿ"
NAME = rf"[{UP}][{LO}'’-]*[{LO}]"
FULL = rf"{NAME}(?: {NAME})?"
ORG = rf"[{UP}][\w&-]*(?: [{UP}][\w&-]*)*"
ROLE = rf"(?:[A-Z]{{2,4}}|(?:[a-z-]+ ){{0,2}}(?:{alternation('role_words')}))"

STOP_NAMES = table("stop_names")
MODALS = table("modals")
PAST_IRREGULAR = table("past_irregular")
COMMON_VERBS = table("common_verbs")
FILLER = table("filler")
IRREGULAR = {"be": "is", "am": "is", "are": "is", "have": "has", "do": "does", "go": "goes"}
