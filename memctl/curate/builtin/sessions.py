"""Session notes: a session's title and file name, its plan and open threads, threads a
later session closes, and what the user said worked or did not (feedback)."""

from __future__ import annotations

import re
from collections.abc import Callable

from memctl.core.notes import strip_links
from memctl.core.raw import parse_time, slugify
from memctl.curate import Proposal, Quote
from memctl.curate.builtin.classification import (
    BAD,
    BETTER,
    GOOD,
    NEXT,
    OPEN_ITEMS,
    PLAN,
    RESOLVED,
    THREAD,
    WORD,
)
from memctl.curate.builtin.coding.markup import has_markup, prose
from memctl.curate.builtin.coding.requests import steering_kind
from memctl.curate.builtin.entities import EntityRules
from memctl.curate.builtin.lexicon import FILLER
from memctl.curate.builtin.sentences import cap, end


class SessionRules(EntityRules):
    """The session-note half of the extractor; `claims.Extractor` owns the state."""

    out: list[Proposal]
    talks_to_agent: bool
    session: Callable[..., None]
    third: Callable[[str], str]
    _date: Callable[[int], str]
    # a sub-agent's task as its session's title (`coding.brief.title`), set by the caller
    # that reads the whole transcript: the prose reader's copy blanks the brief out
    subagent_task: str | None = None

    def session_title(self) -> str:
        title = self.b.header.title
        task = self.subagent_task
        if task is not None:
            # "You are alice, ...": the role line names every sub-agent of a team alike;
            # the task its brief sets says which one this was
            return self._title("sessions", title=task)
        if has_markup(title) or title.lstrip().startswith("<"):
            # Harness markup never names a session: the person's first words do.
            first = next(
                (s for m in self.b.messages if m.role == "user" for s in prose(m.content)), ""
            )
            title = first[:80] or "Untitled session"
        while True:  # "Morning! I'm a ..." -> "I'm a ...": greetings make poor titles
            m = re.match(r"^\S+(?: \S+){0,2}?[.!]\s+(?=\S)", title)
            if not m or len(title) - m.end() < 12:
                break
            title = title[m.end() :]
        return self._title("sessions", title=title)

    def session_slug(self) -> str:
        stem = self.b.session.rsplit("/", 1)[-1][:-3]
        m = re.search(r"-([0-9a-f]{40}|[0-9a-f]{6})$", stem)
        short = stem[: m.start()] if m else stem
        if has_markup(self.b.header.title) or self.b.header.title.lstrip().startswith("<"):
            short = slugify(self.session_title().split(": ", 1)[-1], 40)  # not the markup
        started = parse_time(self.b.header.started)
        date = started.date().isoformat() if started else self._date(1)
        return f"{date}-{short[:40].rstrip('-')}" + (f"-{m.group(1)[:6]}" if m else "")

    def session_lists(self, turn: int, s: str, core: str) -> bool:
        m = PLAN.match(core)
        if m:
            self.session("Plan", end("Plan: " + m.group("what")), turn, s)
            return True
        m = OPEN_ITEMS.match(core)
        if m:
            self.session("Open threads", end(cap(self._inner(m.group("what"), self.name))), turn, s)
            return True
        m = NEXT.match(core)
        if m:
            what = self._inner(m.group("what"), self.name)
            self.session("Open threads", end(f"{self.name} needs to {what}"), turn, s)
            return True
        return False

    def _resolve_threads(self, turn: int, s: str, core: str) -> None:
        """A later session that ships what an earlier one left open closes that thread."""
        said = {w.lower() for w in WORD.findall(core)}
        content = self.b.messages[turn - 1].content
        if RESOLVED.search(content):
            said |= {w.lower() for w in WORD.findall(content)}
        for c in self.ctx.claims("sessions"):
            if c.section != "Open threads" or c.note == self.session_title():
                continue
            plain = strip_links(c.text)
            thread = THREAD.search(plain + ".")
            if not plain.startswith(self.name + " ") or not thread:
                continue
            obj = {w.lower() for w in WORD.findall(thread.group("obj"))} - FILLER
            if obj and obj <= said:
                self.out.append(
                    Proposal(
                        "sessions",
                        c.note,
                        c.section,
                        "",
                        (Quote(turn, s),),
                        action="resolve",
                        replaces=c.text,
                    )
                )

    def feedback(self, turn: int, s: str, core: str) -> None:
        """What the user said worked ("Good catch ...") or did not ("too long")."""
        good = GOOD.match(s) or BETTER.search(core)
        bad = BAD.search(core)
        if not (good or bad) or len(s.split()) < 5 or "?" in s or "feedback" not in self.stores:
            return
        if not self.talks_to_agent:
            return  # feedback is what worked in an agent's help, not praise between friends
        if bad and steering_kind(s) in ("choose", "switch", "rather", "decide"):
            return  # "lets go with X, Y was too slow": a choice and its reason, not feedback
        when = self._date(turn)
        if "sessions" in self.stores:
            path = self.ctx.path_for("sessions", self.session_title(), self.session_slug())
            when = f"[[{path[:-3]}|{when}]]"
        text = f"{self.third(core if core.startswith('I') else s)} ({when})"
        title = self._title("feedback", topic=self.name)
        section = "Did not work" if bad else "Worked"
        self.emit("feedback", title, section, text, turn, s, slug=self.b.user, link=False)
