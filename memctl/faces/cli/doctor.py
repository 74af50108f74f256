"""`memctl doctor`: check the vault's invariants, and repair what can be repaired safely."""

from __future__ import annotations

from typing import Annotated

import typer

from memctl.faces.cli.common import open_vault
from memctl.faces.cli.options import JsonFlag
from memctl.faces.cli.render import emit_json, out
from memctl.faces.cli.root import app


@app.command()
def doctor(
    repair: Annotated[
        bool, typer.Option("--repair", help="Finish killed commands, rebuild what is derived.")
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """Unfinished journals, git locks, index vs files, INDEX files, citations, secrets."""
    vault = open_vault(recover=False)
    res = vault.doctor(repair=repair)
    if json_out:
        emit_json("doctor", res.to_json())
    else:
        for c in res.checks:
            if c.repaired:
                out(f"fixed  {c.name}: {c.repaired}")
            elif c.problems:
                out(f"FAIL   {c.name}: {len(c.problems)} problem{'s' * (len(c.problems) != 1)}")
                for p in c.problems[:20]:
                    out(f"         {p}")
                if len(c.problems) > 20:
                    out(f"         … {len(c.problems) - 20} more (--json lists all)")
            else:
                out(f"ok     {c.name}")
    if not res.ok:
        raise typer.Exit(1)
