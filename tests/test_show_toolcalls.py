"""A turn that only called a tool reads as its call: `memctl show`, MCP `read`.

Citations of what an agent did point at such turns; their call is kept in the raw file's
turn comment, which Obsidian hides, so reading the turn gave back an empty body.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from ccsession import Session
from util import new_vault, ok

from memctl.faces.mcp import Tools
from memctl.vault import Vault


@pytest.fixture(scope="module")
def coded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("toolcalls")
    s = Session()
    s.user("Please run the tests and fix the failing one.")
    s.bash("uv run pytest -q", "1 failed, 3 passed")
    s.edit("app.py", "x = 1", "x = 2", text="The constant was wrong.")
    s.say("Fixed: the constant in app.py was wrong; tests pass now.")
    v = new_vault(root / "vault")
    ok("--vault", v, "ingest", s.write_to(root / "s.jsonl"), "--user", "dana")
    [raw] = (v / "raw").rglob("please-run-*.md")
    return v, raw.relative_to(v).as_posix()


def test_show_prints_the_call_of_a_turn_that_only_ran_a_command(coded: tuple[Path, str]) -> None:
    v, raw = coded
    out = ok("--vault", v, "show", f"{raw}#t2").out
    assert out.rstrip().endswith("[Bash] uv run pytest -q"), out
    shown = ok("--vault", v, "show", f"{raw}#t2", "--json").json()
    assert shown["text"] == "[Bash] uv run pytest -q"
    # the call is still the turn's metadata, as it came in
    assert shown["meta"]["meta"]["tool_calls"][0]["input"] == {"command": "uv run pytest -q"}


def test_a_turn_with_text_and_a_call_shows_both(coded: tuple[Path, str]) -> None:
    v, raw = coded
    text = ok("--vault", v, "show", f"{raw}#t4", "--json").json()["text"]
    assert text == "The constant was wrong.\n\n[Edit] /home/dana/src/shop/app.py · x = 1 · x = 2"


def test_a_turn_without_calls_is_its_text_alone(coded: tuple[Path, str]) -> None:
    v, raw = coded
    text = ok("--vault", v, "show", f"{raw}#t6", "--json").json()["text"]
    assert text == "Fixed: the constant in app.py was wrong; tests pass now."


def test_mcp_read_gives_the_call_not_an_empty_string(coded: tuple[Path, str]) -> None:
    v, raw = coded
    got = Tools(Vault.open(v), "dana").read(f"{raw}#t2")
    assert got["kind"] == "turn" and got["text"] == "[Bash] uv run pytest -q"


def test_export_still_gives_the_message_back_as_it_came(coded: tuple[Path, str]) -> None:
    """Showing the call is a view: the exported message keeps its empty content."""
    v, raw = coded
    [line] = ok("--vault", v, "export", f"{raw}#t2", "--format", "jsonl").out.splitlines()
    assert json.loads(line)["content"] == ""
