"""`memctl diff`: claim-level changes between two points in history, with who made them."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from test_curate import copy, git, memctl
from test_provenance import marco  # noqa: F401 - the curated one-session vault fixture


def human_commit(vault: Path, message: str, days_ago: int = 0) -> None:
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="Marco Bianchi",
        GIT_AUTHOR_EMAIL="marco@acme.test",
        GIT_COMMITTER_NAME="Marco Bianchi",
        GIT_COMMITTER_EMAIL="marco@acme.test",
    )
    if days_ago:
        stamp = f"@{int(time.time()) - days_ago * 86400} +0000"
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = stamp
    subprocess.run(["git", "-C", str(vault), "commit", "-qam", message], check=True, env=env)


def changes(res: dict, path: str) -> list[dict]:
    return [
        c for ns in res["stores"].values() for n in ns if n["path"] == path for c in n["changes"]
    ]


@pytest.fixture
def edited(marco: Path, tmp_path: Path) -> Path:  # noqa: F811 - pytest injects the fixture
    """Marco's vault after he deleted one claim and reworded another, committed."""
    vault = copy(marco, tmp_path / "v")
    prof = vault / "profile" / "marco.md"
    text = prof.read_text(encoding="utf-8")
    text = text.replace("- Marco hates alerts nobody can act on.", "- Marco hates noisy alerts.")
    text = "\n".join(ln for ln in text.splitlines() if "on call every third week" not in ln) + "\n"
    prof.write_text(text, encoding="utf-8")
    human_commit(vault, "Tidy my profile")
    return vault


def test_a_range_shows_the_agents_claims_and_the_humans_edits(edited: Path) -> None:
    res = json.loads(memctl(edited, "diff", "HEAD~2..HEAD", "--json").stdout)
    assert res["command"] == "diff" and res["commits"] == 2
    prof = changes(res, "profile/marco.md")
    added = [c for c in prof if c["action"] == "added"]
    assert {c["author"] for c in added} == {"memctl agent"}
    assert any(c["plain"] == "Marco is an SRE at Acme." for c in added)
    edit = next(c for c in prof if c["action"] == "edited")
    assert edit["human"] and edit["author"] == "Marco Bianchi"
    assert (edit["before"], edit["text"]) == (
        "Marco hates alerts nobody can act on.",
        "Marco hates noisy alerts.",
    )
    assert edit["sources"][0]["quote"] == "I hate alerts nobody can act on."
    removed = next(c for c in prof if c["action"] == "removed")
    assert removed["human"] and removed["plain"] == "Marco is on call every third week."
    know = changes(res, "knowledge/acme.md")
    corrected = next(c for c in know if c["action"] == "superseded")
    assert corrected["detail"] == "corrected 2026-09-10 → 2026-09-10"
    assert "$40k a month" in corrected["plain"]
    assert res["counts"]["edited"] == 1 and res["counts"]["removed"] == 1


def test_since_and_store_narrow_the_report_and_uncommitted_edits_show(edited: Path) -> None:
    # Backdate: a human edit a month ago is outside --since 7d but inside --since 60d.
    know = edited / "knowledge" / "acme.md"
    know.write_text(know.read_text().replace("## Facts\n\n", "## Facts\n\n- Egress is Dana's.\n"))
    human_commit(edited, "Note who owns egress", days_ago=30)
    week = json.loads(memctl(edited, "diff", "--since", "7d", "--json").stdout)
    assert not any("Dana's" in c["plain"] for c in changes(week, "knowledge/acme.md"))
    two = json.loads(
        memctl(edited, "diff", "--since", "60d", "--store", "knowledge", "--json").stdout
    )
    assert list(two["stores"]) == ["knowledge"]
    assert any(
        c["plain"] == "Egress is Dana's." and c["human"] for c in changes(two, "knowledge/acme.md")
    )
    # Not committed yet: still shown, marked as such.
    prof = edited / "profile" / "marco.md"
    prof.write_text(prof.read_text().replace("## Preferences\n\n", "## Preferences\n\n- Vim.\n"))
    out = memctl(edited, "diff", "--store", "profile").stdout
    assert "+ added      Vim.\n      (no source: human-authored)\n" in out
    assert "· uncommitted" in out
    assert git(edited, "status", "--porcelain").strip() == "M profile/marco.md"


def test_bad_arguments_are_clear_errors(marco: Path) -> None:  # noqa: F811
    proc = memctl(marco, "diff", "--store", "nope", check=False)
    assert proc.returncode == 2 and "no store 'nope'" in proc.stderr
    proc = memctl(marco, "diff", "nope..HEAD", check=False)
    assert proc.returncode == 2 and "bad revision range 'nope..HEAD'" in proc.stderr


def test_texts_reads_many_revisions_in_one_go_as_git_show_would(tmp_path: Path) -> None:
    """History.texts, which `diff` reads every note's before and after with: the same
    text `git show REV:PATH` gives, None where the revision has no such file (or names a
    folder), and a name with a line break (which cat-file's input cannot carry) too."""
    from memctl.core.history import History

    repo = tmp_path / "r"
    repo.mkdir()
    git_ = ["git", "-C", str(repo), "-c", "user.name=T", "-c", "user.email=t@example.invalid"]
    subprocess.run([*git_, "init", "-q"], check=True)
    odd = "line\nbreak.md"
    (repo / "a.md").write_text("first\n")
    (repo / "d").mkdir()
    (repo / "d" / "b.md").write_bytes("naïve ✓\n\nno newline at the end".encode())
    (repo / odd).write_text("odd one\n")
    subprocess.run([*git_, "add", "-A"], check=True)
    subprocess.run([*git_, "commit", "-qm", "one"], check=True)
    (repo / "a.md").write_text("second\n" * 3000)  # bigger than one pipe buffer
    subprocess.run([*git_, "commit", "-qam", "two"], check=True)
    specs = [("HEAD~1", "a.md"), ("HEAD", "a.md"), ("HEAD", "d/b.md"), ("HEAD", "nope.md"),
             ("HEAD", "d"), ("HEAD", odd), ("HEAD~1", "d/b.md")]  # fmt: skip
    got = History(repo).texts(specs)
    want = []
    for rev, path in specs:
        r = subprocess.run(["git", "-C", str(repo), "cat-file", "-t", f"{rev}:{path}"],
                           capture_output=True, text=True, check=False)  # fmt: skip
        if r.stdout.strip() != "blob":
            want.append(None)
            continue
        shown = subprocess.run(["git", "-C", str(repo), "show", f"{rev}:{path}"],
                               capture_output=True, check=True).stdout  # fmt: skip
        want.append(shown.decode("utf-8", "surrogateescape"))
    assert got == want
    assert got[0] == "first\n" and got[3] is None and got[4] is None and got[5] == "odd one\n"
