"""`memctl recall`, `context`, `hooks`, `hook` and `mcp`: getting memory into agents."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from memctl.faces.cli.common import open_vault, state
from memctl.faces.cli.options import JsonFlag
from memctl.faces.cli.render import emit_json, is_tty, out, table
from memctl.faces.cli.root import app
from memctl.requests import RecallRequest

if TYPE_CHECKING:
    from memctl.faces.hooks import HooksResult
    from memctl.recall import RecallResult

_FORMAT_HELP = (
    "How the block is written and budgeted: md (default), xml or json. --json describes the "
    "result (items, citations, tokens) of whichever format was packed."
)

# Options several commands here share, declared once.
_User = Annotated[
    str | None, typer.Option("--user", help="Whose memory (scope); default: vault user.")
]
_Budget = Annotated[
    int | None, typer.Option("--budget", help="Token budget (default: config, 1500).")
]
_Format = Annotated[str, typer.Option("--format", help=_FORMAT_HELP)]
_In = Annotated[
    str | None,
    typer.Option(
        "--in",
        "--project",
        help="The working directory the prompt is made in (or a project note's name): its "
        "project note stands, other projects' lines are left out unless named. The hooks "
        "pass Claude Code's cwd.",
    ),
]
_Project = Annotated[
    bool,
    typer.Option(
        "--project",
        help="This project's .claude/settings.local.json, this machine's own (default); "
        "with --portable, the shared .claude/settings.json.",
    ),
]
_Global = Annotated[
    bool, typer.Option("--global", help="Your ~/.claude/settings.json (every project).")
]
_DryRun = Annotated[bool, typer.Option("--dry-run", help="Show the change, write nothing.")]


def _where(value: str | None) -> str | None:
    """A directory as given; a project's name becomes the directory its note records."""
    if not value or "/" in value or Path(value).expanduser().is_dir() or value.startswith("~"):
        return value  # a directory, here or as another machine recorded it
    from memctl.vault import Vault

    return Vault.project_dir(open_vault(), value) or value


def _enabled(none: bool) -> bool:
    from memctl.vault import Vault

    return not none and not Vault.recall_off(os.environ)


def _show(res: RecallResult, command: str, json_out: bool, explain: bool) -> None:
    for notice in res.notices:
        sys.stderr.write(f"memctl: {notice}\n")
    if json_out:
        emit_json(command, res.to_json(explain=explain))
        return
    if res.disabled:
        sys.stderr.write("memctl: recall is off (--none or MEMCTL_RECALL=off); no memory given\n")
        return
    if res.text:
        sys.stdout.write(res.text if res.text.endswith("\n") else res.text + "\n")
    elif not explain:
        from memctl.results import empty_recall

        sys.stderr.write(f"memctl: {empty_recall(res)}\n")
    if explain:
        out()
        out(f"# explain · {res.tokens}/{res.budget} tokens ({res.tokenizer}) · {res.seconds:.3f}s")
        rows = [
            [
                "kept" if d.kept else "dropped",
                d.kind,
                f"{d.score:.3f}",
                d.ref,
                (d.text[:60] + ("…" if len(d.text) > 60 else "")) if d.text else "",
                d.reason,
            ]
            for d in res.explain
        ]
        table("why", ["", "kind", "score", "ref", "text", "reason"], rows)


@app.command()
def recall(
    query: Annotated[list[str], typer.Argument(help="What the agent is about to answer.")],
    user: _User = None,
    budget: _Budget = None,
    fmt: _Format = "md",
    explain: Annotated[
        bool, typer.Option("--explain", help="Show why each candidate was kept or dropped.")
    ] = False,
    history: Annotated[
        bool, typer.Option("--history", help="Also recall claims that are no longer true.")
    ] = False,
    none: Annotated[
        bool, typer.Option("--none", help="Recall nothing (also MEMCTL_RECALL=off).")
    ] = False,
    json_out: JsonFlag = False,
    project: _In = None,
) -> None:
    """Cited memories for a prompt: ranked, scoped to the user, packed into a token budget."""
    res = open_vault().handle(RecallRequest(
        query=" ".join(query),
        user=user,
        budget=budget,
        fmt=fmt,
        history=history,
        enabled=_enabled(none),
        project=_where(project),
    ))
    _show(res, "recall", json_out, explain)


@app.command()
def context(
    user: _User = None,
    budget: _Budget = None,
    fmt: _Format = "md",
    explain: Annotated[bool, typer.Option("--explain", help="Show what was packed.")] = False,
    none: Annotated[
        bool, typer.Option("--none", help="Give nothing (also MEMCTL_RECALL=off).")
    ] = False,
    json_out: JsonFlag = False,
    where: _In = None,
) -> None:
    """The start-of-session block: instructions, profile, decisions, open threads, sessions,
    team knowledge."""
    res = open_vault().context(
        user=user, budget=budget, fmt=fmt, enabled=_enabled(none), project=_where(where)
    )
    _show(res, "context", json_out, explain)


# ---- memctl hooks install|uninstall -------------------------------------------------------

hooks_app = typer.Typer(
    name="hooks",
    help="Install memctl's hooks into an agent's settings (Claude Code).",
    no_args_is_help=True,
)
app.add_typer(hooks_app, name="hooks")

_AGENT_HELP = "The agent whose settings to change: claude-code."


def _settings(project: bool, global_: bool, portable: bool = False) -> Path:
    from memctl.errors import InputError
    from memctl.faces.hooks import settings_path

    if project and global_:
        raise InputError("choose one of --project and --global")
    if global_:
        return settings_path("user")
    # machine paths never go in the file a team commits; plain `memctl hook` does
    return settings_path("shared" if portable else "project")


def _agent(agent: str) -> None:
    from memctl.errors import InputError
    from memctl.faces.hooks import AGENTS

    if agent not in AGENTS:
        raise InputError(f"unknown agent {agent!r}: use {', '.join(AGENTS)}")


def _report(res: HooksResult, json_out: bool) -> None:
    if json_out:
        emit_json(f"hooks {res.action}", res.to_json())
        return
    if res.mcp is not None and (res.mcp.changed or res.action == "install"):
        _report_one(res.mcp)
    _report_one(res)


def _report_one(res: HooksResult) -> None:
    for note in res.notes:
        sys.stderr.write(f"memctl: {note}\n")
    if not res.changed:
        out(f"{res.path}: already up to date; nothing to change")
        return
    if res.diff:
        sys.stdout.write(res.diff if res.diff.endswith("\n") else res.diff + "\n")
    verb = "would change" if res.dry_run else "changed"
    parts = [f"added {', '.join(res.added)}" if res.added else ""]
    parts.append(f"updated {', '.join(res.updated)}" if res.updated else "")
    parts.append(f"removed {len(res.removed)}" if res.removed else "")
    out(f"{verb} {res.path}: " + "; ".join(p for p in parts if p))


@hooks_app.command("install")
def hooks_install(
    agent: Annotated[str, typer.Argument(help=_AGENT_HELP)] = "claude-code",
    project: _Project = False,
    global_: _Global = False,
    as_user: Annotated[
        str | None,
        typer.Option(
            "--user", "--as", help="The memctl user the hooks recall and ingest as "
            "(default: vault user)."
        ),
    ] = None,
    portable: Annotated[
        bool,
        typer.Option(
            "--portable",
            help="Write plain `memctl hook ...` (memctl on PATH, vault found from the project "
            "or $MEMCTL_VAULT) instead of this machine's paths, into the project's shared "
            ".claude/settings.json that teams commit.",
        ),
    ] = False,
    no_mcp: Annotated[
        bool,
        typer.Option(
            "--no-mcp",
            help="Do not register `memctl mcp` as an MCP server beside the hooks (by default "
            "it goes where Claude Code reads it: ~/.claude.json, or the project's .mcp.json "
            "with --portable).",
        ),
    ] = False,
    serve: Annotated[
        bool,
        typer.Option("--serve", help="Start the vault's resident service now (`memctl serve`)."),
    ] = False,
    dry_run: _DryRun = False,
    json_out: JsonFlag = False,
) -> None:
    """Merge memctl's SessionStart, UserPromptSubmit, Stop, SessionEnd and PreCompact hooks
    into settings, and register memctl's MCP server beside them."""
    from memctl.faces.hooks import also_installed, ignore_local, install
    from memctl.faces.hooks.mcpconfig import install_mcp, mcp_entry, mcp_location

    _agent(agent)
    path = _settings(project, global_, portable)
    root = None
    if portable:
        # a --vault given here is kept, as the path from the project to it: the same on
        # every machine whose checkout has the same layout, and no machine's home in it
        vault = None
        if state.vault_path is not None:
            vault = Path(os.path.relpath(Path(state.vault_path).resolve(), Path.cwd().resolve()))
        res = install(path, vault, user=as_user, dry_run=dry_run, base="memctl")
        entry = mcp_entry(vault, as_user, base=["memctl"])
    else:
        root = open_vault().root
        res = install(path, root, user=as_user, dry_run=dry_run)
        entry = mcp_entry(root, as_user)
    if not no_mcp:
        where = "user" if global_ else "shared" if portable else "project"
        res.mcp = install_mcp(*mcp_location(where), entry, dry_run=dry_run)
    res.notes += also_installed(path, Path.cwd())
    if not global_ and not portable:
        ignored = ignore_local(Path.cwd(), dry_run=dry_run)
        if ignored:
            res.notes.append(ignored)
    if serve and not dry_run:
        res.notes.append(_start_service(root or open_vault().root))
    _report(res, json_out)


def _start_service(root: Path) -> str:
    """Start `memctl serve` for the vault unless one answers; say which."""
    from memctl.faces.serve import wire

    if not wire.enabled(os.environ):
        return "MEMCTL_SERVE is off: memctl serve was not started"
    if wire.call(str(root), {"op": "ping"}, 2.0)[0] is not None:
        return f"memctl serve already runs for {root}"
    wire.start(str(root))
    return f"started memctl serve for {root} (it stops itself when idle; hooks restart it)"


@hooks_app.command("uninstall")
def hooks_uninstall(
    agent: Annotated[str, typer.Argument(help=_AGENT_HELP)] = "claude-code",
    project: _Project = False,
    global_: _Global = False,
    portable: Annotated[
        bool, typer.Option("--portable", help="From the project's shared .claude/settings.json.")
    ] = False,
    dry_run: _DryRun = False,
    json_out: JsonFlag = False,
) -> None:
    """Remove memctl's hooks and MCP server (and only those) from settings."""
    from memctl.faces.hooks import uninstall
    from memctl.faces.hooks.mcpconfig import mcp_location, uninstall_mcp

    _agent(agent)
    res = uninstall(_settings(project, global_, portable), dry_run=dry_run)
    where = "user" if global_ else "shared" if portable else "project"
    res.mcp = uninstall_mcp(*mcp_location(where), dry_run=dry_run)
    _report(res, json_out)


@hooks_app.command("log")
def hooks_log(
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many lines.")] = 20,
    failures: Annotated[bool, typer.Option("--failures", help="Only failed hook runs.")] = False,
) -> None:
    """The hook log (.memctl/cache/hooks.log): what each hook run did or why it failed."""
    from memctl.faces.hooks.handlers import log_lines

    vault = open_vault()
    lines = log_lines(vault.root, failures=failures)[-limit:]
    if not lines:
        what = "no failed hook runs" if failures else "no hook runs"
        sys.stderr.write(f"memctl: {what} in {vault.root / '.memctl/cache/hooks.log'}\n")
    for line in lines:
        out(line)


# ---- memctl hook <event>: what Claude Code runs --------------------------------------------

hook_app = typer.Typer(
    name="hook",
    help="Claude Code hook handlers (read the hook's JSON on stdin; never block the prompt).",
    no_args_is_help=True,
)
app.add_typer(hook_app, name="hook")


def _run_hook(name: str, as_user: str | None, worker: bool = False) -> None:
    """The typer way in (e.g. `memctl hook stop --user=U --vault=V` in another order)."""
    from memctl.faces.cli.hookcall import run_hook

    run_hook(name, state.vault_path, as_user, worker)


def _as(what: str) -> typer.models.OptionInfo:
    return typer.Option("--user", "--as", help=f"{what} as this memctl user (default: vault user).")


@hook_app.command("session-start")
def hook_session_start(as_user: Annotated[str | None, _as("Give the context")] = None) -> None:
    """SessionStart: print the context block as Claude Code hook JSON."""
    _run_hook("session-start", as_user)


@hook_app.command("user-prompt-submit")
def hook_user_prompt_submit(as_user: Annotated[str | None, _as("Recall")] = None) -> None:
    """UserPromptSubmit: print the recall for the prompt as Claude Code hook JSON."""
    _run_hook("user-prompt-submit", as_user)


@hook_app.command("stop")
def hook_stop(
    as_user: Annotated[str | None, _as("Ingest and curate")] = None,
    worker: Annotated[
        bool, typer.Option("--worker", help="Do the work here instead of in the background.")
    ] = False,
) -> None:
    """Stop / SessionEnd: ingest the session's transcript and curate, in the background."""
    _run_hook("stop", as_user, worker=worker)


@hook_app.command("pre-compact")
def hook_pre_compact(
    as_user: Annotated[str | None, _as("Save the transcript")] = None,
) -> None:
    """PreCompact: save the transcript before the context is summarised; the next Stop asks
    the agent to record the session's decisions."""
    _run_hook("pre-compact", as_user)


# ---- memctl mcp -------------------------------------------------------------------------------


@app.command()
def mcp(
    as_user: Annotated[
        str | None,
        typer.Option("--user", "--as", help="Serve this memctl user's memory (scope)."),
    ] = None,
) -> None:
    """Serve the vault over MCP on stdio: search, recall, context, read, remember, list."""
    from memctl.faces import mcp as server

    vault = open_vault(one_shot=False)
    if is_tty():
        sys.stderr.write(f"memctl: serving {vault.root} over MCP on stdio (Ctrl-C to stop)\n")
    server.serve(vault, user=as_user)
