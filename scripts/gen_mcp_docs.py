"""Generate docs/mcp.md from the MCP server itself, so the documented surface cannot drift.

    python scripts/gen_mcp_docs.py          # rewrite docs/mcp.md
    python scripts/gen_mcp_docs.py --check  # exit 1 if docs/mcp.md is out of date

The server is built on a fresh vault with the default stores (a vault's own stores appear
in the `store` enums).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import anyio

from memctl.faces.mcp import INSTRUCTIONS, build_server
from memctl.vault import Vault

OUT = Path(__file__).resolve().parent.parent / "docs" / "mcp.md"


def _param(name: str, spec: dict[str, Any], required: bool) -> str:
    types = spec.get("anyOf", [spec])
    shown = []
    for t in types:
        if "enum" in t:
            shown.append(" \\| ".join(f"`{v}`" for v in t["enum"]))
        elif t.get("type") != "null":
            shown.append(str(t.get("type")))
    bounds = [f"{k} {t[k]}" for t in types for k in ("minimum", "maximum") if k in t]
    default = "" if required else f" (default `{json.dumps(spec.get('default'))}`)"
    extra = f"; {', '.join(bounds)}" if bounds else ""
    need = "**required**" if required else "optional"
    what = spec.get("description", "")
    return f"| `{name}` | {' or '.join(shown)}{extra} | {need}{default} | {what} |"


async def _surface() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        vault, _ = Vault.init(Path(tmp) / "vault", env={})
        server = build_server(vault, "you")
        tools = await server.list_tools()
        templates = await server.list_resource_templates()
        fixed = {str(r.uri) for r in server._resource_manager.list_resources()}
        resources = [r for r in await server.list_resources() if str(r.uri) in fixed]
        prompts = await server.list_prompts()
    out = [
        "# memctl MCP server",
        "",
        "Generated from the server by `scripts/gen_mcp_docs.py`; a test keeps it current.",
        "`memctl mcp [--as USER]` serves it on stdio; every tool acts for that one user.",
        "",
        "## Instructions the server gives the client",
        "",
        "```text",
        INSTRUCTIONS,
        "```",
        "",
        "## Tools",
        "",
    ]
    for t in tools:
        a = t.annotations
        hints = [h for h, on in (("read-only", a.read_only_hint), ("destructive",
                 a.destructive_hint), ("idempotent", a.idempotent_hint),
                 ("open-world", a.open_world_hint)) if on] if a else []
        out += [f"### `{t.name}` — {t.title}", "", " ".join((t.description or "").split()), ""]
        out += [f"Annotations: {', '.join(hints) or 'none'}. "
                f"Structured output: {'yes' if t.output_schema else 'no'}.", ""]
        props = t.input_schema.get("properties", {})
        req = set(t.input_schema.get("required", []))
        if props:
            out += ["| parameter | type | | meaning |", "|---|---|---|---|"]
            out += [_param(n, p, n in req) for n, p in props.items()]
            out.append("")
        if t.output_schema:
            keys = ", ".join(f"`{k}`" for k in t.output_schema.get("properties", {}))
            out += [f"Answer keys: {keys}.", ""]
    out += ["## Resources", "", "| URI | name | what |", "|---|---|---|"]
    for r in resources:
        out.append(f"| `{r.uri}` | {r.name} | {r.description or r.title} |")
    out += ["", "Each visible note, INDEX file and session is also listed by `resources/list` "
            "(`memctl://note/<path>`, `memctl://session/<digest>`).", "",
            "## Resource templates", "", "| URI template | what |", "|---|---|"]
    for t in templates:
        out.append(f"| `{t.uri_template}` | {t.description} |")
    out += ["", "## Prompts", ""]
    for p in prompts:
        args = ", ".join(
            f"`{a.name}`{'' if a.required else ' (optional)'}: {(a.description or '').rstrip('.')}"
            for a in p.arguments or []
        )
        out += [f"### `{p.name}` — {p.title}", "", p.description or "", "",
                f"Arguments: {args or 'none'}.", ""]
    return "\n".join(out).rstrip("\n") + "\n"


def render() -> str:
    return anyio.run(_surface)


def main() -> int:
    text = render()
    if "--check" in sys.argv:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            sys.stderr.write("docs/mcp.md is out of date: run python scripts/gen_mcp_docs.py\n")
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
