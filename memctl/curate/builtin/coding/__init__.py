"""Coding sessions read by their structure: a human steering an agent that runs tools.

Each extractor is its own module and reads one part of the session (`structure.read` pairs
the parts up first):

- `requests`: the human's requests, choices, preferences, refusals and standing instructions,
  including their words inside tool results (a refused call's reason, an answered question);
- `commands`: how the code base is tested, linted, type-checked, built and run (`shell`
  reads a shell line for the whole commands in it);
- `changes`: commits with message and hash, merges, files created, edits with their purpose;
- `findings`: causes and facts the agent established, and its closing summaries' points;
- `shape`: where the code lives, what it is built with, which environments it runs in;
- `choices`: the agent's own decisions, with the reason given or the option turned down.

Harness markup, tool output, pasted logs and the agent's narration never become a claim's text
(`markup`). Claims about what the session shows the agent doing or finding are `observed`: they
cite the agent's (or a tool's) turn, quoting it verbatim; the human's words are cited as said.
Project facts go to the project's note in the `projects` store, one note per code base.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from memctl.core.lazyre import lazy
from memctl.core.raw import slugify
from memctl.curate import Batch, Proposal, Quote
from memctl.curate.builtin.coding import (
    agents,
    brief,
    changes,
    choices,
    commands,
    diagnostics,
    discussion,
    failures,
    findings,
    onepoint,
    requests,
    runs,
    shape,
    web,
)
from memctl.curate.builtin.coding.project import (
    identity,
    own_note,
    project_name,
    project_note,
)
from memctl.curate.builtin.coding.structure import Coding, is_coding, read
from memctl.curate.builtin.sentences import cap, end, topic_words

__all__ = ["extract", "is_coding", "steering"]

# "use pnpm, not npm", "use tabs instead of spaces": a choice of tool or way with its
# rejected alternative is a standing instruction, proposed for review.
_STANDING = lazy(
    r"(?i)\b(?:always )?(?:use|prefer|stick (?:to|with)) [\w.@/+#-]+(?: [\w.@/+#-]+)?"
    r",? (?:not|instead of|rather than|over) [\w.@/+#-]+"
)

# "Dana chose X", "Claude went with X": the decision note is named by X.
_DECIDED = lazy(
    r"^\S+ (?:chose|went with|has gone with|opted for|opted to|decided (?:to|on|against)|"
    r"picked|settled on) (?:to )?|^\S+(?:'s team)? (?:is|has|have) (?=switch|mov|migrat|port)|"
    r"^\S+ would (?:much )?rather (?:\S+'s team |they |we )?|"
    r"^\S+ said: \"(?:(?:let['’]?s|we(?:['’]ll| will)?|i(?:['’]ll| will)?) )?"  # words as typed
)

# A person's words kept as typed, and how much of them a cut must keep to still say them.
_SAID = lazy(r'^[^"]{1,60} said: "')
_KEPT = 3

# Where a decision's subject ends: the question it answered, the option it beat, its reason.
_TOPIC_END = lazy(
    r" when (?:the )?\S+ asked:|,? (?:rather than|instead of|because|since|so that)\b|,\s|\s+btw\b"
)

# In a chat without tools, what the prose reader does not already read: requests, choices,
# refusals, suggestions and standing instructions.
STEERING = frozenset(
    ("request", "want", "suggest", "reject", "choose", "switch", "rather", "instruct")
)

# An ask whose object is what the session showed ("fix these lint errors", "test it with
# act"): a step of the work that says nothing to a reader who was not there.
_POINTS_BACK = lazy(r"(?i)^(?:to )?(?:\w+ ){1,3}(?:these|those|this|it|them)\b(?!['’]s)")
# "... when Claude asked: Which layout ...?": the question a decision answered.
_ASKED = lazy(r" when \S+ asked: (?P<q>.+)$")
# An answer made only of these names no option of its own: yes, no, a letter, an ordinal.
_BARE = lazy(
    r"(?i)^(?:(?:yes|no|yep|nope|ok|okay|sure|fine|option|choice|alternative|the|that|this|one|"
    r"first|second|third|fourth|last|former|latter|both|neither|either|all|none|[a-e]|\d+)"
    r"[\s.,!)(:-]*)+$"
)


# Words past which an ask that points at what was shown ("fix these lint errors") says
# what it is about in its own words: the goal it is, kept.
_SAYS_MORE = 8


def _bare_answer(topic: str) -> bool:
    return bool(_BARE.match(topic.strip()))


# Which store and section each kind of claim goes to.
ROUTES = {
    "request": ("sessions", "Requests"),
    "want": ("sessions", "Requests"),
    "suggest": ("sessions", "Requests"),
    "reject": ("sessions", "Requests"),
    "state": ("sessions", "Context"),
    "prefer": ("profile", "Preferences"),
    "choose": ("decisions", "Decision"),
    "switch": ("decisions", "Decision"),
    "rather": ("decisions", "Decision"),
    "decide": ("decisions", "Decision"),
    "instruct": ("instructions", "Instructions"),
    "problem": ("sessions", "Problems"),
    "gotcha": ("projects", "Gotchas"),
    "layout": ("projects", "Layout"),
    "stack": ("projects", "Stack"),
    "environment": ("projects", "Environments"),
    "fact": ("projects", "Facts"),
    "outcome": ("sessions", "Outcomes"),
    "commit": ("sessions", "Outcomes"),
    "merge": ("sessions", "Outcomes"),
    "created": ("sessions", "Outcomes"),
    "edited": ("sessions", "Outcomes"),
    "moved": ("sessions", "Outcomes"),
    "spawned": ("sessions", "Outcomes"),
    "web": ("sessions", "Context"),
    "command": ("projects", "Commands"),
}


def steering(
    batch: Batch,
    user: str,
    session_note: Callable[[], tuple[str, str]],
    owner: str | None = None,
) -> list[Proposal]:
    """How a person steers an assistant in a chat without tools (see `STEERING`)."""
    return extract(batch, user, session_note, only=STEERING, owner=owner)


def extract(
    batch: Batch,
    user: str,
    session_note: Callable[[], tuple[str, str]],
    only: frozenset[str] | None = None,
    owner: str | None = None,
) -> list[Proposal]:
    """Every claim the coding extractors find in the batch's new turns; `owner` is whose
    profile the user's preferences go to (who said "I'm X", else the session's user)."""
    s = read(batch)
    out: list[Proposal] = []
    kinds: list[str] = []  # each claim's kind, beside `out`: which of them may fold
    stores = batch.stores
    project = project_name(s, batch) if "projects" in stores else None
    ident: dict[str, str] = {}  # what every note from work in this code base records
    if project is not None:
        project, project_title, project_slug = project_note(s, batch, project)
        ident = identity(s, batch, project_slug)

    decided: list[tuple[frozenset[str], str, str]] = []  # this session's decision notes

    def add(
        kind: str,
        text: str,
        turn: int,
        quote: str,
        observed: bool,
        *more: Quote,
        replaces: str | None = None,
        action: str = "supersede",
    ) -> None:
        if len(text) > findings.MAX_CLAIM:
            cut = end(findings.short(text.rstrip(".")))  # one point, cut where a clause ends
            if _SAID.match(text) and len(cut.split()) * _KEPT < len(text.split()):
                # "Dana said: "Pretend we have a list of tasks…"": the point was in what the
                # cut left out (an aside, the clauses after it); no rewrite can say it
                return
            text = cut
        store, section = ROUTES[kind]
        if store not in stores or turn in s.noise or (store == "projects" and project is None):
            return
        meta: tuple[tuple[str, object], ...] = ()
        if store in ("sessions", "decisions"):
            meta = tuple(ident.items())  # shared: no machine path
        if store == "sessions":
            note, slug = session_note()
        elif store == "projects":
            assert project is not None
            note, slug = project_title, project_slug
            meta = tuple((k if k != "project" else "project_id", v) for k, v in ident.items())
        elif store == "profile":
            who = owner or batch.user
            note, slug = _title(batch, "profile", who, key="user"), who
        elif store == "decisions":
            # cut at the option it beats or its reason first, then keep eight words: a cut
            # the other way round leaves "Bump the pool to 10 as well instead"
            topic = _TOPIC_END.split(_DECIDED.sub("", text))[0].replace('"', "")
            topic = cap(" ".join(topic.split()[:8]))
            asked = _ASKED.search(text)
            if asked and _bare_answer(topic):
                # "Yes", "Option C": the answer names nothing; the question names the decision
                topic = cap(" ".join(asked.group("q").rstrip("?").split()[:8]))
            note, slug = _title(batch, "decisions", topic.rstrip(".")), slugify(topic, 50)
            if project is not None:  # a decision of the same words in another code base
                note, slug = own_note(batch, "decisions", ident, note, slug, project_slug)
            # "Postgres" (the answer to the agent's question) and "postgres for the audit log"
            # (the person's own words after it) are one decision: one note, the first one's.
            words = topic_words(topic)
            same = next((d for d in decided if words and (d[0] <= words or words <= d[0])), None)
            if same is not None:
                note, slug = same[1], same[2]
            else:
                decided.append((words, note, slug))
        else:
            scope = "team" if batch.scope in ("team", "global") else batch.user
            note, slug = f"Instructions ({scope})", scope
        out.append(
            Proposal(
                store=store,
                note=note,
                section=section,
                text=text,
                citations=(*more, Quote(turn, quote)),
                slug=slug,
                meta=meta,
                observed=observed,
                action=action if replaces else "add",
                replaces=replaces,
            )
        )
        kinds.append(kind)

    def session_line(section: str, text: str, cites: tuple[Quote, ...], kind: str) -> None:
        """A line of the session's note that the session shows, as is (not routed or cut)."""
        if "sessions" not in stores:
            return
        note, slug = session_note()
        out.append(Proposal("sessions", note, section, text, cites, slug=slug,
                            meta=tuple(ident.items()), observed=True))  # fmt: skip
        kinds.append(kind)

    overruled = _overruled(s)
    first_request = True
    talk = only is None and discussion.is_discussion(s)
    # In a discussion an ask ("list 5 strengths", "keep it short") is read through its answer.
    folded = set(discussion.answered(s)) if talk else set()
    # A sub-agent's "user" is the agent that spawned it: its prompt is no person's request.
    for r in [] if s.subagent else requests.read(s, user):
        if only is not None and r.kind not in only:
            continue
        if r.turn in folded and r.kind in ("request", "suggest", "want") and not first_request:
            continue
        by_tool = batch.messages[r.turn - 1].role != "user"
        if r.kind == "instruct" and by_tool:
            continue  # instructions come only from what the person typed
        if r.kind == "reject" and by_tool:
            r.kind = "prefer"  # "use pnpm" said refusing a call: how they want work done
        asked = r.text.split(f" {s.agent} ", 1)[-1]
        if (
            r.kind in ("request", "suggest", "reject")
            and _POINTS_BACK.match(asked)
            and not (r.kind == "request" and first_request and len(asked.split()) > _SAYS_MORE)
        ):
            # "fix these", "make it the same as the items": about what was shown (a paste,
            # a shell's output), which a reader of the note never sees; as the session's
            # goal too, unless the ask goes on to say what it is about ("use these models
            # better, I need the right timestamp for each type")
            continue
        if r.kind == "request" and first_request and "sessions" in stores:
            first_request = False
            note, slug = session_note()
            out.append(Proposal("sessions", note, "Goal", r.text, (Quote(r.turn, r.quote),),
                                slug=slug, meta=tuple(ident.items())))  # fmt: skip
            kinds.append("goal")
        else:
            # an answer or a refusal's reason is the person's words, though a tool result
            # holds them: said, not observed (the engine checks the quote is theirs)
            add(r.kind, r.text, r.turn, r.quote, False)
        # The first ask is the session's goal, and may still be a way of working for good.
        if r.kind == "request" and not by_tool and _STANDING.match(r.quote):
            # "use pnpm, not npm": a way of working that holds beyond this session.
            rule = _STANDING.match(r.quote)
            assert rule is not None
            add("instruct", end(cap(rule.group(0).strip())), r.turn, rule.group(0).strip(), False)
    if first_request and only is None and not s.subagent:
        _opening_as_goal(s, out, kinds)
    if only is None and s.subagent and (got := brief.task(s)):
        # a sub-agent's goal: the task the agent that spawned it set, in the brief's words;
        # observed: what the session shows was asked of it, never a person's statement
        text, turn, quote = got
        if len(text) > findings.MAX_CLAIM:
            text = end(findings.short(text.rstrip(".")))
        session_line("Goal", end(text), (Quote(turn, quote),), "goal")
    if only is not None:
        return out
    known = []
    sections: dict[str, list[str]] = {}
    if project is not None and batch.context is not None:
        for k in batch.context.claims("projects"):
            if k.note == project_title:
                known.append(k.text)
                sections.setdefault(k.section, []).append(k.text)
    for c in commands.read(s, known):
        by_tool = batch.messages[c.turn - 1].role != "user"
        first = (Quote(c.first_use, c.quote),) if c.first_use else ()
        add("command", c.text, c.turn, c.quote, by_tool, *first, replaces=c.replaces)
    # what the agent found and reported; a reported change cites the edit that made it
    found = [] if talk else findings.read(s)
    shown = {
        i: got
        for i, f in enumerate(found)
        if f.kind == "outcome" and (got := changes.shown_by_edit(s, f.text, f.turn)) is not None
    }
    reported = {got.path for got in shown.values()}  # files a report's point cites an edit of
    for ch in changes.read(s):
        if ch.turn in overruled and ch.kind in ("created", "edited"):
            continue
        if ch.kind == "edited" and ch.quote in reported:
            continue  # the report says what the edit did, after it was done: said once
        # an edit's purpose, said before it, is often the person's ask said again
        asked = _asked_for(s, ch.text, ch.turn) if ch.kind == "edited" else ()
        add(ch.kind, ch.text, ch.turn, ch.quote, True, *asked, *(Quote(t, q) for t, q in ch.also))
    fetched = web.read(s)
    if fetched is not None:
        text, ((turn, quote), *more) = fetched
        add("web", text, turn, quote, True, *(Quote(t, q) for t, q in more))
    for sp in agents.read(s):
        (turn, quote), *more = sp.cites
        add("spawned", sp.text, turn, quote, True, *(Quote(t, q) for t, q in more))
    if talk:
        # what the agent said in a discussion is its answer, not a fact about the code
        for a in discussion.read(s):
            asked = (Quote(*a.asked),) if a.asked else ()
            add("outcome", a.text, a.turn, a.quote, True, *asked)
    else:
        for i, f in enumerate(found):
            edit = (Quote(shown[i].turn, shown[i].quote),) if i in shown else ()
            asked = _asked_for(s, f.text, f.turn)
            # a report of agents spawned cites the calls that spawned them
            spawns = tuple(Quote(t, q) for t, q in agents.named_in(s, f.text, f.turn))
            add(f.kind, f.text, f.turn, f.quote, True, *asked, *edit, *spawns)
    if project is not None:
        for sh in shape.read(s, sections):
            (turn, quote), *more = sh.cites
            cites = (Quote(t, q) for t, q in more)
            add(sh.kind, sh.text, turn, quote, True, *cites, replaces=sh.replaces, action="update")
    failed = runs.last_failed(s)
    failing = failures.first(s)
    # the failures the session set out to fix (or ran into first), as the runner named them
    # (when they are those of its last run, that run's line says it), and what a checker
    # reported: each its own point, never folded into the fix that follows ("failing")
    if failing is not None and (failed is None or failed.output[0] != failing.turn):
        session_line("Problems", failing.text, _shown(failing), "failing")
    if (checked := diagnostics.first(s)) is not None:
        session_line("Problems", checked.text, _shown(checked), "failing")
    if failed is not None:
        # how the session left its tests, cited to the run and to what it printed
        cites = (Quote(*failed.run), Quote(*failed.output))
        session_line("Problems", failed.text, cites, "problem")
    for ch in choices.read(s, user):
        if ch.turn in overruled:
            continue
        add("decide", ch.text, ch.turn, ch.quote, True)
    return onepoint.fold(list(zip(kinds, out, strict=True)))


# Content words a finding must share with the person's sentence to be that sentence again.
_ECHO = 3
_ECHO_SHARE = 0.4  # and this share of the finding's own


def _asked_for(s: Coding, text: str, turn: int) -> tuple[Quote, ...]:
    """The person's sentence, in the prompt the agent was answering, that the finding says
    again: "Timeline filtering now hides vis-groups" is what "hide the vis-group instead of
    its items" asked for, and "the vis library's built-in `visible` property" is what the
    person suggested. Cited beside the agent's words, the line shows the idea was theirs
    first, not the agent's own. A sub-agent answers its brief, the ask of the agent that
    spawned it ("branch carol/research-beads from master"), until a person speaks."""
    prompt = max((h for h in s.humans if h.kind == "prompt" and s.start <= h.turn < turn),
                 key=lambda h: h.turn, default=None)  # fmt: skip
    if prompt is None and s.brief is not None and s.start <= s.brief.turn < turn:
        prompt = s.brief
    if prompt is None or not prompt.sentences:
        return ()
    words = onepoint.content(text)
    best = max(prompt.sentences, key=lambda p: len(onepoint.content(p) & words))
    shared = len(onepoint.content(best) & words)
    if shared < _ECHO or shared < _ECHO_SHARE * len(words) or best not in prompt.text:
        return ()  # a few words in common (a file's name) are not the ask said again
    return (Quote(prompt.turn, best),)


def _shown(f: failures.Failing) -> tuple[Quote, ...]:
    """What an output shows failing, cited to the lines that say it and to the command that
    printed them (a run's command, quoted whole), as the last run's line is."""
    ran = (Quote(*f.run),) if f.run is not None else ()
    return (*ran, *(Quote(f.turn, q) for q in f.quotes))


def _opening_as_goal(s: Coding, out: list[Proposal], kinds: list[str]) -> None:
    """A session opens with what it is for: when no sentence of any prompt read as an ask
    ("Search if claude -p can use WebSearch", "we should change the TUI so that ..."), the
    first thing the person said in the session's first prompt is its goal, not context.
    Only in the batch that holds that prompt; a prompt that only points at what it showed
    ("please fix these") says nothing and gives none."""
    prompts = sorted(h.turn for h in s.humans if h.kind == "prompt")
    if not prompts or prompts[0] < s.start:
        return
    said = [
        i
        for i, (kind, p) in enumerate(zip(kinds, out, strict=True))
        if kind == "state" and p.store == "sessions" and p.section == "Context"
        and p.citations[-1].turn == prompts[0]
    ]  # fmt: skip
    # a sentence read in the third person says what it is about; one kept verbatim as said
    # ("we're going to make a little experiment here") is often only the run-up to it
    said.sort(key=lambda i: bool(_SAID.match(out[i].text)))
    if said:
        out[said[0]] = replace(out[said[0]], section="Goal")
        kinds[said[0]] = "goal"


def _overruled(s: Coding) -> set[int]:
    """The agent's turns that the person's next words overruled ("no, drop the cache"): its
    last words before them and what it did after; what it chose, found or changed there is a
    step the session walked back. What it found there stays: "no, CI runs on Postgres"
    corrects the person's premise, not the cause the agent goes on to fix."""
    out: set[int] = set()
    since = 0
    for h in sorted(s.humans, key=lambda h: h.turn):
        if h.kind != "prompt":
            continue
        said = [t for t, _ in s.texts if since < t < h.turn]
        if requests.corrects(h) and said:
            out.update(range(said[-1], h.turn))  # its last words, and what it did after them
        since = h.turn
    return out


def _title(batch: Batch, store: str, value: str, key: str = "topic") -> str:
    try:
        return batch.stores[store].title.format(**{key: value, "topic": value, "name": value})
    except (KeyError, IndexError, ValueError):
        return value
