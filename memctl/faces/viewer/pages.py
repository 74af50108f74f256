"""What each viewer page shows, gathered through the front door as plain data.

No HTML here: the templates render these dicts, and Jinja2 escapes every string they
print, so text from a transcript or a note can never become markup. Text that needs
parts marked (a search hit's matches, a turn's cited quotes, a note's links) is handed
over as segments: (text, href or None, marked).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from memctl.results import PARENT_AGENT

if TYPE_CHECKING:
    from memctl.vault import Vault

PAGE = 30  # sessions per timeline page
WINDOW = 150  # turns of a long session shown around the one asked for
LONG = 400  # a session with more turns than this is shown a window at a time
CLAIMS = 20000  # claims read for the timeline; a vault with more shows the newest sessions' own
_TURN = re.compile(r"#t(\d+)$")
_FOOTREF = re.compile(r"\[\^([^\]\s]+)\]")
_WIKI = re.compile(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]")
_FOOTDEF = re.compile(r"^\[\^([^\]\s]+)\]:\s*(\S+)\s*(.*)$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")

Segment = tuple[str, str | None, bool]  # text, link, marked


@dataclass
class QuotedTurn:
    """One citation of a claim: the turn it names and the verbatim words it quotes."""

    ref: str
    quote: str
    turn: int


@dataclass
class TaughtClaim:
    """A claim line as the index holds it, with its citations of one session."""

    text: str
    note: str
    store: str
    section: str
    observed: bool
    status: str
    cites: list[QuotedTurn] = field(default_factory=list)

    @property
    def turn(self) -> int:
        return min((c.turn for c in self.cites), default=0)


@dataclass
class Taught:
    """A session and the claims (in force or proposed) that cite its turns."""

    header: dict[str, Any]
    claims: list[TaughtClaim] = field(default_factory=list)


def turn_of(ref: str) -> int:
    got = _TURN.search(ref)
    return int(got.group(1)) if got else 0


def claims_by_session(vault: Vault) -> dict[str, list[TaughtClaim]]:
    """Every claim in force or proposed, under each session it cites, in turn order."""
    res = vault.search(
        "", kind="claim", status=("active", "proposed"), limit=CLAIMS, snippets=False
    )
    out: dict[str, list[TaughtClaim]] = {}
    for h in res.hits:
        quotes = list(h.quotes) + [""] * (len(h.cites) - len(h.quotes))
        mine: dict[str, TaughtClaim] = {}
        for ref, quote in zip(h.cites, quotes, strict=False):
            path = ref.split("#", 1)[0]
            if path not in mine:
                mine[path] = TaughtClaim(h.text, h.ref, h.store or "", h.section or "", h.observed,
                                   h.status or "active")  # fmt: skip
                out.setdefault(path, []).append(mine[path])
            mine[path].cites.append(QuotedTurn(ref, quote, turn_of(ref)))
    for claims in out.values():
        for c in claims:
            c.cites.sort(key=lambda x: x.turn)
        claims.sort(key=lambda c: (c.turn, c.note, c.text))
    return out


def timeline(vault: Vault, page: int) -> dict[str, Any]:
    """One page of sessions, newest first, each with what it taught."""
    sessions = vault.sessions()
    pages = max(1, -(-len(sessions) // PAGE))
    page = min(max(page, 1), pages)
    taught = claims_by_session(vault)
    rows = [
        Taught(s, taught.get(s["path"], []))
        for s in sessions[(page - 1) * PAGE : page * PAGE]
    ]
    return {"rows": rows, "page": page, "pages": pages, "total": len(sessions),
            "claims": sum(len(c) for c in taught.values())}  # fmt: skip


def session(vault: Vault, ref: str, at: int | None) -> dict[str, Any]:
    """A session's header, what it taught, and its turns (a window of a long one)."""
    path, messages, header = vault.read_session(ref)
    claims = claims_by_session(vault).get(path, [])
    quotes: dict[int, list[str]] = {}
    for c in claims:
        for cite in c.cites:
            if cite.quote:
                quotes.setdefault(cite.turn, []).append(cite.quote)
    first, last = 1, len(messages)
    if len(messages) > LONG:
        mid = at or 1
        first, last = max(1, mid - WINDOW // 2), min(len(messages), mid + WINDOW // 2)
    turns = []
    src = header.get("source_meta")
    subagent = isinstance(src, dict) and bool(src.get("parent_session"))
    for n in range(first, last + 1):
        m = messages[n - 1]
        text = vault.turn_text(m)
        meta = m.meta if isinstance(m.meta, dict) else {}
        calls = bool(meta.get("tool_calls"))
        speaker = m.name or m.role
        if subagent and m.role == "user" and meta.get("isSidechain") is True:
            speaker = PARENT_AGENT  # a sub-agent's brief: the agent that spawned it wrote it
        turns.append({
            "n": n, "speaker": speaker, "role": m.role, "time": m.timestamp or "",
            "calls": calls, "segments": marked(text, quotes.get(n, [])),
            "lines": text.count("\n") + 1, "cited": n in quotes,
        })  # fmt: skip
    return {"path": path, "header": header, "claims": claims, "turns": turns,
            "first": first, "last": last, "count": len(messages),
            "label": vault.session_label(path)}  # fmt: skip


def marked(text: str, quotes: list[str]) -> list[Segment]:
    """`text` cut so each verbatim quote found in it is its own marked segment."""
    spans: list[tuple[int, int]] = []
    for q in quotes:
        at = text.find(q) if q else -1
        if at >= 0:
            spans.append((at, at + len(q)))
    return _cut(text, spans)


def highlighted(snippet: str, ranges: tuple[tuple[int, int], ...]) -> list[Segment]:
    """A search snippet with the index's matches marked."""
    return _cut(snippet, list(ranges))


def _cut(text: str, spans: list[tuple[int, int]]) -> list[Segment]:
    out: list[Segment] = []
    pos = 0
    for start, end in sorted(spans):
        if start < pos:
            continue  # overlaps the one before: that one is marked already
        if start > pos:
            out.append((text[pos:start], None, False))
        out.append((text[start:end], None, True))
        pos = end
    if pos < len(text) or not out:
        out.append((text[pos:], None, False))
    return out


def search(vault: Vault, query: str) -> dict[str, Any]:
    """Ranked hits for `query`, each with where clicking it goes."""
    if not query.strip():
        return {"query": query, "hits": [], "notices": []}
    res = vault.search(query, limit=40)
    hits = []
    for h in res.hits:
        if h.kind == "turn":
            href = turn_href(h.ref)
            title = f"{h.speaker or h.role or ''} · {vault.session_label(h.ref.split('#')[0])}"
        else:
            href, title = f"/note/{h.ref}", h.title or h.ref
        hits.append({"kind": h.kind, "ref": h.ref, "href": href, "title": title,
                     "time": h.timestamp or "", "store": h.store or "",
                     "segments": highlighted(h.snippet, h.highlights)})  # fmt: skip
    return {"query": query, "hits": hits, "notices": res.notices}


def turn_href(ref: str) -> str:
    """Where a turn reference (raw/...md#tN) opens: its session, scrolled to the turn."""
    path, _, turn = ref.partition("#")
    n = turn.lstrip("t")
    return f"/session/{path}?t={n}#t{n}" if n.isdigit() else f"/session/{path}"


def projects(vault: Vault) -> list[dict[str, str]]:
    """The notes of the projects store, each with its title."""
    if "projects" not in vault.config.stores:
        return []
    out = []
    for p in sorted(vault.notes("projects")):
        rel = p.relative_to(vault.root).as_posix()
        if rel.endswith(".proposed.md"):
            continue
        text = vault.show(rel).text
        title = next((m.group(2) for m in map(_HEADING.match, text.splitlines())
                      if m and len(m.group(1)) == 1), rel)  # fmt: skip
        out.append({"path": rel, "title": title})
    return out


def note(vault: Vault, ref: str) -> dict[str, Any]:
    """A note as blocks: its frontmatter, then headings, claim lines, footnotes, text."""
    res = vault.show(ref)
    if res.kind == "session":
        raise LookupError(res.ref)
    text = res.text
    front = ""
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end > 0:
            front, text = text[4:end], text[end + 5 :]
    blocks: list[dict[str, Any]] = []
    for line in text.splitlines():
        blocks.append(_block(line))
    return {"path": res.ref, "front": front, "blocks": blocks}


def _block(line: str) -> dict[str, Any]:
    if not line.strip():
        return {"kind": "blank"}
    head = _HEADING.match(line)
    if head:
        return {"kind": "heading", "level": len(head.group(1)), "segments": inline(head.group(2))}
    foot = _FOOTDEF.match(line)
    if foot:
        label, ref, quote = foot.groups()
        href = turn_href(ref) if ref.startswith("raw/") else None
        return {"kind": "footnote", "label": label, "ref": ref, "href": href, "quote": quote}
    if line.lstrip().startswith(("- ", "* ")):
        return {"kind": "item", "segments": inline(line.lstrip()[2:])}
    return {"kind": "text", "segments": inline(line)}


def inline(text: str) -> list[Segment]:
    """A line with its footnote references and [[wiki links]] made links."""
    out: list[Segment] = []
    pos = 0
    pattern = re.compile(f"{_FOOTREF.pattern}|{_WIKI.pattern}")
    for m in pattern.finditer(text):
        if m.start() > pos:
            out.append((text[pos : m.start()], None, False))
        if m.group(1):
            out.append((f"[{m.group(1)}]", f"#fn-{m.group(1)}", True))
        else:
            target = m.group(2).strip()
            shown = (m.group(3) or target).strip()
            link = target if target.endswith(".md") else f"{target}.md"
            out.append((shown, f"/note/{link}", False))
        pos = m.end()
    if pos < len(text) or not out:
        out.append((text[pos:], None, False))
    return out


def review(vault: Vault) -> list[Any]:
    """Proposals waiting for a person, with the diff accepting each would make."""
    return list(vault.review().pending)


def diff(vault: Vault, since: str | None, session: str | None) -> dict[str, Any]:
    """What `memctl diff` shows: by default the last 7 days; a session's, whenever."""
    if session and not since:
        since = "100y"  # a session's lessons, whenever they were learned (as the CLI does)
    res = vault.diff(since=since or "7d", session=session or None)
    stores = {
        store: [
            {"path": nc.path, "title": nc.title, "changes": nc.changes}
            for nc in notes
        ]
        for store, notes in res.by_store().items()
    }
    return {"range": res.range, "commits": res.commits, "counts": res.counts(),
            "stores": stores, "since": since or "7d", "session": session or ""}  # fmt: skip
