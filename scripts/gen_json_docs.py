"""Generate docs/json.md from memctl/faces/cli/contract.py so the documented shapes cannot drift.

    python scripts/gen_json_docs.py          # rewrite docs/json.md
    python scripts/gen_json_docs.py --check  # exit 1 if docs/json.md is out of date
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from memctl.faces.cli.contract import COMMANDS, schema
from memctl.results import RESULT_VERSION

OUT = Path(__file__).resolve().parent.parent / "docs" / "json.md"

HEAD = f"""\
# memctl `--json` answers

Generated from `memctl/faces/cli/contract.py` by `scripts/gen_json_docs.py`; a test runs every
command below with `--json` and checks its answer against the schema shown.

Every `--json` answer is one JSON object on stdout (`watch --json`: one object per line)
that starts with the same two keys, then the command's payload:

```json
{{"memctl_result_version": {RESULT_VERSION}, "command": "search", "query": "...", "hits": []}}
```

- `memctl_result_version` is the version of this contract. It changes only when a key is
  removed or changes meaning; new keys may appear without a bump, so ignore keys you do
  not know.
- `command` names the command that answered (`hooks install` for subcommands).
- Errors are not JSON: a failed command writes one line `memctl: error: ...` to stderr
  and exits non-zero (2 bad input, 3 conflict, 4 vault locked, 5 curation failed).
- `recall` and `context` payloads also carry their own `version` (the recall block's shape).

"""


def render() -> str:
    parts = [HEAD]
    for command, (about, _) in COMMANDS.items():
        body = json.dumps(schema(command), indent=2, ensure_ascii=False)
        parts.append(f"## `memctl {command} --json`\n\n{about}\n\n```json\n{body}\n```\n")
    return "\n".join(parts)


def main() -> int:
    text = render()
    if "--check" in sys.argv:
        if not OUT.exists() or OUT.read_text(encoding="utf-8") != text:
            sys.stderr.write("docs/json.md is out of date: run python scripts/gen_json_docs.py\n")
            return 1
        return 0
    OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
