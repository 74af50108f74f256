"""Images a transcript carries inline (a pasted screenshot, a Read of a picture), kept as
files of their own under raw/attachments/ so `memctl export` can give them back.

A raw session is text that people read and git diffs; a 2 MB base64 run in it would make
both useless, so the turn keeps what the image was (type, sha256, size) and the path of
its file. Files are named by their sha256: the same picture pasted twice, or ingested again,
is one file, and a pulled file's name says what it must hold. An image past the vault's
limit (`[limits] attachment`) is not kept; its turn and the ingest's output say so.
"""

from __future__ import annotations

from typing import Any

from memctl.core.localstate import attachment_limit, human_size
from memctl.core.model import Message, Transcript
from memctl.core.store import Transaction

FOLDER = "raw/attachments"
# what the turn adds to an attachment's record; a turn stored before kept none of it
ADDED = ("sha256", "bytes", "file", "left_out")
_EXT = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}


def path_of(sha: str, media_type: object) -> str:
    ext = _EXT.get(media_type, ".bin") if isinstance(media_type, str) else ".bin"
    return f"{FOLDER}/{sha[:2]}/{sha}{ext}"


def keep(data: dict[str, Any], tr: Transcript, redact: bool) -> list[dict[str, Any]]:
    """Record in each turn of `tr` the file its image goes to, or why it is left out (past
    the limit, a secret in it); the records of those left out are returned."""
    if not tr.attachments:
        return []
    limit = attachment_limit(data)
    left: list[dict[str, Any]] = []
    for m in tr.messages:
        for info in m.meta.get("attachments") or []:
            sha = info.get("sha256") if isinstance(info, dict) else None
            blob = tr.attachments.get(sha) if isinstance(sha, str) else None
            if blob is None:
                continue
            if len(blob) > limit:
                info["left_out"] = (
                    f"{human_size(len(blob))}, over the {human_size(limit)} attachment limit "
                    "([limits] attachment)"
                )
            elif redact and _holds_secret(blob):
                info["left_out"] = "it holds a secret"
            else:
                info["file"] = path_of(info["sha256"], info.get("media_type"))
                continue
            left.append(info)
    return left


def write(tx: Transaction, tr: Transcript, turns: list[Message]) -> None:
    """The files of the images `turns` (the ones being written) keep; each file once."""
    for m in turns:
        for info in m.meta.get("attachments") or []:
            if not isinstance(info, dict):
                continue
            rel, sha = info.get("file"), info.get("sha256")
            if not isinstance(rel, str) or not isinstance(sha, str):
                continue
            blob = tr.attachments.get(sha)
            if blob is not None and not tx.path(rel).exists():
                tx.write(rel, blob)


def _holds_secret(blob: bytes) -> bool:
    """An image is bytes no detector reads; one that is text (an SVG) is checked like text."""
    from memctl.core.redact import find_secrets

    try:
        text = blob.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return bool(find_secrets(text))


def bare(m: Message) -> Message:
    """`m` as a turn stored before attachments were kept: the records without ADDED."""
    items = m.meta.get("attachments")
    if not isinstance(items, list):
        return m
    stripped = [
        {k: v for k, v in a.items() if k not in ADDED} if isinstance(a, dict) else a
        for a in items
    ]
    meta = {**m.meta, "attachments": stripped}
    return Message(m.role, m.content, m.id, m.name, m.timestamp, meta)


def turn_of(info: dict[str, Any], turns: list[Message]) -> int | None:
    """The turn number whose message carries the attachment record `info`."""
    for n, m in enumerate(turns, 1):
        if info in (m.meta.get("attachments") or []):
            return n
    return None


def files_of(turns: list[Message]) -> set[str]:
    """The attachment files `turns` refer to."""
    return {
        info["file"]
        for m in turns
        for info in m.meta.get("attachments") or []
        if isinstance(info, dict) and isinstance(info.get("file"), str)
    }


def load(root: Any, rel: str) -> bytes | None:
    """An attachment's bytes for export, if its file is there (None: left out, or gone)."""
    if not (isinstance(rel, str) and rel.startswith(FOLDER + "/") and ".." not in rel):
        return None
    try:
        return (root / rel).read_bytes()
    except OSError:
        return None
