"""How the built-in curator reads a person's own words (issue 20): an introduction fills the
profile and names entities, terse lower-case chat counts, and pronouns are resolved in prose
only, never inside a domain, URL, path, identifier or quote. Through the real CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_curate import memctl, new_vault

from memctl.curate.builtin.coding.voice import third_person
from memctl.curate.builtin.resolution import speaker_voice

DATA = Path(__file__).parent / "data" / "chat" / "introduction.jsonl"


@pytest.fixture(scope="module")
def learned(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    root = new_vault(tmp_path_factory.mktemp("intro") / "v")
    memctl(root, "ingest", str(DATA), "--scope", "team")
    memctl(root, "curate")
    out = {}
    for p in sorted(root.rglob("*.md")):
        rel = p.relative_to(root).as_posix()
        if not rel.startswith(("raw/", ".memctl/")) and not rel.endswith("INDEX.md"):
            out[rel] = p.read_text("utf-8")
    assert "verify: ok" in memctl(root, "verify").stdout
    return out


def claims(learned: dict[str, str], folder: str) -> list[str]:
    return [
        line
        for rel, text in learned.items()
        if rel.startswith(folder + "/")
        for line in text.splitlines()
        if line.startswith("- ") and "[^" in line
    ]


def test_an_introduction_fills_the_profile_in_the_persons_name(learned) -> None:
    profile = "\n".join(claims(learned, "profile"))
    assert "Lena teaches chemistry in Porto." in profile
    assert (
        "Lena's school just switched to [[entities/google-classroom|Google Classroom]]." in profile
    )
    assert "Lena very much likes short answers." in profile
    every = "\n".join(t for t in learned.values())
    assert "is Lena" not in every and "Root" not in every  # the named human is the user


def test_an_introduction_names_its_places_and_products(learned) -> None:
    assert "entities/porto.md" in learned and "tags:\n- place" in learned["entities/porto.md"]
    vendor = learned["entities/google-classroom.md"]
    assert "Lena's school just switched to Google Classroom." in vendor
    assert "teaches chemistry" not in vendor  # each clause cites itself, not its neighbour


def test_terse_lower_case_chat_counts(learned) -> None:
    every = "\n".join(claims(learned, "sessions") + claims(learned, "decisions"))
    assert "Lena is doing an engine swap on their old golf this weekend." in every
    assert "Lena asked the assistant to use pnpm for the class site." in every
    assert "Lena chose vite." in every


def test_pronouns_are_resolved_in_prose_only(learned) -> None:
    every = "\n".join(learned.values())
    assert "danieldemmel.them" not in every
    assert "danieldemmel.me" in every and "https://danieldemmel.me/notes" in every
    assert speaker_voice("I host it on danieldemmel.me, see `my_cfg`", "Dana") == (
        "Dana hosts it on danieldemmel.me, see `my_cfg`"
    )
    assert third_person('we said "I am done" in my repo', "Dana", "Claude") == (
        'Dana\'s team said "I am done" in Dana\'s repo'
    )


def test_chatgpt_custom_instructions_are_learned_as_stated() -> None:
    """The `user_editable_context` turn (kept verbatim by ingest): profile and instructions."""
    from memctl.core.model import Message
    from memctl.core.raw import RawHeader
    from memctl.curate.builtin.custom_context import claims as context_claims
    from memctl.curate.builtin.custom_context import stated_name
    from memctl.curate.model import Batch
    from memctl.curate.specs import load_specs
    from memctl.vault import Vault

    settings = (
        "The user provided the following information about themselves. This user profile is "
        "shown to you in all conversations they have.\nUser profile:\n```Preferred name: Lena\n"
        "Role: chemistry teacher\nOther Information: I teach in Porto. I prefer metric units.```"
        "\n\nThe user provided the additional info about how they would like you to respond:\n"
        "```Answer in British English.\nKeep answers under 200 words.```"
    )
    ctx = Message("user", settings, "ctx-1", None, None, {"content_type": "user_editable_context"})
    chat = Message("user", "What is a mole?", "m1")
    header = RawHeader("s", "t", "chatgpt", "x", "root", "team", None, None, ("user",), 2, "")
    root = new_vault(Path(__import__("tempfile").mkdtemp()) / "v")
    batch = Batch(
        "raw/s.md", header, [ctx, chat], 1, load_specs(Vault.open(root)), None, "2026-01-01"
    )  # type: ignore[arg-type]
    assert stated_name(batch) == "Lena"
    got = {(p.store, p.text) for p in context_claims(batch, "Lena")}
    assert ("profile", "Lena's role: chemistry teacher.") in got
    assert ("profile", "Lena teaches in Porto.") in got
    assert ("profile", "Lena prefers metric units.") in got
    assert ("instructions", "Answer in British English.") in got
    assert ("instructions", "Keep answers under 200 words.") in got
    assert not any("provided the following" in t or "Lena is Lena" in t for _, t in got)
    for p in context_claims(batch, "Lena"):
        assert all(q.quote in settings for q in p.citations)  # quoted verbatim


# -- redteam20: the third person stays grammatical on kinds of typing the first fixes missed --

@pytest.mark.parametrize(
    ("said", "want"),
    [
        # an object pronoun at the end of a sentence is prose, not a domain ("me." is no "me.io")
        ("use yarn in every example you give me.", "use yarn in every example Claude gives Priya."),
        ("ping me.", "ping Priya."),
        # typed without an apostrophe, lower case
        ("im switching the build to bun btw", "Priya is switching the build to bun btw"),
        ("ive moved the docs to mkdocs", "Priya has moved the docs to mkdocs"),
        # "we" at the head of a sentence is the person's team, and its verb agrees
        ("we run gunicorn with 8 workers.", "Priya's team runs gunicorn with 8 workers."),
        ("We migrated from Jenkins in May.", "Priya's team migrated from Jenkins in May."),
        ("we'll add workers in Q3", "Priya's team will add workers in Q3"),
        ("we don't deploy on fridays", "Priya's team doesn't deploy on fridays"),
        ("my blog is meandyou.dev", "Priya's blog is meandyou.dev"),
        ("Our CI runs on /home/me/ci.sh", "Priya's team's CI runs on /home/me/ci.sh"),
        # a clause of its own after "and"/"but" is the person again, by name
        ('our lead said "we never ship on fridays" and I agree with her.',
         'Priya\'s team\'s lead said "we never ship on fridays" and Priya agrees with her.'),
        ("the cache is fine, but im worried about the queue",
         "the cache is fine, but Priya is worried about the queue"),
        ("since we'll add workers", "since they'll add workers"),
        # "you" + verb agrees; after a modal or "let" it is a bare infinitive and stays
        ("if you need my token, ask", "if Claude needs Priya's token, ask"),
        ("can you add a test", "can Claude add a test"),
        ("let you decide", "let Claude decide"),
        # never inside code, paths, URLs, identifiers or quotes
        ("see `my_cfg` and getMyConfig() at https://me.dev/me",
         "see `my_cfg` and getMyConfig() at https://me.dev/me"),
    ],
)
def test_third_person_stays_grammatical(said: str, want: str) -> None:
    assert third_person(said, "Priya", "Claude") == want
