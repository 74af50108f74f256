# ruff: noqa: E501 - the sample sessions and notes read better one per line
"""Recall and context through the library and the CLI, on a small vault built with real files.

`build_vault` (also used by the scope property test and the MCP tests) writes sessions with
`Vault.ingest` and notes with `memctl.core.notes` through a Transaction and a git commit, exactly
as curation does, so recall reads what a real vault holds.
"""

from __future__ import annotations

import io
import json
import os
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from util import memctl, ok

from memctl.core import tokens
from memctl.core.notes import Claim, Lifetime, new_note, render_note
from memctl.core.raw import short_digest
from memctl.core.store import Transaction
from memctl.errors import InputError
from memctl.recall import context, recall
from memctl.vault import Vault

NOW = datetime(2026, 11, 20, tzinfo=UTC)

# (session id, user, scope, [(speaker, role, content, timestamp)])
Session = tuple[str, str, str, list[tuple[str, str, str, str]]]


@dataclass
class NoteSpec:
    """A note to write: claims are (section, text, [(session id, turn, quote)], inferred)."""

    path: str
    store: str
    title: str
    scope: str
    claims: list[tuple[str, str, list[tuple[str, int, str]], bool]] = field(default_factory=list)
    history: list[tuple[str, list[tuple[str, int, str]], str, str]] = field(default_factory=list)
    human: list[tuple[str, str]] = field(default_factory=list)
    status: str = "active"
    aliases: list[str] = field(default_factory=list)


def _jsonl(turns: list[tuple[str, str, str, str]]) -> bytes:
    lines = [
        json.dumps({"role": role, "name": name, "content": content, "timestamp": ts})
        for name, role, content, ts in turns
    ]
    return ("\n".join(lines) + "\n").encode()


def build_vault(root: Path, sessions: list[Session], notes: list[NoteSpec]) -> tuple[Vault, dict]:
    """A vault with these sessions and notes, committed; returns it and session id -> path."""
    vault, _ = Vault.init(root, env={})
    paths: dict[str, str] = {}
    for sid, user, scope, turns in sessions:
        res = vault.ingest(
            ["-"],
            fmt="jsonl",
            user=user,
            scope=scope,
            session=sid,
            redact=False,
            stdin=io.BytesIO(_jsonl(turns)),
        )
        paths[sid] = res.sessions[0].path
    if notes:
        with vault.lock:
            tx = Transaction(vault.root)
            for spec in notes:
                note = new_note(
                    spec.path,
                    spec.store,
                    spec.title,
                    spec.scope,
                    "2026-11-01",
                    status=spec.status,
                    aliases=spec.aliases or None,
                )
                for section, text, cites, inferred in spec.claims:
                    labels = tuple(note.cite(f"{paths[s]}#t{n}", q) for s, n, q in cites)
                    note.ensure_section(section).items.append(Claim(text, labels, inferred))
                for section, text in spec.human:
                    note.ensure_section(section).items.append(Claim(text))
                for text, cites, since, until in spec.history:
                    labels = tuple(note.cite(f"{paths[s]}#t{n}", q) for s, n, q in cites)
                    life = Lifetime("superseded", since, until)
                    note.ensure_section("History").items.append(Claim(text, labels, False, life))
                tx.write(spec.path, render_note(note))
            vault.refresh_indexes(tx)
            # the notes stand for what people wrote and committed: their uncited lines are `human`
            vault.history.commit(tx.touched, "test notes", {}, author=vault.human_identity())
            vault.after_write(tx.touched)
    return vault, paths


SESSIONS: list[Session] = [
    (
        "s-egress",
        "dana",
        "team",
        [
            (
                "Dana",
                "user",
                "Morning! We're trying to cut our egress costs this quarter.",
                "2026-09-01T09:00:00Z",
            ),
            ("assistant", "assistant", "Start with the NAT gateway bytes.", "2026-09-01T09:01:00Z"),
        ],
    ),
    (
        "s-dana-private",
        "dana",
        "user:dana",
        [
            (
                "Dana",
                "user",
                "I prefer Terraform over Pulumi. My codename is bluefalcon.",
                "2026-09-02T09:00:00Z",
            ),
        ],
    ),
    (
        "s-vendor",
        "marco",
        "team",
        [
            (
                "Marco",
                "user",
                "Should we go with Datadog or Grafana? Logs leaving the VPC count as egress.",
                "2026-10-06T10:00:00Z",
            ),
            (
                "assistant",
                "assistant",
                "Grafana Cloud prices by active series; Datadog per host.",
                "2026-10-06T10:01:00Z",
            ),
            (
                "Marco",
                "user",
                "We decided to go with Grafana Cloud because Datadog's per-host pricing would hurt.",
                "2026-10-06T10:05:00Z",
            ),
            (
                "Marco",
                "user",
                "GC will replace the self-hosted Prometheus next month.",
                "2026-10-06T10:09:00Z",
            ),
        ],
    ),
    (
        "s-priya",
        "priya",
        "user:priya",
        [
            (
                "Priya",
                "user",
                "I live in Lisbon and forecast bakery demand.",
                "2026-09-03T08:00:00Z",
            ),
            ("Priya", "user", "I moved to Berlin last month.", "2026-10-29T08:00:00Z"),
        ],
    ),
]

NOTES: list[NoteSpec] = [
    NoteSpec(
        "knowledge/acme.md",
        "knowledge",
        "Acme team knowledge",
        "team",
        claims=[
            (
                "Goals",
                "Acme is trying to cut its egress costs this quarter.",
                [("s-egress", 1, "We're trying to cut our egress costs this quarter.")],
                False,
            ),
            (
                "Facts",
                "Logs leaving the VPC count as egress.",
                [("s-vendor", 1, "Logs leaving the VPC count as egress.")],
                False,
            ),
        ],
        human=[("Facts", "The NOC phone number is on the wiki.")],
    ),
    NoteSpec(
        "knowledge/acme-copy.md",
        "knowledge",
        "Egress notes",
        "team",
        claims=[
            (
                "Goals",
                "Acme is trying to cut its egress costs this quarter!",
                [("s-egress", 1, "We're trying to cut our egress costs this quarter.")],
                False,
            )
        ],
    ),
    NoteSpec(
        "decisions/grafana.md",
        "decisions",
        "Decision: Go with Grafana Cloud",
        "team",
        claims=[
            (
                "Decision",
                "Acme decided to go with [[entities/grafana-cloud|Grafana Cloud]].",
                [("s-vendor", 3, "We decided to go with Grafana Cloud")],
                False,
            ),
            (
                "Why",
                "Datadog's per-host pricing would hurt.",
                [("s-vendor", 3, "Datadog's per-host pricing would hurt.")],
                False,
            ),
        ],
    ),
    NoteSpec(
        "entities/grafana-cloud.md",
        "entities",
        "Grafana Cloud",
        "team",
        aliases=["GC"],
        claims=[
            (
                "Facts",
                "GC will replace the self-hosted Prometheus.",
                [("s-vendor", 4, "GC will replace the self-hosted Prometheus next month.")],
                False,
            )
        ],
    ),
    NoteSpec(
        "profile/dana.md",
        "profile",
        "Profile: dana",
        "user:dana",
        claims=[
            (
                "Preferences",
                "Dana prefers Terraform over Pulumi.",
                [("s-dana-private", 1, "I prefer Terraform over Pulumi.")],
                False,
            )
        ],
    ),
    NoteSpec(
        "knowledge/leak.md",
        "knowledge",
        "Codenames",
        "team",
        claims=[
            (
                "Facts",
                "Dana's codename is bluefalcon.",
                [("s-dana-private", 1, "My codename is bluefalcon.")],
                False,
            ),
            (
                "Facts",
                "Acme's egress cost work lives in the infra repo.",
                [("s-egress", 1, "We're trying to cut our egress costs")],
                True,
            ),
        ],
    ),
    NoteSpec(
        "profile/priya.md",
        "profile",
        "Profile: priya",
        "user:priya",
        claims=[
            (
                "Identity",
                "Priya lives in Berlin.",
                [("s-priya", 2, "I moved to Berlin last month.")],
                False,
            )
        ],
        history=[
            (
                "Priya lives in Lisbon.",
                [("s-priya", 1, "I live in Lisbon")],
                "2026-09-03",
                "2026-10-29",
            )
        ],
    ),
    NoteSpec(
        "knowledge/old-bill.md",
        "knowledge",
        "Old egress bill",
        "team",
        status="superseded",
        claims=[
            (
                "Facts",
                "The egress bill is about $40k a month.",
                [("s-egress", 1, "We're trying to cut our egress costs")],
                False,
            )
        ],
    ),
]


@pytest.fixture(scope="module")
def acme(tmp_path_factory: pytest.TempPathFactory) -> tuple[Vault, dict]:
    return build_vault(tmp_path_factory.mktemp("acme") / "vault", SESSIONS, NOTES)


def _body(res: Any) -> str:
    """The recall text without its header line (which echoes the query)."""
    return res.text.split("\n", 1)[1] if "\n" in res.text else ""


def _texts(res: Any) -> list[str]:
    return [m.text for m in res.memories]


def _kept(res: Any, kind: str | None = None) -> list[str]:
    return [d.text for d in res.explain if d.kept and (kind is None or d.kind == kind)]


# ---- ranking, scope, history --------------------------------------------------------------


def test_a_question_about_vendors_brings_the_teams_egress_goal(acme: tuple[Vault, dict]) -> None:
    vault, paths = acme
    res = recall(vault, "Datadog or Grafana?", user="marco", now=NOW)
    texts = _texts(res)
    assert "Acme decided to go with Grafana Cloud." in texts
    goal = next(m for m in res.memories if m.text.startswith("Acme is trying to cut its egress"))
    assert goal.basis == "stated" and goal.store == "knowledge" and goal.scope == "team"
    assert goal.citations[0].ref == f"{paths['s-egress']}#t1"
    assert goal.citations[0].speaker == "Dana" and goal.citations[0].date == "2026-09-01"
    # markdown cites <session digest>#tN and maps each session to its raw file once
    digest = short_digest(paths["s-egress"])
    assert f"Dana 2026-09-01 {digest}#t1]" in res.text
    assert f"\n- {digest} = {paths['s-egress']}\n" in res.text.split("## Sources", 1)[1]


def test_another_users_private_memory_never_reaches_marco(acme: tuple[Vault, dict]) -> None:
    vault, paths = acme
    for q in ("Terraform Pulumi", "bluefalcon codename", "Dana", "Lisbon Berlin bakery"):
        res = recall(vault, q, user="marco", now=NOW)
        body = _body(res)
        assert "bluefalcon" not in body and "Pulumi" not in body, q
        assert "Lisbon" not in body and "Berlin" not in body, q
        for m in res.memories:
            assert m.scope in ("team", "global"), (q, m)
            for c in m.citations:
                assert not c.ref.startswith(paths["s-dana-private"]), (q, m)
                assert not c.ref.startswith(paths["s-priya"]), (q, m)
    res = recall(vault, "bluefalcon codename", user="marco", now=NOW)
    reasons = [d.reason for d in res.explain if not d.kept and "bluefalcon" in d.text]
    assert reasons and "outside marco's scope" in reasons[0]


def test_the_owner_does_see_their_private_memory(acme: tuple[Vault, dict]) -> None:
    vault, _ = acme
    res = recall(vault, "Terraform or Pulumi?", user="dana", now=NOW)
    assert "Dana prefers Terraform over Pulumi." in _texts(res)
    assert "Dana's codename is bluefalcon." in _texts(
        recall(vault, "bluefalcon codename", user="dana", now=NOW)
    )


def test_history_is_never_recalled_unless_asked(acme: tuple[Vault, dict]) -> None:
    vault, _ = acme
    res = recall(vault, "Where does Priya live? Lisbon?", user="priya", now=NOW)
    assert "Priya lives in Berlin." in _texts(res)
    assert not any("Lisbon" in t for t in _texts(res) if not t.startswith("I live"))
    assert all(m.basis != "history" for m in res.memories)
    assert any(d.reason == "History: no longer true" for d in res.explain)
    old = recall(vault, "Where does Priya live? Lisbon?", user="priya", history=True, now=NOW)
    hist = [m for m in old.memories if m.basis == "history"]
    assert hist and hist[0].text.startswith("Priya lives in Lisbon.")
    assert "superseded; held 2026-09-03 → 2026-10-29" in hist[0].text


def test_superseded_and_retracted_notes_are_not_recalled(acme: tuple[Vault, dict]) -> None:
    vault, _ = acme
    res = recall(vault, "egress bill $40k a month", user="marco", now=NOW)
    assert not any("$40k" in t for t in _texts(res) if not t.startswith("Morning"))
    assert all(m.ref != "knowledge/old-bill.md" for m in res.memories)


def test_near_copies_of_one_fact_are_kept_once(acme: tuple[Vault, dict]) -> None:
    vault, _ = acme
    res = recall(vault, "egress costs this quarter", user="marco", now=NOW)
    copies = [t for t in _texts(res) if t.startswith("Acme is trying to cut its egress")]
    assert len(copies) == 1
    assert any(d.reason.startswith("near-copy") for d in res.explain)


def test_a_line_that_adds_what_the_query_asks_is_not_a_near_copy(tmp_path: Path) -> None:
    # Found by the scope property: the asked line lost to a shorter standing line that
    # shares most of its words but lacks the one the question turns on ("Terraform").
    turns = [("Ann", "user", "we are moving the alerting with terraform", "2026-09-02T10:00:00Z")]
    quote = turns[0][2]
    goal = NoteSpec("knowledge/team.md", "knowledge", "Team", "team")
    goal.claims.append(
        ("Goals", "The team is doing the alert migration.", [("s1", 1, quote)], False)
    )
    fact = NoteSpec("knowledge/alerts.md", "knowledge", "Alerts", "team")
    fact.claims.append(
        (
            "Facts",
            "The team is doing the alert migration with Terraform.",
            [("s1", 1, quote)],
            False,
        )
    )
    vault, _ = build_vault(tmp_path / "v", [("s1", "ann", "team", turns)], [goal, fact])
    res = recall(vault, "Does the alert migration use Terraform?", user="bob", budget=4000)
    texts = _texts(res)
    assert "The team is doing the alert migration with Terraform." in texts, res.explain
    # and a line that adds nothing the query asks is still folded into the one kept
    res = recall(vault, "the alert migration", user="bob", budget=4000)
    assert sum("alert migration" in t for t in _texts(res)) == 1, _texts(res)


def test_a_whole_turn_is_shown_whole_and_only_a_cut_one_is_marked(tmp_path: Path) -> None:
    # A turn over 120 bytes but under TURN_TOKENS tokens was shown with a " …" it never had.
    whole = "Zebrafish tanks need their filters rinsed every week, " * 4
    medium = "Zebrafish tanks need their filters rinsed, " + "and then logged, " * 60
    pasted = "Zebrafish tank log line. " * 120  # longer than the prefix recall tokenizes
    assert len(whole.encode()) > 120 and tokens.count(whole.strip()) < 120
    assert tokens.count(medium) > 120 and len(pasted) > 120 * 12
    # one session each: recall gives at most two turns of a session
    sessions = [
        (f"s{i}", "ann", "team", [("Ann", "user", t.strip(), f"2026-09-0{i + 1}T10:00:00Z")])
        for i, t in enumerate([whole, medium, pasted])
    ]
    vault, _ = build_vault(tmp_path / "v", sessions, [])
    res = recall(vault, "zebrafish tanks filters", user="ann", budget=4000)
    shown = [m.text for m in res.memories if m.kind == "turn"]
    assert whole.strip() in shown, shown
    cut = [t for t in shown if t != whole.strip()]
    assert len(cut) == 2 and all(t.endswith("…") for t in cut), cut
    assert all(tokens.count(t) <= 120 for t in cut), cut


def test_entity_aliases_and_links_find_memories_filed_elsewhere(acme: tuple[Vault, dict]) -> None:
    vault, _ = acme
    res = recall(vault, "what's the plan for GC?", user="marco", now=NOW)
    texts = _texts(res)
    assert "GC will replace the self-hosted Prometheus." in texts
    # the decision note never says "GC"; it links the entity the query names
    assert "Acme decided to go with Grafana Cloud." in texts
    why = {d.ref: d.reason for d in res.explain if d.kind == "note" and d.kept}
    assert "the query names 'GC'" in why["entities/grafana-cloud.md"]
    assert "linked with entity 'Grafana Cloud'" in why["decisions/grafana.md"]


def test_each_item_carries_its_citation_and_basis(acme: tuple[Vault, dict]) -> None:
    vault, _ = acme
    res = recall(vault, "Terraform infra repo egress", user="dana", budget=4000, now=NOW)
    by_text = {m.text: m for m in res.memories}
    inferred = by_text["Acme's egress cost work lives in the infra repo."]
    assert inferred.basis == "inferred" and "inferred · Dana" in res.text
    for m in res.memories:
        if m.kind == "turn":
            assert m.basis == "said" and "#t" in m.ref
        elif m.basis in ("stated", "inferred"):
            assert m.citations and all("#t" in c.ref and c.date for c in m.citations)


def test_human_lines_are_recalled_as_human(acme: tuple[Vault, dict]) -> None:
    vault, _ = acme
    res = recall(vault, "NOC phone number wiki", user="marco", now=NOW)
    m = next(m for m in res.memories if m.text == "The NOC phone number is on the wiki.")
    assert m.basis == "human" and not m.citations
    assert "[human · knowledge/acme.md]" in res.text


# ---- the budget ---------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["md", "xml", "json"])
@pytest.mark.parametrize("budget", [0, 30, 80, 200, 600, 1500])
def test_the_budget_is_never_exceeded(acme: tuple[Vault, dict], fmt: str, budget: int) -> None:
    vault, _ = acme
    res = recall(
        vault, "Datadog or Grafana egress costs", user="marco", budget=budget, fmt=fmt, now=NOW
    )
    assert res.tokens == tokens.count(res.text) <= budget
    if budget == 0:
        assert res.text == "" and res.memories == []
    if budget >= 600:
        assert res.memories


def test_notes_come_before_turns(acme: tuple[Vault, dict]) -> None:
    vault, _ = acme
    res = recall(vault, "Datadog or Grafana?", user="marco", now=NOW)
    kinds = [m.kind for m in res.memories]
    assert "turn" in kinds and "claim" in kinds
    assert kinds.index("turn") > max(i for i, k in enumerate(kinds) if k == "claim")
    assert res.text.index("## Turns") > res.text.index("Acme decided")


def test_a_small_budget_keeps_the_best_and_explains_the_rest(acme: tuple[Vault, dict]) -> None:
    vault, _ = acme
    # 120 tokens once; the header grew by 14, saying which lines are instructions;
    # then 134; by 10 more, saying what an observed line is
    res = recall(vault, "Datadog or Grafana?", user="marco", budget=144, now=NOW)
    assert 0 < len(res.memories) < 4
    assert any(d.reason == "over the token budget" for d in res.explain)


# ---- formats and the CLI ------------------------------------------------------------------


def test_xml_is_well_formed_and_cites(acme: tuple[Vault, dict]) -> None:
    vault, paths = acme
    res = recall(vault, "Datadog or Grafana? <script>&", user="marco", fmt="xml", now=NOW)
    root = ET.fromstring(res.text)
    assert root.tag == "memory" and root.get("user") == "marco"
    claims = root.findall("claim")
    cited = [c for c in claims if c.get("basis") in ("stated", "inferred")]
    assert cited and all(c.get("ref", "").startswith("raw/") for c in cited)
    assert any(c.get("ref") == f"{paths['s-egress']}#t1" for c in claims)


def test_json_format_is_a_list_of_cited_memories(acme: tuple[Vault, dict]) -> None:
    vault, _ = acme
    res = recall(vault, "Datadog or Grafana?", user="marco", fmt="json", now=NOW)
    items = json.loads(res.text)
    assert items and {"kind", "text", "basis", "ref", "date", "citations"} <= set(items[0])


def test_bad_arguments_are_input_errors(acme: tuple[Vault, dict]) -> None:
    vault, _ = acme
    with pytest.raises(InputError):
        recall(vault, "x", user="marco", fmt="html")
    with pytest.raises(InputError):
        recall(vault, "x", user="marco", budget=-1)
    with pytest.raises(InputError):
        recall(vault, "x", user="mar co")


@pytest.mark.parametrize(
    "query", ['"unbalanced', "a:b OR (c", "[[", "*", "???", "", "   ", "\x00", "🥐" * 50]
)
def test_any_text_is_a_valid_query(acme: tuple[Vault, dict], query: str) -> None:
    vault, _ = acme
    res = recall(vault, query, user="marco", now=NOW)
    assert res.tokens <= res.budget


def test_a_prompt_of_several_lines_is_one_heading_line(acme: tuple[Vault, dict]) -> None:
    """A prompt's line breaks must not end the heading and spill the prompt into the block."""
    vault, _ = acme
    prompt = ("A couple of tests are unhappy now:\\\n\n  FAILED test_egress.py - the Datadog "
              "bill grew again\nand Grafana Cloud too, which is odd for a quiet month")
    r = ok("--vault", vault.root, "recall", prompt, "--user", "marco")
    heading, second = r.out.split("\n")[:2]
    assert heading.startswith("# Memory for marco: A couple of tests are unhappy now:"), heading
    assert "FAILED test_egress.py" in heading and "\\" not in heading.split("now:", 1)[1][:2]
    assert len(heading) <= len("# Memory for marco: ") + 81 and heading.endswith("…"), heading
    assert not heading.endswith(" …") and second.startswith("Long-term memory (memctl)."), second


def test_cli_recall_json_contract(acme: tuple[Vault, dict]) -> None:
    vault, _ = acme
    r = ok(
        "--vault",
        vault.root,
        "recall",
        "Datadog",
        "or",
        "Grafana?",
        "--user",
        "marco",
        "--json",
        "--explain",
    )
    data = r.json()
    assert data["memctl_result_version"] == 1 and data["command"] == "recall"
    assert data["version"] == 1 and data["kind"] == "recall"
    assert data["query"] == "Datadog or Grafana?" and data["user"] == "marco"
    assert data["budget"] == 1500 and 0 < data["tokens"] <= 1500
    assert data["tokenizer"] == "bpe:cl100k_base" and data["disabled"] is False
    assert data["format"] == "md" and data["text"].startswith("# Memory for marco")
    m = data["memories"][0]
    assert set(m) >= {"kind", "text", "basis", "ref", "date", "score", "citations", "tokens"}
    assert {"ref", "kind", "kept", "reason", "score", "text"} <= set(data["explain"][0])


def test_cli_recall_markdown_and_explain(acme: tuple[Vault, dict]) -> None:
    vault, _ = acme
    r = ok(
        "--vault",
        vault.root,
        "recall",
        "Datadog or Grafana?",
        "--user",
        "marco",
        "--explain",
        "--budget",
        "300",
    )
    assert r.out.startswith("# Memory for marco: Datadog or Grafana?")
    assert "# explain" in r.out and "kept" in r.out and "dropped" in r.out


def test_cli_none_and_env_off_inject_nothing(acme: tuple[Vault, dict]) -> None:
    vault, _ = acme
    r = ok("--vault", vault.root, "recall", "Datadog or Grafana?", "--user", "marco", "--none")
    assert r.out == "" and "recall is off" in r.err
    r = ok(
        "--vault", vault.root, "recall", "Datadog", "--user", "marco", env={"MEMCTL_RECALL": "off"}
    )
    assert r.out == ""
    r = ok(
        "--vault", vault.root, "context", "--user", "marco", "--json", env={"MEMCTL_RECALL": "off"}
    )
    assert r.json()["disabled"] is True and r.json()["memories"] == []


def test_cli_format_json_prints_the_packed_list(acme: tuple[Vault, dict]) -> None:
    vault, _ = acme
    r = ok(
        "--vault",
        vault.root,
        "recall",
        "Datadog or Grafana?",
        "--user",
        "marco",
        "--format",
        "json",
        "--budget",
        "400",
    )
    items = json.loads(r.out)
    assert items and all(m["citations"] or m["basis"] == "human" for m in items)
    assert tokens.count(r.out.rstrip("\n")) <= 400


def test_cli_rejects_a_bad_format(acme: tuple[Vault, dict]) -> None:
    vault, _ = acme
    r = memctl("--vault", vault.root, "recall", "x", "--format", "html")
    assert r.code == 2 and "unknown format 'html'" in r.err


# ---- context ------------------------------------------------------------------------------


def test_context_for_dana_has_her_profile_decisions_and_team_knowledge(
    acme: tuple[Vault, dict],
) -> None:
    vault, _ = acme
    res = context(vault, user="dana", now=NOW)
    texts = _texts(res)
    assert "Dana prefers Terraform over Pulumi." in texts
    assert "Acme decided to go with Grafana Cloud." in texts
    assert "Acme is trying to cut its egress costs this quarter." in texts
    assert res.tokens == tokens.count(res.text) <= 1500
    assert "profile: Profile: dana" in res.text


def test_context_for_marco_has_none_of_danas_profile(acme: tuple[Vault, dict]) -> None:
    vault, _ = acme
    res = context(vault, user="marco", now=NOW)
    assert "Pulumi" not in res.text and "bluefalcon" not in res.text and "Berlin" not in res.text
    assert "Acme decided to go with Grafana Cloud." in _texts(res)


@pytest.mark.parametrize("budget", [0, 40, 120, 400])
def test_context_respects_its_budget(acme: tuple[Vault, dict], budget: int) -> None:
    vault, _ = acme
    res = context(vault, user="dana", budget=budget, now=NOW)
    assert res.tokens == tokens.count(res.text) <= budget


def test_cli_context(acme: tuple[Vault, dict]) -> None:
    vault, _ = acme
    r = ok("--vault", vault.root, "context", "--user", "dana", "--format", "xml")
    assert ET.fromstring(r.out).get("kind") == "context"


def test_a_hand_edit_to_a_note_is_seen_by_the_next_recall(tmp_path: Path) -> None:
    """Recall asks the index which notes cite or link what; an edit must still count, even
    one that keeps the file's size (only its mtime moves)."""
    vault, _ = build_vault(tmp_path / "v", SESSIONS, NOTES)
    note = vault.root / "knowledge" / "acme.md"
    old = note.stat().st_mtime_ns - 60_000_000_000  # older than any racy window
    os.utime(note, ns=(old, old))
    query = "Datadog or Grafana? egress costs"
    first = recall(vault, query, user="marco", now=NOW)
    assert any(m.ref == "knowledge/acme.md" for m in first.memories)
    text = note.read_text()
    edited = text.replace("scope: team", "scope: x:no", 1)  # same length: only mtime moves
    assert len(edited) == len(text) and edited != text
    note.write_text(edited)
    os.utime(note, ns=(old + 5_000_000_000, old + 5_000_000_000))
    res = recall(vault, query, user="marco", now=NOW)
    assert all(m.ref != "knowledge/acme.md" for m in res.memories)


def test_turn_text_and_citations_read_from_headings_match_the_parser(tmp_path: Path) -> None:
    """Recall reads turns without parsing whole sessions; it must see what the parser sees."""
    from util import DATA

    from memctl.core.provenance import RawTurns
    from memctl.recall.graph import Reader

    tricky = [
        (
            "Dana",
            "user",
            "## t3 · Dana · 2026-01-01 00:00\nnot a heading\n\\## t9 · x",
            "2026-09-01T09:00:00Z",
        ),
        (
            "assistant",
            "assistant",
            "line one\n\n\n## Installation\n  sudo pip install x\n",
            "2026-09-01T09:01:00Z",
        ),
        ("Dana", "user", "1日200個 🥐\r\nwindows line", None),
    ]
    turns = [(a, b, c, d or "2026-09-01T09:02:00Z") for a, b, c, d in tricky]
    vault, paths = build_vault(tmp_path / "v", [("s-x", "dana", "team", turns)], [])
    for f in (
        "dana/2026-09-15-gcp-migration-runbook.jsonl",
        "priya/2026-09-24-evaluating-pos-loader.jsonl",
    ):
        vault.ingest([DATA / "sample-transcripts" / f], user="dana", scope="team", redact=False)
    reader = Reader(vault, "dana", NOW)
    raw = RawTurns(vault.root)
    checked = 0
    for s in vault.sessions():
        header, messages = raw.session(s["path"])
        for n, m in enumerate(messages, 1):
            ref = f"{s['path']}#t{n}"
            assert reader.turn_text(ref) == m.content, ref
            cite = reader.cite(ref)
            assert cite.speaker == (m.name or m.role) and cite.date == raw.date(ref), ref
            assert reader.turn_scope(ref) == header.scope
            checked += 1
    assert checked >= 26
    assert reader.turn_text(f"{paths['s-x']}#t99") is None
    assert reader.turn_scope(f"{paths['s-x']}#t99") is None
