"""What the builtin curator learns from talk it has never seen: facts, not pleasantries.

Two made-up conversations (nothing from the sample transcripts or LoCoMo): two friends
catching up, where nearly everything said is chatter and a few lines are facts about each
speaker's life; and a developer talking to an agent without `--user`, whose transcript names
him. Each finding of the learning-quality issue has a line here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_curate import memctl, new_vault

from memctl.core.notes import parse_note

FRIENDS = [
    ("Noor", "Hey Tobi! Good to see you! How have you been?"),
    ("Tobias", "Hey Noor! I'm swamped. I adopted a rescue greyhound named Pixel last week."),
    ("Noor", "Wow, that's amazing! Your dog sounds so cute! Your cooking skills are awesome too."),
    ("Noor", "I started a pottery class at the community center yesterday."),
    ("Tobias", "Never say never! I'll see you around!"),
    ("Noor", "I love hiking in the Dolomites with my sister."),
    ("Tobias", "I work as a nurse at St. Mary's hospital. I decided to write about this."),
    ("Noor", "The sky was so gorgeous! Thanks so much, Tobias! Take care!"),
    ("Tobias", "Sorry to hear about your knee. Hope you feel better soon."),
]

DEV_FIRST = [
    ("user", "Hi, I'm Omar, I run the data platform team at Contoso. I live in Lyon."),
    ("assistant", "Nice to meet you, Omar. What are you working on?"),
    ("user", "I prefer pnpm over npm. Our biggest customer is Northwind."),
    ("assistant", "Noted."),
    ("user", "We decided to use Decimal for money because floats lose cents."),
    ("assistant", "Good call."),
]
DEV_LATER = [
    ("user", "OK, so we decided to use Decimal for all money amounts."),
    ("assistant", "Yes."),
]


NOISE = ("amazing", "awesome", "cute", "gorgeous", "never say never", "see you", "thanks",
         "take care", "sorry to hear", "feel better", "good to see")  # fmt: skip


def _jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _claims(vault: Path) -> list[tuple[str, str, str, str]]:
    """(path, section, text, scope) of every active claim outside raw/ and proposals."""
    out = []
    for f in sorted(vault.rglob("*.md")):
        rel = f.relative_to(vault).as_posix()
        if rel.startswith(("raw/", ".")) or f.name == "INDEX.md" or ".proposed." in f.name:
            continue
        note = parse_note(f.read_text(encoding="utf-8"), rel)
        out += [(rel, s.name, c.text, note.scope) for s, c in note.active_claims()]
    return out


@pytest.fixture(scope="module")
def friends(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("friends")
    vault = new_vault(tmp / "vault")
    rows = [
        {"role": "user", "name": who, "content": text, "timestamp": "2024-03-11T18:00:00Z"}
        for who, text in FRIENDS
    ]
    src = _jsonl(tmp / "catch-up.jsonl", rows)
    memctl(vault, "ingest", str(src), "--user", "noor", "--scope", "team")
    memctl(vault, "curate")
    return vault


def test_chatter_between_friends_never_becomes_memory(friends: Path) -> None:
    texts = [t for _, _, t, _ in _claims(friends)]
    assert texts, "the facts in the conversation should have been learned"
    for t in texts:
        low = t.lower()
        for noise in NOISE:
            assert noise not in low, t
    # no instructions from "Never say never!", no decision "Write about this", no feedback
    assert not list((friends / "instructions").glob("*.md*")) or all(
        p.name == "INDEX.md" for p in (friends / "instructions").glob("*.md")
    )
    assert [p.name for p in (friends / "decisions").glob("*.md")] in ([], ["INDEX.md"])
    assert [p.name for p in (friends / "feedback").glob("*.md")] in ([], ["INDEX.md"])
    assert not [t for t in texts if "The team" in t]  # "we" between friends is no team


def test_each_speaker_is_their_own_i_and_you_is_the_other(friends: Path) -> None:
    claims = _claims(friends)
    texts = [t for _, _, t, _ in claims]
    for t in texts:
        assert not re.search(r"\b(?:I|I'm|me|my|you|your)\b", t), t  # every pronoun resolved
    assert any(t.startswith("Noor started a pottery class at the community center on 2024-03-10")
               for t in texts), texts  # fmt: skip
    assert any(
        t.startswith("Tobias adopted a rescue greyhound named Pixel the week before 2024-03-11")
        for t in texts
    ), texts
    prefs = [(p, t) for p, s, t, _ in claims if s == "Preferences"]
    assert any(p == "profile/noor.md" and "Noor loves hiking in the Dolomites" in t
               for p, t in prefs), prefs  # fmt: skip
    # Tobias said it of himself: his own profile, as visible as the team session it came from
    tobias = [(t, scope) for p, _, t, scope in claims if p == "profile/tobias.md"]
    assert ("Tobias works as a nurse at St. Mary's hospital.", "team") in tobias, tobias
    assert not [t for p, _, t, _ in claims if p == "profile/noor.md" and "Tobias" in t]


def test_every_learned_line_verifies(friends: Path) -> None:
    r = memctl(friends, "verify", "--json")
    assert json.loads(r.stdout)["ok"] is True, r.stdout


@pytest.fixture(scope="module")
def omar(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("omar")
    vault = new_vault(tmp / "vault")
    sessions = (("first", DEV_FIRST, "2027-03-01"), ("later", DEV_LATER, "2027-03-08"))
    for name, turns, day in sessions:
        rows = [
            {"role": r, "content": c, "timestamp": f"{day}T09:00:00Z"}
            | ({"name": "Omar"} if r == "user" else {})
            for r, c in turns
        ]
        src = _jsonl(tmp / f"{name}.jsonl", rows)
        r = memctl(vault, "ingest", str(src), "--scope", "team")  # no --user: the transcript says
        assert "user omar (named in the transcript)" in r.stdout, r.stdout
    memctl(vault, "curate")
    return vault


def test_the_user_is_who_spoke_not_the_login(omar: Path) -> None:
    profiles = sorted(p.name for p in (omar / "profile").glob("*.md") if p.name != "INDEX.md")
    assert profiles == ["omar.md"], profiles
    raw = next((omar / "raw").rglob("hi-i-m-omar-*.md")).read_text(encoding="utf-8")
    assert "\nuser: omar\n" in raw and "\nscope: team\n" in raw


def test_first_person_facts_of_a_developer(omar: Path) -> None:
    text = (omar / "profile/omar.md").read_text(encoding="utf-8")
    assert "Omar lives in [[entities/lyon|Lyon]]." in text  # the place is an entity too
    assert "Omar prefers pnpm over npm." in text
    assert re.search(r"Omar runs the data platform team at \[\[entities/contoso\|Contoso\]\]", text)


def test_organisations_named_with_a_fact_become_entities(omar: Path) -> None:
    names = {p.stem for p in (omar / "entities").glob("*.md")} - {"INDEX"}
    assert {"contoso", "northwind", "lyon"} <= names, names
    assert "omar" not in names  # the speaker has a profile, not an entity note


def test_one_decision_restated_is_one_note(omar: Path) -> None:
    notes = [p for p in (omar / "decisions").glob("*.md") if p.name != "INDEX.md"]
    assert len(notes) == 1, [p.name for p in notes]
    note = parse_note(notes[0].read_text(encoding="utf-8"), "decisions/" + notes[0].name)
    [decided] = [c for s, c in note.active_claims() if s.name == "Decision" and "decided" in c.text]
    assert len(decided.refs) == 2, decided  # the restatement reinforced it, a week later
    assert any("Floats lose cents" in c.text for s, c in note.active_claims() if s.name == "Why")
