"""Options many commands share, declared once so their flag and help read the same everywhere."""

from __future__ import annotations

from typing import Annotated

import typer

JsonFlag = Annotated[bool, typer.Option("--json", help="Machine-readable output.")]
