"""Redaction at the store's door: every file memctl writes (a note, an INDEX line, a title)
is masked on its way to disk, whoever assembled it; raw sessions are redacted per string by
ingest before they are rendered, so the store writes them as given."""

from __future__ import annotations

from pathlib import Path

from memctl.core.redact import find_secrets, redact
from memctl.errors import MemctlError


def check_name(rel: str | Path) -> None:
    """A file name is committed too: one that holds a secret is refused, not masked."""
    if find_secrets(str(rel)):
        raise MemctlError(f"refusing to write a file whose name holds a secret: {rel}")


def for_disk(rel: str | Path, data: str | bytes) -> str | bytes:
    """What a writer hands the store, masked on its way to disk (bytes that are not text
    pass as they are: no detector could read them)."""
    check_name(rel)
    if isinstance(data, bytes):
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            return data  # not text: nothing a detector could read
        clean, found = redact(text)
        return clean.encode("utf-8") if found else data
    return redact(data)[0]
