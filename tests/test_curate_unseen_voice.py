"""The offline curator's third-person rewrite on sentences nobody tuned it on:
it writes only what it can get right. A rewrite that does not pass the check (each changed
word a known rewrite, the verb after a rewritten subject a verb, no doubled suffix, no
"X's team's team", no "they" that points at nobody, every content word kept) gives way to
the person's own words, verbatim, with who said them. Sentences are never cut inside a code
span or a link; a sentence whose subject points outside it is no claim; names keep their
whole possessive; an employer is not the one who decided. Transcripts are written here."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from ccsession import Session
from test_curate import memctl, new_vault
from test_curate_facts import _claims as scoped_claims

from memctl.curate.builtin.sentences import prose_sentences


def _claims(vault: Path) -> list[tuple[str, str, str]]:
    """(path, section, text) of every active claim outside raw/ and proposals; verified."""
    assert "verify: ok" in memctl(vault, "verify").stdout
    return [(rel, section, text) for rel, section, text, _ in scoped_claims(vault)]


def _chat(tmp: Path, rows: list[tuple[str, str]], named: bool, user: str) -> Path:
    """A chat: between named people (`named`), or a person and an assistant."""
    vault = new_vault(tmp / "vault")
    lines = [
        {"role": "user", "name": who, "content": text} if named
        else {"role": who, "content": text}
        for who, text in rows
    ]  # fmt: skip
    for r in lines:
        r["timestamp"] = "2024-03-11T18:00:00Z"
    src = tmp / "chat.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    memctl(vault, "ingest", str(src), "--user", user, "--scope", "team")
    memctl(vault, "curate")
    return vault


def _coding(tmp: Path, turns: list[str]) -> Path:
    """A coding session: each human turn answered by a tool call, so it reads as coding."""
    s = Session()
    for t in turns:
        s.user(t)
        s.bash("git status", "nothing to commit, working tree clean")
    vault = new_vault(tmp / "vault")
    memctl(vault, "ingest", str(s.write_to(tmp / "s.jsonl")), "--scope", "team",
           "--user", "dana")  # fmt: skip
    memctl(vault, "curate")
    return vault


# Garbled English the rewrite used to write: a suffix on a non-verb ("rely ons", "apply
# fors", "reply toes"), a suffix twice ("doeses"), a possessive of a possessive ("team's
# team"), a name twice ("Claude Claude"), or a "they" that opens a clause about nobody.
_GARBLED = re.compile(
    r"\b\w+(?:eses|ieses)\b|\b(?:on|for|to|at|in|with|of|about)(?:s|es)\b|"
    r"\b(\w+)'s team's team\b|\b([A-Z]\w+) \2\b"
)


def _garbled(text: str) -> bool:
    return bool(_GARBLED.search(text))


@pytest.fixture(scope="module")
def friends(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str, str]]:
    rows = [
        ("Evan", "Hey Calvin! I do volunteer work at the animal shelter every weekend."),
        ("Calvin", "I rely on my guitar to relax after long shifts at the hospital."),
        ("Evan", "I do yoga with my sister every Sunday morning."),
        ("Calvin", "I apply for grants every year for the music school."),
        ("Evan", "I really reply to every letter my grandmother sends me."),
        ("Calvin", "That content is wrong on the festival website and nobody fixes it."),
        ("Evan", "Those are from the trip to Lisbon with my cousins last summer."),
        ("Calvin", "Jamie Jones' team in Porto is now an hour behind me."),
        ("Evan", "I adopted a rescue greyhound named Pixel last week."),
    ]
    return _claims(_chat(tmp_path_factory.mktemp("friends"), rows, named=True, user="evan"))


def test_a_rewrite_that_fails_the_check_keeps_the_persons_words(
    friends: list[tuple[str, str, str]],
) -> None:
    texts = [t for _, _, t in friends]
    assert not [t for t in texts if _garbled(t)], texts
    # each sentence is still learned: rewritten right, or quoted with who said it
    for said, right in (
        ("I do volunteer work at the animal shelter", "Evan does volunteer work"),
        ("I rely on my guitar", "Calvin relies on"),
        ("I apply for grants", "Calvin applies for grants"),
        ("I really reply to every letter", "Evan really replies to"),
    ):
        hit = [t for t in texts if said in t or right in t]
        assert hit, (said, texts)
        for t in hit:
            if said in t:
                assert re.match(r"^(?:Evan|Calvin) said: \"", t), t
    # a plain sentence the rewrite gets right is still rewritten, not quoted
    assert any(t.startswith("Evan adopted a rescue greyhound") for t in texts), texts


def test_a_subject_that_points_outside_the_sentence_is_no_claim(
    friends: list[tuple[str, str, str]],
) -> None:
    texts = [t for _, _, t in friends]
    assert not [t for t in texts if re.match(r"^(?:That content|Those|These|It) ", t)], texts


def test_a_possessive_name_keeps_the_whole_name(
    friends: list[tuple[str, str, str]],
) -> None:
    notes = {p for p, _, _ in friends if p.startswith("entities/")}
    assert "entities/jamie-jones.md" in notes, sorted(notes)
    assert not any(re.search(r"/jamie-jone\.md$|/jame\.md$", p) for p in notes), notes


def test_a_tool_named_by_its_owner_is_not_a_clipped_name(tmp_path: Path) -> None:
    rows = [
        ("user", "We use Alex's deploy scripts for the payments service."),
        ("assistant", "Noted."),
        ("user", "We switched to Mateus’s fork of the queue library last month."),
        ("assistant", "Noted."),
        ("user", "We switched to Buildkite for the billing jobs last month."),
        ("assistant", "Noted."),
    ]
    claims = _claims(_chat(tmp_path, rows, named=False, user="dana"))
    notes = {p for p, _, _ in claims if p.startswith("entities/")}
    assert "entities/buildkite.md" in notes, notes  # a tool named plainly is still one
    assert not ({"entities/ale.md", "entities/mateu.md"} & notes), notes


def test_an_employer_is_not_the_one_who_decided(tmp_path: Path) -> None:
    rows = [
        ("user", "I work at Zalando. We decided to go with SQLite for the local cache."),
        ("assistant", "Noted."),
    ]
    claims = _claims(_chat(tmp_path, rows, named=False, user="dana"))
    decided = [t for p, s, t in claims if p.startswith("decisions/") and "SQLite" in t]
    assert decided, claims
    assert not [t for t in decided if re.match(r"^\W*(?:entities/zalando\|)?Zalando", t)], decided
    # and no claim opens with a "they" that names nobody ("they work at Zalando.")
    assert not [t for _, _, t in claims if re.match(r"^they\b", t)], claims


@pytest.fixture(scope="module")
def coding(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[str, str, str]]:
    turns = [
        "Add a SQLite cache for the product lookups.",
        "At Zalando we decided to go with SQLite for the local cache.",
        "These don't pass on my machine when I run them with the race detector.",
        "That content is wrong on the pricing page for Germany.",
        "It fails on CI but works locally with the same Node version.",
        "The checkout tests fail on CI but pass locally with Node 20.",
        "Maybe you could check the logs first.",
        "I really rely on the nightly build for the release notes.",
        "Our team decided to drop the legacy importer next sprint.",
        "We do the releases on Fridays because the traffic is low then.",
        "The error says `Cannot find module. Did you run npm install` when I build the docs.",
        "Put the redirects in [the Vercel config. See the docs](https://vercel.com/docs/redirects)"
        " before the release.",
    ]
    return _claims(_coding(tmp_path_factory.mktemp("coding"), turns))


def test_coding_rewrites_are_checked_too(coding: list[tuple[str, str, str]]) -> None:
    texts = [t for _, _, t in coding]
    assert not [t for t in texts if _garbled(t)], texts
    assert any("nightly build" in t for t in texts), texts
    assert any("legacy importer" in t for t in texts), texts
    assert any("check the logs" in t for t in texts), texts
    # "we" in mid-sentence with no one named before it is not "they"
    assert not [t for t in texts if re.search(r"\bthey decided\b", t)], texts
    assert any("releases on Fridays" in t for t in texts), texts  # a good rewrite stays


def test_coding_demonstrative_subjects_are_no_claims(coding: list[tuple[str, str, str]]) -> None:
    texts = [t for _, _, t in coding]
    assert not [t for t in texts if re.match(r"^(?:These|That content|It) ", t)], texts
    assert any(t.startswith("The checkout tests fail on CI") for t in texts), texts


def test_coding_sentences_are_never_cut_inside_a_span(coding: list[tuple[str, str, str]]) -> None:
    texts = [t for _, _, t in coding]
    assert any("Cannot find module" in t for t in texts), texts
    for t in texts:
        assert t.count("`") % 2 == 0, t
        assert t.count("[") == t.count("]") and t.count("(") == t.count(")"), t


@pytest.mark.parametrize(
    "line",
    [
        "The error says `Cannot find module. Did you run npm install` when I build it.",
        "See [Deploying. The basics](https://vercel.com/docs/deploy) for the setup. Then ship.",
        "The file is `notes/Read me. First.md` in the repo. It has the steps.",
    ],
)
def test_prose_is_not_split_inside_code_links_or_paths(line: str) -> None:
    for s in prose_sentences(line):
        assert s.count("`") % 2 == 0, s
        assert s.count("[") == s.count("]") and s.count("<") == s.count(">"), s
        assert s in line


def test_a_question_about_a_topic_is_no_suggestion() -> None:
    """'What about the logs?' asks about a topic: no 'suggested that the assistant the logs';
    'how about using Redis?' still suggests something to do."""
    from memctl.curate.builtin.coding import requests
    from memctl.curate.builtin.coding.structure import Coding, Human

    s = Coding([Human(1, ["What about the logs?"]), Human(3, ["How about using Redis for it?"])],
               [], [], [], set(), False, "the assistant", None, None, None, 1)  # fmt: skip
    got = [r.text for r in requests.read(s, "Marco")]
    assert not any("the assistant the logs" in t for t in got), got
    assert any("use Redis" in t for t in got), got


def test_what_we_should_do_is_the_persons_ask_not_a_fact_of_their_team(tmp_path: Path) -> None:
    # In a session with an agent, "we" is the person and the agent: "we should ..." asks
    # for work, and "Dana's team should ..." would file it as what some team does.
    vault = _coding(tmp_path, [
        "now we have a lockfile so we should stop regenerating it in the build step",
        "We need to keep the old endpoint alive until the mobile app ships its update.",
        "OK, we're going to try a small experiment with the cache headers here.",
        "we don't need to check that the file exists, just open it.",
        "we deploy the api with fly from the main branch.",
    ])  # fmt: skip
    texts = [t for _, _, t in _claims(vault)]
    team_step = re.compile(r"Dana's team (?:should|need|is going|doesn't need)|they should")
    assert not [t for t in texts if team_step.search(t)], texts
    for said in ("we should stop regenerating it", "We need to keep the old endpoint alive"):
        hit = [t for t in texts if said in t]
        assert hit and all(t.startswith('Dana said: "') for t in hit), (said, texts)
    # what the team does stays a fact of the team, rewritten
    assert any(t.startswith("Dana's team deploys the api with fly") for t in texts), texts


def _session_vault(tmp: Path, s: Session) -> Path:
    vault = new_vault(tmp / "vault")
    memctl(vault, "ingest", str(s.write_to(tmp / "s.jsonl")), "--scope", "team",
           "--user", "dana")  # fmt: skip
    memctl(vault, "curate")
    return vault


def test_a_first_ask_that_points_at_a_paste_is_no_goal(tmp_path: Path) -> None:
    # "fix these" names nothing a reader of the note can see: the paste it points at is
    # evidence, not the person's words; what the session did says what it was about.
    s = Session()
    s.user("<bash-input>uv run pyright</bash-input>")  # run in the harness's own shell
    s.user("<bash-stdout>src/shop/cart.py:41:9 - error: \"total\" is possibly unbound "
           "(reportPossiblyUnbound)\nsrc/shop/cart.py:58:5 - error: Argument of type "
           "\"str | None\" cannot be assigned (reportArgumentType)</bash-stdout>")
    s.user("please fix these type errors")
    s.read("src/shop/cart.py", "def total(items):\n    for i in items:\n        total = i\n")
    s.edit("src/shop/cart.py", "    for i in items:\n", "    total = 0\n    for i in items:\n",
           text="The variable `total` is never set when `items` is empty.")
    s.bash("uv run pyright", "0 errors, 0 warnings, 0 informations")
    s.say("Fixed both errors: `total` now starts at 0, and `coupon_code` is checked for None.")
    texts = [t for _, _, t in _claims(_session_vault(tmp_path, s))]
    assert not [t for t in texts if re.search(r"asked Claude to fix these\b", t)], texts
    assert any("uv run pyright" in t for t in texts), texts  # the session is still learned


def test_a_concrete_first_ask_stays_the_goal(tmp_path: Path) -> None:
    s = Session()
    s.user("Please add a --dry-run flag to the import command.")
    s.edit("src/shop/cli.py", "def run(path):\n", "def run(path, dry_run=False):\n")
    s.bash("uv run pytest", "12 passed in 0.4s")
    texts = [t for _, _, t in _claims(_session_vault(tmp_path, s))]
    assert "Dana asked Claude to add a --dry-run flag to the import command." in texts, texts


def test_an_ask_that_points_back_but_says_what_it_is_about_stays_the_goal(
    tmp_path: Path,
) -> None:
    s = Session()
    s.user("Can you please help to use these Pydantic models in a better way, I need to read "
           "the right timestamp field for each entry type")
    s.edit("app/entries.py", "ts = e.timestamp\n", "ts = timestamp_of(e)\n")
    s.bash("uv run pytest", "12 passed in 0.4s")
    texts = [t for _, _, t in _claims(_session_vault(tmp_path, s))]
    assert any("right timestamp field for each entry type" in t for t in texts), texts
