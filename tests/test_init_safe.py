"""`memctl init` adopts notes and nothing else, refuses folders it should not take over,
initialises the folder it is told to, and leaves nothing behind when it fails."""

from __future__ import annotations

from pathlib import Path

from util import git, memctl, ok


def _home_like(folder: Path) -> Path:
    (folder / ".ssh").mkdir(parents=True)
    (folder / ".ssh" / "id_ed25519").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nabc\n")
    (folder / "Documents").mkdir()
    (folder / "Documents" / "taxes.txt").write_text("income 2025\n")
    (folder / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0 not really a jpeg")
    (folder / "notes").mkdir()
    (folder / "notes" / "idea.md").write_text("# An idea\n\nWrite it down.\n")
    return folder


def test_init_commits_notes_only_and_lists_what_it_left_alone(tmp_path: Path) -> None:
    folder = _home_like(tmp_path / "stuff")
    r = ok("init", folder)
    tracked = git(folder, "ls-files").split()
    assert "notes/idea.md" in tracked
    assert not [t for t in tracked if t.startswith((".ssh", "Documents")) or t.endswith(".jpg")]
    assert "adopted 1 existing note" in r.out
    assert "left alone 2 files that are not notes" in r.out
    for name in ("Documents/taxes.txt", "photo.jpg"):
        assert name in r.out
    # a private key is left alone and git-ignored, so no `git add -A` ever takes it
    assert "git-ignored .ssh/id_ed25519 (it may hold secrets; never committed)" in r.out
    assert git(folder, "check-ignore", ".ssh/id_ed25519").strip() == ".ssh/id_ed25519"
    # and they stay out of every later commit, too
    ok("--vault", folder, "ingest", "-", input='{"role": "user", "content": "hi"}\n')
    tracked = git(folder, "ls-files").split()
    assert not [t for t in tracked if t.startswith((".ssh", "Documents")) or t.endswith(".jpg")]


def test_init_refuses_the_home_folder_unless_forced(tmp_path: Path) -> None:
    home = _home_like(tmp_path / "home")
    r = memctl("init", home, env={"HOME": str(home)})
    assert r.code == 2
    assert len(r.err.strip().splitlines()) == 1 and "home folder" in r.err and "--force" in r.err
    assert not (home / ".memctl").exists() and not (home / ".git").exists()
    r = memctl("init", ".", cwd=home, env={"HOME": str(home)})
    assert r.code == 2 and not (home / ".memctl").exists()
    ok("init", home, "--force", env={"HOME": str(home)})
    assert "Documents/taxes.txt" not in git(home, "ls-files")


def test_init_refuses_a_folder_of_many_non_note_files(tmp_path: Path) -> None:
    folder = tmp_path / "project"
    (folder / "src").mkdir(parents=True)
    for i in range(120):
        (folder / "src" / f"m{i}.py").write_text("x = 1\n")
    (folder / "README.md").write_text("# project\n")
    r = memctl("init", folder)
    assert r.code == 2
    assert "120 files that are not notes" in r.err and "--force" in r.err
    assert sorted(p.name for p in folder.iterdir()) == ["README.md", "src"]
    ok("init", folder, "--force")
    assert git(folder, "ls-files", "src") == ""


def test_init_honours_vault_option_and_environment(tmp_path: Path) -> None:
    here = tmp_path / "cwd"
    here.mkdir()
    ok("--vault", tmp_path / "a", "init", cwd=here)
    assert (tmp_path / "a" / ".memctl").is_dir()
    ok("init", cwd=here, env={"MEMCTL_VAULT": str(tmp_path / "b")})
    assert (tmp_path / "b" / ".memctl").is_dir()
    assert list(here.iterdir()) == []


def test_init_beside_a_nested_empty_repo_works_and_a_failure_leaves_nothing(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "v"
    (folder / "sub").mkdir(parents=True)
    git(folder / "sub", "init", "-q")
    (folder / "sub" / "inner.md").write_text("# inside another repository\n")
    r = memctl("init", folder)
    assert r.code == 0, r.err
    assert "sub/inner.md" not in git(folder, "ls-files")
    # a failure: git cannot write its objects -> one line, and the folder as it was
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "keep.txt").write_text("mine\n")
    (bad / ".git").write_text("gitdir: /nonexistent/elsewhere\n")
    r = memctl("init", bad)
    assert r.code != 0
    assert len(r.err.strip().splitlines()) == 1 and "Traceback" not in r.err
    assert sorted(p.name for p in bad.iterdir()) == [".git", "keep.txt"]
