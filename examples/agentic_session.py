"""Agentic mode end to end: a scripted Claude Code session records two decisions itself.

    python examples/agentic_session.py [--dir DIR]

What a real session does, with a script in the agent's place and nothing else faked:

1. `memctl init` a vault and `memctl hooks install` into a project, as a user would;
2. session 1 is a Claude Code transcript (JSONL, as Claude Code writes it) in which the
   person decides two things; its Stop hook runs the command from settings.local.json with
   the JSON Claude Code sends, and memctl holds the stop back once with a request to record
   the session's decisions;
3. the "agent" reads that request and calls `remember` twice through the MCP server
   (`memctl mcp` over stdio, the official SDK's client), quoting the person's words;
4. the next Stops (continuing, again, after a PreCompact) stay silent;
5. session 2 starts: its SessionStart hook, and `memctl context`, show both decisions.

Every command and its output is printed, so the run reads as a transcript.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

SESSION_1 = "5e7c1d2a-9b3f-4c8e-a1d6-0f2b8e4c7a91"
SESSION_2 = "8a0f4e6b-2c1d-4f7a-b9e3-6d5c2a1f0e84"
USER = "dana"

DECISIONS = [
    {
        "claim": "The team runs the checkout tests against a fresh Postgres container instead "
        "of SQLite, because SQLite hides the locking bugs seen in production.",
        "quote": "Let's run the checkout tests against a fresh Postgres container instead of "
        "SQLite, because SQLite hides the locking bugs we hit in production.",
        "note": "Decision: Postgres container for the checkout tests",
    },
    {
        "claim": "The team chose testcontainers over a docker compose file for the test "
        "database, so there is no compose file to maintain just for tests.",
        "quote": "testcontainers. We don't want a compose file to maintain just for tests.",
        "note": "Decision: testcontainers for the test database",
    },
]


def say(text: str = "") -> None:
    print(text, flush=True)


def _fresh_env() -> dict[str, str]:
    """This environment as a new user's: no MEMCTL_ setting but MEMCTL_SERVE, which says
    whether the hooks may leave a resident `memctl serve` behind (the test suite says no)."""
    return {k: v for k, v in os.environ.items()
            if not k.startswith("MEMCTL_") or k == "MEMCTL_SERVE"}  # fmt: skip


def run(cmd: list[str] | str, *, stdin: str | None = None, cwd: Path | None = None,
        env: dict[str, str] | None = None, show: str | None = None) -> str:
    """Run a command as a shell would, print it and what it printed."""
    shown = show or (cmd if isinstance(cmd, str) else " ".join(shlex.quote(c) for c in cmd))
    say(f"$ {shown}")
    if stdin is not None:
        say(f"  (stdin) {stdin}")
    proc = subprocess.run(cmd, shell=isinstance(cmd, str), input=stdin, capture_output=True,
                          text=True, cwd=cwd, env=env, check=False)
    for line in (proc.stdout + proc.stderr).rstrip("\n").splitlines():
        say(f"  {line}")
    if proc.returncode != 0:
        raise SystemExit(f"command failed ({proc.returncode}): {shown}")
    return proc.stdout


# ---- a Claude Code transcript, line by line as Claude Code writes it ---------------------


class Transcript:
    def __init__(self, path: Path, session: str, cwd: Path) -> None:
        self.path, self.session, self.cwd = path, session, cwd
        self.n = 0
        self.parent: str | None = None
        self.clock = 1_780_000_000  # 2026-05-28, a fixed day: the run reads the same each time

    def _line(self, kind: str, message: dict[str, Any], **extra: Any) -> str:
        self.n += 1
        uuid = f"{self.session[:8]}-0000-4000-8000-{self.n:012d}"
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(self.clock + 20 * self.n))
        obj = {
            "parentUuid": self.parent, "isSidechain": False, "userType": "external",
            "cwd": str(self.cwd), "sessionId": self.session, "version": "2.0.14",
            "gitBranch": "main", "type": kind, "message": message, "uuid": uuid,
            "timestamp": stamp, **extra,
        }
        self.parent = uuid
        with self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(obj) + "\n")
        return uuid

    def user(self, text: str) -> None:
        self._line("user", {"role": "user", "content": text})

    def assistant(self, text: str, tool: dict[str, Any] | None = None) -> None:
        content: list[dict[str, Any]] = [{"type": "text", "text": text}]
        if tool:
            content.append({"type": "tool_use", "id": f"toolu_{self.n:04d}", **tool})
        self._line("assistant", {"role": "assistant", "model": "claude-sonnet-4-5",
                                 "content": content})

    def tool_result(self, text: str) -> None:
        self._line("user", {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": f"toolu_{self.n - 1:04d}", "content": text}]})


def session_one(t: Transcript) -> None:
    t.user("The checkout tests are flaky on CI. Can you find out why?")
    t.assistant("Let me run them a few times.", {"name": "Bash", "input": {
        "command": "pytest tests/test_checkout.py -x -q --count 5"}})
    t.tool_result("FAILED tests/test_checkout.py::test_concurrent_orders - "
                  "sqlite3.OperationalError: database is locked\n1 failed, 9 passed")
    t.assistant("The failures come from two workers sharing one SQLite file: `database is "
                "locked`. Options: serialise the tests, or run them against Postgres.")
    t.user(DECISIONS[0]["quote"])
    t.assistant("Should the container come from testcontainers, or from a docker compose "
                "service?")
    t.user(DECISIONS[1]["quote"])
    t.assistant("Done: conftest.py starts one Postgres container per test run with "
                "testcontainers, and the checkout tests pass 20 times in a row.",
                {"name": "Edit", "input": {"file_path": "tests/conftest.py"}})
    t.tool_result("The file tests/conftest.py has been updated.")


def hook_payload(t: Transcript, event: str, **extra: Any) -> str:
    return json.dumps({"session_id": t.session, "transcript_path": str(t.path),
                       "cwd": str(t.cwd), "permission_mode": "default",
                       "hook_event_name": event, **extra})


def mcp_remember(vault: Path, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The agent's tool calls, over a real MCP stdio connection to `memctl mcp`."""
    import anyio
    from mcp import Client, StdioServerParameters

    env = _fresh_env()
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "memctl", "--vault", str(vault), "mcp"], env=env
    )

    async def main() -> list[dict[str, Any]]:
        out = []
        async with Client(params, read_timeout_seconds=120) as client:
            for args in calls:
                res = await client.call_tool("remember", args)
                text = "".join(getattr(c, "text", "") for c in res.content)
                out.append({"error": text} if res.is_error else res.structured_content)
        return out

    return anyio.run(main)


def wait_for_workers(vault: Path, spawned: int, timeout: float = 180) -> None:
    """The Stop hook hands its work to a detached worker; wait until each has logged."""
    log = vault / ".memctl" / "cache" / "hooks.log"
    deadline = time.monotonic() + timeout
    while True:
        text = log.read_text(encoding="utf-8") if log.exists() else ""
        done = sum(1 for ln in text.splitlines()
                   if ": ingested " in ln or ": no new turns" in ln or " failed: " in ln)
        if done >= spawned:
            return
        if time.monotonic() > deadline:
            raise SystemExit(f"the Stop workers did not finish: {text}")
        time.sleep(0.3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, help="work here (default: a temporary folder)")
    args = ap.parse_args()
    base = (args.dir or Path(tempfile.mkdtemp(prefix="memctl-agentic-"))).resolve()
    vault, project, transcripts = base / "memory", base / "shop-api", base / "claude-projects"
    project.mkdir(parents=True)
    transcripts.mkdir()
    memctl = [sys.executable, "-m", "memctl"]
    env = _fresh_env()

    say("# 1. a vault, and memctl's hooks in the project")
    run([*memctl, "init", str(vault)], env=env, show=f"memctl init {vault}")
    cfg = vault / ".memctl" / "config.toml"
    cfg.write_text(cfg.read_text().replace("[vault]\n", f'[vault]\nuser = "{USER}"\n', 1))
    subprocess.run(["git", "-C", str(vault), "-c", "user.name=Dana", "-c", "user.email=d@x",
                    "commit", "-qm", "config: the vault's user", "--", ".memctl/config.toml"],
                   check=True)
    say(f'(set user = "{USER}" under [vault] in {cfg.relative_to(base)}, committed)')
    run([*memctl, "--vault", str(vault), "hooks", "install"], cwd=project, env=env,
        show=f"cd {project} && memctl --vault {vault} hooks install")
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    hooks = {e: g[0]["hooks"][0]["command"] for e, g in settings["hooks"].items()}

    say("\n# 2. session 1: the person decides two things; the agent is about to stop")
    t1 = Transcript(transcripts / f"{SESSION_1}.jsonl", SESSION_1, project)
    session_one(t1)
    for n, line in enumerate(t1.path.read_text().splitlines(), 1):
        obj = json.loads(line)
        msg = obj["message"]["content"]
        text = msg if isinstance(msg, str) else " ".join(
            p.get("text") or p.get("name") or str(p.get("content"))[:60] for p in msg)
        say(f"  transcript line {n} ({obj['type']}): {text[:110]}")
    stop = run(hooks["Stop"], stdin=hook_payload(t1, "Stop", stop_hook_active=False),
               cwd=project, env=env, show="(Claude Code runs the Stop hook) " + hooks["Stop"])
    held = json.loads(stop)
    assert held["decision"] == "block", held

    say("\n# 3. the agent does what it was asked: two remember calls over MCP")
    calls = [{"claim": d["claim"], "quote": d["quote"], "source": SESSION_1,
              "store": "decisions", "note": d["note"]} for d in DECISIONS]
    for args_, res in zip(calls, mcp_remember(vault, calls), strict=True):
        say(f"> tools/call remember {json.dumps(args_, ensure_ascii=False)}")
        say(f"< {json.dumps(res, ensure_ascii=False)}")
    for d in DECISIONS:
        t1.assistant("Recording the decision.", {"name": "mcp__memctl__remember",
                                                  "input": {"claim": d["claim"]}})
        t1.tool_result("added")
    t1.assistant("Both decisions are recorded in memctl.")

    say("\n# 4. the stops that follow ask nothing: asked once per session")
    for n, (label, payload) in enumerate((
        ("continuing after the hook", hook_payload(t1, "Stop", stop_hook_active=True)),
        ("a later stop", hook_payload(t1, "Stop", stop_hook_active=False)),
        ("compaction", hook_payload(t1, "PreCompact", trigger="auto", custom_instructions="")),
        ("the stop after compaction", hook_payload(t1, "Stop", stop_hook_active=False)),
    ), 1):
        # each hook hands the save to a worker; waiting for the last one makes what the
        # next hook reports about it (a save that failed, a curation that kept nothing)
        # land at the same hook on every run
        wait_for_workers(vault, spawned=n)
        event = "PreCompact" if label == "compaction" else "Stop"
        said = run(hooks[event], stdin=payload, cwd=project, env=env,
                   show=f"({label}) {hooks[event]}")
        if not said.strip():
            say("  (no output)")
            continue
        told = json.loads(said)
        assert set(told) == {"systemMessage"}, told  # an alert for the person, no question
        say("  (an alert for the person, no question)")
    wait_for_workers(vault, spawned=5)
    run([*memctl, "--vault", str(vault), "log", "-n", "6"], env=env, show="memctl log -n 6")

    say("\n# 5. session 2 starts: what SessionStart gives the agent")
    t2 = Transcript(transcripts / f"{SESSION_2}.jsonl", SESSION_2, project)
    start = run(hooks["SessionStart"], stdin=hook_payload(t2, "SessionStart", source="startup"),
                cwd=project, env=env, show="(Claude Code runs SessionStart) "
                + hooks["SessionStart"])
    ctx = json.loads(start)["hookSpecificOutput"]["additionalContext"]
    say("  additionalContext, as the agent reads it:")
    for line in ctx.splitlines():
        say(f"  | {line}")
    run([*memctl, "--vault", str(vault), "context"], env=env, show="memctl context")
    for d in DECISIONS:
        assert d["claim"] in ctx, d["claim"]
    say("\nok: both decisions recorded in session 1 are in session 2's start-of-session block")


if __name__ == "__main__":
    main()
