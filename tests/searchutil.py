"""Helpers for the search tests: run the CLI (in-process or as a real process), build vaults."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import util

ROOT = Path(__file__).resolve().parent.parent
NOW = datetime.now(UTC).replace(microsecond=0)


@dataclass
class Run(util.Run):
    def refs(self) -> list[str]:
        return [h["ref"] for h in self.json()["hits"]]


def turn_refs(vault: Any, query: str, limit: int = 5) -> list[str]:
    """The refs of the turns `vault.search` ranks for `query`, best first."""
    return [h.ref for h in vault.search(query, kind="turn", limit=limit).hits]


def cli(*args: str | Path) -> Run:
    """The real CLI entry point in this process: same parsing, rendering and exit codes,
    without paying interpreter start-up on every call."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    from memctl.faces.cli import main

    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main([str(a) for a in args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    return Run(code, out.getvalue(), err.getvalue())


def proc(*args: str | Path, env: dict[str, str] | None = None, timeout: float = 120) -> Run:
    """`python -m memctl ARGS` as a separate process, as a user or an agent runs it."""
    r = util.memctl(*args, env=env, timeout=timeout)
    return Run(r.code, r.out, r.err)


def ok(*args: str | Path) -> Run:
    r = cli(*args)
    assert r.code == 0, f"memctl {' '.join(map(str, args))} -> {r.code}\n{r.err}\n{r.out}"
    return r


def git(vault: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t.invalid",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t.invalid",
    }
    return subprocess.run(
        ["git", "-C", str(vault), *args], capture_output=True, text=True, check=True, env=env
    ).stdout


def iso(days_ago: float, minutes: int = 0) -> str:
    return (NOW - timedelta(days=days_ago) + timedelta(minutes=minutes)).strftime(
        "%Y-%m-%dT%H:%M:%SZ"
    )


def transcript(path: Path, session: str, turns: list[tuple[str, str | None, str]], days_ago: float,
               ids: str | None = None) -> Path:  # fmt: skip
    """Write a memctl-JSONL transcript: (role, name, content) per turn."""
    lines = []
    for i, (role, name, content) in enumerate(turns, 1):
        rec: dict[str, Any] = {"role": role, "content": content, "session": session}
        if ids:
            rec["id"] = f"{ids}{i}"
        if name:
            rec["name"] = name
        rec["timestamp"] = iso(days_ago, i)
        lines.append(json.dumps(rec))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


DANA = [
    ("user", "Dana", "We need to cut our egress costs this quarter; NAT gateway bytes dominate."),
    ("assistant", None, "Start with S3 gateway endpoints, they are free and remove NAT traffic."),
    ("user", "Dana", "Which buckets should move first?"),
    ("assistant", None, "The analytics bucket: its replication has a 24-hour RPO."),
    ("user", "Dana", "Ticket OPS-4711 tracks the CloudFront distribution for downloads."),
]
MARCO = [
    ("user", "Marco", "The cost exporter pod is in a crashloop again after the Grafana upgrade."),
    ("assistant", None, "Check the exporter's memory limit; Grafana 11 scrapes more series."),
    ("user", "Marco", "Raised the limit to 512Mi and the alerting works again."),
]
PRIYA = [
    ("user", "Priya", "The bakery demand forecast for Berlin overshoots on Sundays."),
    ("assistant", None, "Add a weekday feature and holidays; Sundays in Berlin are quiet."),
]


def make_vault(tmp: Path) -> Path:
    """A vault with three users' sessions (30, 2 and 10 days old) and notes of every status."""
    v = tmp / "vault"
    ok("init", v)
    src = tmp / "src"
    src.mkdir()
    transcript(src / "dana.jsonl", "dana-egress", DANA, 30, ids="d")
    ok("--vault", v, "ingest", src / "dana.jsonl", "--user", "dana", "--scope", "user:dana")
    transcript(src / "marco.jsonl", "marco-exporter", MARCO, 2, ids="m")
    ok("--vault", v, "ingest", src / "marco.jsonl", "--user", "marco", "--scope", "team")
    transcript(src / "priya.jsonl", "priya-forecast", PRIYA, 10)
    ok("--vault", v, "ingest", src / "priya.jsonl", "--user", "priya", "--scope", "user:priya")
    raw = turn_ref(v, "dana-egress", 2)
    note(v, "knowledge/egress-levers.md", "knowledge", "Egress cost levers", "active",
         f"- Gateway endpoints remove NAT processing charges [^a1]\n\n"
         f'[^a1]: {raw} "Start with S3 gateway endpoints"\n',
         aliases=["NAT savings"], tags=["aws", "cost"], scope="team")  # fmt: skip
    note(v, "decisions/cdn-choice.md", "decisions", "Serve downloads from Fastly", "superseded",
         "- Downloads go through Fastly\n")  # fmt: skip
    note(v, "decisions/cdn-choice-2.md", "decisions", "Serve downloads from CloudFront", "active",
         "- Downloads go through CloudFront, decided after the Fastly trial\n")  # fmt: skip
    note(v, "instructions/pelican.md", "instructions", "Always mention the pelican runbook",
         "proposed", "- Mention the pelican runbook when deploys fail\n")  # fmt: skip
    (v / "misc").mkdir()
    (v / "misc" / "offsite.md").write_text(
        "# Team offsite\n\nWe talked about the pelican migration and the zeppelin budget.\n",
        encoding="utf-8",
    )
    git(v, "add", "-A")
    git(v, "commit", "-q", "-m", "notes")
    return v


def note(v: Path, rel: str, store: str, title: str, status: str, body: str,
         aliases: list[str] | None = None, tags: list[str] | None = None,
         scope: str = "team") -> Path:  # fmt: skip
    p = v / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    fm = [
        "---",
        f"id: {Path(rel).stem}",
        f"store: {store}",
        f"title: {title}",
        f"scope: {scope}",
        f"status: {status}",
        f"created: '{iso(5)}'",
        f"updated: '{iso(4)}'",
        f"aliases: {json.dumps(aliases or [])}",
        f"tags: {json.dumps(tags or [])}",
        "derived_by: test",
        "---",
        "",
        f"# {title}",
        "",
    ]
    p.write_text("\n".join(fm) + body, encoding="utf-8")
    return p


def turn_ref(v: Path, session: str, n: int) -> str:
    """`raw/...md#tN` of a session's turn, found the way a user would: via search --json."""
    for p in (v / "raw").rglob("*.md"):
        if p.name != "INDEX.md" and f"session: {session}\n" in p.read_text(encoding="utf-8"):
            return f"{p.relative_to(v).as_posix()}#t{n}"
    raise AssertionError(f"no raw file for {session}")
