"""What `memctl init` adopts, leaves alone, git-ignores and refuses: a vault
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
    assert ("left alone node_modules/ (installed JavaScript dependencies; not walked, "
            "git-ignored)") in lines
    assert "left alone .venv/ (a Python virtual environment; not walked, git-ignored)" in lines
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


def _folder_with_tools(f: Path) -> None:
    """An Obsidian vault that is also somebody's working folder."""
    for rel, text in {
        "node_modules/leftpad/index.js": "module.exports = 1\n",
        ".venv/bin/python": "#!/bin/sh\n",
        "__pycache__/tool.cpython-311.pyc": "x",
        ".pytest_cache/README.md": "# pytest cache\n",
        ".obsidian/app.json": "{}\n",
        ".obsidian/workspace.json": '{"main": {}}\n',
        "sub/.DS_Store": "x",
        "ideas.md": "# Ideas\n\nLeftpad the strings.\n",
        "knowledge/deploy.md": "# Deploy\n\nNo deploys on Fridays.\n\n## Rules\n\n- Deploys stop "
                               "at 15:00 on Fridays.\n",
        "projects/alpha.md": "Alpha ships in March.\n",
    }.items():
        (f / rel).parent.mkdir(parents=True, exist_ok=True)
        (f / rel).write_text(text)
    (f / "tools").mkdir()
    git(f / "tools", "init", "-q")  # a repository of its own inside the folder
    (f / "tools" / "run.sh").write_text("echo\n")


def test_init_leaves_git_status_clean_beside_tool_folders(tmp_path: Path) -> None:
    """Tool folders init left alone stayed untracked: `status` listed them forever."""
    f = tmp_path / "notes"
    f.mkdir()
    _folder_with_tools(f)
    ok("init", f)
    assert git(f, "status", "--porcelain", "--untracked-files=all") == ""
    ignore = (f / ".gitignore").read_text().splitlines()
    block = ignore[ignore.index("# memctl init: tool folders it left alone; never notes") + 1:]
    rules = [ln for ln in block if ln and not ln.startswith("#")]
    assert sorted(rules) == ["/.obsidian/", "/.pytest_cache/", "/.venv/", "/__pycache__/",
                             "/node_modules/", "/sub/.DS_Store", "/tools/"]
    for rule in rules:  # each explained, in the line above it
        above = block[block.index(rule) - 1]
        assert above.startswith("# ") and len(above) > 6, rule
    # nothing a person would version is ignored: notes, attachments, code beside them
    for rel in ("knowledge/new.md", "attachments/diagram.png", "scripts/build.py",
                "sub/notes.md", ".env.example"):
        assert memctl_git_ignored(f, rel) is False, rel


def memctl_git_ignored(f: Path, rel: str) -> bool:
    import subprocess

    return subprocess.run(["git", "-C", str(f), "check-ignore", "-q", "--", rel],
                          check=False).returncode == 0


def test_adopted_notes_without_frontmatter_are_valid_and_indexed(tmp_path: Path) -> None:
    """A human's own markdown note has no frontmatter: verify and doctor said 'missing
    frontmatter', and the INDEX files did not list the notes init adopted."""
    f = tmp_path / "notes"
    f.mkdir()
    _folder_with_tools(f)
    ok("init", f)
    res = ok("--vault", f, "verify", "--json").json()
    assert res["problems"] == [] and res["notes"] == 2
    assert res["human_lines"] == 1
    ok("--vault", f, "doctor")
    assert "- [Deploy](deploy.md)" in (f / "knowledge" / "INDEX.md").read_text()
    assert "alpha.md" in (f / "projects" / "INDEX.md").read_text()
    root_index = (f / "INDEX.md").read_text()
    assert "[knowledge/](knowledge/INDEX.md) · 1 note " in root_index
    # the notes stay as the human wrote them
    assert (f / "projects" / "alpha.md").read_text() == "Alpha ships in March.\n"
    assert git(f, "status", "--porcelain") == ""


def test_an_adopted_note_without_frontmatter_is_recalled_as_the_humans(tmp_path: Path) -> None:
    """Search listed a plain adopted note (the index reads a missing scope as team) while
    recall dropped it as `out of scope ()`: the person's own notes never reached an agent."""
    v = tmp_path / "v"
    (v / "knowledge").mkdir(parents=True)
    (v / "knowledge" / "deploys.md").write_text(
        "# Deploys\n\n- Production deploys go out on Tuesdays after standup.\n"
    )
    ok("init", v)
    q = "When do production deploys go out?"
    hits = ok("--vault", v, "search", "--json", q).json()["hits"]
    assert [h["ref"] for h in hits] == ["knowledge/deploys.md"]
    mems = ok("--vault", v, "recall", "--json", "--user", "dana", "--", q).json()["memories"]
    got = [(m["ref"], m["basis"]) for m in mems if "Tuesdays" in m["text"]]
    assert got == [("knowledge/deploys.md", "human")], mems
