"""What curation and the commands around it share: the configured stores as specs, a store's
INDEX.md text and the curation watermarks file.

They live apart from the engine so that init, review, forget, undo and sync can read them
without loading the curation pipeline (secret rules, provenance checks, curator registry),
whose import alone is ~40 ms of CPU at every start of those commands.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from memctl.core.notes import HISTORY, strip_links
from memctl.core.raw import split_frontmatter
from memctl.core.store import read_text
from memctl.curate.merge import NoteSet, is_proposal
from memctl.curate.model import StoreSpec
from memctl.errors import MemctlError

if TYPE_CHECKING:
    from memctl.core.config import StoreConfig
    from memctl.core.floor import Floor

STATE_REL = ".memctl/state/curation.json"
STATE_VERSION = 1
DEFAULT_SECTIONS = ("Notes", HISTORY)


def load_specs(vault: Floor) -> dict[str, StoreSpec]:
    """Every configured store with its template's sections, title pattern and prompt."""
    from memctl.core import templates

    raw_stores = vault.config.data.get("stores", {}) if isinstance(vault.config.data, dict) else {}
    specs: dict[str, StoreSpec] = {}
    for name, sc in vault.config.stores.items():
        text = templates.store_template(vault.root, sc)
        meta: dict[str, Any] = {}
        prompt = ""
        if text.startswith("---\n"):
            meta, prompt = split_frontmatter(text, sc.template or f"templates/{name}.md")
        else:
            prompt = text
        free = not meta.get("sections")
        sections = tuple(str(s) for s in meta.get("sections") or DEFAULT_SECTIONS)
        if HISTORY not in sections:
            sections = (*sections, HISTORY)
        over = raw_stores.get(name, {}) if isinstance(raw_stores.get(name), dict) else {}
        match = over.get("match", meta.get("match")) or ()
        if isinstance(match, str):
            match = (match,)
        specs[name] = StoreSpec(
            config=sc,
            sections=sections,
            title=str(meta.get("title") or name.capitalize()),
            prompt=(sc.instructions or prompt).strip(),
            match=tuple(str(m) for m in match),
            plugin=over.get("plugin"),
            free_sections=free,
        )
    return specs


def forced_proposal(sc: StoreConfig) -> bool:
    """instructions/ steers the agent: whatever config says, it only ever gets proposals."""
    folder = sc.folder.strip("/")
    return (
        sc.name == "instructions" or folder == "instructions" or folder.startswith("instructions/")
    )


def load_state(vault: Floor) -> dict[str, dict[str, int]]:
    path = vault.root / STATE_REL
    if not path.exists():
        return {}
    try:
        data = json.loads(read_text(path))
    except json.JSONDecodeError as exc:
        msg = f"curation state is not valid JSON: {exc.msg}"
        raise MemctlError(msg, STATE_REL, exc.lineno) from None
    stores = data.get("stores", {}) if isinstance(data, dict) else {}
    return {str(k): {str(p): int(n) for p, n in v.items()} for k, v in stores.items()}


def render_state(state: dict[str, dict[str, int]]) -> str:
    data = {
        "version": STATE_VERSION,
        "stores": {k: dict(sorted(v.items())) for k, v in sorted(state.items())},
    }
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def store_index(vault: Floor, spec: StoreSpec, notes: NoteSet) -> str:
    from memctl.core import templates

    folder = spec.config.folder.rstrip("/") + "/"
    rows = []
    for n in notes.in_store(spec.name):
        gist = next((strip_links(c.text) for _, c in n.active_claims()), "")
        if len(gist) > 90:
            gist = gist[:89].rstrip() + "…"
        title = n.title + (" (proposed)" if is_proposal(n.path) else "")
        rows.append(
            {
                "title": title.replace("[", "(").replace("]", ")"),
                "file": n.path[len(folder) :],
                "updated": str(n.meta.get("updated") or ""),
                "gist": gist,
            }
        )
    rows.sort(key=lambda r: r["title"])
    rows.sort(key=lambda r: r["updated"], reverse=True)
    return templates.store_index(spec.config, rows)
