"""`memctl doctor` finds what a killed command or a hand left wrong, and repairs the safe part."""

from __future__ import annotations

import json
from pathlib import Path

from crashkit import assert_healthy, head_turn_ids, kill_when, memctl_popen, transcripts
from util import git, memctl, new_vault, ok


def _checks(run_out: str) -> dict[str, dict]:
    data = json.loads(run_out)
    return {c["name"]: c for c in data["checks"]}


def test_doctor_reports_a_killed_ingest_then_repairs_it(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    src = transcripts(tmp_path / "t", 120, 30)
    proc = memctl_popen(["--vault", str(vault), "ingest", str(src)])
    raw = vault / "raw"
    assert kill_when(proc, lambda: sum(1 for _ in raw.rglob("s-*.md")) >= 5)
    r = memctl("--vault", vault, "doctor", "--json")
    assert r.code == 1
    checks = _checks(r.out)
    assert not checks["journal"]["ok"]
    assert "unfinished ingest" in checks["journal"]["problems"][0]
    assert git(vault, "status", "--porcelain") != ""  # reporting changed nothing
    r = ok("--vault", vault, "doctor", "--repair")
    assert "fixed  journal: recovered: finished an interrupted ingest" in r.out
    assert_healthy(vault)
    ids = head_turn_ids(vault)
    assert ids and len(ids) == len(set(ids))
    assert ok("--vault", vault, "doctor").out.count("ok ") == 13  # every check ok


def test_doctor_finds_secrets_stale_index_files_and_an_unindexed_edit(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    ok("--vault", vault, "ingest", transcripts(tmp_path / "t", 3, 2))
    ok("--vault", vault, "search", "Postgres")  # builds the index
    note = vault / "knowledge" / "hand.md"
    token = "ghp_" + "R4nd0mT0k3nV4lu3Xq9Zp2Lm8Nc5Vb7Hj1Kd3"
    note.write_text(f"# Hand\n\n## Notes\n\n- token {token} here\n")
    (vault / "raw" / "INDEX.md").write_text("# Raw sessions\n\n- none yet\n")
    (vault / "raw" / ".INDEX.md.abc123.tmp").write_text("half")
    r = memctl("--vault", vault, "doctor", "--json")
    assert r.code == 1
    checks = _checks(r.out)
    assert checks["secrets"]["problems"] == ["knowledge/hand.md:5: github-token"]
    assert "raw/INDEX.md is out of date" in checks["INDEX files"]["problems"]
    assert "not indexed: knowledge/hand.md" in checks["search index"]["problems"]
    assert checks["temp files"]["problems"] == ["stray temp file raw/.INDEX.md.abc123.tmp"]
    # a hand-edited INDEX file is never rewritten silently, not even by --repair
    r = memctl("--vault", vault, "doctor", "--repair", "--json")
    checks = _checks(r.out)
    assert any("edited by hand: raw/INDEX.md" in p for p in checks["INDEX files"]["problems"])
    assert checks["search index"]["ok"] and checks["temp files"]["ok"]
    assert not (vault / "raw" / ".INDEX.md.abc123.tmp").exists()
    assert (vault / "raw" / "INDEX.md").read_text() == "# Raw sessions\n\n- none yet\n"
    git(vault, "checkout", "raw/INDEX.md")
    (vault / "INDEX.md").unlink()  # a missing INDEX file is rewritten: nothing to overwrite
    r = memctl("--vault", vault, "doctor", "--repair")
    assert r.code == 1  # the secret is for a person to fix
    # the root INDEX, and knowledge/INDEX.md, which did not list the hand-written note yet
    # (a note without frontmatter is a person's own, and valid)
    assert "fixed  INDEX files: rewrote 2 INDEX files (commit" in r.out
    assert "- [Hand](hand.md)" in (vault / "knowledge" / "INDEX.md").read_text()
    assert "doctor: INDEX files rewritten" in git(vault, "log", "-1", "--format=%s")
