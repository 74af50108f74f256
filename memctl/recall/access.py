"""What one user may read: the scope of each session and note, and views of notes and INDEX
files with what lies outside that user's scopes taken out.

The MCP server's tools act for one user; every path they are given and every file they show
goes through here, so a private note or turn never reaches another user's agent.
"""

from __future__ import annotations

import posixpath
import re
from pathlib import Path
from typing import TYPE_CHECKING

from memctl.core.notes import has_frontmatter, parse_note, read_frontmatter, render_note
from memctl.core.plaintext import too_long_ref
from memctl.core.raw import read_header
from memctl.core.refs import Ref, digest_of
from memctl.core.store import inside, read_text
from memctl.errors import InputError, MemctlError, PathEscapeError
from memctl.recall.results import visible_scopes

if TYPE_CHECKING:
    from memctl.core.floor import Floor

_INDEX_LINK = re.compile(r"\]\(([^)\s]+\.md)\)")


class UserAccess:
    """One user's view of a vault: what they may see, and files as they may see them."""

    def __init__(self, floor: Floor, user: str) -> None:
        self.floor = floor
        self.user = user
        self.scopes = visible_scopes(user)
        self._scope_cache: dict[str, str | None] = {}

    def read(self, rel: str) -> str:
        """A vault file's text (the caller checked it may be shown)."""
        return read_text(self.floor.root / rel)

    @staticmethod
    def session_key(rel: str, session: str) -> str:
        """The short name a session goes by in a resource URI: its digest, else its id."""
        return digest_of(rel) or session

    def resolve(self, ref: str) -> Ref:
        """What `ref` names among what this user may read, or an InputError that names nothing
        else: not another user's session id or file name (a prefix such as a date matches
        theirs too), not even whether it exists."""
        from memctl.core.refs import resolve

        # one answer for "there is none" and "there is one, not yours"
        hidden = InputError(f"{ref.strip()!r} is not visible to {self.user}: no note or "
                            "session by that name that they can read")
        try:
            try:
                r = resolve(self.floor, ref)
            except InputError as exc:
                if "ambiguous" not in exc.message:
                    raise
                r = resolve(_Readable(self), ref)  # among this user's sessions: maybe unique
        except InputError as exc:
            if exc.message.startswith(("no note or session", "no session")):
                raise hidden from None
            raise
        if r.kind != "index" and not self.visible(r.path):
            raise hidden
        return r

    # ---- scope checks ---------------------------------------------------------------------

    def session_scope(self, rel: str) -> str | None:

        try:
            return str(read_header(read_text(self.floor.root / rel), rel).get("scope") or "")
        except (MemctlError, OSError, UnicodeDecodeError):
            return None

    def note_scope(self, rel: str) -> str | None:

        try:
            text = read_text(self.floor.root / rel)
        except (OSError, UnicodeDecodeError):
            return None
        if not has_frontmatter(text):
            return "team"  # a human's note without frontmatter; the index treats it alike
        try:
            meta, _ = read_frontmatter(text, rel)
        except MemctlError:
            return None
        return str(meta.get("scope") or "team")

    def turn_visible(self, ref: str) -> bool:
        path = ref.split("#", 1)[0]
        if path not in self._scope_cache:
            self._scope_cache[path] = self.session_scope(path)
        return self._scope_cache[path] in self.scopes

    def visible(self, rel: str) -> bool:
        scope = self.session_scope(rel) if rel.startswith("raw/") else self.note_scope(rel)
        return scope is not None and scope in self.scopes

    def inside_vault(self, ref: str) -> str:
        """A vault-relative path for `ref`, or InputError; `..`, absolute paths, links out: no."""

        path = ref.split("#", 1)[0].strip()
        if not path or "\x00" in path:
            raise InputError("give a note path (e.g. knowledge/acme.md) or a turn raw/...md#tN")
        too_long = too_long_ref(path)
        if too_long:
            raise InputError(too_long)
        try:
            target = inside(self.floor.root, path)
        except PathEscapeError as exc:
            raise InputError(f"{path!r} is outside the vault ({exc.why})") from None
        rel = target.relative_to(self.floor.root.resolve()).as_posix()
        if rel.split("/", 1)[0].startswith("."):
            raise InputError(f"{rel!r} is not a note or a session")
        return rel

    def note_text(self, rel: str, text: str) -> str:
        """The note as stored, minus any claim whose cited turn this user may not see."""

        try:
            note = parse_note(text, rel)
        except MemctlError:
            return text
        hidden = 0
        for section in note.sections:
            keep = []
            for item in section.items:
                cites = note.citations(item) if not isinstance(item, str) else []
                if any(c.ref and not self.turn_visible(c.ref) for c in cites):
                    hidden += 1
                    continue
                keep.append(item)
            section.items = keep
        if not hidden:
            return text
        note.prune_footnotes()
        return render_note(note) + f"\n<!-- {hidden} claim(s) citing turns outside your scope -->\n"

    def filtered_index(self, rel: str, text: str) -> str:
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
                    target = self.inside_vault(posixpath.normpath(base + link))
                except InputError:
                    ok = False
                    continue
                if Path(target).name == "INDEX.md":
                    continue
                if not (self.floor.root / target).is_file() or not self.visible(target):
                    ok = False
            if ok:
                out.append(line)
        return "\n".join(out) + "\n"



class _Readable:
    """A vault as one user sees it, for resolving references: its root and their sessions."""

    def __init__(self, access: UserAccess) -> None:
        self.root = access.floor.root
        self._access = access

    def session_map(self) -> dict[str, str]:
        every = self._access.floor.session_map()
        return {sid: rel for sid, rel in every.items() if self._access.visible(rel)}
