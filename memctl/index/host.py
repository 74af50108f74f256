"""What the index needs of the vault it serves, named without naming the floor.

`core.floor.Floor` imports the index (it keeps it in step with every write), so the index
cannot import the floor back; it takes any object with these attributes, and a Floor (or a
`memctl.Vault`) is one. The type checker holds the two together.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from memctl.core.config import Config
from memctl.core.store import VaultLock


class IndexedVault(Protocol):
    """A vault's files (`root`), settings, writer lock, and whether the process is one
    command long (then a freshness check never pays for a folder watch it would not reuse)."""

    root: Path
    config: Config
    lock: VaultLock
    one_shot: bool
