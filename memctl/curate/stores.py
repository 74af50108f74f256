"""Custom learning stores that need code: a small protocol, loaded through entry points.

Most custom stores need no code: declare `[stores.NAME]` in `.memctl/config.toml` with a
folder, a template (sections + extraction prompt), `match` patterns for the built-in curator
and a mode. When a store needs logic of its own, write a class with three methods and
register it under the `memctl.stores` entry-point group:

    [project.entry-points."memctl.stores"]
    project = "memctl_project_store:ProjectContextStore"

then point a configured store at it with `plugin = "project"`. `process` proposes claims
(as `memctl.curate.Proposal`s or dicts in the LLM claims shape); memctl verifies their quotes,
merges and commits them exactly as it does for the built-in stores, and only into that
store. `recall` and `build_context` let recall ask the store for what it knows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from memctl.errors import CurationError, InputError

if TYPE_CHECKING:
    from memctl.core.floor import Floor
    from memctl.curate.model import Batch, Proposal, StoreSpec

ENTRY_POINT_GROUP = "memctl.stores"


@runtime_checkable
class LearningStore(Protocol):
    """A learning store with code of its own."""

    def process(self, batch: Batch) -> Iterable[Proposal | dict[str, Any]]:
        """Propose claims from the batch's new turns (cite turns and quote them verbatim)."""
        ...

    def recall(self, vault: Floor, query: str, **options: Any) -> list[str]:
        """What the store knows that bears on `query`, as short cited lines."""
        ...

    def build_context(self, data: list[str]) -> str:
        """Wrap recalled lines for the agent's context window."""
        ...


def available() -> list[str]:
    """Names of installed store plugins."""
    from importlib.metadata import entry_points

    return sorted(ep.name for ep in entry_points(group=ENTRY_POINT_GROUP))


def load(name: str) -> LearningStore:
    """Instantiate the store plugin registered as `name`."""
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name == name:
            try:
                obj = ep.load()
            except Exception as exc:
                raise CurationError(f"store plugin {name!r} failed to load: {exc}") from None
            store = obj() if isinstance(obj, type) else obj
            if not isinstance(store, LearningStore):
                raise CurationError(
                    f"store plugin {name!r} ({ep.value}) lacks process/recall/build_context"
                )
            return store
    known = ", ".join(available()) or "none installed"
    raise InputError(f"no store plugin {name!r} in entry-point group {ENTRY_POINT_GROUP} ({known})")


def configured(vault: Floor) -> dict[str, LearningStore]:
    """Store name -> plugin, for every configured store that names one."""
    stores = vault.config.data.get("stores", {})
    out = {}
    for name, spec in stores.items() if isinstance(stores, dict) else []:
        if isinstance(spec, dict) and spec.get("plugin") and name in vault.config.stores:
            out[name] = load(str(spec["plugin"]))
    return out


def plugin_claims(spec: StoreSpec, batch: Batch) -> list[Proposal]:
    """Run a plugin store over a batch; its claims go to its own store only."""
    from memctl.curate.model import Proposal
    from memctl.curate.schema import SchemaError, to_proposal, validate

    store = load(str(spec.plugin))
    try:
        items = list(store.process(batch))
    except Exception as exc:
        raise CurationError(
            f"store plugin {spec.plugin!r} failed on {batch.session}: {exc}; nothing was written"
        ) from None
    out: list[Proposal] = []
    for item in items:
        if isinstance(item, Proposal):
            p = item
        else:
            data = {"store": spec.name, **dict(item)}
            try:
                validate({"claims": [data]})
            except SchemaError as exc:
                raise CurationError(f"store plugin {spec.plugin!r}: {exc}") from None
            p = to_proposal(data)
        if p.store != spec.name:
            # A plugin speaks for its own store; anything else is refused by the engine.
            p = Proposal(
                f"{p.store} (from plugin {spec.plugin})",
                p.note,
                p.section,
                p.text,
                p.citations,
            )
        out.append(p)
    return out
