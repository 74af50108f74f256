"""The built-in curator on the sample transcripts, through the real CLI, real files, real git.

"Done means" for the learning stores: on the sample vault, `memctl curate` produces a team
note that Acme is cutting egress costs citing the turn that said so; an entity note for Alex
Morgan (CTO, leads the AWS to GCP migration); Priya's old city in History and the new one
active; the two Alexes as two entity files; Marco's correction replacing the corrected claim;
`memctl diff` showing all of it; and every citation verifying.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from util import init_vault, warm

SAMPLE = Path(__file__).parent / "data" / "sample-transcripts"


def memctl(
    vault: Path, *args: str, check: bool = True, env: dict | None = None
) -> subprocess.CompletedProcess:
    """Run the installed CLI against `vault` in a process of its own, as a user would (a
    child of the warm host, tests/clihost.py, else a fresh interpreter)."""
    argv = ["--vault", str(vault), *args]
    done = warm(argv, None, None, env or dict(os.environ), 120)
    if done is not None:
        code, out, err = done
        proc = subprocess.CompletedProcess(argv, code, out.decode(), err.decode())
    else:
        proc = subprocess.run(
            [sys.executable, "-m", "memctl", *argv],
            capture_output=True,
            text=True,
            env=env or dict(os.environ),
            check=False,
        )
    if check and proc.returncode != 0:
        raise AssertionError(f"memctl {' '.join(args)} -> {proc.returncode}\n{proc.stderr}")
    return proc


def git(vault: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(vault), *args], capture_output=True, text=True, check=True
    ).stdout


def sample_sessions() -> list[tuple[str, str, str]]:
    rows = (SAMPLE / "sessions.tsv").read_text(encoding="utf-8").splitlines()[1:]
    return [tuple(r.split("\t")) for r in rows if r.strip()]  # type: ignore[misc]


def ingest(vault: Path, rows: list[tuple[str, str, str]]) -> None:
    """One ingest per (user, scope), keeping the files of each in order."""
    groups: dict[tuple[str, str], list[str]] = {}
    for path, user, scope in rows:
        groups.setdefault((user, scope), []).append(str(SAMPLE / path))
    for (user, scope), files in groups.items():
        memctl(vault, "ingest", *files, "--user", user, "--scope", scope)


def new_vault(root: Path) -> Path:
    return init_vault(root)


def copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, symlinks=True)
    return dst


@pytest.fixture(scope="module")
def first8(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sample vault before Priya's move and Dana's CDN review (the last two sessions)."""
    vault = new_vault(tmp_path_factory.mktemp("first8") / "vault")
    ingest(vault, sample_sessions()[:8])
    return vault


@pytest.fixture(scope="module")
def ingested(first8: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    vault = copy(first8, tmp_path_factory.mktemp("sample") / "vault")
    ingest(vault, sample_sessions()[8:])
    return vault


@pytest.fixture(scope="module")
def curated(ingested: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    vault = copy(ingested, tmp_path_factory.mktemp("curated") / "vault")
    memctl(vault, "curate")
    return vault


def notes(vault: Path, folder: str) -> dict[str, str]:
    return {
        p.relative_to(vault).as_posix(): p.read_text(encoding="utf-8")
        for p in sorted((vault / folder).glob("*.md"))
        if p.name != "INDEX.md"
    }


def section(text: str, name: str) -> str:
    after = text.split(f"\n## {name}\n", 1)
    return after[1].split("\n## ", 1)[0].split("\n[^", 1)[0] if len(after) == 2 else ""


def scope_of(text: str) -> str:
    return text.split("\nscope: ", 1)[1].split("\n", 1)[0]


# ---- done means ----------------------------------------------------------------------------


def test_team_note_says_acme_is_cutting_egress_costs_citing_the_turn(curated: Path) -> None:
    text = (curated / "knowledge" / "acme.md").read_text(encoding="utf-8")
    assert scope_of(text) == "team"
    goal = next(line for line in section(text, "Goals").splitlines() if "egress costs" in line)
    assert "[[entities/acme|Acme]] is trying to cut its egress costs this quarter" in goal
    label = goal.rsplit("[^", 1)[1].rstrip("]")
    footnote = next(line for line in text.splitlines() if line.startswith(f"[^{label}]:"))
    assert '"We\'re trying to cut our egress costs this quarter."' in footnote
    ref = footnote.split()[1]
    turn = memctl(curated, "show", ref).stdout
    assert "We're trying to cut our egress costs this quarter." in turn


def test_alex_morgan_is_the_cto_leading_the_migration(curated: Path) -> None:
    text = (curated / "entities" / "alex-morgan.md").read_text(encoding="utf-8")
    assert scope_of(text) == "team"
    facts = section(text, "Facts")
    assert "- Alex Morgan is [[entities/acme|Acme]]'s CTO." in facts
    assert "- Alex Morgan is leading the migration from AWS to GCP." in facts
    assert "tags:\n- person" in text and "aliases:\n- Alex" in text


def test_the_two_alexes_are_two_entities_that_never_mix(curated: Path) -> None:
    morgan = (curated / "entities" / "alex-morgan.md").read_text(encoding="utf-8")
    chen = (curated / "entities" / "alex-chen.md").read_text(encoding="utf-8")
    assert scope_of(chen) == "user:priya" and scope_of(morgan) == "team"
    assert "Crumbwise" in chen and "Priya's client" in chen
    for word in ("Crumbwise", "bakery", "Priya", "Porto"):
        assert word not in morgan
    for word in ("CTO", "Acme", "GCP", "migration"):
        assert word not in chen
    alexes = [p for p in notes(curated, "entities") if "alex" in p]
    assert sorted(alexes) == ["entities/alex-chen.md", "entities/alex-morgan.md"]


def test_priya_moved_lisbon_is_history_and_berlin_is_active(curated: Path) -> None:
    text = (curated / "profile" / "priya.md").read_text(encoding="utf-8")
    history = section(text, "History")
    assert (
        "2026-09-03 → 2026-10-29 · superseded · Priya lives in [[entities/lisbon|Lisbon]]."
        in history
    )
    identity = section(text, "Identity")
    assert "Priya moved to Berlin last month (as of 2026-10-29)." in identity
    assert "Lisbon" not in identity


def test_marcos_correction_replaced_the_corrected_claim(curated: Path) -> None:
    text = (curated / "knowledge" / "acme.md").read_text(encoding="utf-8")
    active = text.split("\n## History\n", 1)[0]
    assert "[[entities/acme|Acme]]'s egress bill is about $14k a month." in active
    assert "egress bill is about $40k a month" not in active
    assert "· corrected · [[entities/acme|Acme]]'s egress bill is about $40k a month." in section(
        text, "History"
    )
    assert '"Actually, I meant $14k a month, not $40k."' in text


def test_every_citation_in_the_vault_verifies(curated: Path) -> None:
    res = json.loads(memctl(curated, "verify", "--json").stdout)
    assert res["ok"] and res["problems"] == []
    assert res["claims"] >= 60 and res["citations"] >= 60 and res["raw_sessions"] == 10


def test_diff_shows_what_was_learned_with_quotes_and_authors(curated: Path) -> None:
    res = json.loads(memctl(curated, "diff", "--json").stdout)
    stores = res["stores"]
    flat = [(store, n["path"], c) for store, ns in stores.items() for n in ns for c in n["changes"]]

    def find(path: str, action: str, needle: str) -> dict:
        hits = [
            c for _, p, c in flat if p == path and c["action"] == action and needle in c["plain"]
        ]
        assert hits, f"no {action} {needle!r} in {path}"
        return hits[0]

    egress = find("knowledge/acme.md", "added", "cut its egress costs")
    assert egress["sources"][0]["quote"] == "We're trying to cut our egress costs this quarter."
    assert egress["author"] == "memctl agent" and not egress["human"]
    find("entities/alex-morgan.md", "added", "leading the migration from AWS to GCP")
    lisbon = find("profile/priya.md", "superseded", "Lisbon")
    assert lisbon["detail"] == "superseded 2026-09-03 → 2026-10-29"
    find("profile/priya.md", "added", "Berlin")
    find("knowledge/acme.md", "superseded", "$40k")
    find("knowledge/acme.md", "added", "$14k a month")
    assert {"entities/alex-chen.md", "entities/alex-morgan.md"} <= {p for _, p, _ in flat}
    text = memctl(curated, "diff", "--store", "profile").stdout
    assert "→ superseded Priya lives in Lisbon." in text
    assert "“I live in Lisbon.” raw/2026/09/03/" in text
    assert "entities/" not in text


# ---- safety -----------------------------------------------------------------------------------


def test_nothing_crosses_scopes(curated: Path) -> None:
    for folder in ("profile", "entities", "knowledge", "decisions", "sessions", "feedback"):
        for path, text in notes(curated, folder).items():
            if scope_of(text) == "team":
                for word in ("Priya", "Crumbwise", "Lisbon", "Berlin", "bakery", "alex-chen"):
                    assert word not in text, f"{word} leaked into team note {path}"
            if scope_of(text) == "user:priya":
                for word in ("Acme", "alex-morgan", "CTO", "egress"):
                    assert word not in text, f"{word} leaked into Priya's note {path}"


def test_the_injected_readme_and_the_secrets_are_not_memory(curated: Path) -> None:
    everything = "\n".join(
        t
        for f in (
            "profile",
            "entities",
            "knowledge",
            "decisions",
            "sessions",
            "feedback",
            "instructions",
        )
        for t in notes(curated, f).values()
    )
    for bad in (
        "sudo",
        "prefers pandas",
        "crumbs-telemetry",
        "Ignore previous",
        "Xk7pQ2vN9rT4",
        "AKIA5TQX3R7NJ2WLKD9P",
        "q8Vd2LmZ7tR1xW9cN4bY6hK3sJ0pF5gA2eU8oT1i",
    ):
        assert bad not in everything
    assert notes(curated, "instructions") == {}
    prefs = section((curated / "profile" / "priya.md").read_text(encoding="utf-8"), "Preferences")
    assert "Priya prefers polars over pandas for anything over a few GB." in prefs


def test_one_commit_by_the_agent_with_trailers_and_indexes_in_it(curated: Path) -> None:
    log = git(curated, "log", "-1", "--format=%an <%ae>%n%s%n%b")
    assert log.startswith("memctl agent <agent@memctl.invalid>\ncurate: ")
    for trailer in (
        "Memctl-Curator: builtin",
        "Memctl-Model: none",
        "Memctl-Turns-Read: 122",
        "Memctl-Claims-Added: ",
        "Memctl-Claims-Superseded: 2",
        "Memctl-Claims-Rejected: 0",
    ):
        assert trailer in log
    files = git(curated, "show", "--name-only", "--format=", "HEAD").split()
    assert ".memctl/state/curation.json" in files and "INDEX.md" in files
    assert "profile/INDEX.md" in files and "entities/alex-chen.md" in files
    index = (curated / "profile" / "INDEX.md").read_text(encoding="utf-8")
    assert "- [Profile: priya](priya.md) · " in index
    assert "[profile/](profile/INDEX.md) · 3 notes" in (curated / "INDEX.md").read_text(
        encoding="utf-8"
    )
    assert git(curated, "status", "--porcelain") == ""


# ---- runs ---------------------------------------------------------------------------------------


def test_second_run_with_nothing_new_makes_no_commit(curated: Path, tmp_path: Path) -> None:
    vault = copy(curated, tmp_path / "v")
    head = git(vault, "rev-parse", "HEAD")
    res = json.loads(memctl(vault, "curate", "--json").stdout)
    assert (res["memctl_result_version"], res["command"]) == (1, "curate")
    assert (res["turns_read"], res["added"], res["commit"]) == (0, 0, None)
    assert res["curator"] == "builtin" and res["stores"][0] == "decisions"
    assert git(vault, "rev-parse", "HEAD") == head


def test_dry_run_prints_the_diff_and_writes_nothing(ingested: Path, tmp_path: Path) -> None:
    vault = copy(ingested, tmp_path / "v")
    head = git(vault, "rev-parse", "HEAD")
    state = (vault / ".memctl" / "state" / "curation.json").read_bytes()  # written by init
    out = memctl(vault, "curate", "--dry-run").stdout
    assert "+++ b/profile/priya.md" in out and "+- Priya bills by the day." in out
    assert "dry run: nothing was written" in out
    assert git(vault, "rev-parse", "HEAD") == head
    assert git(vault, "status", "--porcelain") == ""
    assert (vault / ".memctl" / "state" / "curation.json").read_bytes() == state


def test_curating_as_sessions_arrive_gives_the_same_notes(
    first8: Path, curated: Path, tmp_path: Path
) -> None:
    vault = copy(first8, tmp_path / "v")
    memctl(vault, "curate")
    ingest(vault, sample_sessions()[8:])
    memctl(vault, "curate")
    for folder in ("profile", "entities", "knowledge", "decisions", "sessions", "feedback"):
        assert notes(vault, folder) == notes(curated, folder), folder


def test_human_edits_survive_and_are_committed_as_the_humans(curated: Path, tmp_path: Path) -> None:
    vault = copy(curated, tmp_path / "v")
    path = vault / "profile" / "dana.md"
    text = path.read_text(encoding="utf-8")
    text = text.replace(
        "- Dana prefers Terraform over Pulumi.", "- Dana prefers Terraform over Pulumi, by far."
    ).replace("## Preferences\n\n", "## Preferences\n\n- Dana reviews infra PRs on Fridays.\n")
    path.write_text(text, encoding="utf-8")
    new = tmp_path / "dana-new.jsonl"
    new.write_text(
        json.dumps(
            {
                "role": "user",
                "name": "Dana",
                "content": "I prefer Go over Rust for CLIs.",
                "timestamp": "2026-11-10T09:00:00Z",
            }
        )
        + "\n"
        + json.dumps({"role": "assistant", "content": "Noted."})
        + "\n",
        encoding="utf-8",
    )
    memctl(vault, "ingest", str(new), "--user", "dana", "--scope", "team")
    memctl(vault, "curate")
    text = path.read_text(encoding="utf-8")
    assert "- Dana reviews infra PRs on Fridays.\n" in text
    assert "Dana prefers Terraform over Pulumi, by far. [^" in text
    assert "- Dana prefers Go over Rust for CLIs. [^" in text
    subjects = git(vault, "log", "-2", "--format=%an|%s").splitlines()
    assert subjects[0].startswith("memctl agent|curate: 1 added")
    assert subjects[1].startswith("memctl user|edit: 1 note edited by hand")
    res = json.loads(memctl(vault, "diff", "--since", "1d", "--store", "profile", "--json").stdout)
    changes = [
        c for n in res["stores"]["profile"] for c in n["changes"] if n["path"] == "profile/dana.md"
    ]
    edited = next(c for c in changes if c["action"] == "edited")
    assert edited["human"] and edited["before"] == "Dana prefers Terraform over Pulumi."
    human_line = next(c for c in changes if "Fridays" in c["plain"])
    assert human_line["human"] and human_line["sources"] == []
    assert memctl(vault, "verify").returncode == 0


def test_a_tampered_quote_fails_verify_naming_file_and_line(curated: Path, tmp_path: Path) -> None:
    vault = copy(curated, tmp_path / "v")
    path = vault / "profile" / "marco.md"
    text = path.read_text(encoding="utf-8")
    path.write_text(
        text.replace('"I hate alerts nobody', '"I love alerts nobody'), encoding="utf-8"
    )
    proc = memctl(vault, "verify", check=False)
    assert proc.returncode == 1
    line = next(i for i, t in enumerate(path.read_text().splitlines(), 1) if "I love alerts" in t)
    assert f"profile/marco.md:{line}: raw/" in proc.stderr
    assert "quote is not verbatim in the turn" in proc.stderr
