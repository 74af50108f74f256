"""One frozen request per user action: the single statement of what the action takes.

Every face builds one of these and hands it to `Vault.handle`: the CLI from its options,
the MCP server from a tool's arguments (the user fixed when it started), `LearningMachine`
from its own settings plus the call's arguments. The Vault's keyword methods (`remember`,
`search`, ...) take exactly these fields, one keyword each, so a library caller needs no
request at all. `tests/test_architecture.py` compares every face's parameters with these
fields, so a parameter added here and forgotten in a face (or the other way round) fails
there instead of drifting quietly, as `replaces` once did in LearningMachine.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from datetime import date, datetime
from pathlib import Path
from typing import Any, BinaryIO, ClassVar

Many = str | Iterable[str] | None  # one value or several; a filter of several matches any


@dataclass(frozen=True, kw_only=True)
class Request:
    """What every request has: the name of the `Vault` method that carries it out."""

    action: ClassVar[str] = ""

    def kwargs(self) -> dict[str, Any]:
        """The fields as keyword arguments of the Vault method (a shallow copy: no deep
        copy of a stream or a callback)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True, kw_only=True)
class IngestRequest(Request):
    """Transcripts to keep verbatim as raw sessions (`-` reads `stdin`, else standard input)."""

    action: ClassVar[str] = "ingest"
    sources: list[str | Path]
    fmt: str | None = None
    user: str | None = None
    scope: str | None = None
    session: str | None = None
    redact: bool | None = None
    stdin: BinaryIO | None = None
    progress: Callable[[int, int, str], None] | None = None
    skip_bad_lines: bool = False


@dataclass(frozen=True, kw_only=True)
class SearchRequest(Request):
    """Ranked hits over turns, notes and claims; every filter narrows, none widens."""

    action: ClassVar[str] = "search"
    query: str
    kind: Many = None
    store: Many = None
    user: Many = None
    scope: Many = None
    speaker: Many = None
    status: Many = "active"
    since: str | date | datetime | None = None
    until: str | date | datetime | None = None
    limit: int = 10
    sync: bool = True
    now: datetime | None = None
    section: Many = None
    cite: Many = None
    link: Many = None
    snippets: bool = True
    project: str | None = None


@dataclass(frozen=True, kw_only=True)
class CurateRequest(Request):
    """Turn uncurated turns into cited notes, one commit per run."""

    action: ClassVar[str] = "curate"
    store: str | list[str] | None = None
    session: str | None = None
    dry_run: bool = False
    model: str | None = None
    curator: str | None = None
    today: str | None = None


@dataclass(frozen=True, kw_only=True)
class RememberRequest(Request):
    """One claim an agent records itself: cited (source and quote) or as its own."""

    action: ClassVar[str] = "remember"
    user: str
    claim: str
    source: str | None = None
    quote: str | None = None
    store: str = "knowledge"
    note: str | None = None
    section: str | None = None
    scope: str = "user"
    own: bool = False
    replaces: str | None = None
    today: str | None = None


@dataclass(frozen=True, kw_only=True)
class ForgetRequest(Request):
    """A session (or everything of a user) and every claim that rests on it, removed."""

    action: ClassVar[str] = "forget"
    ref: str | None = None
    user: str | None = None
    dry_run: bool = False
    purge: bool = False


@dataclass(frozen=True, kw_only=True)
class RecallRequest(Request):
    """Cited memories for a prompt, packed into a token budget."""

    action: ClassVar[str] = "recall"
    query: str
    user: str | None = None
    budget: int | None = None
    fmt: str = "md"
    history: bool = False
    enabled: bool = True
    now: datetime | None = None
    project: str | None = None
    session: str | None = None


REQUESTS: tuple[type[Request], ...] = (
    IngestRequest, SearchRequest, CurateRequest, RememberRequest, ForgetRequest, RecallRequest
)
