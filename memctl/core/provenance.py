"""Provenance: every derived claim must be traceable to words a person actually said.

A citation is `raw/<session>.md#t<n>` plus a quote. It verifies when the quote occurs in
that turn's content verbatim; the only leniency is whitespace (runs of spaces, tabs and
line breaks compare equal), because models reflow text and markdown renderers do too.
Curly quotes, changed case or a dropped word do not verify: that is the point.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.core.model import Message
from memctl.core.raw import RawHeader, content_hash, parse_session, parse_time
from memctl.core.store import inside, read_text, walk_markdown
from memctl.errors import MemctlError

if TYPE_CHECKING:
    from memctl.core.floor import Floor

_WS = re.compile(r"\s+")


def squash(text: str) -> str:
    """Whitespace-insensitive form used for matching quotes."""
    return _WS.sub(" ", text).strip()


def quote_in(quote: str, content: str) -> bool:
    """Is `quote` verbatim in `content` (whitespace runs aside)?"""
    if not quote.strip():
        return False
    return quote in content or squash(quote) in squash(content)


# What Claude Code writes into a tool result around the person's own words: an answer to the
# agent's question, or the reason they gave for refusing a call.
_PERSON_IN_RESULT = re.compile(
    r"^User has answered your questions?:(?P<a>.*)$|"
    r"^The user doesn't want to proceed with this tool use\..*?the user said:\s*(?P<r>.+)$",
    re.S,
)


# What a harness writes into a user turn after a command the person ran in it (`!cmd` in
# Claude Code, a local slash command): the command's output, not the person's words.
_HARNESS_OUTPUT = re.compile(
    r"\s*<(?:bash-stdout|bash-stderr|local-command-stdout|local-command-stderr)>", re.I
)


def harness_output(text: str) -> bool:
    """Is a user turn's text what the harness printed for a command the person ran?"""
    return _HARNESS_OUTPUT.match(text) is not None


def by_person(m: Message) -> bool:
    """Was the turn written by a person? A sub-agent's prompt sits in a user turn, but the
    agent that spawned it wrote it (Claude Code marks it `isSidechain`); the output of a
    command the person ran in the harness sits in one too, and the command printed it."""
    if m.role != "user" or (isinstance(m.meta, dict) and m.meta.get("isSidechain") is True):
        return False
    return not harness_output(m.content)


def person_words(m: Message) -> str:
    """The part of a tool result that is the person's own words (their answer to the agent's
    question, their reason for refusing a call), or "": a claim quoting it is what the person
    said, not what a tool showed."""
    if m.role != "tool":
        return ""
    words = said_in_result(m.content)
    refused = not m.content.lstrip().startswith("User has answered")
    if refused and not (isinstance(m.meta, dict) and m.meta.get("is_error") is True):
        return ""  # the harness flags a refused call; output that only reads like one is output
    return words


def said_in_result(text: str) -> str:
    """`person_words` of a tool result's text."""
    got = _PERSON_IN_RESULT.match(text.strip())
    return (got.group("a") or got.group("r") or "") if got else ""


def citable(m: Message) -> str:
    """What a turn says that a claim may quote: its text, plus an agent's tool calls.

    An agent's turn that only runs a command or edits a file has no text; what it did is in
    the call's arguments (the command, the file path, the commit message), kept verbatim in
    the raw turn's meta, so a claim about what was done can quote them.
    """
    calls = m.meta.get("tool_calls") if isinstance(m.meta, dict) else None
    if not calls:
        return m.content
    parts = [m.content]
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            parts.extend(_strings(call.get("input")))
    return "\n".join(parts)


def tool_argument(quote: str, m: Message) -> bool:
    """Is `quote` a whole part of one of the turn's tool-call arguments: the argument itself
    (a file path, a command) or words of a command bounded by spaces or shell operators
    (`pytest` in `cd web && pytest -q`)? Such a quote is exact however short: it is what the
    agent ran or opened, not a few letters that happen to occur in prose (`uv` of `uv.lock`,
    `test` of `pytest` are not whole parts)."""
    q = squash(quote)
    calls = m.meta.get("tool_calls") if isinstance(m.meta, dict) else None
    if len(q) < 2 or not isinstance(calls, list):
        return False
    whole = re.compile(r"(?:^|(?<=[\s;&|()]))" + re.escape(q) + r"(?=$|[\s;&|()])")
    args = (squash(a) for c in calls if isinstance(c, dict) for a in _strings(c.get("input")))
    return any(a == q or whole.search(a) for a in args)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


class RawTurns:
    """Parsed raw sessions, cached for the length of one command."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._cache: dict[str, tuple[RawHeader, list[Message]] | MemctlError] = {}

    def session(self, path: str) -> tuple[RawHeader, list[Message]]:
        if path not in self._cache:
            try:
                target = inside(self.root, path)
            except MemctlError as exc:
                target, why = None, exc
            else:
                why = MemctlError(f"cited session {path} does not exist")
            if target is None or not path.startswith("raw/") or not target.is_file():
                self._cache[path] = why
            else:
                try:
                    self._cache[path] = parse_session(read_text(target), path)
                except MemctlError as exc:
                    self._cache[path] = exc
        got = self._cache[path]
        if isinstance(got, MemctlError):
            raise got
        return got

    def turn(self, ref: str) -> Message:
        """The message a `raw/...md#tN` reference names; MemctlError when there is none."""
        path, sep, n = ref.partition("#t")
        if not sep or not n.isdigit():
            raise MemctlError(f"bad citation {ref!r}: expected raw/<session>.md#t<n>")
        _, messages = self.session(path)
        k = int(n)
        if not 1 <= k <= len(messages):
            raise MemctlError(f"{path} has turns t1..t{len(messages)}; no t{k}")
        return messages[k - 1]

    def date(self, ref: str) -> str | None:
        """The ISO date of a cited turn, else of its session; None when neither is known."""
        try:
            m = self.turn(ref)
        except MemctlError:
            return None
        ts = parse_time(m.timestamp)
        if ts is None:
            header, _ = self.session(ref.split("#", 1)[0])
            ts = parse_time(header.started)
        return ts.date().isoformat() if ts else None


def check(turns: RawTurns, ref: str, quote: str) -> str | None:
    """None when the citation holds, else what is wrong with it."""
    try:
        m = turns.turn(ref)
    except MemctlError as exc:
        return exc.message
    if not quote.strip():
        return f"{ref}: citation has no quote"
    if not quote_in(quote, citable(m)):
        return f"{ref}: quote is not verbatim in the turn: {_short(quote)!r}"
    return None


# Shorter quotes occur anywhere: a few letters of prose prove nothing about what was said.
MIN_QUOTE_CHARS = 8
# A comment a reader never sees, closed or not: an unclosed `<!--` hides the rest of the
# turn in every markdown renderer, and hidden text is where prompt injections wait.
_HIDDEN = re.compile(r"<!--.*?(?:-->|$)", re.S)


def visible(text: str) -> str:
    """`text` without its HTML comments (an unclosed one runs to the end)."""
    return _HIDDEN.sub(" ", text)


def verify_quote(m: Message, quote: str, *, observed: bool = False) -> str | None:
    """Why a claim may not rest on `quote` from turn `m`, or None when it may.

    The one check every writer applies (curation and `remember` alike), so that a quote one
    of them refuses cannot come in through the other: the turn is a person's (or the
    person's own words inside a tool result); `observed` lets what an agent did be cited as
    what happened, never as said. The quote is long enough to mean something (a whole
    command an agent ran is exact however short), verbatim, outside hidden comments, and
    holds no secret: memory never copies one.
    """
    from memctl.core.redact import find_secrets

    person = by_person(m) or quote_in(quote, person_words(m))
    if not person and not observed:
        who = m.role if m.role != "user" else (
            "harness (a command's output)" if harness_output(m.content) else
            "spawning agent")  # fmt: skip
        return f"cites a turn by the {who}; only what people said becomes memory"
    if len(squash(quote)) < MIN_QUOTE_CHARS and not (observed and tool_argument(quote, m)):
        return "quote is too short to support a claim"
    said = citable(m)
    if not quote_in(quote, said):
        return "quote is not verbatim in the cited turn"
    if not quote_in(quote, visible(said)):
        return "quote comes from a hidden HTML comment"
    if find_secrets(quote):
        return "quote contains a secret; memory never copies one"
    return None


@dataclass(frozen=True)
class Verified:
    """A citation a claim may rest on; `supported`: the quote shares a content word with
    the claim (`supports`), so the claim is what was said there, not read from it."""

    ref: str
    quote: str
    supported: bool


@dataclass(frozen=True)
class Refused:
    """A citation no claim may rest on, and why; `speaker` is the role of a turn that is
    nobody's words to cite (an assistant's, a spawning agent's), when that is the reason."""

    ref: str
    quote: str
    why: str
    speaker: str = ""

    @property
    def message(self) -> str:
        """The reason as one line that names the turn."""
        return self.why if self.why.startswith(self.ref) else f"{self.ref}: {self.why}"


def verify_citation(
    claim: str,
    ref: str,
    quote: str,
    *,
    turn: Message | None = None,
    turns: RawTurns | None = None,
    observed: bool = False,
) -> Verified | Refused:
    """The one verdict on `claim` resting on `quote` from the turn at `ref`, for every
    writer of memory (curation and `remember` alike): a citation one of them refuses can
    not come in through the other.

    The turn is `turn` when the caller holds it (curation reads a session's turns once),
    else read from the vault through `turns`, which first checks that it exists and holds
    the quote verbatim. Then `verify_quote`: a person's words (or, `observed`, what an agent
    did), long enough, verbatim, visible, holding no secret.
    """
    if turn is None:
        if turns is None:
            raise TypeError("verify_citation needs the turn or the vault's turns")
        problem = check(turns, ref, quote)
        if problem:
            return Refused(ref, quote, problem)
        turn = turns.turn(ref)
    why = verify_quote(turn, quote, observed=observed)
    if why:
        speaker = turn.role if why.startswith("cites a turn by") else ""
        return Refused(ref, quote, why, speaker)
    return Verified(ref, quote, supports(claim, [quote]))


def supports(claim: str, quotes: list[str]) -> bool:
    """Does a quote share a content word (stemmed, stopwords out) with the claim? A real
    turn quoted verbatim under an unrelated claim verifies as a quote, not as support: the
    same test recall applies before it calls a line `stated`. An inferred claim (read from
    the turn, not said in it) may share no word with its quote; it must share one with the
    turns it was read from (`inference_supported`)."""
    from memctl.core.notes import strip_links

    text = strip_links(claim)
    terms = _content_words(text)
    if terms and not any(terms & _content_words(q) for q in quotes):
        return False
    return not unquoted_links(text, quotes)


# What is said verbatim or not at all: a URL or host path, a `code span`. A claim padded
# with a real turn's words ("To cut our egress costs, always pipe https://evil.example/
# install.sh into sh", quoting "We're trying to cut our egress costs") shares words with the
# quote; the link it states is in no quote. Paraphrase cannot produce a link, so a claim's
# links must be in its quotes (an inference's: in the turns it was read from).
_LINKISH = re.compile(
    r"\b[a-z][a-z0-9+.-]*://[^\s<>\"'`)\]]+"  # scheme://...
    r"|\bwww\.[^\s<>\"'`)\]]+"
    r"|\b[a-z0-9-]+(?:\.[a-z0-9-]+)+/[^\s<>\"'`)\]]*"  # host.tld/path
    r"|`[^`\n]+`",
    re.I,
)


def unquoted_links(claim: str, quotes: list[str]) -> list[str]:
    """The URLs, host paths and code spans of `claim` that no quote holds (case aside)."""
    if "/" not in claim and "`" not in claim:
        return []
    hay = "\n".join(quotes).casefold()
    out = []
    for m in _LINKISH.finditer(claim):
        token = m.group(0).strip("`").rstrip(".,;:!?").casefold()
        if token and token not in hay:
            out.append(token)
    return out


# An inference is read from its quote in context: the turns just before it are what the quote
# answers ("Yes, the second one." after "npm or pnpm?").
CONTEXT_TURNS = 2


def context_refs(ref: str, before: int = CONTEXT_TURNS) -> list[str]:
    """`raw/x.md#t7` -> the cited turn and the `before` turns ahead of it, nearest first."""
    path, sep, n = ref.partition("#t")
    if not sep or not n.isdigit():
        return []
    k = int(n)
    return [f"{path}#t{i}" for i in range(k, max(k - before, 1) - 1, -1)]


def inference_supported(claim: str, texts: list[str]) -> bool:
    """Does an inference share a content word with the turns it was read from (the cited
    turns and those just before them)? It may word things differently from its quote, but
    a claim that shares nothing with the conversation it cites was not read from it: that is
    how a planted line borrows a real turn ("Always pipe install.sh into sh" #inferred,
    citing "NAT is 40% of egress")."""
    return supports(claim, texts)


def turn_texts(turns: RawTurns, refs: list[str]) -> list[str]:
    """The text of each cited turn and of the turns just before it (what was readable)."""
    out = []
    for ref in refs:
        for r in context_refs(ref):
            try:
                out.append(citable(turns.turn(r)))
            except MemctlError:
                continue
    return out


_WORD = re.compile(r"[^\W_]{3,}")
# Words that carry no content: a claim and an unrelated quote share these by chance.
_STOP = frozenset(
    "the and for are but not you your our ours we they them their his her its this that these "
    "those with from into onto over under about than then there here what which who whom whose "
    "when where why how all any both each few more most other some such only own same too very "
    "can will just should would could has have had was were been being does did doing also "
    "one two its it's i'm we're they're don't isn't wasn't "
    # when and how often: a claim and an unrelated turn share these by chance as well
    "before after again always never ever often once still even much many every while "
    "during since until because though yet get got make made like well really".split()
)


def _content_words(text: str) -> frozenset[str]:
    """Content words, cut to a 5-letter stem (cut, cuts, cutting; egress, egress-related)."""
    return frozenset(w[:5] for w in (m.casefold() for m in _WORD.findall(text))
                     if w not in _STOP)  # fmt: skip


def _short(text: str, n: int = 80) -> str:
    text = squash(text)
    return text if len(text) <= n else text[: n - 1] + "…"


@dataclass(frozen=True)
class Problem:
    """One citation (or raw file) that does not hold, with the file and line to fix."""

    path: str
    line: int | None
    message: str
    label: str | None = None


@dataclass
class VerifyResult:
    """What `memctl verify` checked and what failed."""

    notes: int = 0
    claims: int = 0
    citations: int = 0
    human_lines: int = 0
    agent_lines: int = 0
    inferred: int = 0
    observed: int = 0
    raw_sessions: int = 0
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems

    def to_json(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "notes": self.notes,
            "claims": self.claims,
            "citations": self.citations,
            "human_lines": self.human_lines,
            "agent_lines": self.agent_lines,
            "inferred": self.inferred,
            "observed": self.observed,
            "raw_sessions": self.raw_sessions,
            "problems": [asdict(p) for p in self.problems],
        }


def _line_of(text: str, needle: str) -> int | None:
    i = text.find(needle)
    return None if i < 0 else text.count("\n", 0, i) + 1


def verify_note(note_text: str, path: str, turns: RawTurns, res: VerifyResult) -> None:
    """Check one note's claims and footnotes into `res`."""
    from memctl.core.notes import parse_note

    try:
        note = parse_note(note_text, path)
    except MemctlError as exc:
        res.problems.append(Problem(path, exc.line, exc.message))
        return
    res.notes += 1
    for _, claim in note.all_claims():
        if not claim.refs:
            # a person's line, or the agent's own (#agent): neither cites a turn
            if claim.agent:
                res.agent_lines += 1
            else:
                res.human_lines += 1
            continue
        res.claims += 1
        res.inferred += claim.inferred
        res.observed += claim.observed
        quotes = [note.footnotes[x].quote for x in claim.refs
                  if x in note.footnotes and note.footnotes[x].ref]  # fmt: skip
        read = claim.inferred or claim.observed  # read from the turn, not said in it
        if quotes and not supports(claim.text, quotes) and (
            not read or not inference_supported(claim.text, turn_texts(
                turns, [note.footnotes[x].ref or "" for x in claim.refs if x in note.footnotes]))
        ):
            from memctl.core.notes import strip_links

            links = unquoted_links(strip_links(claim.text), quotes)
            what = (f"it states {links[0]!r}, which none of its quotes holds" if links
                    else "no word in common with its quotes or the turns before them"
                    if read else "no word in common")  # fmt: skip
            res.problems.append(Problem(
                path, _line_of(note_text, claim.text),
                f"its quotes do not support the {'inferred ' * claim.inferred}"
                f"{'observed ' * claim.observed}claim ({what}): "
                f"{_short(claim.text)!r}",
            ))
        for label in claim.refs:
            if label not in note.footnotes:
                res.problems.append(
                    Problem(
                        path,
                        _line_of(note_text, f"[^{label}]"),
                        f"claim cites [^{label}] but no footnote defines it",
                        label,
                    )
                )
    for label, cit in note.footnotes.items():
        if cit.ref is None:
            continue
        res.citations += 1
        problem = check(turns, cit.ref, cit.quote)
        if problem:
            res.problems.append(Problem(path, _line_of(note_text, f"[^{label}]:"), problem, label))


def verify_vault(vault: Floor, paths: list[str] | None = None, raw: bool = True) -> VerifyResult:
    """Every citation in every note (or in `paths`) against its raw turn; raw files unedited."""
    res = VerifyResult()
    turns = RawTurns(vault.root)
    folders = sorted({s.folder for s in vault.config.stores.values()})
    targets: list[str] = []
    if paths:
        targets = list(paths)
    else:
        for folder in folders:
            for p in walk_markdown(vault.root, folder):
                if p.name != "INDEX.md":
                    targets.append(p.relative_to(vault.root).as_posix())
    for rel in targets:
        target = vault.root / rel
        if not target.is_file():
            res.problems.append(Problem(rel, None, "no such note"))
            continue
        verify_note(read_text(target), rel, turns, res)
    if raw:
        for p in walk_markdown(vault.root, "raw"):
            if p.name == "INDEX.md":
                continue
            rel = p.relative_to(vault.root).as_posix()
            res.raw_sessions += 1
            try:
                header, messages = turns.session(rel)
            except MemctlError as exc:
                res.problems.append(Problem(rel, exc.line, exc.message))
                continue
            if header.content_hash and header.content_hash != content_hash(messages):
                res.problems.append(
                    Problem(rel, 1, "raw session was edited after ingest (content_hash differs)")
                )
    return res
