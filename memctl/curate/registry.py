"""Curators by name: the built-ins are registered exactly as a third party registers one.

Third parties add theirs through the `memctl.curators` entry-point group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memctl.errors import InputError

if TYPE_CHECKING:
    from memctl.core.floor import Floor
    from memctl.curate.model import Curator


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


def get_curator(name: str, vault: Floor, model: str | None = None) -> Curator:
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
