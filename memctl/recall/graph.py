"""Reading the vault for one recall: notes, raw sessions and the citation/link graph.

Everything a recall reads from disk goes through one `Reader`, which reads each file once
and applies the scope rule on every read (the index already filtered; this is the second
check). The graph of which note cites which turn and links which note is cached in
`.memctl/cache/recall-graph.json` by file stat, so a large vault is not re-read per prompt.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl import tokens
from memctl.errors import MemctlError
from memctl.recall.results import Cite, visible_scopes

if TYPE_CHECKING:
    from memctl.notes import Note
    from memctl.provenance import RawTurns
    from memctl.search import Hit
    from memctl.vault import Vault

_LINK = re.compile(r"\[\[([^\]|#]+)(?:#[^\]|]*)?(?:\|[^\]]*)?\]\]")
_FOOT_REF = re.compile(r"^\[\^[^\]\s]+\]:[ \t]*(raw/[^\s#)\]]+\.md#t\d+)", re.MULTILINE)
_UNESCAPE_HEAD = re.compile(r"^\\(\\*## t\d+ · )", re.MULTILINE)  # as memctl.raw writes it
_SCOPE_LINE = re.compile(r"^scope: ([^\n]*)$", re.MULTILINE)
_PLAIN_SCOPE = re.compile(r"team|global|user:[\w.@-]+")
_TURN_HEAD = re.compile(r"^## t(\d+) · ([^\n]*)$", re.MULTILINE)
_ROLE_SUFFIX = re.compile(r" \((?:user|assistant|system|tool)\)$")
_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_FM_KEY = re.compile(r"^(scope|status|title|store):[ \t]*(.*)$", re.MULTILINE)

# ---- reading the vault for one recall -----------------------------------------------------


@dataclass
class NoteInfo:
    """What a cheap scan of one note file tells us: enough to follow citations and links."""

    path: str
    scope: str
    status: str
    title: str
    store: str
    cites: tuple[str, ...]
    links: tuple[str, ...]


class Reader:
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
        self._graph: dict[str, NoteInfo] | None = None
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
    def graph(self) -> dict[str, NoteInfo]:
        """Every note in a store folder: scope, status, the turns it cites, what it links.

        Kept in `.memctl/cache/recall-graph.json` by (mtime, size), so a recall re-reads only
        the notes that changed since the last one (a large vault has thousands).
        """
        if self._graph is None:
            self._graph = load_graph(self.vault.root, self._folders)
        return self._graph


GRAPH_REL = ".memctl/cache/recall-graph.json"
GRAPH_VERSION = 1
RACY_NS = 2_000_000_000  # a file this fresh may change again within its mtime tick


def load_graph(root: Path, folders: dict[str, str]) -> dict[str, NoteInfo]:
    cache = root / GRAPH_REL
    old: dict[str, list[Any]] = {}
    try:
        data = json.loads(cache.read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("version") == GRAPH_VERSION:
            old = data.get("notes") or {}
    except (OSError, ValueError):
        pass
    now = time.time_ns()
    graph: dict[str, NoteInfo] = {}
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
                    info = NoteInfo(
                        rel, sc, status, title, st_store, tuple(old_e[6]), tuple(old_e[7])
                    )
                else:
                    try:
                        text = Path(e.path).read_text(encoding="utf-8")
                    except (OSError, UnicodeDecodeError):
                        continue
                    info = scan_note(rel, text, store)
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


def scan_note(rel: str, text: str, store: str) -> NoteInfo:
    fm: dict[str, str] = {}
    body = text
    if text.startswith("---\n"):
        end = text.find("\n---\n", 3)
        if end > 0:
            for m in _FM_KEY.finditer(text[4 : end + 1]):
                fm.setdefault(m.group(1), m.group(2).strip().strip("'\""))
            body = text[end + 5 :]
    return NoteInfo(
        path=rel,
        # a note without a scope is a human's note in a shared store: the index says team too
        scope=fm.get("scope") or "team",
        status=fm.get("status") or "active",
        title=fm.get("title") or Path(rel).stem,
        store=fm.get("store") or store,
        cites=tuple(dict.fromkeys(_FOOT_REF.findall(body))),
        links=tuple(dict.fromkeys(link_path(t) for t in _LINK.findall(body))),
    )


def link_path(target: str) -> str:
    t = target.strip()
    return t if t.endswith(".md") else t + ".md"
