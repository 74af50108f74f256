"""`memctl mcp`: the vault as an MCP server on stdio, with the official `mcp` SDK.

This is the only module that imports `mcp`. The tools are plain functions over a `Vault`
(`Tools`), so they can be tested without a transport; `serve` wraps them in an MCPServer.

Every tool acts for one user, fixed when the server starts (`--as`, else the vault's user):
search results, recalls, reads and lists never show another user's private notes or turns,
and paths given as arguments are resolved inside the vault or refused.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.errors import InputError, MemctlError

if TYPE_CHECKING:
    from memctl.vault import Vault

SERVER_NAME = "memctl"
INSTRUCTIONS = """\
Long-term memory for this user and their team, kept by memctl as markdown notes whose every
claim cites the conversation turn it came from. Call `recall` with the user's request before
answering anything that may depend on earlier work, decisions or preferences; call `context`
at the start of a session. Use `search` to find where something was said, `read` to open a
note or a turn (raw/...md#tN), `list` to browse a store. Use `remember` to keep a fact: cite
the turn (or note) it comes from with a verbatim quote, or mark it as your own (own=true).
When you use a memory, say where it came from (its turn reference and date)."""

_INDEX_LINK = re.compile(r"\]\(([^)\s]+\.md)\)")


class Tools:
    """The MCP tools as plain methods: one vault, one user."""

    def __init__(self, vault: Vault, user: str | None = None) -> None:
        from memctl.recall import visible_scopes

        self.vault = vault
        self.user = (user or vault.default_user()).strip()
        self.scopes = visible_scopes(self.user)
        self._scope_cache: dict[str, str | None] = {}

    # ---- scope checks ---------------------------------------------------------------------

    def _session_scope(self, rel: str) -> str | None:
        from memctl.raw import read_header
        from memctl.store import read_text

        try:
            return str(read_header(read_text(self.vault.root / rel), rel).get("scope") or "")
        except (MemctlError, OSError, UnicodeDecodeError):
            return None

    def _note_scope(self, rel: str) -> str | None:
        from memctl.raw import split_frontmatter
        from memctl.store import read_text

        try:
            text = read_text(self.vault.root / rel)
        except (OSError, UnicodeDecodeError):
            return None
        if not text.startswith("---\n"):
            return "team"  # a human's note without frontmatter; the index treats it alike
        try:
            meta, _ = split_frontmatter(text, rel)
        except MemctlError:
            return None
        return str(meta.get("scope") or "team")

    def _turn_visible(self, ref: str) -> bool:
        path = ref.split("#", 1)[0]
        if path not in self._scope_cache:
            self._scope_cache[path] = self._session_scope(path)
        return self._scope_cache[path] in self.scopes

    def _visible(self, rel: str) -> bool:
        scope = self._session_scope(rel) if rel.startswith("raw/") else self._note_scope(rel)
        return scope is not None and scope in self.scopes

    def _inside(self, ref: str) -> str:
        """A vault-relative path for `ref`, or InputError; `..`, absolute paths, links out: no."""
        from memctl.store import inside

        path = ref.split("#", 1)[0].strip()
        if not path or "\x00" in path:
            raise InputError("give a note path (e.g. knowledge/acme.md) or a turn raw/...md#tN")
        try:
            target = inside(self.vault.root, path)
        except MemctlError:
            raise InputError(f"{path!r} is outside the vault") from None
        rel = target.relative_to(self.vault.root.resolve()).as_posix()
        if rel.split("/", 1)[0].startswith("."):
            raise InputError(f"{rel!r} is not a note or a session")
        return rel

    # ---- tools ----------------------------------------------------------------------------

    def search(
        self, query: str, kind: str | None = None, store: str | None = None, limit: int = 10
    ) -> dict[str, Any]:
        """Ranked hits over turns and notes this user may see."""
        limit = max(1, min(int(limit), 50))
        res = self.vault.search(
            query, kind=kind or None, store=store or None, scope=list(self.scopes), limit=limit
        )
        hits = []
        for h in res.hits:
            if h.scope not in self.scopes:
                continue
            if h.kind != "turn" and not all(self._turn_visible(r) for r in h.cites):
                # a shared note quoting a private turn (a hand edit curation never makes):
                # even its snippet or its rank for these words would leak that turn
                continue
            d = h.to_json()
            d["scope"] = h.scope
            hits.append(d)
        return {"query": query, "user": self.user, "hits": hits}

    def recall(self, query: str, budget: int | None = None) -> str:
        """Cited memories for `query`, packed into `budget` tokens (markdown)."""
        res = self.vault.recall(query, user=self.user, budget=budget)
        return res.text or "(nothing in memory for this)"

    def context(self, budget: int | None = None) -> str:
        """The start-of-session block (markdown)."""
        res = self.vault.context(user=self.user, budget=budget)
        return res.text or "(memory is empty)"

    def read(self, ref: str) -> dict[str, Any]:
        """Whatever `memctl show` opens (memctl/refs.py), as this user may see it."""
        from memctl.store import read_text

        r = self.vault.resolve(ref)
        target = self.vault.root / r.path
        if r.kind == "index":
            return {
                "kind": "index",
                "ref": r.path,
                "text": self._filtered_index(r.path, read_text(target)),
            }
        if not self._visible(r.path):
            raise InputError(f"{r.path!r} is not visible to {self.user}")
        if r.is_raw:
            res = self.vault.show(r.text)
            return {"kind": res.kind, "ref": res.ref, "text": res.text, "meta": res.meta}
        return {"kind": "note", "ref": r.path, "text": self._note_text(r.path, read_text(target))}

    def _note_text(self, rel: str, text: str) -> str:
        """The note as stored, minus any claim whose cited turn this user may not see."""
        from memctl.notes import parse_note, render_note

        try:
            note = parse_note(text, rel)
        except MemctlError:
            return text
        hidden = 0
        for section in note.sections:
            keep = []
            for item in section.items:
                cites = note.citations(item) if not isinstance(item, str) else []
                if any(c.ref and not self._turn_visible(c.ref) for c in cites):
                    hidden += 1
                    continue
                keep.append(item)
            section.items = keep
        if not hidden:
            return text
        note.prune_footnotes()
        return render_note(note) + f"\n<!-- {hidden} claim(s) citing turns outside your scope -->\n"

    def _filtered_index(self, rel: str, text: str) -> str:
        """An INDEX.md with the lines that point at things this user may not see taken out."""
        base = rel.rsplit("/", 1)[0] + "/" if "/" in rel else ""
        out = []
        for line in text.splitlines():
            links = _INDEX_LINK.findall(line)
            ok = True
            for link in links:
                if "://" in link:
                    continue
                try:
                    target = self._inside(posixpath.normpath(base + link))
                except InputError:
                    ok = False
                    continue
                if Path(target).name == "INDEX.md":
                    continue
                if not (self.vault.root / target).is_file() or not self._visible(target):
                    ok = False
            if ok:
                out.append(line)
        return "\n".join(out) + "\n"

    def list(self, store: str | None = None, limit: int = 50) -> dict[str, Any]:
        """The stores with their note counts, or the notes of one store, newest first."""
        limit = max(1, min(int(limit), 200))
        if not store:
            stores = {}
            for name, sc in self.vault.config.stores.items():
                stores[name] = {
                    "folder": sc.folder,
                    "mode": sc.mode,
                    "index": f"{sc.folder}/INDEX.md",
                }
            return {"user": self.user, "stores": stores}
        if store not in self.vault.config.stores:
            raise InputError(
                f"no store {store!r}: configured stores are {', '.join(self.vault.config.stores)}"
            )
        res = self.vault.search(
            "", kind="note", store=store, scope=list(self.scopes), status="active", limit=limit
        )
        notes = [
            {
                "path": h.ref,
                "title": h.title,
                "scope": h.scope,
                "updated": h.timestamp,
                "gist": h.snippet[:120],
            }
            for h in res.hits
            if h.scope in self.scopes
        ]
        return {"user": self.user, "store": store, "notes": notes}

    def remember(
        self,
        claim: str,
        source: str | None = None,
        quote: str | None = None,
        store: str = "knowledge",
        note: str | None = None,
        section: str | None = None,
        scope: str = "user",
        own: bool = False,
    ) -> Any:
        """Write one claim into a note, cited to the turn (or note) it comes from, or as the
        agent's own. Quotes are verified verbatim; the note is never wider than its source."""
        from memctl.learning import remember

        return remember(
            self.vault,
            self.user,
            claim,
            source=source,
            quote=quote,
            store=store,
            note=note,
            section=section,
            scope=scope,
            own=own,
        )


# ---- the server ---------------------------------------------------------------------------


def build_server(vault: Vault, user: str | None = None) -> Any:
    """An MCPServer exposing the tools; errors the caller can fix come back as tool errors."""
    from mcp.server import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    from memctl import __version__

    tools = Tools(vault, user)
    server = MCPServer(
        SERVER_NAME, version=__version__, instructions=INSTRUCTIONS, log_level="WARNING"
    )

    def run(fn: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except MemctlError as exc:
            raise ToolError(str(exc)) from None

    @server.tool()
    def search(
        query: str, kind: str | None = None, store: str | None = None, limit: int = 10
    ) -> dict[str, Any]:
        """Find where something was said or learned: ranked turns and notes. kind: turn|note."""
        return run(tools.search, query, kind, store, limit)  # type: ignore[no-any-return]

    @server.tool()
    def recall(query: str, budget: int | None = None) -> str:
        """Memories relevant to a request, each cited (turn ref, date, stated/inferred)."""
        return run(tools.recall, query, budget)  # type: ignore[no-any-return]

    @server.tool()
    def context(budget: int | None = None) -> str:
        """Start-of-session memory: profile, decisions, open threads, team knowledge."""
        return run(tools.context, budget)  # type: ignore[no-any-return]

    @server.tool()
    def read(ref: str) -> dict[str, Any]:
        """Open a note (knowledge/x.md), an INDEX.md, a session or a turn (raw/...md#tN)."""
        return run(tools.read, ref)  # type: ignore[no-any-return]

    @server.tool()
    def remember(
        claim: str,
        source: str | None = None,
        quote: str | None = None,
        store: str = "knowledge",
        note: str | None = None,
        section: str | None = None,
        scope: str = "user",
        own: bool = False,
    ) -> dict[str, Any]:
        """Keep one fact. Cite source=raw/...md#tN (or a note path) with a verbatim quote, or
        own=true for your own conclusion. scope: user (private, default), team or global."""
        res = run(tools.remember, claim, source, quote, store, note, section, scope, own)
        return res.to_json()  # type: ignore[no-any-return]

    @server.tool(name="list")
    def list_(store: str | None = None, limit: int = 50) -> dict[str, Any]:
        """The stores, or the notes of one store (newest first)."""
        return run(tools.list, store, limit)  # type: ignore[no-any-return]

    return server


def serve(vault: Vault, user: str | None = None) -> None:
    """Serve over stdio until the client closes the connection."""
    build_server(vault, user).run("stdio")
