"""Store modes (background, propose, off), per-store runs, and custom stores: one declared in
config with no code (examples/runbooks-store) and one with code, loaded through the
`memctl.stores` entry-point group (examples/project-store)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from test_curate import SAMPLE, copy, git, memctl, new_vault

EXAMPLES = Path(__file__).parent.parent / "examples"


def configure(vault: Path, toml: str) -> None:
    with (vault / ".memctl" / "config.toml").open("a", encoding="utf-8") as fh:
        fh.write("\n" + toml)
    git(
        vault,
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-qm",
        "configure",
        "--",
        ".memctl/config.toml",
    )


def state(vault: Path) -> dict:
    return json.loads((vault / ".memctl" / "state" / "curation.json").read_text())["stores"]


@pytest.fixture(scope="module")
def dana(tmp_path_factory: pytest.TempPathFactory) -> Path:
    vault = new_vault(tmp_path_factory.mktemp("dana") / "vault")
    files = sorted(str(p) for p in (SAMPLE / "dana").glob("*.jsonl"))
    memctl(vault, "ingest", *files, "--user", "dana", "--scope", "team")
    return vault


def test_propose_mode_waits_for_review_and_off_means_off(dana: Path, tmp_path: Path) -> None:
    vault = copy(dana, tmp_path / "v")
    configure(
        vault,
        '[stores.decisions]\nmode = "propose"\n[stores.sessions]\nmode = "propose"\n'
        '[stores.feedback]\nmode = "off"\n',
    )
    out = memctl(vault, "curate").stdout
    assert "proposals wait for `memctl review`" in out
    decisions = sorted(p.name for p in (vault / "decisions").glob("*.md"))
    assert decisions == [
        "2026-09-15-run-phase-1-in-the-second-week-of-october.proposed.md",
        "INDEX.md",
    ]
    assert len(list((vault / "sessions").glob("*.proposed.md"))) == 4
    assert not [p for p in (vault / "sessions").glob("2026*.md") if "proposed" not in p.name]
    assert sorted(p.name for p in (vault / "feedback").iterdir()) == ["INDEX.md"]
    assert "feedback" not in state(vault) and "decisions" in state(vault)
    listing = memctl(vault, "review").stdout
    pid = "decisions/2026-09-15-run-phase-1-in-the-second-week-of-october"
    assert f"proposal {pid} · decisions · new note · 2 claims" in listing
    assert "+status: active" in listing and "+- Decided on 2026-09-15, stated by Dana." in listing
    out = memctl(vault, "review", "--reject", "2026-09-15-run", "--all").stdout
    assert f"rejected {pid}" in out and out.count("accepted sessions/") == 4
    log = git(vault, "log", "-1", "--format=%an|%s")
    assert log == "memctl user|review: 4 accepted, 1 rejected\n"
    assert not list((vault / "decisions").glob("2026*"))
    assert len(list((vault / "sessions").glob("2026*.md"))) == 4
    assert not list(vault.rglob("*.proposed.md"))
    # Rejected stays rejected: those turns are curated, so the proposal does not come back.
    assert "nothing to curate" in memctl(vault, "curate").stdout
    assert memctl(vault, "review").stdout.strip() == "no proposals pending"


def test_one_store_at_a_time_keeps_separate_watermarks(dana: Path, tmp_path: Path) -> None:
    vault = copy(dana, tmp_path / "v")
    memctl(vault, "curate", "--store", "profile")
    assert set(state(vault)) == {"profile"}
    assert not list((vault / "knowledge").glob("acme.md"))
    profile = (vault / "profile" / "dana.md").read_text(encoding="utf-8")
    out = memctl(vault, "curate").stdout
    assert "curate: 4 sessions" in out
    assert (vault / "profile" / "dana.md").read_text(encoding="utf-8") == profile
    assert (vault / "knowledge" / "acme.md").exists()
    assert set(state(vault)) >= {"profile", "knowledge", "entities", "sessions"}
    proc = memctl(vault, "curate", "--store", "nope", check=False)
    assert proc.returncode == 2 and "no store 'nope': configured stores are profile" in proc.stderr


def test_a_store_declared_in_config_with_no_code(dana: Path, tmp_path: Path) -> None:
    vault = copy(dana, tmp_path / "v")
    example = EXAMPLES / "runbooks-store"
    (vault / "templates").mkdir()
    shutil.copy(example / "templates" / "runbooks.md", vault / "templates" / "runbooks.md")
    configure(vault, (example / "config.toml").read_text(encoding="utf-8"))
    memctl(vault, "curate", "--store", "runbooks")
    [prop] = (vault / "runbooks").glob("*.proposed.md")
    text = prop.read_text(encoding="utf-8")
    assert "title: Runbooks (team)" in text and "status: proposed" in text
    assert "## Procedures" in text
    assert "- Dana always writes a runbook before a migration step. [^" in text
    assert "Phase 1 cutover went fine in mid-October, with zero rollbacks." in text
    memctl(vault, "review", "--all")
    assert (vault / "runbooks" / "runbooks-team.md").exists()
    assert "[runbooks/](runbooks/INDEX.md) · 1 note" in (vault / "INDEX.md").read_text()
    assert json.loads(memctl(vault, "verify", "--json").stdout)["ok"]


def test_a_store_with_code_loaded_through_an_entry_point(tmp_path: Path) -> None:
    site = tmp_path / "site"
    dist = site / "memctl_project_store-0.1.0.dist-info"
    dist.mkdir(parents=True)
    shutil.copy(EXAMPLES / "project-store" / "memctl_project_store.py", site)
    (dist / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: memctl-project-store\nVersion: 0.1.0\n"
    )
    (dist / "entry_points.txt").write_text(
        "[memctl.stores]\nproject = memctl_project_store:ProjectContextStore\n"
    )
    env = dict(os.environ, PYTHONPATH=str(site))
    vault = new_vault(tmp_path / "v")
    configure(
        vault,
        '[stores.project]\nfolder = "projects"\nscope = "team"\n'
        'mode = "background"\nplugin = "project"\n',
    )
    chat = tmp_path / "chat.jsonl"
    lines = [
        {
            "role": "user",
            "content": "The billing code lives in services/billing. "
            "The tests run with pytest -n 4 from the repo root.",
        },
        {"role": "assistant", "content": "Got it. Use the staging environment for smoke tests."},
        {"role": "user", "content": "Yes, always use the staging environment for that."},
    ]
    chat.write_text("".join(json.dumps(m) + "\n" for m in lines), encoding="utf-8")
    memctl(vault, "ingest", str(chat), "--user", "lee", "--scope", "team", env=env)
    missing = memctl(vault, "curate", check=False)  # no PYTHONPATH: the plugin is not installed
    assert missing.returncode == 2
    assert "no store plugin 'project' in entry-point group memctl.stores" in missing.stderr
    assert git(vault, "status", "--porcelain") == ""
    memctl(vault, "curate", "--store", "project", env=env)
    text = (vault / "projects" / "project-context.md").read_text(encoding="utf-8")
    assert "## Where things live\n\n- The billing code lives in services/billing. [^" in text
    assert "## How to test\n\n- The tests run with pytest -n 4 from the repo root. [^" in text
    # The assistant said it first, but only the user's turn is memory.
    assert "#t3" in text and "#t2" not in text
    assert json.loads(memctl(vault, "verify", "--json", env=env).stdout)["ok"]


def test_a_growing_session_is_curated_where_it_left_off(tmp_path: Path) -> None:
    marco = SAMPLE / "marco" / "2026-09-10-egress-bill-alerting.jsonl"
    lines = marco.read_text(encoding="utf-8").splitlines(keepends=True)
    early = tmp_path / "early.jsonl"
    early.write_text("".join(lines[:6]), encoding="utf-8")
    vault = new_vault(tmp_path / "v")
    memctl(vault, "ingest", str(early), "--user", "marco", "--scope", "team")
    memctl(vault, "curate", "--session", "early")
    know = vault / "knowledge" / "acme.md"
    assert "[[entities/acme|Acme]]'s egress bill is about $40k a month. [^" in know.read_text()
    # The same session, now longer: only the new turns are read, and the correction in
    # them finds the claim the first run wrote.
    full = tmp_path / "early.jsonl"
    full.write_text("".join(lines), encoding="utf-8")
    memctl(vault, "ingest", str(full), "--user", "marco", "--scope", "team")
    res = json.loads(memctl(vault, "curate", "--json").stdout)
    assert res["turns_read"] == len(lines) - 6 and res["superseded"] == 1
    text = know.read_text()
    assert "- [[entities/acme|Acme]]'s egress bill is about $14k a month. [^" in text
    assert "· corrected · [[entities/acme|Acme]]'s egress bill is about $40k a month." in text
    assert list(state(vault)["profile"].values()) == [len(lines)]
