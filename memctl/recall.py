"""Recall: the memories that reach the model, ranked, scoped, cited and packed into a budget.

`recall(vault, query)` answers "what should the agent know before it answers this?":

1. Candidates. BM25 over notes and over raw turns (memctl.search), restricted to what the
   asking user may see. Then one hop out: entity notes the query names bring their aliases,
   the notes they link to and the notes that link to them; the best turns bring the notes
   whose claims cite them (a memory filed under another framing is still found through the
   words that were actually said); the words those turns share become feedback terms.
2. Claims. Each candidate note is read from its file: only active claims (never its History
   unless asked), each scored by the note's rank, how much of the query (and, at half weight,
   of the feedback terms) it carries, whether it cites one of the best turns, its store and
   its age. Claims citing a turn the user may not see are dropped: a team note cannot smuggle
   a private quote out.
3. Diversity and packing. Near-copies of a kept claim are dropped, no note takes more than
   its share, and items are packed in rank order into the token budget (counted with a real
   tokenizer, memctl.tokens): notes first, then the turns behind them, then other turns.

Scope rule: a note or turn with scope `user:X` reaches only user X; `team` and `global`
reach everyone. The rule is applied in the index query and checked again on every file read.

Nothing here prints; `RecallResult.text` is the rendered block (md, xml or json) and the CLI,
hooks, MCP server and learning loop decide where it goes.
"""

from __future__ import annotations

import json
import math
import os
import re
import time
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl import tokens
from memctl.errors import InputError, MemctlError

if TYPE_CHECKING:
    from memctl.notes import Note
    from memctl.provenance import RawTurns
    from memctl.search import Hit
    from memctl.vault import Vault

RESULT_VERSION = 1  # the JSON shape of a recall/context result; bump on any key change
FORMATS = ("md", "xml", "json")
OFF_VALUES = ("off", "0", "false", "no", "none", "disabled")
AGENT_TAG = "#agent"  # a claim the agent recorded on its own authority (memctl.mcp remember)

# ---- ranking knobs (tests/test_recall*.py pin the behaviour they buy) ---------------------
NOTE_POOL = 20  # notes taken from BM25
TURN_POOL = 20  # turns taken from BM25
ENTITY_POOL = 10  # entity notes looked at for "does the query name this?"
CITING_TURNS = 8  # best turns whose citing notes become candidates
FEEDBACK_TURNS = 5  # best turns whose sessions the feedback terms come from
FEEDBACK_SESSIONS = 2
FEEDBACK_TERMS = 10
BACKGROUND_CLAIMS = 2  # claims of a note that carry none of the query's words
W_LINK = 0.6  # a note one hop from a named entity, relative to the entity
W_CITE = 0.7  # a note citing a top turn, relative to that turn
W_FEEDBACK = 0.5  # a feedback term in a claim, relative to a query term
W_TURN = 0.8  # turns rank below notes that say the same thing
W_NOTE = 0.4  # share of a claim's score that comes from its note's rank (the rest: the claim)
HALF_LIFE_DAYS = 180.0
RECENCY_SHARE = 0.25  # at most this much of a score depends on age
MIN_RELATIVE = 0.08  # candidates scoring below this share of the best are dropped
# Mild on purpose: these order claims of similar relevance, they do not outvote the query.
STORE_WEIGHT = {
    "decisions": 1.05,
    "knowledge": 1.05,
    "profile": 1.05,
    "entities": 1.0,
    "instructions": 1.0,
    "feedback": 0.95,
    "sessions": 0.9,
}
# What a claim's section says about how load-bearing it is: a team's goal or a decision
# frames any question in its area; progress notes date quickly.
SECTION_WEIGHT = {
    "goal": 1.15,
    "goals": 1.15,
    "decision": 1.1,
    "identity": 1.1,
    "why": 1.05,
    "preferences": 1.05,
    "how they work": 1.05,
    "open threads": 1.05,
    "facts": 1.0,
    "relations": 0.95,
    "alternatives": 0.9,
    "plan": 0.9,
    "progress": 0.9,
}
MAX_CLAIMS_PER_NOTE = 8
MAX_TURNS_PER_SESSION = 2
TURN_TOKENS = 120  # a turn is cut to this many tokens around what it says
DUP_JACCARD = 0.7  # word overlap at which two claims count as one fact

_WORD = re.compile(r"[\w'’]+")
_LINK = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]")
_FOOT_REF = re.compile(r"^\[\^[^\]\s]+\]:[ \t]*(raw/[^\s#)\]]+\.md#t\d+)", re.MULTILINE)
_UNESCAPE_HEAD = re.compile(r"^\\(\\*## t\d+ · )", re.MULTILINE)  # as memctl.raw writes it
_SCOPE_LINE = re.compile(r"^scope: ([^\n]*)$", re.MULTILINE)
_PLAIN_SCOPE = re.compile(r"team|global|user:[\w.@-]+")
_TURN_HEAD = re.compile(r"^## t(\d+) · ([^\n]*)$", re.MULTILINE)
_ROLE_SUFFIX = re.compile(r" \((?:user|assistant|system|tool)\)$")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_FM_KEY = re.compile(r"^(scope|status|title|store):[ \t]*(.*)$", re.MULTILINE)


def visible_scopes(user: str) -> tuple[str, ...]:
    """Scopes `user` may see: their own, the team's and everyone's."""
    return ("global", "team", f"user:{user}")


def disabled_by(env: Mapping[str, str]) -> bool:
    """`MEMCTL_RECALL=off` (or 0/false/no/none): the caller wants an answer without memory."""
    return env.get("MEMCTL_RECALL", "").strip().lower() in OFF_VALUES


# ---- results ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cite:
    """Where a memory came from: the turn, when it was said, by whom, and the words."""

    ref: str
    date: str | None = None
    speaker: str | None = None
    quote: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"ref": self.ref, "date": self.date, "speaker": self.speaker, "quote": self.quote}


@dataclass(frozen=True)
class Memory:
    """One packed item: a claim from a note, or a raw turn.

    `basis` says how much to trust it: `stated` (a person said it in the cited turn),
    `inferred` (the curator's reading of the cited turn), `human` (written into the note by
    a person, no citation), `agent` (the agent's own note, no citation), `said` (a raw turn,
    verbatim) or `history` (no longer true).
    """

    kind: str  # "claim" | "turn"
    text: str
    basis: str
    ref: str  # claims: the note's path; turns: raw/...md#tN
    score: float
    date: str | None = None
    citations: tuple[Cite, ...] = ()
    title: str | None = None
    store: str | None = None
    scope: str | None = None
    section: str | None = None
    speaker: str | None = None
    why: str = ""
    tokens: int = 0

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "kind": self.kind,
            "text": self.text,
            "basis": self.basis,
            "ref": self.ref,
            "date": self.date,
            "score": round(self.score, 4),
            "citations": [c.to_json() for c in self.citations],
        }
        if self.kind == "claim":
            out.update(title=self.title, store=self.store, scope=self.scope, section=self.section)
        else:
            out.update(speaker=self.speaker, scope=self.scope)
        out["tokens"] = self.tokens
        return out


@dataclass(frozen=True)
class Decision:
    """Why a candidate was kept or dropped (`--explain`)."""

    ref: str
    kind: str  # note | claim | turn
    kept: bool
    reason: str
    score: float = 0.0
    text: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "ref": self.ref,
            "kind": self.kind,
            "kept": self.kept,
            "reason": self.reason,
            "score": round(self.score, 4),
            "text": self.text,
        }


@dataclass
class RecallResult:
    """The packed memories, their rendering, and how the budget was spent."""

    query: str | None
    user: str
    budget: int
    format: str
    text: str
    memories: list[Memory]
    tokens: int
    tokenizer: str
    disabled: bool = False
    explain: list[Decision] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)
    seconds: float = 0.0
    kind: str = "recall"  # recall | context

    def to_json(self, explain: bool = False) -> dict[str, Any]:
        out: dict[str, Any] = {
            "version": RESULT_VERSION,
            "kind": self.kind,
            "query": self.query,
            "user": self.user,
            "budget": self.budget,
            "tokens": self.tokens,
            "tokenizer": self.tokenizer,
            "disabled": self.disabled,
            "format": self.format,
            "memories": [m.to_json() for m in self.memories],
            "text": self.text,
        }
        if explain:
            out["explain"] = [d.to_json() for d in self.explain]
        return out


# ---- reading the vault for one recall -----------------------------------------------------


@dataclass
class _NoteInfo:
    """What a cheap scan of one note file tells us: enough to follow citations and links."""

    path: str
    scope: str
    status: str
    title: str
    store: str
    cites: tuple[str, ...]
    links: tuple[str, ...]


class _Reader:
    """Files read once per recall: parsed notes, raw sessions, the citation/link graph."""

    def __init__(self, vault: Vault, user: str, now: datetime | None) -> None:
        from memctl.provenance import RawTurns

        if tokens._cache_dir is None:
            tokens.use_cache_dir(vault.root / ".memctl" / "cache")
        self.vault = vault
        self.user = user
        self.scopes = visible_scopes(user)
        self.now = now or datetime.now(UTC)
        self.turns: RawTurns = RawTurns(vault.root)
        self.notices: list[str] = []
        self._synced = False
        self._notes: dict[str, Note | None] = {}
        self._graph: dict[str, _NoteInfo] | None = None
        self._sessions: dict[str, tuple[str, dict[int, tuple[str, str | None]]] | None] = {}
        self._texts: dict[str, str] = {}
        self._folders = {sc.folder.strip("/"): name for name, sc in vault.config.stores.items()}

    def search(self, query: str, **filters: Any) -> list[Hit]:
        """Search within the user's scopes; the first call brings the index in step."""
        res = self.vault.search(query, scope=list(self.scopes), sync=not self._synced, **filters)
        self._synced = True
        self.notices.extend(n for n in res.notices if n not in self.notices)
        return list(res.hits)

    def note(self, path: str) -> Note | None:
        """A parsed note, or None when it is missing, unreadable or outside the vault."""
        if path not in self._notes:
            from memctl.notes import parse_note
            from memctl.store import inside, read_text

            try:
                target = inside(self.vault.root, path)
                self._notes[path] = (
                    parse_note(read_text(target), path) if target.is_file() else None
                )
            except (MemctlError, OSError, UnicodeDecodeError):
                self._notes[path] = None
        return self._notes[path]

    def visible(self, scope: str | None) -> bool:
        return (scope or "") in self.scopes

    def _heads(self, path: str) -> tuple[str, dict[int, tuple[str, str | None]]] | None:
        """A session's scope and each turn's speaker and date, from its frontmatter and turn
        headings (`## t3 · Dana (user) · 2026-09-01 09:14`): no need to parse every message."""
        if path not in self._sessions:
            from memctl.raw import read_header
            from memctl.store import inside, read_text

            got: tuple[str, dict[int, tuple[str, str | None]]] | None = None
            try:
                target = inside(self.vault.root, path)
                if path.startswith("raw/") and target.is_file():
                    text = read_text(target)
                    # memctl writes the header, so the scope line is plain; YAML only if not
                    fm_end = text.find("\n---\n", 3)
                    m = _SCOPE_LINE.search(text, 0, fm_end) if text.startswith("---\n") else None
                    if m is not None and _PLAIN_SCOPE.fullmatch(m.group(1)):
                        scope = m.group(1)
                    else:
                        scope = str(read_header(text, path).get("scope") or "")
                    heads: dict[int, tuple[str, str | None]] = {}
                    for m in _TURN_HEAD.finditer(text):
                        parts = m.group(2).split(" · ")
                        speaker = _ROLE_SUFFIX.sub("", parts[0])
                        day = parts[1][:10] if len(parts) > 1 and _DAY.match(parts[1]) else None
                        heads[int(m.group(1))] = (speaker, day)
                    got = (scope, heads)
                    self._texts[path] = text
            except (MemctlError, OSError, UnicodeDecodeError, ValueError):
                got = None
            self._sessions[path] = got
        return self._sessions[path]

    def turn_scope(self, ref: str) -> str | None:
        """The scope of the session a turn belongs to; None when the turn cannot be read."""
        path, _, n = ref.partition("#t")
        got = self._heads(path)
        if got is None or not n.isdigit() or int(n) not in got[1]:
            return None
        return got[0]

    def cite(self, ref: str, quote: str = "") -> Cite:
        path, _, n = ref.partition("#t")
        got = self._heads(path)
        speaker, day = (None, None)
        if got is not None and n.isdigit() and int(n) in got[1]:
            speaker, day = got[1][int(n)]
        return Cite(ref, day, speaker, quote)

    def turn_text(self, ref: str) -> str | None:
        """A turn's content, cut from its session's text (read once) between its heading's
        metadata line and the next heading, with raw.py's heading escapes undone."""
        path, _, n = ref.partition("#t")
        if self._heads(path) is None or path not in self._texts or not n.isdigit():
            return None
        text = self._texts[path]
        m = re.search(rf"^## t{int(n)} · [^\n]*\n<!-- memctl:turn [^\n]*-->\n\n", text, re.M)
        if m is None:
            return None
        nxt = _TURN_HEAD.search(text, m.end())
        body = text[m.end() : nxt.start() if nxt else len(text)]
        body = body[:-2] if body.endswith("\n\n") else body.rstrip("\n")
        return _UNESCAPE_HEAD.sub(r"\1", body) if "## t" in body else body

    def doc_freqs(self, terms: list[str]) -> tuple[int, dict[str, int]]:
        """Documents in the index, and how many hold each (stemmed) term."""
        try:
            from memctl import index

            searcher = index.Reader(self.vault).searcher
            return searcher.num_docs, {t: searcher.doc_freq(index.BODY, t) for t in terms}
        except Exception:  # an index we cannot read here only costs the idf weighting
            return 1, {}

    @property
    def graph(self) -> dict[str, _NoteInfo]:
        """Every note in a store folder: scope, status, the turns it cites, what it links.

        Kept in `.memctl/cache/recall-graph.json` by (mtime, size), so a recall re-reads only
        the notes that changed since the last one (a large vault has thousands).
        """
        if self._graph is None:
            self._graph = _load_graph(self.vault.root, self._folders)
        return self._graph


GRAPH_REL = ".memctl/cache/recall-graph.json"
GRAPH_VERSION = 1
RACY_NS = 2_000_000_000  # a file this fresh may change again within its mtime tick


def _load_graph(root: Path, folders: dict[str, str]) -> dict[str, _NoteInfo]:
    cache = root / GRAPH_REL
    old: dict[str, list[Any]] = {}
    try:
        data = json.loads(cache.read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("version") == GRAPH_VERSION:
            old = data.get("notes") or {}
    except (OSError, ValueError):
        pass
    now = time.time_ns()
    graph: dict[str, _NoteInfo] = {}
    keep: dict[str, list[Any]] = {}
    dirty = False
    for folder, store in sorted(folders.items()):
        stack = [(f"{folder}/", str(root / folder))]
        while stack:
            prefix, where = stack.pop()
            try:
                entries = sorted(os.scandir(where), key=lambda e: e.name)
            except OSError:
                continue
            for e in entries:
                name = e.name
                if name.startswith("."):
                    continue
                if e.is_dir(follow_symlinks=False):
                    stack.append((f"{prefix}{name}/", e.path))
                    continue
                if not name.endswith(".md") or name == "INDEX.md" or name.endswith(".proposed.md"):
                    continue
                rel = prefix + name
                try:
                    st = e.stat()
                except OSError:
                    continue
                old_e = old.get(rel)
                if old_e and old_e[0] == st.st_mtime_ns and old_e[1] == st.st_size:
                    sc, status, title, st_store = old_e[2:6]
                    info = _NoteInfo(
                        rel, sc, status, title, st_store, tuple(old_e[6]), tuple(old_e[7])
                    )
                else:
                    try:
                        text = Path(e.path).read_text(encoding="utf-8")
                    except (OSError, UnicodeDecodeError):
                        continue
                    info = _scan_note(rel, text, store)
                    dirty = True
                graph[rel] = info
                if now - st.st_mtime_ns > RACY_NS:
                    keep[rel] = [
                        st.st_mtime_ns,
                        st.st_size,
                        info.scope,
                        info.status,
                        info.title,
                        info.store,
                        list(info.cites),
                        list(info.links),
                    ]
                else:
                    dirty = True
    if dirty or set(keep) != set(old):
        try:
            from memctl.store import atomic_write

            atomic_write(cache, json.dumps({"version": GRAPH_VERSION, "notes": keep}))
        except OSError:
            pass  # a read-only vault only loses the speed-up
    return graph


def _scan_note(rel: str, text: str, store: str) -> _NoteInfo:
    fm: dict[str, str] = {}
    body = text
    if text.startswith("---\n"):
        end = text.find("\n---\n", 3)
        if end > 0:
            for m in _FM_KEY.finditer(text[4 : end + 1]):
                fm.setdefault(m.group(1), m.group(2).strip().strip("'\""))
            body = text[end + 5 :]
    return _NoteInfo(
        path=rel,
        # a note without a scope is a human's note in a shared store: the index says team too
        scope=fm.get("scope") or "team",
        status=fm.get("status") or "active",
        title=fm.get("title") or Path(rel).stem,
        store=fm.get("store") or store,
        cites=tuple(dict.fromkeys(_FOOT_REF.findall(body))),
        links=tuple(dict.fromkeys(_link_path(t) for t in _LINK.findall(body))),
    )


def _link_path(target: str) -> str:
    t = target.strip()
    return t if t.endswith(".md") else t + ".md"


# ---- words --------------------------------------------------------------------------------


_STOP_STEMS: set[str] | None = None


def _terms(text: str) -> set[str]:
    """Content tokens, stemmed exactly as the index stems them, stopwords dropped."""
    global _STOP_STEMS
    from memctl.index import analyze

    if _STOP_STEMS is None:
        from memctl.search import STOPWORDS

        _STOP_STEMS = {t for w in STOPWORDS for t in analyze(w)} | {"s", "t"}
    return {t for t in analyze(text) if len(t) > 1 and t not in _STOP_STEMS}


# Words that frame a question rather than say what it is about ("what should I know about
# X", "tell me about X"); search's stopwords cover the rest. Dropped unless nothing is left.
_FRAMING = frozenset(
    "know tell need want think explain remember recall help please anything something thing "
    "things show give like get say said ask look find".split()
)
_FRAMING_STEMS: set[str] | None = None


def _query_terms(query: str) -> set[str]:
    global _FRAMING_STEMS
    from memctl.index import analyze

    if _FRAMING_STEMS is None:
        _FRAMING_STEMS = {t for w in _FRAMING for t in analyze(w)}
    terms = _terms(query)
    return (terms - _FRAMING_STEMS) or terms


def _plain(text: str) -> str:
    from memctl.notes import strip_links

    return " ".join(strip_links(text).split())


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _age_days(day: str | None, now: datetime) -> float | None:
    if not day:
        return None
    try:
        d = date.fromisoformat(str(day)[:10])
    except ValueError:
        return None
    return max((now.date() - d).days, 0)


def _recency(day: str | None, now: datetime) -> float:
    """1.0 for today, 0.5 one half-life ago; unknown dates count as half-life old."""
    age = _age_days(day, now)
    r = 0.5 if age is None else 0.5 ** (age / HALF_LIFE_DAYS)
    return (1 - RECENCY_SHARE) + RECENCY_SHARE * r


# ---- candidates ---------------------------------------------------------------------------


@dataclass
class _NoteCand:
    path: str
    score: float
    why: str


@dataclass
class _Claim:
    path: str
    note: Note
    section: str
    text: str
    basis: str
    refs: tuple[tuple[str, str], ...]  # (turn ref, quote), checked when packed
    date: str | None
    score: float
    why: str
    terms: set[str]
    rel: float = 0.0


def _normalise(hits: list[Hit]) -> list[tuple[Hit, float]]:
    top = max((h.score for h in hits), default=0.0)
    if top <= 0:
        return [(h, 1.0 / (i + 1)) for i, h in enumerate(hits)]
    return [(h, h.score / top) for h in hits]


def _names(note: Note) -> list[str]:
    names = [note.title, *note.aliases]
    return [n for n in dict.fromkeys(_plain(n) for n in names) if n]


def _named(names: list[str], qterms: set[str]) -> str | None:
    """The first name of an entity that the query names (at least half of its words)."""
    for name in names:
        nt = _terms(name)
        if nt and len(nt & qterms) * 2 >= len(nt):
            return name
    return None


def _feedback(r: _Reader, turns: list[tuple[Hit, float]], known: set[str]) -> dict[str, float]:
    """Words the best sessions keep using that are rare elsewhere (relevance feedback).

    "Datadog or Grafana?" finds the session where that was discussed; that session also
    talks about egress, and egress is what the team's goal note is filed under.
    """
    sessions: dict[str, float] = {}
    for h, s in turns[:FEEDBACK_TURNS]:
        path = h.ref.split("#", 1)[0]
        sessions[path] = max(sessions.get(path, 0.0), s)
    tf: dict[str, float] = {}
    spread: Counter[str] = Counter()
    for path, w in sorted(sessions.items(), key=lambda kv: -kv[1])[:FEEDBACK_SESSIONS]:
        try:
            _, messages = r.turns.session(path)
        except MemctlError:
            continue
        for m in messages:
            for t in _terms(m.content) - known:
                if len(t) >= 3 and not t.isdigit():
                    tf[t] = tf.get(t, 0.0) + w
                    spread[t] += 1
    cands = [t for t in tf if spread[t] >= 2]
    if not cands:
        return {}
    n, df = r.doc_freqs(cands)
    weight = {t: tf[t] * math.log(1 + n / max(df.get(t, 1), 1)) for t in cands}
    picked = sorted(cands, key=lambda t: (-weight[t], t))[:FEEDBACK_TERMS]
    top = weight[picked[0]]
    return {t: weight[t] / top for t in picked}


def _gather(
    r: _Reader, query: str, explain: list[Decision]
) -> tuple[dict[str, _NoteCand], list[tuple[Hit, float]], set[str], set[str], dict[str, float]]:
    """Notes and turns worth reading, with the query's terms and its feedback terms."""
    qterms = _query_terms(query)
    notes: dict[str, _NoteCand] = {}

    def offer(path: str, score: float, why: str) -> None:
        cur = notes.get(path)
        if cur is None:
            notes[path] = _NoteCand(path, score, why)
        elif why not in cur.why:
            # keep every reason a note was found, the best one first
            first, second = (why, cur.why) if score > cur.score else (cur.why, why)
            notes[path] = _NoteCand(path, max(score, cur.score), f"{first}; {second}")

    note_hits = _normalise(r.search(query, kind="note", status="active", limit=NOTE_POOL))
    for h, s in note_hits:
        offer(h.ref, s, f"matches the query (bm25 {h.score:.2f})")
    turn_hits = [
        (h, s * W_TURN)
        for h, s in _normalise(r.search(query, kind="turn", limit=TURN_POOL))
        if r.visible(h.scope)
    ]

    # one hop from the entities the query names: their aliases, links and backlinks
    entity_hits = [(h, s) for h, s in note_hits if h.store == "entities"]
    if query.strip():
        more = r.search(query, kind="note", store="entities", status="active", limit=ENTITY_POOL)
        known = {h.ref for h, _ in entity_hits}
        entity_hits += [(h, s * 0.9) for h, s in _normalise(more) if h.ref not in known]
    expansion: set[str] = set()
    for h, s in entity_hits:
        note = r.note(h.ref)
        if note is None or not r.visible(note.scope):
            continue
        name = _named(_names(note), qterms)
        if name is None:
            continue
        offer(h.ref, max(s, 0.8), f"the query names {name!r}")
        for n in _names(note):
            expansion |= _terms(n)
        graph = r.graph
        linked = set(graph[h.ref].links if h.ref in graph else ())
        linked |= {p for p, info in graph.items() if h.ref in info.links}
        for p in sorted(linked - {h.ref}):
            offer(p, max(s, 0.8) * W_LINK, f"linked with entity {note.title!r}")

    # notes whose claims cite the best turns: the same words, filed under another framing
    graph = r.graph if turn_hits else {}
    citing: dict[str, list[str]] = {}
    for info in graph.values():
        for ref in info.cites:
            citing.setdefault(ref, []).append(info.path)
    for h, s in turn_hits[:CITING_TURNS]:
        for p in citing.get(h.ref, ()):
            offer(p, s * W_CITE, f"cites {h.ref}")

    feedback = _feedback(r, turn_hits, qterms | expansion)
    for p in sorted(set(notes)):
        seen = graph.get(p) if graph else None
        if seen is not None and not r.visible(seen.scope):
            del notes[p]  # defence in depth: the index said visible, the file says otherwise
            explain.append(Decision(p, "note", False, f"out of scope ({seen.scope})"))
    return notes, turn_hits, qterms, expansion, feedback


def _query_weights(r: _Reader, qterms: set[str]) -> tuple[dict[str, float], float]:
    """Each query word's weight by how rare it is, and what a full match adds up to.

    In "the cloud migration", "migration" says more than "cloud", which also names
    Grafana Cloud and Cloud CDN. A full match is the three heaviest words.
    """
    n, df = r.doc_freqs(sorted(qterms)) if qterms else (1, {})
    idf = {t: math.log(1 + n / max(df.get(t, 1), 1)) for t in qterms}
    top = max(idf.values(), default=1.0) or 1.0
    weight = {t: w / top for t, w in idf.items()}
    full = sum(sorted(weight.values(), reverse=True)[:3]) if weight else 1.0
    return weight, max(full, 1e-9)


def _coverage(terms: set[str], weight: dict[str, float], full: float) -> float:
    return min(1.0, sum(weight[t] for t in terms & weight.keys()) / full)


def _claims(
    r: _Reader,
    cands: dict[str, _NoteCand],
    top_turns: dict[str, float],
    qterms: set[str],
    expansion: set[str],
    feedback: dict[str, float],
    history: bool,
    explain: list[Decision],
) -> list[_Claim]:
    """Score every active claim of every candidate note."""
    out: list[_Claim] = []
    qweight, denom = _query_weights(r, qterms)
    for cand in sorted(cands.values(), key=lambda c: -c.score):
        note = r.note(cand.path)
        if note is None:
            explain.append(Decision(cand.path, "note", False, "unreadable note", cand.score))
            continue
        if not r.visible(note.scope):
            explain.append(Decision(cand.path, "note", False, f"out of scope ({note.scope})"))
            continue
        if note.status != "active":
            explain.append(Decision(cand.path, "note", False, f"note is {note.status}", cand.score))
            continue
        explain.append(Decision(cand.path, "note", True, cand.why, cand.score))
        store = note.store or ""
        weight = STORE_WEIGHT.get(store, 1.0)
        items = [(s.name, c, False) for s, c in note.active_claims()]
        for c in note.history_claims():
            if history:
                items.append(("History", c, True))
            else:
                explain.append(
                    Decision(
                        cand.path, "claim", False, "History: no longer true", 0, _plain(c.text)
                    )
                )
        for section, c, is_hist in items:
            text = _plain(c.text)
            if not text:
                continue
            # Citations are checked (scope, existence) and dated from their turns only when
            # the claim is about to be packed: a large vault's candidates cite hundreds of
            # sessions. For ranking, a turn's day is its session's, from the raw path.
            refs = tuple((cit.ref, cit.quote) for cit in note.citations(c) if cit.ref)
            terms = _terms(text)
            fb_hit = sum(feedback.get(t, 0.0) for t in terms) + len(terms & expansion - qterms)
            rel = (sum(qweight[t] for t in terms & qterms) + W_FEEDBACK * fb_hit) / denom
            hop = max((top_turns.get(ref, 0.0) for ref, _ in refs), default=0.0)
            rel = min(1.0, rel + 0.5 * hop)
            dates = sorted(d for d in (_path_day(ref) for ref, _ in refs) if d)
            day = dates[-1] if dates else str(note.meta.get("updated") or "") or None
            # additive, so a claim that says what was asked beats a bystander in a top note
            score = (W_NOTE * cand.score + (1 - W_NOTE) * rel) * weight * _recency(day, r.now)
            score *= SECTION_WEIGHT.get(section.casefold(), 1.0)
            if is_hist:
                score *= 0.5
                lt = c.lifetime
                basis = "history"
                if lt is not None:
                    text = f"{text} ({lt.kind}; held {lt.since} → {lt.until})"
            elif text.endswith(AGENT_TAG):
                basis = "agent"
                text = text[: -len(AGENT_TAG)].rstrip()
            elif c.human:
                basis = "human"
            else:
                basis = "inferred" if c.inferred else "stated"
            why = cand.why + (f"; claim carries {sorted(terms & qterms)}" if terms & qterms else "")
            out.append(
                _Claim(cand.path, note, section, text, basis, refs, day, score, why, terms, rel)
            )
    return out


_PATH_DAY = re.compile(r"^raw/(\d{4})/(\d{2})/(\d{2})/")


def _path_day(ref: str) -> str | None:
    m = _PATH_DAY.match(ref)
    return f"{m.group(1)}-{m.group(2)}-{m.group(3)}" if m else None


def _check_cites(
    r: _Reader, refs: tuple[tuple[str, str], ...]
) -> tuple[tuple[Cite, ...], str | None]:
    """The citations with their turns' speakers and dates, or why the claim cannot be shown."""
    cites: list[Cite] = []
    for ref, quote in refs:
        scope = r.turn_scope(ref)
        if scope is None:
            return (), f"cites {ref}, which does not exist"
        if not r.visible(scope):
            return (), f"cites a turn outside {r.user}'s scope ({scope})"
        cites.append(r.cite(ref, quote))
    return tuple(cites), None


# ---- rendering ----------------------------------------------------------------------------


def _esc(text: str) -> str:
    return (
        text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")
    )


_DIGEST = re.compile(r"-([0-9a-f]{6})\.md$")


def _session_key(path: str) -> str:
    """The short name a session goes by in md output: the digest its file name ends with
    (the same one the notes' footnote labels use), or the whole path when it has none."""
    m = _DIGEST.search(path)
    return m.group(1) if m else path


def _short_ref(ref: str) -> str:
    path, sep, turn = ref.partition("#")
    return f"{_session_key(path)}{sep}{turn}"


def _sessions_of(m: Memory) -> list[str]:
    paths = [c.ref.split("#", 1)[0] for c in m.citations]
    if m.kind == "turn":
        paths.insert(0, m.ref.split("#", 1)[0])
    return list(dict.fromkeys(paths))


def _cite_md(m: Memory) -> str:
    if m.kind == "turn":
        bits = [m.speaker or "", m.date or "", _short_ref(m.ref)]
        return " · ".join(b for b in bits if b)
    if not m.citations:
        return f"{m.basis} · {m.ref}"
    cites = "; ".join(
        " ".join(b for b in (c.speaker or "", c.date or "", _short_ref(c.ref)) if b)
        for c in m.citations
    )
    return f"{m.basis} · {cites}"


class _Renderer:
    """Header, per-note group, per-item, sources and footer text for one output format.

    Markdown cites turns as `<session>#t<n>`, where <session> is the 6-hex digest the raw
    file's name ends with, and maps each session to its file once, under "Sources": a full
    `raw/...md` path costs ~30 tokens, and a recall cites the same few sessions many times.
    XML and JSON always carry the full refs.
    """

    def __init__(self, fmt: str, title: str, attrs: dict[str, str]) -> None:
        self.fmt = fmt
        self.title = title
        self.attrs = attrs

    def head(self) -> str:
        if self.fmt == "md":
            return (
                f"# {self.title}\n"
                "Long-term memory (memctl). Each line cites its source turn as <session>#t<n> "
                "(Sources maps sessions to raw/ files): stated = said there, inferred = read "
                "from it; human = written by a person, agent = the agent's own note.\n"
            )
        if self.fmt == "xml":
            a = " ".join(f'{k}="{_esc(v)}"' for k, v in self.attrs.items())
            return f"<memory {a}>\n"
        return ""

    def group(self, m: Memory) -> str:
        if self.fmt == "md":
            if m.kind == "turn":
                return "\n## Turns\n"
            return f"\n## {m.title} ({m.ref})\n"
        return ""

    def sources_head(self) -> str:
        return "\n## Sources\n" if self.fmt == "md" else ""

    def source(self, path: str) -> str:
        return f"- {_session_key(path)} = {path}\n" if self.fmt == "md" else ""

    def item(self, m: Memory) -> str:
        if self.fmt == "md":
            if m.kind == "turn":
                body = " ".join(m.text.split())
                return f"- [{_cite_md(m)}] {body}\n"
            return f"- {m.text} [{_cite_md(m)}]\n"
        if self.fmt == "xml":
            cites = " ".join(
                f'ref="{_esc(c.ref)}"' + (f' speaker="{_esc(c.speaker)}"' if c.speaker else "")
                for c in m.citations[:1]
            )
            more = "".join(f'\n  <cite ref="{_esc(c.ref)}"/>' for c in m.citations[1:])
            date = f' date="{m.date}"' if m.date else ""
            if m.kind == "turn":
                sp = f' speaker="{_esc(m.speaker)}"' if m.speaker else ""
                return f'<turn ref="{_esc(m.ref)}"{sp}{date}>{_esc(m.text)}</turn>\n'
            return (
                f'<claim note="{_esc(m.ref)}" title="{_esc(m.title or "")}" store="{m.store}" '
                f'scope="{m.scope}" basis="{m.basis}"{date} {cites}>{_esc(m.text)}{more}</claim>\n'
            )
        return json.dumps(m.to_json(), ensure_ascii=False) + "\n"

    def tail(self) -> str:
        return "</memory>\n" if self.fmt == "xml" else ""

    def render(self, items: list[Memory]) -> str:
        if not items:
            return ""
        if self.fmt == "json":
            return json.dumps([m.to_json() for m in items], ensure_ascii=False, indent=1)
        parts = [self.head()]
        groups: dict[str, list[Memory]] = {}
        for m in items:
            key = "\0turns" if m.kind == "turn" else m.ref
            groups.setdefault(key, []).append(m)
        for members in groups.values():
            parts.append(self.group(members[0]))
            parts.extend(self.item(m) for m in members)
        paths = list(dict.fromkeys(p for m in items for p in _sessions_of(m)))
        if paths and self.fmt == "md":
            parts.append(self.sources_head())
            parts.extend(self.source(p) for p in sorted(paths, key=_session_key))
        parts.append(self.tail())
        return "".join(parts)


class _Packer:
    """Adds items in rank order while the rendering stays within the token budget."""

    def __init__(self, renderer: _Renderer, budget: int) -> None:
        self.r = renderer
        self.budget = budget
        self.items: list[Memory] = []
        self.groups: set[str] = set()
        self.sources: set[str] = set()
        self.used = tokens.count(renderer.head() + renderer.tail()) if budget > 0 else 0

    def cost(self, m: Memory) -> int:
        key = "\0turns" if m.kind == "turn" else m.ref
        extra = 0 if key in self.groups else tokens.count(self.r.group(m))
        new = [p for p in _sessions_of(m) if p not in self.sources]
        if new and not self.sources:
            extra += tokens.count(self.r.sources_head())
        extra += sum(tokens.count(self.r.source(p)) for p in new)
        return tokens.count(self.r.item(m)) + extra

    def add(self, m: Memory) -> Memory | None:
        """The item as packed (with its token cost), or None when it does not fit."""
        c = self.cost(m)
        if self.used + c > self.budget:
            return None
        packed = Memory(**{**m.__dict__, "tokens": c})
        self.items.append(packed)
        self.groups.add("\0turns" if m.kind == "turn" else m.ref)
        self.sources.update(_sessions_of(m))
        self.used += c
        return packed

    def finish(self) -> tuple[str, int, list[Memory]]:
        """Render; if joining items cost more than their sum, drop from the end until it fits."""
        dropped: list[Memory] = []
        while True:
            text = self.r.render(self.items)
            n = tokens.count(text)
            if n <= self.budget or not self.items:
                return text, n, dropped
            dropped.append(self.items.pop())


def _turn_memory(r: _Reader, ref: str, score: float, why: str, hit: Hit | None) -> Memory | None:
    text = hit.text if hit is not None else r.turn_text(ref)
    if text is None:
        return None
    cite = r.cite(ref)
    body = " ".join(text.split())
    if tokens.upper_bound(body) > TURN_TOKENS:
        body = tokens.truncate(body, TURN_TOKENS)
    return Memory(
        kind="turn",
        text=body,
        basis="said",
        ref=ref,
        score=score,
        date=cite.date,
        citations=(cite,),
        scope=(hit.scope if hit is not None else r.turn_scope(ref)),
        speaker=cite.speaker or (hit.speaker if hit is not None else None),
        why=why,
    )


# ---- recall -------------------------------------------------------------------------------


def _resolve(vault: Vault, user: str | None, budget: int | None, fmt: str) -> tuple[str, int]:
    if fmt not in FORMATS:
        raise InputError(f"unknown format {fmt!r}: use {', '.join(FORMATS)}")
    budget = vault.config.recall_budget if budget is None else int(budget)
    if budget < 0:
        raise InputError(f"--budget must be 0 or more tokens, got {budget}")
    user = (user or vault.default_user()).strip()
    if not user or any(c in user for c in " \t\n:"):
        raise InputError(f"invalid user {user!r}")
    return user, budget


def recall(
    vault: Vault,
    query: str,
    *,
    user: str | None = None,
    budget: int | None = None,
    fmt: str = "md",
    history: bool = False,
    enabled: bool = True,
    now: datetime | None = None,
) -> RecallResult:
    """Cited memories for `query`, visible to `user`, packed into `budget` tokens."""
    started = time.perf_counter()
    user, budget = _resolve(vault, user, budget, fmt)
    query = query if isinstance(query, str) else str(query)
    if not enabled:
        return RecallResult(query, user, budget, fmt, "", [], 0, "", disabled=True)
    if not query.strip():
        # nothing asked, nothing recalled; the session-start block is context()
        return RecallResult(query, user, budget, fmt, "", [], 0, tokens.method())
    r = _Reader(vault, user, now)
    explain: list[Decision] = []
    cands, turn_hits, qterms, expansion, feedback = _gather(r, query, explain)
    # a claim citing a top turn inherits that turn's rank, scaled by how much of the
    # question the turn itself speaks to (a turn that only shares "cloud" lends little)
    qweight, full = _query_weights(r, qterms)
    top_turns = {h.ref: s * _coverage(_terms(h.text), qweight, full) for h, s in turn_hits}
    claims = _claims(r, cands, top_turns, qterms, expansion, feedback, history, explain)
    claims.sort(key=lambda c: (-c.score, c.path, c.text))

    renderer = _Renderer(
        fmt, f"Memory for {user}: {query.strip()[:80]}", {"user": user, "query": query}
    )
    packer = _Packer(renderer, budget)
    best = max([c.score for c in claims] + [s for _, s in turn_hits] + [0.0])
    floor = best * MIN_RELATIVE
    kept: list[_Claim] = []
    per_note: Counter[str] = Counter()
    background: Counter[str] = Counter()
    for c in claims:
        reason = None
        if c.score < floor:
            reason = f"scores below {MIN_RELATIVE:.0%} of the best"
        elif per_note[c.path] >= MAX_CLAIMS_PER_NOTE:
            reason = f"note already gives {MAX_CLAIMS_PER_NOTE} claims"
        elif c.rel <= 0 and background[c.path] >= BACKGROUND_CLAIMS:
            reason = f"carries nothing the query asks; note already gives {BACKGROUND_CLAIMS} such"
        else:
            dup = next((k for k in kept if _jaccard(k.terms, c.terms) >= DUP_JACCARD), None)
            if dup is not None:
                reason = f"near-copy of a kept claim in {dup.path}: {dup.text[:60]!r}"
        cites: tuple[Cite, ...] = ()
        if reason is None and packer.used + tokens.count(c.text) > budget:
            reason = "over the token budget"  # known before its citations are even read
        if reason is None:
            cites, reason = _check_cites(r, c.refs)
        if reason is None:
            dates = sorted(d for d in (ct.date for ct in cites) if d)
            m = Memory(
                kind="claim",
                text=c.text,
                basis=c.basis,
                ref=c.path,
                score=c.score,
                date=dates[-1] if dates else c.date,
                citations=cites,
                title=_plain(c.note.title),
                store=c.note.store,
                scope=c.note.scope,
                section=c.section,
                why=c.why,
            )
            if packer.add(m) is None:
                reason = "over the token budget"
            else:
                kept.append(c)
                per_note[c.path] += 1
                background[c.path] += c.rel <= 0
        explain.append(Decision(c.path, "claim", reason is None, reason or c.why, c.score, c.text))

    # then the turns behind the kept claims, then the turns the query found on its own
    shown: set[str] = set()
    per_session: Counter[str] = Counter()
    turn_queue: list[tuple[str, float, str, Hit | None]] = []
    for c in kept:
        for ref, _ in c.refs[:1]:
            turn_queue.append((ref, c.score * 0.9, f"supports {c.path}", None))
    hits_by_ref = {h.ref: h for h, _ in turn_hits}
    turn_queue += [(h.ref, s, "matches the query", h) for h, s in turn_hits]
    kept_turn_terms: list[set[str]] = []
    for ref, score, why, hit in turn_queue:
        if ref in shown:
            continue
        shown.add(ref)
        hit = hit or hits_by_ref.get(ref)
        session = ref.split("#", 1)[0]
        reason = None
        if hit is not None and not r.visible(hit.scope):
            reason = f"out of scope ({hit.scope})"
        elif score < floor:
            reason = f"scores below {MIN_RELATIVE:.0%} of the best"
        elif per_session[session] >= MAX_TURNS_PER_SESSION and why == "matches the query":
            reason = f"session already gives {MAX_TURNS_PER_SESSION} turns"
        tm = None if reason else _turn_memory(r, ref, score, why, hit)
        if reason is None and tm is None:
            reason = "turn cannot be read"
        if tm is not None and reason is None:
            terms = _terms(tm.text)
            if any(_jaccard(terms, t) >= DUP_JACCARD for t in kept_turn_terms):
                reason = "near-copy of a kept turn"
            elif packer.add(tm) is None:
                reason = "over the token budget"
            else:
                kept_turn_terms.append(terms)
                per_session[session] += 1
        explain.append(Decision(ref, "turn", reason is None, reason or why, score))

    return _finish(packer, explain, r.notices, query, user, budget, fmt, started, "recall")


# ---- context: the block for the start of a session ----------------------------------------

# (section title, store, share of the budget, notes to read, claims per note)
_CONTEXT_PARTS: tuple[tuple[str, str, float, int, int], ...] = (
    ("profile", "profile", 0.25, 1, 20),
    ("decisions", "decisions", 0.2, 8, 4),
    ("open threads", "sessions", 0.15, 10, 4),
    ("recent sessions", "sessions", 0.2, 6, 3),
    ("team knowledge", "knowledge", 0.2, 6, 8),
)
_OPEN_SECTIONS = ("open threads", "open items", "open questions", "next steps")
_SUMMARY_SECTIONS = ("summary", "goal", "progress", "outcome")


def context(
    vault: Vault,
    *,
    user: str | None = None,
    budget: int | None = None,
    fmt: str = "md",
    enabled: bool = True,
    now: datetime | None = None,
) -> RecallResult:
    """Profile, active decisions, open threads, recent sessions and team knowledge, packed."""
    started = time.perf_counter()
    user, budget = _resolve(vault, user, budget, fmt)
    if not enabled:
        return RecallResult(None, user, budget, fmt, "", [], 0, "", disabled=True, kind="context")
    r = _Reader(vault, user, now)
    explain: list[Decision] = []
    per_part: list[tuple[str, float, list[Memory]]] = []
    for part, store, share, n_notes, per_note in _CONTEXT_PARTS:
        if store not in vault.config.stores:
            continue
        filters: dict[str, Any] = {"kind": "note", "store": store, "status": "active"}
        if part == "profile":
            filters["scope"] = [f"user:{user}"]
        elif part == "team knowledge":
            filters["scope"] = ["team", "global"]
        hits = _context_hits(r, filters, n_notes)
        mems: list[Memory] = []
        for rank, h in enumerate(hits):
            note = r.note(h.ref)
            if note is None or not r.visible(note.scope) or note.status != "active":
                explain.append(
                    Decision(h.ref, "note", False, "unreadable, out of scope or inactive")
                )
                continue
            picked = 0
            for section, c in note.active_claims():
                sec = section.name.casefold()
                if part == "open threads" and sec not in _OPEN_SECTIONS:
                    continue
                if part == "recent sessions" and sec not in _SUMMARY_SECTIONS:
                    continue
                if picked >= per_note:
                    break
                m = _claim_memory(r, note, h.ref, section.name, c, 1.0 / (rank + 1), part, explain)
                if m is not None:
                    mems.append(m)
                    picked += 1
        per_part.append((part, share, mems))

    renderer = _Renderer(
        fmt, f"Memory for {user}: start of session", {"user": user, "kind": "context"}
    )
    packer = _Packer(renderer, budget)
    # each part first gets its share, then what the others left over, in priority order
    leftovers: list[Memory] = []
    for part, share, mems in per_part:
        cap = packer.used + int(budget * share)
        for i, m in enumerate(mems):
            m = Memory(**{**m.__dict__, "title": f"{part}: {m.title}"})
            if packer.used + packer.cost(m) > cap:
                leftovers.extend(
                    Memory(**{**x.__dict__, "title": f"{part}: {x.title}"}) for x in mems[i:]
                )
                break
            packer.add(m)
            explain.append(Decision(m.ref, "claim", True, part, m.score, m.text))
    for m in leftovers:
        ok = packer.add(m) is not None
        explain.append(
            Decision(
                m.ref,
                "claim",
                ok,
                m.title or "" if ok else "over the token budget",
                m.score,
                m.text,
            )
        )
    return _finish(packer, explain, r.notices, None, user, budget, fmt, started, "context")


def _finish(
    packer: Any,
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
        seconds=round(time.perf_counter() - started, 4),
        kind=kind,
    )


def _context_hits(r: _Reader, filters: dict[str, Any], n: int) -> list[Hit]:
    """The newest notes matching `filters` (the index orders an empty query by date)."""
    scope = filters.pop("scope", None)
    hits = r.search("", limit=max(n * 3, n), **filters)
    if scope is not None:
        hits = [h for h in hits if h.scope in scope]
    return hits[:n]


def _claim_memory(
    r: _Reader,
    note: Note,
    path: str,
    section: str,
    c: Any,
    score: float,
    part: str,
    explain: list[Decision],
) -> Memory | None:
    text = _plain(c.text)
    cites: list[Cite] = []
    for cit in note.citations(c):
        if cit.ref is None:
            continue
        scope = r.turn_scope(cit.ref)
        if scope is None or not r.visible(scope):
            explain.append(
                Decision(path, "claim", False, f"cites a turn outside {r.user}'s scope", 0, text)
            )
            return None
        cites.append(r.cite(cit.ref, cit.quote))
    dates = sorted(d for d in (ct.date for ct in cites) if d)
    basis = "human" if c.human else ("inferred" if c.inferred else "stated")
    if text.endswith(AGENT_TAG):
        basis = "agent"
        text = text[: -len(AGENT_TAG)].rstrip()
    return Memory(
        kind="claim",
        text=text,
        basis=basis,
        ref=path,
        score=score,
        date=dates[-1] if dates else None,
        citations=tuple(cites),
        title=_plain(note.title),
        store=note.store,
        scope=note.scope,
        section=section,
        why=part,
    )


__all__ = [
    "FORMATS",
    "Cite",
    "Decision",
    "Memory",
    "RecallResult",
    "context",
    "disabled_by",
    "recall",
    "visible_scopes",
]
