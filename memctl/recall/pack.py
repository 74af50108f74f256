"""Packing: items in rank order into the token budget, counted with a real tokenizer."""

from __future__ import annotations

import functools
import time

from memctl.core import tokens
from memctl.recall.render import Renderer, sessions_of, shown
from memctl.recall.results import Decision, Memory, RecallResult

# Group headings, source lines and header are costed again for every item tried.
_count = functools.lru_cache(maxsize=4096)(tokens.count)
count_cached = _count
# A source line names a session's path (~50 tokens): its floor is asked for each claim
# tried once the budget is nearly spent, dozens per recall, for the same few sessions.
# A floor kept from before words were counted is still a floor (counting only raises it).
_lower = functools.lru_cache(maxsize=4096)(tokens.lower_bound)


class Packer:
    """Adds items in rank order while the rendering stays within the token budget."""

    def __init__(self, renderer: Renderer, budget: int) -> None:
        self.r = renderer
        self.budget = budget
        self.items: list[Memory] = []
        self.groups: set[str] = set()
        self.sources: set[str] = set()
        self.used = _count(renderer.head() + renderer.tail()) if budget > 0 else 0

    def extra(self, m: Memory, floor: bool = False, *, room: int | None = None) -> int:
        """What adding `m` costs besides its item: its group heading and source lines.

        With `floor`, at most that, and cheaper: each part's `tokens.lower_bound` instead
        of its count (a source line names a path, whose words are rarely counted before).
        With `room`, the parts stop being added once their sum is over it: the answer is
        exact when it is at most `room`, and over `room` when the whole would be; a caller
        that only asks whether it fits learns the same without the rest of the lines.
        """
        count = tokens.lower_bound if floor else _count
        key = "\0turns" if m.kind == "turn" else m.ref
        extra = 0 if key in self.groups else count(self.r.group(m))
        new = [p for p in sessions_of(m) if p not in self.sources]
        if new and not self.sources:
            extra += count(self.r.sources_head())
        if room is None:
            return extra + sum(count(self.r.source(p)) for p in new)
        for p in new:
            if extra > room:
                break
            extra += count(self.r.source(p))
        return extra

    def sources_floor(self, paths: list[str]) -> int:
        """At most what the source lines of `paths` add (the new ones, and the Sources
        heading when none was given yet): a part of `extra`'s floor that needs no item."""
        new = [p for p in dict.fromkeys(paths) if p not in self.sources]
        if not new:
            return 0
        head = 0 if self.sources else _lower(self.r.sources_head())
        return head + sum(_lower(self.r.source(p)) for p in new)

    def cost(self, m: Memory) -> int:
        return _count(self.r.item(m)) + self.extra(m)

    def add(self, m: Memory) -> Memory | None:
        """The item as packed (with its token cost), or None when it does not fit."""
        c = self.cost(m)
        if self.used + c > self.budget:
            return None
        packed = Memory(**{**shown(m).__dict__, "tokens": c})  # as the text shows it
        self.items.append(packed)
        self.groups.add("\0turns" if m.kind == "turn" else m.ref)
        self.sources.update(sessions_of(m))
        self.used += c
        return packed

    def remove(self, i: int) -> Memory:
        """Take the i-th item out, counting the others again (headings and sources shared
        with it stay when another item still needs them); rare: the best answer's room."""
        gone = self.items[i]
        rest = self.items[:i] + self.items[i + 1 :]
        self.items, self.groups, self.sources = [], set(), set()
        self.used = _count(self.r.head() + self.r.tail()) if self.budget > 0 else 0
        for m in rest:
            self.add(m)
        return gone

    def finish(self) -> tuple[str, int, list[Memory]]:
        """Render; if joining items cost more than their sum, drop from the end until it fits."""
        dropped: list[Memory] = []
        while True:
            text = self.r.render(self.items)
            n = _count(text)
            if n <= self.budget or not self.items:
                return text, n, dropped
            dropped.append(self.items.pop())


def finish(
    packer: Packer,
    explain: list[Decision],
    notices: list[str],
    query: str | None,
    user: str,
    budget: int,
    fmt: str,
    started: float,
    kind: str,
) -> RecallResult:
    """Close the packer, explain what the budget cut, and time the whole call."""
    text, used, dropped = packer.finish()
    for m in dropped:
        explain.append(Decision(m.ref, m.kind, False, "over the token budget", m.score, m.text))
    seconds = round(time.perf_counter() - started, 4)
    tokens.keep_counts()  # for the next prompt's process (memctl.core.tokens.COUNTS_KEPT)
    return RecallResult(
        query=query,
        user=user,
        budget=budget,
        format=fmt,
        text=text,
        memories=packer.items,
        tokens=used,
        tokenizer=tokens.method(),
        explain=explain,
        notices=notices,
        seconds=seconds,
        kind=kind,
    )
