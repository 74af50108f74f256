"""memctl: long-term memory for LLM agents as a git-versioned tree of markdown files.

Public API: `Vault` (the front door), `LearningMachine` (a Python agent loop's memory),
`LearningStore` (the protocol of a custom store with code) and the `MemctlError` family.
Heavy modules load on first use so that `import memctl` (and `memctl --help`) stays fast.
The package's layout is in docs/architecture.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memctl.errors import ConflictError, InputError, MemctlError, VaultNotFoundError
from memctl.version import __version__

__all__ = [
    "ConflictError",
    "InputError",
    "LearningMachine",
    "LearningStore",
    "MemctlError",
    "Vault",
    "VaultNotFoundError",
    "__version__",
]

if TYPE_CHECKING:
    from memctl.curate.extensions import LearningStore
    from memctl.faces.learning import LearningMachine
    from memctl.vault import Vault


def __getattr__(name: str) -> Any:
    if name == "Vault":
        from memctl.vault import Vault

        return Vault
    if name == "LearningMachine":
        from memctl.faces.learning import LearningMachine

        return LearningMachine
    if name == "LearningStore":
        from memctl.curate.extensions import LearningStore

        return LearningStore
    raise AttributeError(name)
