"""Every `memctl ...` line in a code block of README.md and docs/*.md runs, as written.

A new user copies the examples first; one that fails on the project's own sample vault
("no session", "no note", "no matches", "not verbatim") is the first thing they meet. So the
lines are read from the docs, not restated here: each runs in bash, as typed, against a copy
of the home this module builds once, the setting the docs assume:

- `~/memory`: `sample-vault/` made a vault, with the two sessions the demo adds ingested and
  curated (so `HEAD~3` and `HEAD~1..HEAD` exist), one instruction waiting for review, and a
  remote for `memctl sync`; `MEMCTL_VAULT=~/memory`, as the README's quickstart exports;
- `~/.claude/projects/myproj/`: a Claude Code session, for `ingest` and `watch`;
- `~/project/`: the working folder (a code base the hooks go into), holding `chat.jsonl`
  and `t.jsonl`, the transcripts the examples name.

Each line passes when it exits 0 with no error on stderr, finds what it looks for (no "no
matches") and, for a hook, logs no failure. A long-running command (`watch`) passes when it
starts, says it is watching and stops cleanly on Ctrl-C.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from gitutil import run_git
from util import DATA, ROOT, ctrl_c_stops, host_socket, ok

from memctl.faces.hooks.handlers import log_lines

WARMCLI = ROOT / "tests" / "warmcli.py"

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SAMPLE = DATA / "sample-transcripts"
# a line that runs memctl: it starts with it, or memctl reads a pipe (`echo '{}' | memctl ...`)
_RUNS_MEMCTL = re.compile(r"^(memctl\s|\S.*\|\s*memctl\s)")
# commands that run until stopped: each must start, say so, and stop on Ctrl-C
_UNTIL_STOPPED = re.compile(r"^memctl (--vault \S+ )?(watch|view|serve)\b(?!.*--(status|stop))")
# what an example must never print: an error, a crash, or an empty answer
_TROUBLE = re.compile(r"error|traceback|no matches|no such|not verbatim", re.IGNORECASE)


@dataclass(frozen=True)
class Example:
    where: str  # file:line, for the report
    line: str  # as the docs show it, continuation lines joined


def examples() -> list[Example]:
    """Every memctl command line in a fenced code block of the docs, in document order."""
    found: list[Example] = []
    for doc in DOCS:
        lines = doc.read_text(encoding="utf-8").splitlines()
        fenced = False
        i = 0
        while i < len(lines):
            text = lines[i].strip()
            if text.startswith("```"):
                fenced = not fenced
            elif fenced and _RUNS_MEMCTL.match(text):
                start = i
                while text.endswith("\\") and i + 1 < len(lines):
                    i += 1
                    text = text[:-1].rstrip() + " " + lines[i].strip()
                found.append(Example(f"{doc.relative_to(ROOT)}:{start + 1}", text))
            i += 1
    return found


EXAMPLES = examples()


def test_the_docs_hold_examples_of_every_command() -> None:
    """The reader above finds the examples: a change of fence or prompt style that hid them
    would otherwise leave the test below with nothing to run."""
    named = {re.sub(r"--vault \S+ ", "", e.line.split("|")[-1].strip()).split()[1]
             for e in EXAMPLES}
    help_text = ok("--help").out
    listed = help_text.split("Commands:", 1)[-1]
    commands = set(re.findall(r"^  ([a-z][a-z-]+) ", listed, re.MULTILINE))
    assert len(commands) > 20, help_text
    assert commands <= named, f"no example of: {sorted(commands - named)}"
    assert any(e.where.startswith("README.md") for e in EXAMPLES)


def _base(root: Path) -> Path:
    """The home every example starts from (see the module docstring)."""
    home = root / "home"
    vault = home / "memory"
    shutil.copytree(ROOT / "sample-vault", vault)
    env = {"HOME": str(home), "MEMCTL_HOME": str(home / ".memctl-home")}
    ok("init", vault, env=env)
    # what ./scripts/demo adds: the two sessions the sample vault has not seen, curated
    for path, user, scope in (
        ("priya/2026-10-29-berlin-forecast-review.jsonl", "priya", "user:priya"),
        ("dana/2026-11-03-cdn-and-phase2-egress-review.jsonl", "dana", "team"),
    ):
        ok("--vault", vault, "ingest", SAMPLE / path, "--user", user, "--scope", scope, env=env)
    ok("--vault", vault, "curate", env=env)
    # an instruction waits for `memctl review` (the instructions store takes proposals)
    ok("--vault", vault, "remember", "Keep infra changes in small PRs, one change per PR.",
       "--store", "instructions", "--source", "73210f#t11",
       "--quote", "I prefer small PRs for infra changes", "--user", "dana", env=env)  # fmt: skip
    # a shared remote, named relative to the vault so each copy of the home has its own
    run_git(home, "init", "-q", "--bare", "-b", "main", "remote.git")
    run_git(vault, "remote", "add", "origin", "../remote.git")
    ok("--vault", vault, "sync", env=env)
    # a code base's session, curated, so `--project ledger` has a project note to name
    ok("--vault", vault, "ingest", DATA / "claude_code_project" / "ledger-session.jsonl",
       "--user", "sam", "--scope", "team", env=env)  # fmt: skip
    ok("--vault", vault, "curate", env=env)
    projects = home / ".claude" / "projects" / "myproj"
    projects.mkdir(parents=True)
    shutil.copy(DATA / "claude_code_project" / "ledger-session.jsonl", projects)
    project = home / "project"
    project.mkdir()
    run_git(project, "init", "-q", "-b", "main")
    shutil.copy(DATA / "chat" / "introduction.jsonl", project / "chat.jsonl")
    shutil.copy(DATA / "claude_code_project" / "ledger-session.jsonl", project / "t.jsonl")
    return home


@dataclass(frozen=True)
class Outcome:
    code: int | None
    out: str
    err: str
    hook_failures: list[str]


def _run(base: Path, work: Path, ex: Example) -> Outcome:
    """One example in its own copy of the home, in bash, as a person would type it."""
    home = work / "home"
    shutil.copytree(base, home, symlinks=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCTL_")}
    # `memctl` on PATH is this checkout's, run by the Python that runs the tests
    shim = work / "bin"
    shim.mkdir()
    # (a child of the warm host, as util.memctl runs it, when there is one: tests/warmcli.py)
    host = host_socket()
    run = f'WARMCLI_HOST="{host}" exec "{sys.executable}" "{WARMCLI}"' if host else \
        f'exec "{sys.executable}" -m memctl'
    (shim / "memctl").write_text(f'#!/bin/sh\n{run} "$@"\n')
    (shim / "memctl").chmod(0o755)
    # MEMCTL_SERVE=0: no hook example leaves a resident `memctl serve` behind
    env.update(HOME=str(home), MEMCTL_HOME=str(home / ".memctl-home"),
               MEMCTL_VAULT=str(home / "memory"), COLUMNS="200", PYTHONIOENCODING="utf-8",
               PATH=f"{shim}{os.pathsep}{env.get('PATH', '')}",
               MEMCTL_SERVE="0")  # fmt: skip
    env["BROWSER"] = "true"  # `memctl view` opens a browser: here, one that shows nothing
    cwd = home / "project"
    if _UNTIL_STOPPED.match(ex.line):
        return _run_until_stopped(ex.line, cwd, env)
    proc = subprocess.run(["bash", "-c", ex.line], cwd=cwd, env=env, capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, timeout=120,
                          check=False)  # fmt: skip
    return Outcome(proc.returncode, proc.stdout, proc.stderr,
                   log_lines(home / "memory", failures=True))  # fmt: skip


def _run_until_stopped(line: str, cwd: Path, env: dict[str, str]) -> Outcome:
    proc = subprocess.Popen(["bash", "-c", f"exec {line}"], cwd=cwd, env=env, text=True,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, preexec_fn=ctrl_c_stops)  # fmt: skip
    assert proc.stdout is not None
    # "watching ... (Ctrl-C stops)", "memctl view: serving ...", or "" when it exited
    first = proc.stdout.readline()
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return Outcome(None, first + out, err + "\n(did not stop on Ctrl-C)", [])
    code = proc.returncode
    if not re.search(r"watching|serving", first):
        code = code or -1  # it never got going
    return Outcome(code, first + out, err, [])


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[Example, Outcome]:
    """All examples, run two at a time: each is a process or two that mostly waits on git."""
    base = _base(tmp_path_factory.mktemp("docs-base"))
    works = [tmp_path_factory.mktemp(f"docs-{k}") for k in range(len(EXAMPLES))]
    with ThreadPoolExecutor(2) as pool:
        done = pool.map(lambda job: _run(base, *job), zip(works, EXAMPLES, strict=True))
        return dict(zip(EXAMPLES, done, strict=True))


@pytest.mark.parametrize("ex", EXAMPLES, ids=[f"{e.where} {e.line[:60]}" for e in EXAMPLES])
def test_a_documented_command_runs_on_the_sample_vault(
    ex: Example, outcomes: dict[Example, Outcome]
) -> None:
    got = outcomes[ex]
    said = f"{ex.where}: $ {ex.line}\nexit {got.code}\nstderr: {got.err}\nstdout: {got.out[:800]}"
    assert got.code == 0, said
    assert not _TROUBLE.search(got.err), said
    assert not got.hook_failures, f"{said}\nhook log: {got.hook_failures}"
