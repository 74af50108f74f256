"""The only tantivy user (placeholder until the search issue lands)."""

from __future__ import annotations

from typing import Any


def after_write(vault: Any, touched: list[str]) -> None:
    """Keep the index in step with a write; a no-op until the index exists."""
