"""One example per command, shown at the end of its `--help` (and so in docs/cli.md).

Kept as data in one place so a test can hold every command to having one, and so the
examples read as one set: the same vault, users and sessions as the README and the demo.
"""

from __future__ import annotations

EXAMPLES: dict[str, tuple[str, ...]] = {
    "init": ("memctl init ~/memory", "memctl init . --force   # a folder that is mostly not notes"),
    "ingest": (
        "memctl ingest ~/.claude/projects/myproj/",
        "memctl ingest chat.jsonl --user dana --scope team",
    ),
    "export": ("memctl export 2026-09-01-egress-costs --format jsonl > dana.jsonl",),
    "log": ("memctl log -n 5",),
    "show": (
        "memctl show 64628a#t3   # a turn as recall cites it",
        "memctl show knowledge/acme.md",
    ),
    "status": ("memctl status --json",),
    "search": (
        'memctl search "egress costs" --since 2026-10-01',
        "memctl search migration --notes --store entities --json",
    ),
    "reindex": ("memctl reindex",),
    "watch": ("memctl watch --ingest ~/.claude/projects --user dana",),
    "view": ("memctl view", "memctl view --writable --no-open   # accept and reject there too"),
    "curate": ("memctl curate --dry-run", "memctl curate --model openai/gpt-4o-mini"),
    "remember": (
        'memctl remember "Dana prefers small PRs for infra changes" --source 73210f#t11 '
        '--quote "I prefer small PRs for infra changes"',
        'memctl remember "The deploy script needs AWS_PROFILE set" --own --store projects',
    ),
    "review": ("memctl review", "memctl review --accept instructions/remembered-by-dana-s-agent"),
    "diff": ("memctl diff HEAD~1..HEAD", "memctl diff --since 2w --store decisions"),
    "verify": ("memctl verify knowledge/acme.md",),
    "recall": ('memctl recall "Should we use Datadog or Grafana?" --user marco --budget 1500',),
    "context": ("memctl context --user dana --format xml",),
    "mcp": ("memctl mcp --user dana",),
    "serve": ("memctl serve --idle 600", "memctl serve --status"),
    "doctor": ("memctl doctor --repair",),
    "forget": ("memctl forget 64628a#t3 --dry-run", "memctl forget --user marco"),
    "undo": ("memctl undo --dry-run",),
    "rollback": ("memctl rollback knowledge/acme.md --to HEAD~2 --dry-run",),
    "sync": ("memctl sync origin",),
    "gc": ("memctl gc --apply",),
    "blame": ("memctl blame decisions/2026-10-06-go-with-grafana-cloud.md",),
    "drift": ("memctl drift knowledge/acme.md --json",),
    "hooks": ("memctl hooks install --project --user dana",),
    "hooks install": (
        "memctl --vault ~/memory hooks install --project --user dana",
        "memctl hooks install --portable --vault ../memory   # the file a team commits",
    ),
    "hooks uninstall": ("memctl hooks uninstall --project",),
    "hooks log": ("memctl hooks log --failures -n 5",),
    "hook": ('echo \'{"prompt": "egress?"}\' | memctl hook user-prompt-submit --user dana',),
    "hook session-start": ("echo '{}' | memctl hook session-start --user dana",),
    "hook user-prompt-submit": (
        'echo \'{"prompt": "egress?"}\' | memctl hook user-prompt-submit --user dana',
    ),
    "hook stop": (
        'echo \'{"transcript_path": "t.jsonl"}\' | memctl hook stop --user dana --worker',
    ),
    "hook pre-compact": (
        'echo \'{"session_id": "s1", "transcript_path": "t.jsonl"}\' '
        "| memctl hook pre-compact --user dana",
    ),
}


def epilog(path: str) -> str | None:
    """The help text's closing block for the command at `path` ("hooks install"), if any.

    click rewraps help paragraphs; a paragraph that starts with \\b keeps its lines.
    """
    lines = EXAMPLES.get(path)
    if not lines:
        return None
    head = "Example:" if len(lines) == 1 else "Examples:"
    return "\b\n" + head + "\n" + "\n".join(f"  {line}" for line in lines)
