"""`memctl curate`, `review`, `diff`, `verify`: learning from turns, and checking it."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated, Any

import typer

from memctl.faces.cli.common import open_vault
from memctl.faces.cli.options import JsonFlag
from memctl.faces.cli.render import emit_json, is_tty, n, out
from memctl.faces.cli.root import app
from memctl.requests import CurateRequest

if TYPE_CHECKING:
    from memctl.gitops.learned import DiffResult


def _err(text: str) -> None:
    sys.stderr.write(text + "\n")


@app.command()
def curate(
    store: Annotated[
        list[str] | None,
        typer.Option("--store", metavar="STORE", help="Only this store (repeatable)."),
    ] = None,
    session: Annotated[str | None, typer.Option(help="Only this session (id or raw path).")] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the diff; write nothing.")
    ] = False,
    model: Annotated[
        str | None, typer.Option(help="litellm model string; implies the llm curator.")
    ] = None,
    curator: Annotated[
        str | None, typer.Option(help="builtin (default), llm, or an installed plugin.")
    ] = None,
    verbose: Annotated[
        bool, typer.Option("--verbose", help="List each candidate claim left out, and why.")
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """Turn uncurated turns into cited notes: verify every quote, merge, one commit."""
    vault = open_vault()
    res = vault.handle(CurateRequest(
        store=store or None, session=session, dry_run=dry_run, model=model, curator=curator
    ))
    if json_out:
        emit_json("curate", res.to_json())
        return
    if dry_run and res.diff:
        out(res.diff.rstrip("\n"))
        out()
    who = res.curator + (f" ({res.model})" if res.model else "")
    if not res.turns_read:
        out(f"nothing to curate: every turn is already curated ({who})")
        return
    out(f"curate: {n(res.sessions, 'session')}, {n(res.turns_read, 'turn')} read by {who}")
    # counted as `memctl diff` counts claims, as the commit subject says them too
    counted = ", ".join(f"{k} {a}" for a, k in res.counts.items()) or "no claim changes"
    out(f"  {counted}" + (" (dry run)" if dry_run else ""))
    if res.proposed and "proposed" not in res.counts:
        out(f"  {res.proposed} proposed")
    if res.calls:
        cost = "unknown" if res.cost is None else f"${res.cost:.4f}"
        calls = n(res.calls, "model call")
        out(f"  {calls} · {res.tokens_in}+{res.tokens_out} tokens · cost {cost}")
        if len(res.per_session) > 1:
            from memctl.vault import Vault

            for row in res.per_session:
                each = "unknown" if row["cost"] is None else f"${row['cost']:.4f}"
                out(
                    f"    {Vault.session_label(row['session'])}: "
                    f"{n(row['calls'], 'model call')} · "
                    f"{row['tokens_in']}+{row['tokens_out']} tokens · cost {each}"
                )
    if verbose:
        for r in res.rejected:
            where = f" [{r.ref}]" if r.ref else ""
            out(f"  rejected {r.store}: {r.text[:70]!r}{where}: {r.reason}")
    elif res.rejected:
        # checks refusing a candidate is curation working, not a fault: a count, not a list
        out(f"  {n(len(res.rejected), 'candidate claim')} left out by the checks on quotes, "
            "stores and secrets; --verbose lists each and why")  # fmt: skip
    out(f"  {n(len(res.notes), 'note')} changed in {res.seconds:.2f}s")
    if dry_run:
        out("dry run: nothing was written")
    elif res.commit:
        out(f"commit {res.commit[:10]}")
    if res.proposed and not dry_run:
        out("proposals wait for `memctl review`")


@app.command()
def review(
    accept: Annotated[
        list[str] | None,
        typer.Option("--accept", metavar="ID", help="Accept proposal ID (repeatable)."),
    ] = None,
    reject: Annotated[
        list[str] | None,
        typer.Option("--reject", metavar="ID", help="Reject proposal ID (repeatable)."),
    ] = None,
    accept_all: Annotated[
        bool, typer.Option("--all", help="Accept every proposal not named by --reject.")
    ] = False,
    reject_all: Annotated[
        bool, typer.Option("--reject-all", help="Reject every proposal not named by --accept.")
    ] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Accept even if the note changed since.")
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """Show proposals with their diff; accept or reject them (interactively on a terminal)."""
    vault = open_vault()
    acts = bool(accept or reject or accept_all or reject_all)
    if not acts and not json_out and is_tty() and sys.stdin.isatty():
        listed = vault.review()
        accept, reject = _interactive(listed.pending)
        acts = bool(accept or reject)
        if not acts:
            out("nothing accepted or rejected")
            return
    res = vault.review(
        accept=accept or [],
        reject=reject or [],
        accept_all=accept_all,
        reject_all=reject_all,
        force=force,
    )
    if json_out:
        emit_json("review", res.to_json())
        return
    if not acts:
        if not res.pending:
            out("no proposals pending")
        for p in res.pending:
            _show_proposal(p)
        if res.pending:
            ids = " ".join(f"--accept {p.id}" for p in res.pending[:3])
            more = " (or --all)" if len(res.pending) > 1 else ""
            out(f"to accept: memctl review {ids}{more}; to reject: --reject ID")
        return
    for a in res.accepted:
        out(f"accepted {a}")
    for r in res.rejected:
        out(f"rejected {r}")
    if res.commit:
        out(f"commit {res.commit[:10]}")
    if res.pending:
        out(f"{n(len(res.pending), 'proposal')} still pending")


def _show_proposal(p: Any) -> None:
    kind = "new note" if p.new_note else "change"
    stale = " · STALE: the note changed since" if p.stale else ""
    out(f"proposal {p.id} · {p.store} · {kind} · {n(p.claims, 'claim')}{stale}")
    out(p.diff.rstrip("\n"))
    out()


_CHOICES = ("a", "r", "s", "q", "accept", "reject", "skip", "quit")


def _choose() -> str:
    """One of a/r/s/q; anything else is asked again (a typo must not quietly skip)."""
    while True:
        choice = typer.prompt("[a]ccept, [r]eject, [s]kip, [q]uit", default="s").strip().lower()
        if choice in _CHOICES:
            return choice
        out(f"unknown choice {choice!r}: type a, r, s or q")


def _interactive(props: list[Any]) -> tuple[list[str], list[str]]:
    accept: list[str] = []
    reject: list[str] = []
    for p in props:
        _show_proposal(p)
        choice = _choose()
        if choice.startswith("a"):
            accept.append(p.id)
        elif choice.startswith("r"):
            reject.append(p.id)
        elif choice.startswith("q"):
            break
    return accept, reject


@app.command("diff")
def diff_cmd(
    rev_range: Annotated[
        str | None, typer.Argument(metavar="REV..REV", help="A git revision range.")
    ] = None,
    since: Annotated[
        str | None, typer.Option(help="How far back: 10m, 12h, 7d, 2w, or a date (default 7d).")
    ] = None,
    store: Annotated[
        list[str] | None,
        typer.Option("--store", metavar="STORE", help="Only this store (repeatable)."),
    ] = None,
    project: Annotated[
        str | None,
        typer.Option("--project", metavar="PROJECT",
                     help="Only this project's notes and claims: a directory, or a project "
                     "note's name."),
    ] = None,
    session: Annotated[
        str | None,
        typer.Option("--session", metavar="ID",
                     help="What this session taught: the claims that cite its turns."),
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    """What the agent learned: claim-level changes by store and note, with sources and authors."""
    if rev_range and since:
        raise typer.BadParameter("give either REV..REV or --since, not both")
    if session and not rev_range and not since:
        since = "100y"  # a session's lessons, whenever they were learned
    res = open_vault().diff(
        since=since, rev_range=rev_range, store=store or None, project=project, session=session
    )
    if json_out:
        emit_json("diff", res.to_json())
        return
    _render_diff(res)


_MARK = {
    "added": "+",
    "proposed": "?",
    "reinforced": "=",
    "edited": "~",
    "superseded": "→",
    "retracted": "x",
    "resolved": "✓",
    "removed": "-",
    "rejected": "✗",
}


def _render_diff(res: DiffResult) -> None:
    counts = res.counts()
    summary = ", ".join(f"{n} {a}" for a, n in counts.items()) or "no claim changes"
    out(f"What was learned ({res.range}, {n(res.commits, 'commit')}): {summary}")
    for store, notes in res.by_store().items():
        out()
        out(f"{store}/")
        for nc in notes:
            out(f"  {nc.path} · {nc.title}")
            for c in nc.changes:
                who = c.author + ("" if not c.human else " (human)")
                sha = c.commit[:7] if c.commit != "uncommitted" else "uncommitted"
                detail = f" ({c.detail})" if c.detail else ""
                out(f"    {_MARK.get(c.action, '*')} {c.action:<10} {c.plain}{detail}")
                if c.before is not None:
                    out(f"      was: {c.before}")
                for s in c.sources[:3]:
                    out(f"      “{s.quote}” {s.ref}")
                if not c.sources:
                    out(f"      (no source: {c.origin})")
                out(f"      by {who} · {c.date} · {sha}")


@app.command()
def verify(
    paths: Annotated[
        list[str] | None, typer.Argument(help="Notes to check (default: every note).")
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    """Check every citation: the quote must be verbatim in the raw turn it names."""
    res = open_vault().verify(paths=paths or None)
    if json_out:
        emit_json("verify", res.to_json())
    else:
        for p in res.problems:
            where = p.path if p.line is None else f"{p.path}:{p.line}"
            _err(f"{where}: {p.message}")
        status = "ok" if res.ok else n(len(res.problems), "problem")
        out(
            f"verify: {status} · {n(res.notes, 'note')}, {n(res.claims, 'cited claim')} "
            f"({res.observed} observed), "
            f"{n(res.citations, 'citation')}, {n(res.agent_lines, 'agent line')}, "
            f"{n(res.human_lines, 'human line')}, "
            f"{n(res.raw_sessions, 'raw session')}"
        )
    if not res.ok:
        raise typer.Exit(1)
