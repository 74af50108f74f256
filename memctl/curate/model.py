"""What curators exchange with the curation engine: proposals, batches and what they may see.

Plain data with no I/O, kept apart from the registry in `memctl.curate` so that the engine,
the curators and the stores can share these types without importing one another.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from collections.abc import Mapping

    from memctl.core.config import StoreConfig
    from memctl.core.model import Message
    from memctl.core.raw import RawHeader

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
    other speaker of a two-person conversation. `observed` marks a claim about what the session
    shows happening (a command the agent ran, a commit, a cause it found, the human's answer in
    a tool result): it may cite the agent's and the tools' turns, quoting them verbatim, where
    any other claim cites only what people said.
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
    observed: bool = False  # may cite agent and tool turns (see the docstring)


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


@dataclass(frozen=True)
class KnownNote:
    """An active note visible to the session being curated, with its frontmatter: what a
    curator needs to tell two notes of one title apart (a project's `cwd` and `remote`)."""

    store: str
    title: str
    path: str
    meta: Mapping[str, Any]


class Context(Protocol):
    """What a curator may read besides the session: memory visible in the session's scope."""

    def claims(self, store: str | None = None) -> list[KnownClaim]:
        """Active claims of one store (or all), in notes this session may see."""
        ...

    def entities(self) -> list[KnownEntity]:
        """Entity notes this session may see."""
        ...

    def notes(self, store: str) -> list[KnownNote]:
        """Active notes of one store that this session may see."""
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
    _left: dict[int, int] | None = field(default=None, repr=False, compare=False)

    @property
    def user(self) -> str:
        return self.header.user

    @property
    def rewound(self) -> dict[int, int]:
        """The turns (0-based) on a branch the user went back from (memctl.core.branches)."""
        if self._left is None:
            from memctl.core.branches import rewound

            self._left = rewound(self.messages)
        return self._left

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
