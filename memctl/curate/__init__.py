"""Curation: turning verbatim turns into cited notes, by a pluggable curator.

A curator only *proposes* claims: each names a store, a note, a section, its text and the
turns and verbatim quotes that support it. Everything that makes memory trustworthy happens
here, the same for every curator: quotes are checked against the cited turn, writes go only
to configured stores (and to instructions/ only as proposals), claims are merged into notes
(add, update, supersede, no-op), and one commit records the run.

Curators are found by name: the built-ins are registered exactly as a third party would
register one, through the `memctl.curators` entry-point group (see `register`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from memctl.errors import InputError

if TYPE_CHECKING:
    from memctl.config import StoreConfig
    from memctl.model import Message
    from memctl.raw import RawHeader
    from memctl.vault import Vault

ACTIONS = ("add", "update", "supersede", "correct", "retract", "resolve", "noop")


@dataclass(frozen=True)
class Quote:
    """A turn of the session being curated (`t<turn>`) and the verbatim words it supports."""

    turn: int
    quote: str


@dataclass(frozen=True)
class Entity:
    """What a curator knows about the entity a note is about (entities store only)."""

    type: str = "thing"  # person | organisation | project | system | thing
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class Proposal:
    """One claim a curator wants in memory; nothing is written until it is verified.

    `note` is the note's title: claims with the same store, scope and title land in the same
    note. `replaces` names (by its text) the existing claim an update/supersede/correct/
    retract/resolve acts on. `slug` is a hint for the file name of a new note. `about` names
    the person a user-scoped note (a profile) is for when that is not the session's user: the
    other speaker of a two-person conversation.
    """

    store: str
    note: str
    section: str
    text: str
    citations: tuple[Quote, ...]
    inferred: bool = False
    action: str = "add"
    replaces: str | None = None
    entity: Entity | None = None
    slug: str | None = None
    meta: tuple[tuple[str, Any], ...] = ()
    about: str | None = None  # a user-scoped store's note for another named speaker


@dataclass(frozen=True)
class StoreSpec:
    """A store as a curator sees it: config, template sections, title pattern and prompt."""

    config: StoreConfig
    sections: tuple[str, ...]
    title: str
    prompt: str
    match: tuple[str, ...] = ()
    plugin: str | None = None
    free_sections: bool = False  # no template: any section a curator names is fine

    @property
    def name(self) -> str:
        return self.config.name


@dataclass(frozen=True)
class KnownClaim:
    """An active claim already in memory, visible to the session being curated.

    `cites` holds (ref, quote) pairs: a claim can be superseded by one from a later session,
    but a new claim only ever cites turns of the session being curated.
    """

    store: str
    note: str
    path: str
    section: str
    text: str
    cites: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class KnownEntity:
    """An entity note visible to the session being curated."""

    title: str
    aliases: tuple[str, ...]
    path: str
    type: str


class Context(Protocol):
    """What a curator may read besides the session: memory visible in the session's scope."""

    def claims(self, store: str | None = None) -> list[KnownClaim]:
        """Active claims of one store (or all), in notes this session may see."""
        ...

    def entities(self) -> list[KnownEntity]:
        """Entity notes this session may see."""
        ...

    def people(self) -> list[str]:
        """Display names of the people whose sessions this session may see."""
        ...

    def path_for(self, store: str, title: str, slug: str | None = None) -> str:
        """The path the note titled `title` has, or will get when a claim lands in it."""
        ...


@dataclass
class Batch:
    """One session's uncurated turns (`start`..end, 1-based) plus everything around them."""

    session: str
    header: RawHeader
    messages: list[Message]
    start: int
    stores: dict[str, StoreSpec]
    context: Context
    today: str

    @property
    def user(self) -> str:
        return self.header.user

    @property
    def scope(self) -> str:
        return self.header.scope


@dataclass
class Extraction:
    """A curator's output for one batch, plus what it cost."""

    claims: list[Proposal] = field(default_factory=list)
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = None


@runtime_checkable
class Curator(Protocol):
    """Reads a batch of turns and proposes claims. Must not write anything itself."""

    name: str
    model: str | None

    def extract(self, batch: Batch) -> Extraction: ...


# ---- registry -------------------------------------------------------------------------------

# name -> "module:attribute"; third parties add theirs with the same entry-point group.
_REGISTRY: dict[str, str] = {
    "builtin": "memctl.curate.builtin:BuiltinCurator",
    "llm": "memctl.curate.llm:LLMCurator",
}
ENTRY_POINT_GROUP = "memctl.curators"


def register(name: str, target: str) -> None:
    """Make a curator available by name (`module:Class`, called as `Class(vault, model=...)`)."""
    _REGISTRY[name] = target


def available() -> list[str]:
    """Curator names: built-ins and installed plugins."""
    from importlib.metadata import entry_points

    names = set(_REGISTRY)
    names.update(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))
    return sorted(names)


def get_curator(name: str, vault: Vault, model: str | None = None) -> Curator:
    """Instantiate a curator by name; an unknown name lists the ones that exist."""
    import importlib
    from importlib.metadata import entry_points

    target = _REGISTRY.get(name)
    factory: Any = None
    if target is None:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            if ep.name == name:
                factory = ep.load()
                break
        else:
            raise InputError(f"unknown curator {name!r}: use one of {', '.join(available())}")
    else:
        mod, _, attr = target.partition(":")
        factory = getattr(importlib.import_module(mod), attr)
    curator: Curator = factory(vault, model=model)
    return curator


# ---- entry points for the Vault facade ------------------------------------------------------


def run(vault: Vault, **options: Any) -> Any:
    """Curate uncurated turns into notes; see `memctl.curate.engine.run`."""
    from memctl.curate import engine

    return engine.run(vault, **options)


def review(vault: Vault, **options: Any) -> Any:
    """List, accept or reject proposals; see `memctl.curate.proposals.review`."""
    from memctl.curate import proposals

    return proposals.review(vault, **options)
