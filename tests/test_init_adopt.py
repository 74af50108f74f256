"""What `memctl init` adopts, leaves alone, git-ignores and refuses (issue 24): a vault
without its .git is adopted whole, tool folders are not walked, secrets are ignored, and a
folder that is mostly not notes is refused by its share of other files."""

from __future__ import annotations

import shutil
from pathlib import Path

from util import ROOT, git, memctl, ok


def test_a_vault_without_history_is_adopted_whole_in_one_commit(tmp_path: Path) -> None:
    v = tmp_path / "acme-vault"
    shutil.copytree(ROOT / "sample-vault", v)
    r = ok("init", v)
    assert git(v, "status", "--porcelain", "--untracked-files=all") == ""
    assert len(git(v, "log", "--format=%H").split()) == 1
    assert "Memctl-Command: init" in git(v, "log", "-1", "--format=%B")
    tracked = set(git(v, "ls-files").split())
    for rel in (".memctl/config.toml", ".memctl/state/curation.json", ".gitignore",
                ".gitattributes", "INDEX.md", "profile/priya.md"):
        assert rel in tracked, rel
    assert len([t for t in tracked if t.startswith("raw/2")]) == 8
    n = len(tracked)
    assert f"adopted {n} existing files" in r.out
    assert f"adopted {n} files" in git(v, "log", "-1", "--format=%s")
    # a clone holds every cited session: verify and doctor agree with the original
    git(tmp_path, "clone", "-q", str(v), str(tmp_path / "clone"))
    ok("init", tmp_path / "clone")
    ok("--vault", tmp_path / "clone", "verify")
    ok("--vault", tmp_path / "clone", "doctor")
    # and a later curate does not commit the notes again as a person's hand edits
    ok("--vault", v, "ingest", ROOT / "tests" / "data" / "sample-transcripts" / "priya" /
       "2026-10-29-berlin-forecast-review.jsonl", "--user", "priya", "--scope", "user:priya")
    ok("--vault", v, "curate")
    assert "edited by hand" not in git(v, "log", "--format=%s")


def test_tool_folders_are_not_walked_and_secrets_are_ignored(tmp_path: Path) -> None:
    f = tmp_path / "notes"
    (f / "node_modules" / "leftpad").mkdir(parents=True)
    (f / "node_modules" / "leftpad" / "README.md").write_text("# leftpad\n\nPads strings.\n")
    (f / ".venv" / "lib").mkdir(parents=True)
    (f / ".venv" / "lib" / "README.md").write_text("# a package\n")
    (f / ".obsidian").mkdir()
    (f / ".obsidian" / "app.json").write_text("{}\n")
    (f / ".env").write_text("STRIPE_KEY=sk_live_4eC39HqLyjWDarjtT1zdp7dc\n")
    (f / ".env.example").write_text("STRIPE_KEY=\n")
    (f / "ideas.md").write_text("# Ideas\n\nLeftpad the strings.\n")
    r = ok("init", f)
    lines = r.out.splitlines()
    # each choice, one line, with its reason
    assert "left alone node_modules/ (installed JavaScript dependencies; not walked)" in lines
    assert "left alone .venv/ (a Python virtual environment; not walked)" in lines
    assert any(ln.startswith("left alone .obsidian/ (Obsidian") for ln in lines), lines
    assert "git-ignored .env (it may hold secrets; never committed)" in lines
    tracked = git(f, "ls-files").split()
    assert "ideas.md" in tracked
    assert not [t for t in tracked if t.startswith(("node_modules", ".venv", ".obsidian"))]
    assert ".env" not in tracked
    # .env never shows as uncommitted again; .env.example is no secret and stays listed
    status = ok("--vault", f, "status").out
    assert ".env\n" not in status and ".env.example" in status
    assert git(f, "check-ignore", ".env").strip() == ".env"
    hits = ok("--vault", f, "search", "leftpad", "--json").json()["hits"]
    assert [h["ref"] for h in hits] == ["ideas.md"]


def test_a_folder_that_is_mostly_code_is_refused_by_its_share(tmp_path: Path) -> None:
    f = tmp_path / "project"
    (f / "src").mkdir(parents=True)
    for i in range(40):
        (f / "src" / f"m{i}.py").write_text("x = 1\n")
    (f / "README.md").write_text("# project\n")
    r = memctl("init", f)
    assert r.code == 2 and len(r.err.strip().splitlines()) == 1
    assert "mostly not notes" in r.err and "40 files that are not notes, 1 note" in r.err
    assert sorted(p.name for p in f.iterdir()) == ["README.md", "src"]
    ok("init", f, "--force")
    assert git(f, "ls-files", "src") == ""
    # a folder of notes with a few other files in it is a notes folder
    g = tmp_path / "mostly-notes"
    g.mkdir()
    for i in range(8):
        (g / f"n{i}.md").write_text(f"# note {i}\n")
    for i in range(6):
        (g / f"scan{i}.pdf").write_bytes(b"%PDF-1.4\n")
    r = ok("init", g)
    assert "adopted 8 existing notes" in r.out and "left alone 6 files" in r.out
