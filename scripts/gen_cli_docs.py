"""Generate docs/cli.md from the CLI's own --help so the reference cannot drift.

    python scripts/gen_cli_docs.py          # rewrite docs/cli.md
    python scripts/gen_cli_docs.py --check  # exit 1 if docs/cli.md is out of date (CI)
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memctl.faces.cli import (
    command,
    commands,  # noqa: F401 - registers the commands
)

OUT = Path(__file__).resolve().parent.parent / "docs" / "cli.md"


def _walk(cmd: Any, path: list[str]) -> Iterator[tuple[str, str]]:
    # typer vendors its own click, so duck-type rather than isinstance against `click`.
    ctx = cmd.context_class(cmd, info_name=" ".join(path), terminal_width=100,
                            max_content_width=100)
    yield " ".join(path), cmd.get_help(ctx)
    if hasattr(cmd, "list_commands"):
        for name in cmd.list_commands(ctx):
            sub = cmd.get_command(ctx, name)
            if sub is not None and not sub.hidden:
                yield from _walk(sub, [*path, name])


def render() -> str:
    root = command()
    parts = ["# memctl command reference", "",
             "Generated from `memctl --help` by `scripts/gen_cli_docs.py`; a test keeps it current.",  # noqa: E501
             ""]
    for name, text in _walk(root, ["memctl"]):
        parts += [f"## `{name}`", "", "```text", text.rstrip(), "```", ""]
    return "\n".join(parts)


def main() -> int:
    text = render()
    if "--check" in sys.argv:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            sys.stderr.write("docs/cli.md is out of date: run python scripts/gen_cli_docs.py\n")
            return 1
        return 0
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
