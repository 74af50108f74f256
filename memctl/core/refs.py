"""One reference grammar for everything that names a session, a turn or a note.

memctl prints references in several shapes (recall cites `64628a#t11`, search and diff print
`raw/...md#t3`, notes carry `id: profile/priya`); each of those is accepted back wherever a
command takes a reference (`show`, `export`, `forget`, MCP `read`), so nothing memctl prints
has to be rewritten by hand before it can be used again. The forms:

- a raw path, optionally with a turn anchor: `raw/2026/10/06/...-64628a.md#t11`
- a session id, or a unique prefix of one (4+ characters): `2026-10-06-observ`; for a
  transcript that had no id, the file name it came from (`chat` for `chat.jsonl`)
- the 6-hex digest a raw file name ends with (as recall prints it), or a prefix: `64628a`
- any session form followed by `#tN` for one turn: `64628a#t11`
- a note path `knowledge/acme.md` (INDEX.md files included), or a note id `profile/priya`
- a footnote label as notes print it, `[^119b95-t1]` or `119b95-t1-a7d1` (= `119b95#t1`)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from memctl.core.plaintext import too_long_ref
from memctl.errors import InputError, PathEscapeError


class Sessions(Protocol):
    """What resolving a reference needs of a vault (the floor is one): its root and sessions."""

    root: Path

    def session_map(self) -> dict[str, str]: ...


FORMS = (
    "a session id or prefix, the 6-hex session digest recall prints (64628a), "
    "either with #tN for one turn, a raw/...md path (with #tN), "
    "a note path (knowledge/acme.md) or a note id (profile/priya)"
)

# the whole sha1 of the session id (memctl.core.raw.session_path), or 6 hex digits in older vaults
_DIGEST = re.compile(r"-([0-9a-f]{6}|[0-9a-f]{40})\.md$")
_HEX = re.compile(r"[0-9a-f]{4,40}")
_QUALIFIED = re.compile(r"-[0-9a-f]{40}")
_TURN = re.compile(r"t([0-9]+)")
_LABEL = re.compile(r"([0-9a-f]{6})-t([0-9]+)(?:-[0-9a-z]+)?")


@dataclass(frozen=True)
class Ref:
    """A resolved reference: what it names and where that lives in the vault."""

    kind: str  # session | turn | note | index
    path: str  # vault-relative, posix
    turn: int | None = None

    @property
    def text(self) -> str:
        """The canonical printed form, itself accepted by `resolve`."""
        return f"{self.path}#t{self.turn}" if self.turn is not None else self.path

    @property
    def is_raw(self) -> bool:
        return self.kind in ("session", "turn")


def digest_of(raw_path: str) -> str | None:
    """The short name a session goes by: the digest its file name ends with."""
    m = _DIGEST.search(raw_path)
    return m.group(1) if m else None


def resolve(vault: Sessions, ref: str) -> Ref:
    """Turn any reference memctl prints (or a person types) into a `Ref`, or InputError.

    Only names existence: turn numbers are checked against the session when it is read, so a
    caller that never opens the file (forget, export) pays for no parse here.
    """
    text = ref.strip()
    too_long = too_long_ref(text)
    if too_long:
        raise InputError(too_long)  # before any file name is built from it (ENAMETOOLONG)
    if text.startswith("[[") and text.endswith("]]"):
        text = text[2:-2].split("|", 1)[0]  # an Obsidian link, as INDEX files and notes hold
    if text.startswith("[^") and text.endswith("]"):
        text = text[2:-1]
    label = _LABEL.fullmatch(text)
    if label and text not in vault.session_map():
        text = f"{label.group(1)}#t{label.group(2)}"  # a footnote label names its turn
    path, sep, anchor = text.partition("#")
    path = path.strip()
    turn: int | None = None
    if sep:
        m = _TURN.fullmatch(anchor.strip())
        if not m or int(m.group(1)) < 1:
            raise InputError(f"bad turn anchor #{anchor} in {ref!r}: use #tN, e.g. {path}#t3")
        turn = int(m.group(1))
    if not path or "\x00" in path:
        raise InputError(f"empty reference: give {FORMS}")
    rel = _file(vault, path)
    if rel is not None:
        if rel.startswith("raw/") and not rel.endswith("/INDEX.md"):
            return Ref("turn" if turn is not None else "session", rel, turn)
        if turn is not None:
            raise InputError(f"{rel} is a note; only sessions have turns (#t{turn})")
        kind = "index" if rel.rsplit("/", 1)[-1] == "INDEX.md" else "note"
        return Ref(kind, rel)
    if "/" in path or path.endswith(".md"):
        raise InputError(f"no note or session {path!r} in this vault (see INDEX.md)")
    rel = session_path(vault, path)
    return Ref("turn" if turn is not None else "session", rel, turn)


def _file(vault: Sessions, path: str) -> str | None:
    """A vault-relative file for a path or a note id, or None when there is none."""
    from memctl.core.store import inside

    root = vault.root.resolve()
    for candidate in (path, f"{path}.md") if not path.endswith(".md") else (path,):
        try:
            target = inside(root, candidate)
        except PathEscapeError as exc:
            raise InputError(f"{path!r} is outside the vault ({exc.why})") from None
        if target.is_file():
            rel = target.relative_to(root).as_posix()
            if rel.split("/", 1)[0].startswith(".") or not rel.endswith(".md"):
                raise InputError(f"{rel!r} is not a note or a session")
            return rel
    return None


def session_path(vault: Sessions, key: str) -> str:
    """A session id, id prefix, digest or digest prefix -> its raw path (unique, or an error)."""
    sessions = vault.session_map()
    if key in sessions:
        return sessions[key]
    found: dict[str, str] = {}
    for sid, rel in sessions.items():
        # the file name a transcript without an id was ingested from (memctl.core.raw.file_name_id)
        if sid.startswith(key) and _QUALIFIED.fullmatch(sid, len(key)):
            found[rel] = sid
    if len(key) >= 4:
        for sid, rel in sessions.items():
            if sid.startswith(key):
                found[rel] = sid
    if _HEX.fullmatch(key):
        for sid, rel in sessions.items():
            digest = digest_of(rel)
            if digest and digest.startswith(key):
                found[rel] = sid
    if len(found) == 1:
        return next(iter(found))
    if found:
        names = ", ".join(sorted(found.values())[:5])
        raise InputError(f"session {key!r} is ambiguous: {names}")
    raise InputError(
        f"no session {key!r} in this vault (see `memctl status` or raw/INDEX.md); "
        f"a reference is {FORMS}"
    )
