"""Every `--json` answer is one envelope (memctl_result_version, command, payload) whose shape
is the schema docs/json.md shows: each command is run for real and checked with jsonschema."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import typer.main
from util import DATA, ROOT, ok

from memctl.core.raw import short_digest
from memctl.faces.cli import app, commands  # noqa: F401 - registers the commands
from memctl.faces.cli.contract import COMMANDS, schema

SRC = DATA / "sample-transcripts"


def _check(command: str, doc: Any) -> None:
    assert list(doc)[:2] == ["memctl_result_version", "command"], list(doc)[:3]
    jsonschema.Draft202012Validator(schema(command)).validate(doc)


def _json_commands() -> set[str]:
    """Every command that takes --json, found by walking the CLI itself."""
    found: set[str] = set()

    def walk(cmd: Any, path: list[str]) -> None:
        for name, sub in getattr(cmd, "commands", {}).items():
            walk(sub, [*path, name])
        if any("--json" in getattr(p, "opts", []) for p in cmd.params):
            found.add(" ".join(path))

    walk(typer.main.get_command(app), [])
    return found


def test_every_json_command_has_a_documented_schema() -> None:
    assert _json_commands() == set(COMMANDS)


def test_docs_json_md_is_current() -> None:
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_json_docs.py"), "--check"],
                       capture_output=True, text=True, check=False, cwd=ROOT)
    assert r.returncode == 0, r.stderr


def test_every_command_answers_in_the_envelope(tmp_path: Path) -> None:
    v = tmp_path / "acme"
    shutil.copytree(ROOT / "sample-vault", v)
    seen: set[str] = set()

    def run(command: str, *args: str | Path, cwd: Path | None = None) -> Any:
        doc = ok(*command.split(), *args, "--json", cwd=cwd).json()
        _check(command, doc)
        seen.add(command)
        return doc

    run("init", v)
    cli = ("--vault", v)
    made = run("ingest", SRC / "priya/2026-10-29-berlin-forecast-review.jsonl", "--user",
               "priya", "--scope", "user:priya", "--vault", v)
    # the session's short digest, as recall cites it (its id is qualified by the file's path)
    short = short_digest(made["sessions"][0]["path"])
    assert short
    run("ingest", SRC / "priya/2026-10-29-berlin-forecast-review.jsonl", *cli)  # nothing new
    kept = run("remember", "Priya prefers DuckDB for quick SQL over parquet files.", "--quote",
               "I prefer DuckDB for quick SQL over parquet files.", "--source", short,
               "--store", "profile", "--as", "priya", *cli)
    assert kept["basis"] == "stated" and kept["citations"][0]["ref"].endswith("#t3")
    assert run("curate", "--dry-run", *cli)["commit"] is None
    assert run("curate", *cli)["commit"]
    assert run("log", "-n", "3", *cli)["commits"]
    for ref, kind in (("profile/priya", "note"), ("INDEX.md", "index"),
                      (short, "session"), (f"{short}#t1", "turn")):
        assert run("show", ref, *cli)["kind"] == kind
    run("status", *cli)
    assert run("search", "egress", *cli)["hits"]
    assert run("search", "zzzqqqxxy", *cli)["hits"] == []
    run("reindex", *cli)
    run("review", *cli)
    assert run("diff", "--since", "1d", *cli)["counts"]
    run("verify", *cli)
    assert run("doctor", *cli)["checks"]
    assert run("blame", "profile/priya", *cli)["lines"]
    run("drift", "profile/priya", *cli)
    run("gc", *cli)
    assert run("forget", f"{short}#t1", "--dry-run", *cli)["claims_removed"]
    assert run("undo", "--dry-run", *cli)["subject"].startswith("curate:")
    run("rollback", "profile/priya", "--to", "HEAD", "--dry-run", *cli)
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    subprocess.run(["git", "-C", str(v), "remote", "add", "origin", str(remote)], check=True)
    assert run("sync", *cli)["pushed"]
    assert run("recall", "where does Priya live", "--user", "priya", *cli)["memories"]
    run("context", "--user", "priya", *cli)
    project = tmp_path / "project"
    project.mkdir()
    run("hooks install", *cli, cwd=project)
    run("hooks uninstall", *cli, cwd=project)
    for doc in _watch(v):
        _check("watch", doc)
    seen.add("watch")
    assert seen == set(COMMANDS)


def _watch(v: Path) -> list[Any]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memctl", "watch", "--vault", str(v), "--debounce", "0.2",
         "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        lines = [json.loads(proc.stdout.readline())]  # type: ignore[union-attr]
        (v / "knowledge" / "hand.md").write_text("# Hand\n\n- a hand-written line\n")
        lines.append(json.loads(proc.stdout.readline()))  # type: ignore[union-attr]
    finally:
        proc.terminate()
        rest, _ = proc.communicate(timeout=10)
    lines += [json.loads(line) for line in rest.splitlines()]
    assert [d["event"] for d in lines] == ["ready", "change", "stopped"]
    return lines


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_schema_is_a_valid_json_schema(command: str) -> None:
    jsonschema.Draft202012Validator.check_schema(schema(command))
