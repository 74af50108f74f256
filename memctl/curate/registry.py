"""Curators by name, through the `CURATORS` extension point (memctl.curate.extensions),
where the built-ins are registered exactly as a third party registers one."""

from __future__ import annotations

from typing import TYPE_CHECKING

from memctl.curate.extensions import CURATORS
from memctl.errors import InputError

if TYPE_CHECKING:
    from memctl.core.floor import Floor
    from memctl.curate.model import Curator

ENTRY_POINT_GROUP = CURATORS.group


def register(name: str, target: object) -> None:
    """Make a curator available by name (`module:Class`, or the class itself, called as
    `Class(vault, model=...)`)."""
    CURATORS.register(name, target)


def available() -> list[str]:
    """Curator names: built-ins and installed plugins."""
    return CURATORS.names()


def get_curator(name: str, vault: Floor, model: str | None = None) -> Curator:
    """Instantiate a curator by name; an unknown name lists the ones that exist."""
    factory = CURATORS.load(name)
    if factory is None:
        raise InputError(f"unknown curator {name!r}: use one of {', '.join(available())}")
    curator: Curator = factory(vault, model=model)
    return curator
