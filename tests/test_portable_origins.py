"""No machine path in anything a vault shares: a raw file's `source.origin` and
a Claude Code session's `cwd` are relative to the vault or to `~`, never absolute."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from util import DATA, memctl, new_vault, ok

from memctl.core.raw import portable_path


def _origins(vault: Path) -> list[str]:
    out = []
    for p in sorted((vault / "raw").rglob("*.md")):
        if p.name == "INDEX.md":
            continue
        for line in p.read_text(encoding="utf-8").splitlines():
            if line.startswith("  origin: "):
                out.append(line.split(": ", 1)[1])
    return out


def test_origins_are_never_absolute(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    vault = new_vault(tmp_path)
    # typed as an absolute path outside home and vault: the file's name alone
    outside = tmp_path / "exports" / "chat.jsonl"
    outside.parent.mkdir()
    shutil.copy(DATA / "formats" / "memctl.jsonl", outside)
    ok("--vault", vault, "ingest", outside, "--user", "dana")
    # a Claude Code session under ~/.claude/projects/<project>/, as the Stop hook names it
    proj = home / ".claude" / "projects" / "-work-acme"
    proj.mkdir(parents=True)
    cc = proj / "0f6b.jsonl"
    shutil.copy(DATA / "formats" / "claude_code.jsonl", cc)
    payload = json.dumps({"session_id": "x", "transcript_path": str(cc), "cwd": str(tmp_path)})
    r = memctl("--vault", vault, "hook", "stop", "--worker", "--user", "dana", input=payload)
    assert r.code == 0, r.err
    # typed relative to where ingest ran, inside the vault
    inside = vault / "imports" / "t.md"
    inside.parent.mkdir()
    shutil.copy(DATA / "formats" / "transcript.md", inside)
    ok("--vault", vault, "ingest", "t.md", "--user", "dana", cwd=inside.parent)

    origins = _origins(vault)
    assert len(origins) == 3, origins
    assert sorted(origins) == ["chat.jsonl", "imports/t.md",
                               "~/.claude/projects/-work-acme/0f6b.jsonl"]
    committed = "".join(
        p.read_text(encoding="utf-8") for p in (vault / "raw").rglob("*.md"))
    assert str(tmp_path) not in committed and str(home) not in committed


def test_portable_path_forms(tmp_path: Path) -> None:
    root, home = tmp_path / "v", tmp_path / "home"
    assert portable_path(str(root / "a" / "b.md"), root, home) == "a/b.md"
    assert portable_path(str(home / "x" / "c.jsonl"), root, home) == "~/x/c.jsonl"
    assert portable_path("/srv/data/d.json", root, home) == "d.json"
    # under someone else's home (a teammate's or a copied transcript): below it, no user name
    assert portable_path("/home/sam/src/ledger", root, home) == "~/src/ledger"
    assert portable_path("/Users/dain/work/app/", root, home) == "~/work/app"
    assert portable_path("/home/sam", root, home) == "sam"
    assert portable_path("<stdin>", root, home) == "<stdin>"


def test_a_sessions_working_directory_is_shared_portably(tmp_path: Path) -> None:
    """A Claude Code session's `source_meta.cwd` was this machine's absolute path in a
    committed raw file. It is `~/...` now, and project notes still find their project: the
    curator reads the full path back from the session's own tool calls, and recall makes
    the prompt's absolute cwd portable the same way before it matches."""
    from memctl.curate.builtin.coding.project import find_project_note

    home = Path(os.environ["HOME"])
    work = home / "src" / "shopfront"
    src = DATA / "claude_code" / "checkout-session.jsonl"
    text = src.read_text(encoding="utf-8").replace("/home/dana/src/shopfront", str(work))
    assert str(work) in text
    session = tmp_path / "checkout.jsonl"
    session.write_text(text, encoding="utf-8")
    vault = new_vault(tmp_path)
    ok("--vault", vault, "ingest", session, "--user", "dana", "--scope", "team")
    raw = next(p for p in (vault / "raw").rglob("*.md") if p.name != "INDEX.md")
    header = raw.read_text(encoding="utf-8").split("\n---\n", 1)[0]
    assert "  cwd: ~/src/shopfront" in header.splitlines(), header
    assert str(home) not in header
    ok("--vault", vault, "curate")
    note = (vault / "projects" / "shopfront.md").read_text(encoding="utf-8")
    assert "\ncwd: ~/src/shopfront\n" in note
    # the session's files are named as the project sees them, as before
    claims = "\n".join(ln for ln in note.splitlines() if ln.startswith("- "))
    assert str(home) not in claims
    assert find_project_note(vault, cwd=str(work / "src"), home=home) == "projects/shopfront.md"
    assert find_project_note(vault, cwd=str(home / "src" / "other"), home=home) is None
    r = ok("--vault", vault, "recall", "--json", "--user", "dana", "--in", str(work / "src"),
           "--", "write a haiku about autumn")
    assert "Tests run with `pnpm vitest run`." in [m["text"] for m in r.json()["memories"]]
