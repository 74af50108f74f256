"""Custom learning stores that need code, through the `STORES` extension point.

Most custom stores need no code: declare `[stores.NAME]` in `.memctl/config.toml` with a
folder, a template (sections + extraction prompt), `match` patterns for the built-in curator
and a mode. When a store needs logic of its own, write a class with a `process` method
(`memctl.LearningStore`) and register it under the `memctl.stores` entry-point group:

    [project.entry-points."memctl.stores"]
    project = "memctl_project_store:ProjectContextStore"

(or, in-process, `memctl.curate.extensions.STORES.register("project", ProjectContextStore)`),
then point a configured store at it with `plugin = "project"`. `process` proposes claims
(as `memctl.curate.Proposal`s or dicts in the LLM claims shape); memctl verifies their quotes,
merges and commits them exactly as it does for the built-in stores, and only into that
store. docs/extensions.md says the rest.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memctl.curate.extensions import STORES, LearningStore
from memctl.errors import CurationError, InputError

if TYPE_CHECKING:
    from memctl.curate.model import Batch, Proposal, StoreSpec


def available() -> list[str]:
    """Names of store plugins: registered in-process or installed."""
    return STORES.names()


def load(name: str) -> LearningStore:
    """Instantiate the store plugin registered as `name`."""
    try:
        obj = STORES.load(name)
    except Exception as exc:
        raise CurationError(f"store plugin {name!r} failed to load: {exc}") from None
    if obj is not None:
        store = obj() if isinstance(obj, type) else obj
        if not isinstance(store, LearningStore):
            raise CurationError(f"store plugin {name!r} has no process(batch) method")
        return store
    known = ", ".join(available()) or "none installed"
    raise InputError(f"no store plugin {name!r} in entry-point group {STORES.group} ({known})")


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
