"""What the agent found and what it reported done: causes, facts about the code, summaries.

The agent's prose is mostly narration ("Let me look at ..."), which is never a claim. What is
kept are declarative sentences about something specific in the code (a file, an identifier,
a command) that state a cause or a fact it checked, and the points of its closing summaries.
Openings are data (`tables/narration.txt`, `interjections.txt`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from memctl.core.lazyre import lazy
from memctl.curate.builtin.coding.markup import has_markup, is_log_line
from memctl.curate.builtin.coding.structure import Coding
from memctl.curate.builtin.lexicon import COMMON_VERBS, table
from memctl.curate.builtin.sentences import abbreviation, inside_span, points_outside

_SPLIT = lazy(r"(?<=[.!?])\s+(?=[A-Z`*\"(])")
# A list item: a bullet, a number, or a check mark an agent's report opens its points with.
_BULLET = lazy(
    r"^\s*(?:[-*+•]\s+|[✅✔☑❌⚠✓✗]\ufe0f?\s*|\d+[.)]\s+)(?:\[[ xX]\]\s+)?(?=\S)"
)
_HEADING = lazy(r"^\s*#{1,6}\s+")
_SPECIFIC = lazy(
    r"`[^`]+`|\b\w+\.(?:py|js|ts|tsx|jsx|json|toml|ya?ml|md|html|css|go|rs|rb|sh|cfg|ini|txt)\b|"
    r"\b[a-z]+_[a-z_]+\b|\b[a-z]+[A-Z]\w+\b|\b[A-Z][a-z]+[A-Z]\w+\b|\w+\(\)|\b[\w-]+/[\w./-]+"
)
_SUMMARY = lazy(
    r"^\s*(?:#{1,6}\s*)?(?:\*\*)?(?:summary|what (?:was|i) (?:done|did|changed|fixed)|"
    r"changes made|key changes|changes|fixes|what changed|results?)\b",
    re.I | re.M,
)
_STRONG = lazy(r"\*\*([^*]+)\*\*")


@dataclass
class Found:
    """A sentence worth keeping: kind (gotcha | problem | fact | outcome), text, turn, quote."""

    kind: str
    text: str
    turn: int
    quote: str


@cache
def _narration() -> re.Pattern[str]:
    words = sorted(table("narration"), key=len, reverse=True)
    inter = "|".join(re.escape(w) for w in sorted(table("interjections"), key=len, reverse=True))
    return lazy(
        rf"^(?:(?:{inter})\b[\s,!.:—-]*)*(?:{'|'.join(re.escape(w) for w in words)})(?![\w'])",
        re.I,
    )


@cache
def _interjection() -> re.Pattern[str]:
    inter = "|".join(re.escape(w) for w in sorted(table("interjections"), key=len, reverse=True))
    return lazy(rf"^(?:(?:{inter})\b[\s,!.:—-]*)+", re.I)


_PROBLEM = lazy(
    r"\b(?:because|root cause|the (?:issue|problem|bug) (?:is|was)|caus(?:e|ed|es|ing)|"
    r"fail(?:s|ed|ing)?|broken|breaks|not being|never|missing|isn't|doesn't|wasn't)\b",
    re.I,
)
# "Fixed X: ...", "the tests now capture ...": a change this session made.
_DONE = lazy(
    r"^(?:Fixed|Added|Updated|Changed|Removed|Created|Replaced|Renamed|Moved|Refactored|"
    r"Implemented|Converted|Switched)\b|\bnow\b|\s[-–—]\s*Fixed\b|"
    r"\b(?:has|have) been \w+ed\b",  # "The tests have been updated": the session did it
)
# How a run went ("all tests pass", "one test is still failing"): progress, unless it says why.
_STATUS = lazy(
    r"\b(?:tests?|checks?|builds?|runs?)\b.{0,60}\b(?:pass(?:es|ed|ing)?|fail(?:s|ed|ing)?|green|red)\b",
    re.I,
)
# A short point that only says how something went: "Linting passes", "✅ Type checking passes
# (0 errors)", "Build succeeded".
_STATUS_POINT = lazy(
    r"^[\W_]*(?:\w+[\s-]){0,4}(?:pass(?:es|ed)?|succeed(?:s|ed)?|green|clean|ok)\b[^;.]{0,30}$",
    re.I,
)
# A sentence that names why something broke: the project's gotcha, not one session's problem.
_CAUSE = lazy(
    r"\b(?:root cause|because|caused by|due to|the (?:issue|problem|bug|culprit) (?:is|was))\b",
    re.I,
)
# A guess while looking ("The issue might be ...", "This suggests ...", "probably"): the
# agent's hypothesis, which the session may disprove two reads later. Modal and evidential
# words are English grammar's closed class for that, not a list tuned to any session.
_HEDGE = lazy(
    r"(?<![\w-])(?:might|may|could|probably|possibly|perhaps|maybe|likely|presumably|apparently|"
    r"seems?|appears?|suggests?|suggesting|i (?:think|suspect|believe|guess)|should be|"
    r"would (?:be|explain))(?![\w-])",
    re.I,
)
# The agent speaking of itself anywhere in the sentence ("Wait, I need to check ...",
# "Based on my own system prompt ..."): its own state, not the code's.
_SELF = lazy(r"(?<![\w`'’-])(?:I|I['’](?:m|ll|ve|d)|my|me)(?![\w`'’-])")


_WE = lazy(r"(?<![\w`'’-])[Ww]e(?![\w`'’-])")


def about_itself(sentence: str) -> bool:
    """Does the agent speak of itself in the sentence (its state, not the code's)?"""
    return bool(_SELF.search(sentence))


def _plan(sentence: str) -> bool:
    """A sentence that opens with a verb in its plain form is a step to take, not a fact."""
    first = sentence.split(" ", 1)[0].strip("*`,.:").lower()
    return first in COMMON_VERBS or first in table("change_verbs") or first in table(
        "imperative_verbs"
    )


_REASON = lazy(r"\b(?:because|since|due to|caused by|as the|so that)\b", re.I)
# "I see that X", "Now I understand the issue. X": the finding is X.
_LEADIN = lazy(
    r"^(?:(?:now |ok,? |so,? )?i (?:see|found|notice|noticed|understand|can see) (?:that |now,? )?"
    r"|(?:it )?(?:looks|seems) like |the issue is (?:clear|that)[:,]? )",
    re.I,
)


def _sentences(text: str) -> list[tuple[str, bool]]:
    """(sentence, in a list) pairs; each sentence an exact substring of `text`."""
    out: list[tuple[str, bool]] = []
    in_fence = False
    for line in text.split("\n"):
        if line.strip().startswith(("```", "~~~")):
            in_fence = not in_fence
            continue
        if in_fence or not line.strip() or line.lstrip().startswith(("|", ">")):
            continue
        if is_log_line(line) or has_markup(line):
            continue
        bullet = _BULLET.match(line)
        body = line[bullet.end() :] if bullet else line
        if _HEADING.match(body):
            continue
        body = body.strip()
        start = 0
        for m in _SPLIT.finditer(body):
            if inside_span(body, m.start()) or abbreviation(body, m.start()):
                continue  # never inside a code span or a link ("in [vercel." cut off)
            if body[start : m.start()].strip():
                out.append((body[start : m.start()].strip(), bool(bullet)))
            start = m.end()
        if body[start:].strip():
            out.append((body[start:].strip(), bool(bullet)))
    return out


def sentences(text: str) -> list[tuple[str, bool]]:
    """The agent's prose as (sentence, in a list) pairs: no code, tables, quotes or logs."""
    return _sentences(text)


def clean(sentence: str) -> str:
    """A sentence without emphasis markers, interjections or lead-ins ("I see that")."""
    return _clean(sentence)


def _clean(sentence: str) -> str:
    """Markdown emphasis off, interjections and lead-ins ("I see that") removed."""
    s = _STRONG.sub(r"\1", sentence)
    s = s.replace("**", "")  # half of a pair a cut left behind: emphasis, never words
    s = _interjection().sub("", s)
    s = _LEADIN.sub("", s)
    s = _ASIDE_BACK.sub("", s)
    s = s.strip(" :-")
    return s[:1].upper() + s[1:] if s else s


# "(as shown by my attempt above)", "(see earlier)": an aside about the conversation, which a
# reader of the note never sees; the point stands without it
_ASIDE_BACK = lazy(
    r"\s*\((?=[^()]*\b(?:above|below|earlier|previously|my (?:attempt|test|run|check))\b)"
    r"[^()]*\)",
    re.I,
)


def read(session: Coding) -> list[Found]:
    """Findings from the agent's prose; the points of each closing summary as outcomes."""
    out: list[Found] = []
    seen: set[str] = set()
    last_before_human = _closing_turns(session)
    worked = {c.turn for c in session.calls if c.name not in _LOOKING}
    tool_words: list[frozenset[str]] = []  # read once, and only if a finding needs it
    # a sub-agent's last words are its report to the agent that spawned it: its deliverable
    report = session.texts[-1][0] if session.subagent and session.texts else None
    for turn, text in session.texts:
        if turn < session.start:
            continue
        points = text.count("\n- ") + text.count("\n* ")
        summary = (
            turn in last_before_human
            and _did_work(turn, session, worked)
            and (bool(_SUMMARY.search(text)) or points >= 3 or (turn == report and points >= 2))
        )
        if summary:
            out += summary_points(turn, text)
        for sentence, listed in _sentences(text):
            if "?" in sentence or len(sentence) > 400:
                continue
            clean = _clean(sentence)
            words = clean.split()
            if len(words) < 5 or (
                _narration().match(sentence)
                and not _LEADIN.match(_interjection().sub("", _STRONG.sub(r"\1", sentence)))
            ):
                continue
            if _narration().match(clean) or clean.endswith(":"):
                continue
            key = clean.lower()
            if key in seen:
                continue
            if summary and listed:
                continue  # a summary's lists are read whole, below
            if _HEDGE.search(clean):
                continue  # a guess, not a finding
            if not _SPECIFIC.search(clean):
                continue
            if not tool_words:
                tool_words.append(_tool_words(session))
            if not _grounded(clean, tool_words[0]):
                continue  # about nothing the session's tools touched: opinion, not a finding
            if re.match(r"^(?:I|We|You)\b", clean) or _SELF.search(clean):
                continue  # the agent about itself, not about the code
            if points_outside(clean):
                continue  # "It explains ...", "These don't pass": about what came before
            if _plan(clean) or sentence.rstrip("* ").endswith(":"):
                continue  # "Update the template to ...": a step it plans, not a finding
            if _STATUS.search(clean) and not _REASON.search(clean):
                continue  # "Only one test is still failing": progress, not a fact to keep
            seen.add(key)
            kind = "problem" if _PROBLEM.search(clean) else "fact"
            if kind == "problem" and _CAUSE.search(clean):
                kind = "gotcha"  # a root cause found: the project note's to keep
            if kind == "fact" and _DONE.search(clean):
                kind = "outcome"  # what this session changed, not a standing fact of the code
            if kind == "fact" and _changed_after(clean, turn, session):
                kind = "problem"  # the code as it was before this session changed it
            out.append(Found(kind, _end(clean), turn, sentence))
    return out


_EDITING = frozenset(("Edit", "MultiEdit", "Write", "NotebookEdit", "str_replace_based_edit_tool"))
_SPAN = lazy(r"`([^`\n]{3,80})`")


def _changed_after(sentence: str, turn: int, session: Coding) -> bool:
    """Did the session later change what the sentence describes (a file it names, or code it
    quotes that a later edit replaced)? Then the sentence is how the code was before the
    change: the session's problem, not a standing fact for the project's note. (A root cause
    stays the project's gotcha: the lesson outlives the fix.)"""
    spans = [m.group(1) for m in _SPAN.finditer(sentence)]
    names = {w.lower() for w in re.findall(r"[\w.-]+\.\w{1,5}\b", sentence)}
    for c in session.calls:
        if c.turn <= turn or c.name not in _EDITING or not c.path or c.error:
            continue
        if c.path.rsplit("/", 1)[-1].lower() in names:
            return True
        if any(len(sp) >= 4 and sp in old for old in c.replaced() for sp in spans):
            return True
    return False


# Tools that only look: an answer after them reports what was read, not what was done.
_LOOKING = frozenset(
    ("Read", "Grep", "Glob", "LS", "WebFetch", "WebSearch", "TodoWrite", "TodoRead")
)


def _did_work(turn: int, session: Coding, worked: set[int]) -> bool:
    """Did the agent change or run something between the last human turn and `turn`?"""
    since = max((h.turn for h in session.humans if h.kind == "prompt" and h.turn < turn), default=0)
    return any(since < t < turn for t in worked)


_TOKEN = lazy(r"[A-Za-z_][\w]*(?:[./-][\w]+)*")


def _tool_words(session: Coding) -> frozenset[str]:
    """Names the session's tools touched: paths, identifiers, words of commands and results."""
    words: set[str] = set()
    for c in session.calls:
        blob = " ".join(str(v)[:4000] for v in c.input.values()) + " " + (c.result or "")[:8000]
        words.update(w.lower() for w in _TOKEN.findall(blob) if len(w) > 3)
    return frozenset(words)


def _grounded(sentence: str, seen: frozenset[str]) -> bool:
    for m in _SPECIFIC.finditer(sentence):
        for w in _TOKEN.findall(m.group()):
            if len(w) > 3 and w.lower() in seen:
                return True
    return False


def _lists(text: str) -> list[tuple[str, list[str]]]:
    """(lead-in, items) for each bulleted list: the heading or line before it, and its points."""
    out: list[tuple[str, list[str]]] = []
    lead, items = "", []
    for line in text.split("\n"):
        bullet = _BULLET.match(line)
        if bullet and line[bullet.end() :].strip():
            items.append(line[bullet.end() :].strip())
            continue
        if items:
            out.append((lead, items))
            items = []
        if line.strip():
            lead = line.strip()
    if items:
        out.append((lead, items))
    return out


def summary_points(turn: int, text: str) -> list[Found]:
    """One outcome per list of a closing summary: its lead-in and as many of its points as
    fit in one short claim, none of them a status line.

    A list's points are details of one result ("Tests on 3.12 and 3.13", "Ruff linting"); as
    one claim they say what was done, where ten claims would each say too little. Status
    lines ("all 31 tests pass", "linting passes") say how a run went, not what the session
    left behind, and are left out; the claim ends at a whole point, never mid-point.
    """
    out = []
    for lead, items in _lists(text):
        points = []
        said: list[str] = []  # each point's item as written, to quote
        for i in items:
            if has_markup(i) or is_log_line(i):
                continue
            p = _clean(i).rstrip(".")
            status = _STATUS.search(p) or _STATUS_POINT.match(p)
            if len(p.split()) >= 2 and not (status and not _REASON.search(p)):
                points.append(p)
                said.append(i)
        points, said = points[:MAX_POINTS], said[:MAX_POINTS]
        if len(points) < 2 and not (points and len(points[0].split()) >= 6):
            continue
        head = _clean(re.sub(r"^\s*\d+[.)]\s*", "", _HEADING.sub("", lead))).rstrip(":").strip()
        if points_outside(head):
            continue  # "This way, with paths like:": an example of what was said before
        if not head or _narration().match(head) or len(head.split()) > 12:
            head = ""
        if (
            len(points) >= 2
            and all(len(p.split()) >= WHOLE_POINT for p in points)
            and len(head) + sum(len(p) + 2 for p in points) > MAX_CLAIM
        ):
            # each point a statement of its own ("vs. Beads: teammates ship native workers,
            # but keep no durable graph"): joined, all but the first would be cut away
            out += [
                Found("outcome", _end(short(p)), turn, q)
                for p, q in zip(points, said, strict=True)
                if not (_SELF.search(p) or _WE.search(p))  # the agent on itself, not the code
            ]
            continue
        body = points[0] if len(points[0]) <= MAX_CLAIM else short(points[0])
        for p in points[1:]:
            if len(head) + len(body) + len(p) + 4 > MAX_CLAIM:
                break
            body = f"{body}; {p}"
        text_ = f"{head}: {body}" if head and len(head) + len(body) + 2 <= MAX_CLAIM else body
        out.append(Found("outcome", _end(text_), turn, items[0]))
    return out


MAX_POINTS = 4  # of one list: the rest of a long summary is detail
WHOLE_POINT = 12  # words: a point this long says a thing of its own, not a detail
MAX_CLAIM = 200


def short(text: str, limit: int = MAX_CLAIM) -> str:
    """`text` cut to `limit` characters where a clause ends (a semicolon, a dash, a colon
    first; a comma only when none is in reach, since a comma may part a list of words and
    leave "a durable, git-backed."), never inside a word or a code span; the first clause
    whole if none ends in time. A shorter claim that is still true beats a long one that
    says everything."""
    if len(text) <= limit:
        return text
    said = re.match(r'^(?P<who>[^"]{1,60} said: ")(?P<words>.+)"$', text)
    if said:  # the person's words kept as typed: cut inside them, and close the quote
        inner = short(said.group("words"), limit - len(said.group("who")) - 2)
        return f'{said.group("who")}{inner.rstrip(".")}…"'
    best = strong = 0
    for m in re.finditer(r"[,;:]\s|\s[—–-]\s|\s\((?=[^)]*$)", text[: limit + 1]):
        cut = m.start()
        if _whole(text[:cut]) and cut >= 40:
            best = cut
            if not m.group().startswith(","):
                strong = cut
    if strong:
        # a clause ends there; a comma may only part a list ("a durable, git-backed, ...")
        best = strong
    if not best:
        m = next((m for m in re.finditer(r"[,;:]\s|\s[—–-]\s|\s\(", text)
                  if _whole(text[: m.start()])), None)  # fmt: skip
        best = m.start() if m else len(text)
    return text[:best].rstrip(" ,;:—–-")


def _whole(head: str) -> bool:
    """Does a cut after `head` leave no code span, quote or parenthesis open? "(EnterPlanMode,
    when the harness forces plan-first." reads as garbled as a word cut in two."""
    return (
        head.count("`") % 2 == 0
        and head.count('"') % 2 == 0
        and head.count("(") <= head.count(")")
        and head.count("[") <= head.count("]")
    )


def _closing_turns(session: Coding) -> set[int]:
    """The agent's last prose turn before each human turn, and at the end of the session."""
    human_turns = sorted(h.turn for h in session.humans if h.kind == "prompt")
    out: set[int] = set()
    texts = [t for t, _ in session.texts]
    for h in [*human_turns, 10**9]:
        before = [t for t in texts if t < h]
        if before:
            out.add(before[-1])
    return out


def _end(text: str) -> str:
    text = text.rstrip(" ,;:")
    return text if text.endswith((".", "!", ")")) else text + "."
