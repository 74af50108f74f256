"""How the built-in curator reads a person's own words: an introduction fills the
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
    assert "Lena teaches chemistry in [[entities/porto|Porto]]." in profile  # linked (redteam20)
    assert (
        "Lena's school just switched to [[entities/google-classroom|Google Classroom]]." in profile
    )
    assert "Lena very much likes short answers." in profile
    every = "\n".join(t for t in learned.values())
    assert "is Lena" not in every and "Root" not in every  # the named human is the user
    # ... and the profile is theirs: no --user, so the login name would be the last resort
    assert [p for p in learned if p.startswith("profile/")] == ["profile/lena.md"], list(learned)
    assert "title: 'Profile: lena'" in learned["profile/lena.md"]


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
        # an adverb without -ly between "we" and its verb is no verb ("we then ran")
        ("we then ran the migration", "Priya's team then ran the migration"),
        ("we now ship daily", "Priya's team now ships daily"),
        ("we again broke prod", "Priya's team again broke prod"),
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


# -- redteam20: introductions of other shapes, and a name from one chat is no one else's ------

def _learn(tmp_path: Path, said: list[str], *extra: str) -> dict[str, str]:
    import json

    tmp_path.mkdir(parents=True, exist_ok=True)
    src = tmp_path / "chat.jsonl"
    rows = []
    for i, text in enumerate(said):
        rows.append({"role": "user", "content": text, "timestamp": f"2026-04-0{1 + i}T10:00:00Z"})
        rows.append({"role": "assistant", "content": "Noted.",
                     "timestamp": f"2026-04-0{1 + i}T10:00:05Z"})
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    root = new_vault(tmp_path / "v")
    for path in extra:
        memctl(root, "ingest", path)
    memctl(root, "ingest", str(src))  # no --user: the login name, unless the person says theirs
    memctl(root, "curate")
    assert "verify: ok" in memctl(root, "verify").stdout
    return {
        p.relative_to(root).as_posix(): p.read_text("utf-8")
        for p in sorted(root.rglob("*.md"))
        if not p.relative_to(root).as_posix().startswith(("raw/", ".memctl/"))
        and p.name != "INDEX.md"
    }


def _tag(learned: dict[str, str], slug: str) -> str:
    text = learned.get(f"entities/{slug}.md", "")
    m = __import__("re").search(r"tags:\n- (\w+)", text)
    return m.group(1) if m else "(no note)"


@pytest.mark.parametrize(
    ("said", "lines", "places", "orgs", "products"),
    [
        (["hi, I'm Anouk, I run data infra at a freight startup in Utrecht; we just moved "
          "from Redshift to ClickHouse"],
         ["Anouk runs data infra at a freight startup in [[entities/utrecht|Utrecht]].",
          "Anouk's team just moved from [[entities/redshift|Redshift]] to "
          "[[entities/clickhouse|ClickHouse]]."],
         ["utrecht"], [], ["redshift", "clickhouse"]),
        (["Hello! My name is Tunde and I'm a backend developer at Flutterwave in Accra. "
          "Our team recently switched from Heroku to Render."],
         ["Tunde is a backend developer at [[entities/flutterwave|Flutterwave]] in "
          "[[entities/accra|Accra]].",
          "Tunde's team recently switched from [[entities/heroku|Heroku]] to "
          "[[entities/render|Render]]."],
         ["accra"], ["flutterwave"], ["heroku", "render"]),
        (["hey, marta here. im a pharmacist at Farmacia Central in Braga and we just "
          "switched to Sifarma for stock"],
         ["Marta is a pharmacist at [[entities/farmacia-central|Farmacia Central]] in "
          "[[entities/braga|Braga]].",
          "Marta's team just switched to [[entities/sifarma|Sifarma]] for stock."],
         ["braga"], ["farmacia-central"], ["sifarma"]),
    ],
)
def test_introductions_of_other_shapes(
    tmp_path: Path, said: list[str], lines: list[str], places: list[str], orgs: list[str],
    products: list[str],
) -> None:
    learned = _learn(tmp_path, said)
    profile = "\n".join(claims(learned, "profile"))
    for line in lines:
        assert line in profile, profile
    said_lines = "\n".join(line for f in ("profile", "entities", "sessions", "decisions")
                           for line in claims(learned, f))
    assert "Root" not in said_lines and " we " not in said_lines.lower(), said_lines
    for slug in places:
        assert _tag(learned, slug) == "place", slug
    for slug in orgs:
        assert _tag(learned, slug) == "organisation", slug
    for slug in products:
        assert _tag(learned, slug) not in ("place", "(no note)"), slug  # a vendor, no city
        # each entity holds the clause that names it, not its neighbour's ("is a nurse at")
        assert " is a " not in learned[f"entities/{slug}.md"].split("\n[^", 1)[0], slug


def test_one_persons_organisation_is_not_anothers_we(tmp_path: Path) -> None:
    """A profile line about Tomasz at Kolejka (earlier settings) does not make a later chat's
    "we" Kolejka when that chat is someone else speaking (or no one named)."""
    first = _learn(tmp_path / "a", ["I'm Tomasz, I'm a platform engineer at Kolejka in Gdansk."])
    assert any("Kolejka" in c for c in claims(first, "profile"))
    import shutil

    root = tmp_path / "a" / "v"
    src = tmp_path / "b.jsonl"
    src.write_text(
        '{"role": "user", "content": "hi, I\'m Sanne. we decided on tailwind, css modules '
        'got messy", "timestamp": "2026-05-01T10:00:00Z"}\n'
        '{"role": "assistant", "content": "OK.", "timestamp": "2026-05-01T10:00:05Z"}\n',
        encoding="utf-8",
    )
    memctl(root, "ingest", str(src))
    memctl(root, "curate")
    decided = "\n".join(
        line for p in sorted((root / "decisions").glob("*.md")) if p.name != "INDEX.md"
        for line in p.read_text("utf-8").splitlines() if line.startswith("- ")
    )
    assert "Kolejka" not in decided, decided
    assert "Sanne's team decided on tailwind" in decided, decided
    shutil.rmtree(tmp_path / "a")


def test_terse_chat_switches_and_wants_read_as_said(tmp_path: Path) -> None:
    """redteam20: "im switching X to Y" and "we've moved X from A to B" are decisions the
    person made; "I want terse answers" wants a thing, not "wants to terse answers"; "we
    decided on vitest" keeps its "on"."""
    import json

    said = [
        "use uv not pip",  # the first ask: the session's goal, and a standing instruction too
        "im switching the ci to buildkite, gh actions minutes got too pricey for us",
        "we've moved the docs from sphinx to mkdocs",
        "I want terse answers",
        "we decided on vitest, jest was flaky",
        "I'd rather we pin the lambda runtime to node 20 instead of chasing 22, since it lags",
        "we deploy with fly and the release step hangs. can you find out why?",
    ]
    src = tmp_path / "terse.jsonl"
    rows = []
    for i, text in enumerate(said):
        day = f"2026-04-{1 + i:02d}"
        rows += [{"role": "user", "content": text, "timestamp": f"{day}T10:00:00Z"},
                 {"role": "assistant", "content": "OK.", "timestamp": f"{day}T10:01:00Z"}]
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    root = new_vault(tmp_path / "v")
    memctl(root, "ingest", str(src), "--user", "dana")
    memctl(root, "curate")
    assert "verify: ok" in memctl(root, "verify").stdout
    learned = {p.relative_to(root).as_posix(): p.read_text("utf-8")
               for p in root.rglob("*.md") if not str(p.relative_to(root)).startswith("raw")}
    decided = "\n".join(claims(learned, "decisions"))
    said = "Dana is switching the ci to buildkite, gh actions minutes got too pricey for them."
    assert said in decided, decided
    assert "Dana's team has moved the docs from sphinx to mkdocs." in decided
    assert "decided on vitest" in decided and "decided to vitest" not in decided
    assert ("Dana would rather they pin the lambda runtime to node 20 instead of chasing 22, "
            "since it lags.") in decided  # a choice with the option it beats and its reason
    note = learned["decisions/pin-the-lambda-runtime-to-node-20.md"]
    assert "title: 'Decision: Pin the lambda runtime to node 20'" in note  # not "... instead"
    every = "\n".join(claims(learned, "sessions") + claims(learned, "profile"))
    assert "Dana wants terse answers." in every and "wants to terse" not in every
    assert "- Use uv not pip. [^" in learned["instructions/dana.proposed.md"]
    # the statement a request points back at keeps the person's name as written, verb agreeing
    assert "Dana's team deploys with fly" in every and "dana's" not in every, every


@pytest.mark.parametrize(
    ("fn", "said", "want"),
    [
        # a hyphenated name is one identifier: an AWS region, a package, a compound
        ("group", "our bucket is in us-east-1", "Acme's bucket is in us-east-1"),
        ("group", "we moved the cluster to us-west-2", "Acme moved the cluster to us-west-2"),
        ("group", "we now ship daily, we then tag it", "Acme now ships daily, they then tag it"),
        ("speaker", "my-app deploys to us-west-2 and my laptop is slow",
         "my-app deploys to us-west-2 and Dana's laptop is slow"),
        ("speaker", "I like me-first APIs", "Dana likes me-first APIs"),
        ("speaker", "see `my cfg` then my notes", "see `my cfg` then Dana's notes"),
        ("speaker", "I so much prefer tabs", "Dana so much prefers tabs"),
        ("third", "I so much prefer tabs", "Dana so much prefers tabs"),
        ("third", "I'm on it, i'll push later", "Dana is on it, they'll push later"),
        ("third", "our bucket is in us-east-1", "Dana's team's bucket is in us-east-1"),
    ],
)
def test_pronouns_never_reach_into_hyphenated_names(fn: str, said: str, want: str) -> None:
    """redteam20: the prose reader rewrote "us-east-1" to "them-east-1" and "my-app" to
    "Dana's-app"; "I so much prefer" became "soes much prefer"."""
    from memctl.curate.builtin.resolution import group_voice

    got = {
        "group": lambda s: group_voice(s, "Acme"),
        "speaker": lambda s: speaker_voice(s, "Dana"),
        "third": lambda s: third_person(s, "Dana", "Claude"),
    }[fn](said)
    assert got == want


def test_chatgpt_settings_name_the_user_and_their_entities(tmp_path: Path) -> None:
    """redteam20: a real export's settings node (the app's preamble, fenced profile, fenced
    instructions) through ingest and curate: the preferred name is who says "we" in that chat
    too, and the employer, city and the products the profile names get entity notes."""
    import json

    profile = (
        "The user provided the following information about themselves. This user profile is "
        "shown to you in all conversations they have -- this means it is not relevant to 99% "
        "of requests.\nUser profile:\n```Preferred name: Ayesha\nRole: SRE at Bolt in Tallinn\n"
        "Other Information: We migrated from Nagios to Prometheus in March.\n```"
    )
    instr = ("The user provided the additional info about how they would like you to respond:\n"
             "```Answer with shell commands first.\n```")

    def msg(nid: str, role: str, content: dict, t: float) -> dict:
        return {"id": nid, "author": {"role": role, "metadata": {}}, "create_time": t,
                "content": content, "metadata": {}, "recipient": "all"}

    mapping = {
        "root": {"id": "root", "message": None, "parent": None, "children": ["ctx"]},
        "ctx": {"id": "ctx", "parent": "root", "children": ["u1"], "message": msg(
            "ctx", "user", {"content_type": "user_editable_context", "user_profile": profile,
                            "user_instructions": instr}, 1747040000.0)},
        "u1": {"id": "u1", "parent": "ctx", "children": ["a1"], "message": msg(
            "u1", "user", {"content_type": "text", "parts": [
                "we're going with grafana for the on-call dashboards"]}, 1747040100.0)},
        "a1": {"id": "a1", "parent": "u1", "children": [], "message": msg(
            "a1", "assistant", {"content_type": "text", "parts": ["Good choice."]},
            1747040105.0)},
    }
    src = tmp_path / "conversations.json"
    src.write_text(json.dumps([{"title": "Dashboards", "conversation_id": "c-ay-1",
                                "mapping": mapping, "current_node": "a1",
                                "create_time": 1747040000.0}]), encoding="utf-8")
    root = new_vault(tmp_path / "v")
    memctl(root, "ingest", str(src))
    memctl(root, "curate")
    assert "verify: ok" in memctl(root, "verify").stdout
    learned = {p.relative_to(root).as_posix(): p.read_text("utf-8")
               for p in root.rglob("*.md") if not str(p.relative_to(root)).startswith("raw")}
    decided = "\n".join(claims(learned, "decisions"))
    assert "Ayesha's team decided to go with grafana" in decided, decided
    assert "Root" not in decided
    tags = {slug: _tag(learned, slug) for slug in ("bolt", "tallinn", "nagios", "prometheus")}
    assert tags == {"bolt": "organisation", "tallinn": "place", "nagios": "tool",
                    "prometheus": "tool"}, tags
    assert "- Answer with shell commands first. [^" in "\n".join(learned.values())


def test_a_chat_choice_is_no_feedback_and_one_sentence_is_said_once(tmp_path: Path) -> None:
    """redteam20: "lets go with X, Y was too slow for us" was filed as feedback that did not
    work; "I want short answers, and we always chart in English" was kept twice in one note
    ("... Root and others always chart ..." and "... they always chart ...")."""
    learned = _learn(tmp_path, [
        "hi, I'm Noor, I run analytics at a bakery chain in Ghent",
        "ok. lets go with duckdb for the weekly reports, pandas was too slow for us",
        "I want short answers, and we always write SQL in lower case.",
    ])
    assert not claims(learned, "feedback"), claims(learned, "feedback")
    assert any("chose duckdb for the weekly reports" in c for c in claims(learned, "decisions"))
    notes = [c for c in claims(learned, "sessions") + claims(learned, "profile")
             if "short answers" in c]
    assert len(notes) == 1, notes
    assert "Noor's team always writes SQL in lower case" in notes[0], notes


def test_settings_without_fences_learn_only_the_persons_lines() -> None:
    """redteam20: an export whose settings carry no ``` fences had the app's preamble ("The
    user provided the following information about themselves", "Before answering, quietly
    think ...") learned as the person's profile and instructions."""
    from memctl.core.model import Message
    from memctl.core.raw import RawHeader
    from memctl.curate.builtin.custom_context import claims as context_claims
    from memctl.curate.model import Batch
    from memctl.curate.specs import load_specs
    from memctl.vault import Vault

    settings = (
        "The user provided the following information about themselves. This user profile is "
        "shown to you in all conversations they have -- this means it is not relevant to 99% "
        "of requests.\nBefore answering, quietly think about whether the user's request is "
        "related.\nUser profile:\nRole: glassblower\nOther Information: I work in Murano.\n\n"
        "The user provided the additional info about how they would like you to respond:\n"
        "Answer in Italian when I write in Italian."
    )
    ctx = Message("user", settings, "ctx-1", None, None, {"content_type": "user_editable_context"})
    header = RawHeader("s", "t", "chatgpt", "x", "root", "team", None, None, ("user",), 1, "")
    root = new_vault(Path(__import__("tempfile").mkdtemp()) / "v")
    batch = Batch("raw/s.md", header, [ctx], 1, load_specs(Vault.open(root)), None, "2026-01-01")
    got = [(p.store, p.text) for p in context_claims(batch, "Gia")]  # type: ignore[arg-type]
    assert ("profile", "Gia's role: glassblower.") in got
    assert ("profile", "Gia works in Murano.") in got
    assert ("instructions", "Answer in Italian when I write in Italian.") in got  # as stated
    assert not any("provided" in t or "quietly" in t or "shown to" in t for _, t in got), got
