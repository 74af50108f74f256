"""The built-in curator's patterns are generic: a team, people and facts it has never seen
(nothing from the sample transcripts) come out the same way the sample's do."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_curate import memctl, new_vault

FIRST = [
    (
        "user",
        "2027-01-05T10:00:00Z",
        "Hi. I'm a backend developer at Globex. I live in Toronto. Sam is our VP of Engineering "
        "and she's leading the Kubernetes upgrade. Our CI runs about 3000 builds a day.",
    ),
    ("assistant", "2027-01-05T10:01:00Z", "Noted. I prefer Jenkins, personally."),
    (
        "user",
        "2027-01-05T10:02:00Z",
        "Actually, I meant 300 builds a day, not 3000. I prefer Buildkite over GitHub Actions. "
        "Should we use Buildkite or Jenkins?",
    ),
    ("assistant", "2027-01-05T10:03:00Z", "Buildkite."),
    (
        "user",
        "2027-01-05T10:04:00Z",
        "We decided to adopt Buildkite because GitHub Actions minutes got expensive. "
        "Next I need to migrate the deploy pipeline. From now on, always show me the cost "
        "estimate first.\n\n```yaml\n# I prefer YAML anchors. We decided to use Helm.\n```",
    ),
]
LATER = [
    (
        "user",
        "2027-02-01T10:00:00Z",
        "Quick update: I moved to Montreal last week. I shipped the deploy pipeline migration "
        "yesterday. Sam wants weekly cost reports.",
    ),
]
ELSEWHERE = [  # another user's own scope, with a different Sam
    (
        "user",
        "2027-01-07T09:00:00Z",
        "My accountant Sam Reyes runs a small practice. I'm a freelance designer.",
    ),
]


def write(path: Path, turns: list[tuple[str, str, str]], name: str) -> Path:
    lines = [
        {"role": r, "content": c, "timestamp": ts, **({"name": name} if r == "user" else {})}
        for r, ts, c in turns
    ]
    path.write_text("".join(json.dumps(m) + "\n" for m in lines), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def globex(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("globex")
    vault = new_vault(tmp / "vault")
    a, b = write(tmp / "a.jsonl", FIRST, "Lena"), write(tmp / "b.jsonl", LATER, "Lena")
    memctl(vault, "ingest", str(a), str(b), "--user", "lena", "--scope", "team")
    c = write(tmp / "c.jsonl", ELSEWHERE, "Omar")
    memctl(vault, "ingest", str(c), "--user", "omar", "--scope", "user:omar")
    memctl(vault, "curate")
    return vault


def body(vault: Path, rel: str) -> str:
    text = (vault / rel).read_text(encoding="utf-8")
    return "\n".join(
        ln for ln in text.split("\n---\n", 1)[1].splitlines() if not ln.startswith("[^")
    )


def test_profile_role_preference_and_a_move(globex: Path) -> None:
    text = body(globex, "profile/lena.md")
    assert "- Lena is a backend developer at [[entities/globex|Globex]]. [^" in text
    assert "- Lena prefers Buildkite over GitHub Actions. [^" in text
    assert "- Lena moved to Montreal last week (as of 2027-02-01). [^" in text
    toronto = "[[entities/toronto|Toronto]]"  # a place named with a fact is an entity
    assert f"- 2027-01-05 → 2027-02-01 · superseded · Lena lives in {toronto}. [^" in text
    assert "Jenkins" not in text and "YAML" not in text  # the assistant's words, a code block


def test_correction_decision_people_and_a_closed_thread(globex: Path) -> None:
    know = body(globex, "knowledge/globex.md")
    assert "- [[entities/globex|Globex]]'s CI runs about 300 builds a day. [^" in know
    assert "· corrected · [[entities/globex|Globex]]'s CI runs about 3000 builds a day." in know
    decision = body(globex, "decisions/2027-01-05-adopt-buildkite.md")
    buildkite = "[[entities/buildkite|Buildkite]]"  # a tool named with a decision: an entity
    # "we decided" is the speaker's team's call, not their employer's
    assert f"- The team decided to adopt {buildkite}. [^" in decision
    assert "## Why\n\n- GitHub Actions minutes got expensive. [^" in decision
    assert f"## Alternatives\n\n- Considered {buildkite} and Jenkins. [^" in decision
    assert not list((globex / "decisions").glob("*helm*"))
    sam = body(globex, "entities/sam.md")
    assert "- Sam is [[entities/globex|Globex]]'s VP of Engineering. [^" in sam
    assert "- Sam is leading the Kubernetes upgrade. [^" in sam
    assert "- Sam wants weekly cost reports. [^" in sam
    first = next((globex / "sessions").glob("2027-01-05-*.md")).name
    history = body(globex, f"sessions/{first}").split("## History", 1)[1]
    assert "· resolved · Lena needs to migrate the deploy pipeline." in history
    [prop] = (globex / "instructions").glob("*.proposed.md")
    assert "- From now on, always show me the cost estimate first. [^" in body(
        globex, f"instructions/{prop.name}"
    )


def test_another_sam_in_another_scope_is_another_entity(globex: Path) -> None:
    reyes = (globex / "entities" / "sam-reyes.md").read_text(encoding="utf-8")
    assert "scope: user:omar" in reyes and "- Sam Reyes is Omar's accountant. [^" in reyes
    assert "Globex" not in reyes and "Kubernetes" not in reyes
    assert "Reyes" not in (globex / "entities" / "sam.md").read_text(encoding="utf-8")
    assert json.loads(memctl(globex, "verify", "--json").stdout)["ok"]
