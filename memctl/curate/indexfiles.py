"""The generated INDEX.md files as the notes and sessions say they should read.

Every memctl write regenerates the INDEX files it affects, but git can change notes
behind memctl's back (a revert, a cherry-pick, a pull, a hand-resolved conflict), and the
merge driver only merges generated lines. `expected` regenerates all of them from the
files, so `memctl doctor` can report stale ones and commands that rewrite the vault
(forget, undo, sync) can put them right in the same commit.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from memctl.core.store import read_text
from memctl.errors import MemctlError

if TYPE_CHECKING:
    from memctl.core.floor import Floor
    from memctl.core.store import Transaction


def expected(vault: Floor) -> dict[str, str]:
    """rel path -> the text every INDEX.md would have if regenerated now."""
    from memctl.core import templates
    from memctl.core.provenance import RawTurns
    from memctl.curate.merge import NoteSet
    from memctl.curate.specs import load_specs, store_index

    sessions = vault.sessions()
    out = {"raw/INDEX.md": templates.raw_index(sessions)}
    counts = {name: len(vault.notes(name)) for name in vault.config.stores}
    out["INDEX.md"] = templates.root_index(vault.config, counts, sessions)
    specs = load_specs(vault)
    notes = NoteSet(
        vault.root,
        {n: s.config.folder for n, s in specs.items()},
        "",
        RawTurns(vault.root),
        "index",
    )
    for spec in specs.values():
        try:
            out[f"{spec.config.folder}/INDEX.md"] = store_index(vault, spec, notes)
        except MemctlError:
            continue  # a note that does not parse: its store's INDEX cannot be regenerated
    return out


def stale(vault: Floor) -> list[str]:
    """INDEX files whose text is not what regenerating gives (missing ones included)."""
    bad = []
    for rel, text in sorted(expected(vault).items()):
        target = vault.root / rel
        if not target.is_file() or read_text(target) != text:
            bad.append(rel)
    return bad


def refresh(vault: Floor, tx: Transaction) -> list[str]:
    """Write every stale INDEX file into `tx`; the paths written."""
    written = []
    for rel, text in sorted(expected(vault).items()):
        target = vault.root / rel
        if not target.is_file() or read_text(target) != text:
            tx.write(rel, text)
            written.append(rel)
    return written
