"""memctl: long-term memory for LLM agents as a git-versioned tree of markdown files.

Public API: `Vault` and the `MemctlError` family. Heavy modules load on first use so that
`import memctl` (and `memctl --help`) stays fast.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from memctl.errors import ConflictError, InputError, MemctlError, VaultNotFoundError
from memctl.version import __version__

__all__ = [
    "ConflictError",
    "InputError",
    "MemctlError",
    "Vault",
    "VaultNotFoundError",
    "__version__",
]

if TYPE_CHECKING:
    from memctl.vault import Vault


def __getattr__(name: str) -> Any:
    if name == "Vault":
        from memctl.vault import Vault

        return Vault
    raise AttributeError(name)
