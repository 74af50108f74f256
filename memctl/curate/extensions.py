"""Every extension point of memctl, declared in one place: what a third party implements,
the entry-point group it registers under, and the page that documents it.

A built-in is registered exactly as a third party's is: the two curators memctl ships are
`CURATORS.register(...)` calls below, the same call a program makes in-process; a package
registers with an entry point of the point's group instead. An in-process registration wins
over an entry point of the same name. docs/extensions.md has a section for each point here
(tests/test_extensions.py holds that, and registers a third-party curator and store).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from memctl.curate.model import Curator

if TYPE_CHECKING:
    from memctl.curate.model import Batch, Proposal


@runtime_checkable
class LearningStore(Protocol):
    """A learning store with code of its own: it proposes claims for its own store, which
    memctl verifies, merges and commits like any other curator's."""

    def process(self, batch: Batch) -> Iterable[Proposal | dict[str, Any]]:
        """Propose claims from the batch's new turns (cite turns and quote them verbatim)."""
        ...


@dataclass
class ExtensionPoint:
    """One kind of plugin: its name, entry-point group, protocol and docs section."""

    name: str
    group: str
    protocol: type
    doc: str
    _registered: dict[str, Any] = field(default_factory=dict)

    def register(self, name: str, target: object) -> None:
        """Make `target` available as `name`: an object, or "module:attribute" to import
        when first used (so registering costs no import)."""
        self._registered[name] = target

    def names(self) -> list[str]:
        """Every name registered, in-process or by an installed package's entry point."""
        from importlib.metadata import entry_points

        return sorted({*self._registered, *(ep.name for ep in entry_points(group=self.group))})

    def load(self, name: str) -> Any | None:
        """What `name` was registered as (imported if it was a "module:attribute"), or None
        when nothing has that name. An entry point that fails to import raises."""
        from importlib.metadata import entry_points

        target = self._registered.get(name)
        if isinstance(target, str):
            module, _, attr = target.partition(":")
            return getattr(importlib.import_module(module), attr)
        if target is not None:
            return target
        for ep in entry_points(group=self.group):
            if ep.name == name:
                return ep.load()
        return None


CURATORS = ExtensionPoint(
    "curators",
    "memctl.curators",
    Curator,
    "docs/extensions.md#curators",
)
STORES = ExtensionPoint(
    "stores",
    "memctl.stores",
    LearningStore,
    "docs/extensions.md#stores",
)
EXTENSION_POINTS = (CURATORS, STORES)

# the built-ins, registered as a third party registers; memctl's own stores need no code
# (a folder, a template and a mode in the config), so STORES starts empty
CURATORS.register("builtin", "memctl.curate.builtin:BuiltinCurator")
CURATORS.register("llm", "memctl.curate.llm:LLMCurator")
