"""The llm curator on real Claude Code sessions, proven on the wire.

The fake OpenAI-compatible server plays a model that knows the hand-written gold facts of
shared/data/claude-code: for each request it reads which session and which turns the batch
marks NEW, and answers with the gold facts whose evidence is among those turns, each citing
that turn with a sentence copied from it. So what is checked is memctl's side: the coding
session reaches the model as structure (the person's words whole, tool calls as one line,
tool output cut short), batches stay within their token bound, every fact comes back
verified and filed by kind, and tokens and cost are reported per session from litellm's
(bundled, offline) price table. It says nothing of a real model's quality.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fakellm import FakeLLM
from test_curate import git, memctl, new_vault
from test_curate_llm import curate_in_process

from memctl.core import tokens
from memctl.core.branches import REWOUND_MARK, rewound_text
from memctl.core.notes import parse_note
from memctl.core.provenance import by_person, citable
from memctl.curate.llm import CHUNK_TOKENS, TOOL_RESULT_CHARS
from memctl.vault import Vault

# development data beside the repository (found from a worktree too), never shipped
DATA = next(
    (p / "shared" / "data" / "claude-code" for p in Path(__file__).resolve().parents
     if (p / "shared" / "data" / "claude-code").is_dir()),
    Path(__file__).resolve().parents[2] / "shared" / "data" / "claude-code",
)
# gold kinds -> (store, section, note title)
FILED = {
    "decision": ("decisions", "Decision", "Decision: {head}"),
    "preference": ("profile", "Preferences", "Profile: {user}"),
    "instruction": ("instructions", "Instructions", "Instructions (team)"),
    "project": ("projects", "Facts", "Project: {project}"),
    "problem": ("projects", "Gotchas", "Project: {project}"),
    "outcome": ("sessions", "Outcomes", "Outcomes"),
}
USER = "dain"


def _gold() -> dict:
    if not (DATA / "gold.json").is_file():
        pytest.skip(f"real Claude Code sessions not found at {DATA} (development data)")
    return json.loads((DATA / "gold.json").read_text(encoding="utf-8"))


def _quote(text: str) -> str | None:
    """A sentence of the turn, verbatim: the longest one of a sensible length."""
    parts = [p.strip() for p in re.split(r"(?<=[.!?])\s+|\n+", text) if p.strip()]
    fit = [p for p in parts if 12 <= len(p) <= 300]
    return max(fit, key=len) if fit else None


def _turn_map(vault: Path) -> dict[str, tuple[str, int, str, str]]:
    """gold uuid -> (raw path, turn number, role, what a claim may quote) for the person's
    and the agent's lines (an agent's tool calls are quotable: memctl.core.provenance). A
    user turn the harness filled with a command's output is no one's words: "harness"."""
    v = Vault.open(vault, env={})
    out: dict[str, tuple[str, int, str, str]] = {}
    for s in v.sessions():
        _, messages, _ = v.read_session(s["path"])
        for n, m in enumerate(messages, 1):
            if m.id and m.id not in out and m.role in ("user", "assistant"):
                role = "harness" if m.role == "user" and not by_person(m) else m.role
                out[m.id] = (s["path"], n, role, citable(m))
    return out


class GoldModel:
    """Answers a curation request with the gold facts whose evidence is among its NEW turns."""

    def __init__(self, gold: dict, turns: dict[str, tuple[str, int, str, str]]) -> None:
        self.by_session: dict[str, list[tuple[dict, int, str, bool, str]]] = {}
        self.expected: list[tuple[dict, str, int]] = []  # (fact, raw path, turn)
        self.observed = 0  # facts only the agent's turns show: cited as observed
        self.unquotable: list[dict] = []
        for s in gold["sessions"]:
            for fact in s["facts"]:
                hits = [h for u in fact["evidence"] if (h := turns.get(u)) and _quote(h[3])]
                said = [h for h in hits if h[2] == "user"]
                seen = [h for h in hits if h[2] in ("assistant", "harness")]
                if said:
                    cite, observed = said[0], False
                elif seen and fact["kind"] in ("project", "problem", "outcome"):
                    cite, observed = seen[0], True  # what happened, not what anyone said
                else:
                    self.unquotable.append(fact)
                    continue
                path, n, _, content = cite
                row = (fact, n, _quote(content) or "", observed, s["project"])
                self.by_session.setdefault(path, []).append(row)
                self.expected.append((fact, path, n))
                self.observed += observed

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        user = body["messages"][-1]["content"]
        path = re.match(r"Session (\S+) ·", user).group(1)  # type: ignore[union-attr]
        new = {int(n) for n in re.findall(r"^### t(\d+) · .* · NEW$", user, re.M)}
        claims = []
        for fact, n, quote, observed, project in self.by_session.get(path, []):
            if n not in new:
                continue
            store, section, title = FILED[fact["kind"]]
            head = " ".join(fact["text"].split()[:6]).rstrip(".,")
            claims.append({
                "store": store, "section": section,
                "note": title.format(head=head, user=USER, project=project.strip("-")),
                "text": fact["text"], "citations": [{"turn": n, "quote": quote}],
                **({"observed": True} if observed else {}),
            })  # fmt: skip
        return {"json": {"claims": claims}}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory, _fake_llm_server: FakeLLM) -> dict[str, Any]:
    gold = _gold()
    vault = new_vault(tmp_path_factory.mktemp("coding") / "vault")
    files = [str(DATA / "sessions" / s["file"]) for s in gold["sessions"]]
    memctl(vault, "ingest", *files, "--user", USER, "--scope", "team")
    model = GoldModel(gold, _turn_map(vault))
    fake = _fake_llm_server
    fake.reset()
    fake.respond_with(model)
    result = curate_in_process(vault, fake)
    requests = list(fake.chat_requests)
    fake.reset()
    return {"vault": vault, "result": result, "requests": requests,
            "model": model, "gold": gold}  # fmt: skip


def _claims(vault: Path) -> dict[str, list[str]]:
    """claim text -> the raw turns it cites, over every learning store."""
    out: dict[str, list[str]] = {}
    for p in sorted(vault.glob("*/*.md")):
        rel = p.relative_to(vault).as_posix()
        if p.name == "INDEX.md" or rel.startswith(("raw/", ".")):
            continue
        note = parse_note(p.read_text(encoding="utf-8"), rel)
        for _, c in note.active_claims():
            out.setdefault(c.text, []).extend(x.ref or "" for x in note.citations(c))
    return out


def _kept(claims: dict[str, list[str]], text: str) -> str:
    """A fact as its note keeps it: one read only from the branch of a rewound session the
    user left carries a mark saying so (memctl.core.branches); the rest as the model gave it."""
    marked = rewound_text(text)
    return marked if marked in claims and text not in claims else text


def test_every_gold_fact_the_model_returns_is_verified_and_kept(run: dict) -> None:
    claims = _claims(run["vault"])
    expected = run["model"].expected
    assert len(expected) >= 80 and run["model"].observed >= 40
    missing = [
        f["text"] for f, path, n in expected
        if f"{path}#t{n}" not in claims.get(_kept(claims, f["text"]), [])
    ]  # fmt: skip
    assert missing == [], missing
    # the marked facts all come from the one rewound session of the set
    rewound_sessions = {ref.split("#")[0] for t in claims if REWOUND_MARK in t for ref in claims[t]}
    assert len(rewound_sessions) == 1, rewound_sessions
    verified = json.loads(memctl(run["vault"], "verify", "--json").stdout)
    assert verified["ok"] is True
    # what the agent's turns show is labelled observed, in the note line and by verify; it
    # never reads as something said
    assert verified["observed"] == run["model"].observed
    lines = "\n".join(p.read_text("utf-8") for p in run["vault"].glob("*/*.md"))
    assert lines.count(" #observed [^") == run["model"].observed
    res = run["result"]
    assert res["added"] + res["proposed"] == len(expected) and res["claims_rejected"] == 0


def test_each_kind_is_filed_in_its_store(run: dict) -> None:
    claims = _claims(run["vault"])
    for fact, _, _ in run["model"].expected:
        store = FILED[fact["kind"]][0]
        notes = [p for p in (run["vault"] / store).glob("*.md") if p.name != "INDEX.md"]
        text = _kept(claims, fact["text"])
        assert any(text in p.read_text(encoding="utf-8") for p in notes), fact
        assert text in claims


def test_batches_are_bounded_by_tokens(run: dict) -> None:
    reqs = run["requests"]
    res = run["result"]
    assert len(reqs) == res["calls"] > len(run["gold"]["sessions"])  # long sessions: several
    sizes = []
    for r in reqs:
        user = r.messages[-1]["content"]
        heads = list(re.finditer(r"^### t\d+ · .* · NEW$", user, re.M))
        new_part = user[heads[0].start():]
        # the bound is on the new turns (a few earlier turns ride along as context); a
        # single turn longer than the bound goes alone
        size = tokens.count(new_part)
        sizes.append(size)
        assert size <= CHUNK_TOKENS + 16 * len(heads) or len(heads) == 1, (size, len(heads))
    print(f"{len(reqs)} requests; new-turn tokens max {max(sizes)}, mean {sum(sizes) // len(reqs)}")


def test_a_coding_session_reaches_the_model_as_structure(run: dict) -> None:
    text = "\n".join(r.messages[-1]["content"] for r in run["requests"])
    assert "[tool Bash] command: " in text and "[tool Edit] file_path: " in text
    assert "[tool result" in text
    for body in re.findall(r"\[tool result[^\]]*\] (.*?)\n### ", text, re.S):
        assert len(body) <= TOOL_RESULT_CHARS + 40
    system = run["requests"][0].messages[0]["content"]
    assert "coding session" in system and "harness markup" in system


def test_tokens_and_cost_are_reported_per_session(run: dict) -> None:
    res = run["result"]
    rows = res["per_session"]
    assert len(rows) == len(run["gold"]["sessions"])
    assert sum(r["calls"] for r in rows) == res["calls"]
    assert sum(r["tokens_in"] for r in rows) == res["tokens_in"] > 0
    assert sum(r["tokens_out"] for r in rows) == res["tokens_out"] > 0
    assert all(r["cost"] and r["cost"] > 0 for r in rows)  # gpt-4o-mini: litellm's own table
    assert abs(sum(r["cost"] for r in rows) - res["cost"]) < 1e-9
    log = git(run["vault"], "log", "-1", "--format=%b")
    assert f"Memctl-Tokens: {res['tokens_in']}+{res['tokens_out']}" in log
    counted = sum(tokens.count(m["content"]) for r in run["requests"] for m in r.messages)
    print(f"prompt tokens by memctl's tokenizer (the fake server counts words): {counted}")
    for r in rows:
        print(f"{r['session'].rsplit('/', 1)[-1][:60]}: {r['calls']} calls, "
              f"{r['tokens_in']}+{r['tokens_out']} tokens, ${r['cost']:.4f}")
    print(f"total: {res['calls']} calls, {res['tokens_in']}+{res['tokens_out']} tokens, "
          f"${res['cost']:.4f}; {len(run['model'].expected)} gold facts replayed "
          f"({run['model'].observed} observed in agent turns, "
          f"{len(run['model'].unquotable)} not quotable); added {res['added']}, "
          f"reinforced {res['reinforced']}, rejected {res['claims_rejected']}")
