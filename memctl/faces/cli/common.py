"""What every CLI command shares: the global options and the one way to open the vault."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memctl.vault import Vault


class State:
    """Global options, resolved once in the callback and read by every command."""

    vault_path: str | None = None


state = State()
VAULT_HELP = "Vault folder (default: $MEMCTL_VAULT, else walk up from cwd)."


def open_vault(*, recover: bool = True, one_shot: bool = True, **flags: Any) -> Vault:
    """The single point where the CLI turns options and environment into a Vault.

    Opening finishes what a killed command left (one line on stderr says what), unless
    `recover` is off, for `memctl doctor` to report it first. A command runs once and
    exits (`one_shot`), except those that serve until stopped (`mcp`, `watch`).
    """
    from memctl.vault import Vault

    return Vault.open(
        state.vault_path,
        env=dict(os.environ),
        notice=_notice,
        recover=recover,
        one_shot=one_shot,
        **flags,
    )


def _notice(line: str) -> None:
    sys.stderr.write(f"memctl: {line}\n")


def vault_path_arg(p: str | None) -> Path | None:
    return Path(p) if p else None
