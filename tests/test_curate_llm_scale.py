"""The llm curator over a long conversation: 20+ sessions merged into notes without drift.

The fake OpenAI-compatible server on 127.0.0.1 plays the model: for each session of a LoCoMo
dev conversation it answers with that session's annotated observations as claims (each citing
its evidence turn with a verbatim sentence of it), plus what a model also says across sessions:
a fact restated from the session before, a "current focus" that changes every session, and a
claim repeated within one answer. memctl must turn that into notes with no duplicate line, a
History that holds every superseded focus once, citations that verify, one request per
session (batching bounded by tokens), and never hold the vault lock while the model thinks.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fakellm import FakeLLM
from test_curate import git, memctl, new_vault
from test_curate_llm import MODEL, curate_in_process, llm_env

from memctl.core import tokens
from memctl.core.notes import parse_note
from memctl.core.provenance import supports
from memctl.curate.llm import CHUNK_TOKENS

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"


def _conversation() -> dict:
    if not DATA.is_file():
        pytest.skip(f"LoCoMo dev data not found at {DATA} (it is benchmark data, not shipped)")
    convs = json.loads(DATA.read_text(encoding="utf-8"))
    return max(convs, key=lambda c: len(_sessions(c)))


def _sessions(conv: dict) -> list[tuple[int, list[dict], str]]:
    c, out, n = conv["conversation"], [], 1
    while f"session_{n}" in c:
        when = c[f"session_{n}_date_time"]
        out.append((n, c[f"session_{n}"], when))
        n += 1
    return out


def _quote(text: str) -> str:
    """The longest sentence of a turn: verbatim, and long enough to support a claim."""
    return max(re.split(r"(?<=[.!?])\s+", text.strip()), key=len)


def _reply(conv: dict, n: int, turns: list[dict], prev: dict | None) -> dict:
    a, b = conv["conversation"]["speaker_a"], conv["conversation"]["speaker_b"]
    index = {t["dia_id"]: i for i, t in enumerate(turns, 1)}
    claims = []
    for speaker, items in conv["observation"].get(f"session_{n}_observation", {}).items():
        for text, ev, *_ in (i for i in items if isinstance(i, list) and len(i) >= 2):
            turn = index.get(str(ev).split(";")[0].strip())
            if turn is None:
                continue
            person = speaker == a
            claims.append({
                "store": "profile" if person else "entities",
                "note": f"Profile: {a.lower()}" if person else b,
                "section": "Identity" if person else "Facts",
                "text": text,
                "citations": [{"turn": turn, "quote": _quote(turns[turn - 1]["text"])}],
                **({} if person else {"entity_type": "person"}),
            })  # fmt: skip
    mine = [c for c in claims if c["store"] == "profile"]
    if mine:
        first = mine[0]
        claims.append(dict(first))  # the same claim twice in one answer
        focus = {
            "store": "profile",
            "note": first["note"],
            "section": "Identity",
            "text": f"{a}'s current focus (session {n}): {first['text'].rstrip('.')}.",
            "citations": first["citations"],
        }
        if prev and prev.get("focus"):
            focus |= {"action": "supersede", "replaces": prev["focus"]}
        claims.append(focus)
    if prev and prev.get("restate") and mine:
        # a fact from the session before, restated in this one: reinforce, never duplicate.
        # It cites the turn of this session that shares the most words with it: a quote
        # that shares none supports nothing, restated or not.
        text = prev["restate"]["text"]
        best = next((t for t in range(1, len(turns) + 1)
                     if supports(text, [_quote(turns[t - 1]["text"])])), None)  # fmt: skip
        if best is not None:
            quote = _quote(turns[best - 1]["text"])
            claims.append({**prev["restate"], "citations": [{"turn": best, "quote": quote}]})
    return {"claims": claims, "_restate": dict(mine[-1]) if mine else None}


@pytest.fixture(scope="module")
def scaled(tmp_path_factory: pytest.TempPathFactory, _fake_llm_server: FakeLLM) -> dict:
    conv = _conversation()
    tmp = tmp_path_factory.mktemp("scale")
    vault = new_vault(tmp / "vault")
    src = tmp / "src"
    src.mkdir()
    sessions = _sessions(conv)
    assert len(sessions) >= 20
    a = conv["conversation"]["speaker_a"]
    for n, turns, when in sessions:
        parsed = time.strptime(when.replace(" on ", " "), "%I:%M %p %d %B, %Y")
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", parsed)
        rows = [{"id": t["dia_id"], "role": "user", "name": t["speaker"], "content": t["text"],
                 "timestamp": stamp} for t in turns]  # fmt: skip
        (src / f"s{n:02d}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), "utf-8")
    memctl(vault, "ingest", str(src), "--user", a.lower(), "--scope", "team")
    fake = _fake_llm_server
    fake.reset()
    prev: dict | None = None
    focuses, restated = [], []
    for n, turns, _ in sessions:  # curation takes sessions in date order, as ingested here
        reply = _reply(conv, n, turns, prev)
        focus = next((c["text"] for c in reply["claims"] if "current focus" in c["text"]), None)
        if focus:
            focuses.append(focus)
        if prev and prev.get("restate") and any(
            c["text"] == prev["restate"]["text"] and c is not prev["restate"]
            for c in reply["claims"][-1:]
        ):
            restated.append(prev["restate"]["text"])
        prev = {"focus": focus or (prev or {}).get("focus"), "restate": reply["_restate"]}
        fake.enqueue({"json": {"claims": reply["claims"]}})
    result = curate_in_process(vault, fake)  # the CLI's own run: the lock test below
    requests = list(fake.chat_requests)
    fake.reset()
    return {"vault": vault, "result": result, "requests": requests,
            "sessions": sessions, "focuses": focuses, "restated": restated}  # fmt: skip


def _notes(vault: Path) -> list:
    out = []
    for store in ("profile", "entities"):
        for f in sorted((vault / store).glob("*.md")):
            if f.name != "INDEX.md":
                out.append(parse_note(f.read_text("utf-8"), f"{store}/{f.name}"))
    return out


def test_one_request_per_session_bounded_by_tokens(scaled: dict) -> None:
    reqs = scaled["requests"]
    assert len(reqs) == len(scaled["sessions"]) == scaled["result"]["calls"]
    for r in reqs:
        turns_part = r.messages[-1]["content"].split("Turns (extract only", 1)[1]
        assert tokens.count(turns_part) <= CHUNK_TOKENS + 200
    system = reqs[0].messages[0]["content"]
    assert (
        "greetings" in system and '"inferred": true' in system and "Anchor relative time" in system
    )
    assert scaled["result"]["tokens_in"] > 0 and scaled["result"]["added"] > 50


def test_no_duplicate_lines_anywhere(scaled: dict) -> None:
    for note in _notes(scaled["vault"]):
        keys = [c.key for _, c in note.active_claims()]
        assert len(keys) == len(set(keys)), (note.path, [k for k in keys if keys.count(k) > 1])
        history = [c.key for c in note.history_claims()]
        assert len(history) == len(set(history)), note.path


def test_a_changing_fact_keeps_one_active_line_and_a_full_history(scaled: dict) -> None:
    [profile] = [n for n in _notes(scaled["vault"]) if n.path.startswith("profile/")]
    active = [c.text for _, c in profile.active_claims() if "current focus" in c.text]
    assert active == [scaled["focuses"][-1]], active
    old = [c for c in profile.history_claims() if "current focus" in c.text]
    assert sorted(c.text for c in old) == sorted(scaled["focuses"][:-1])
    assert all(c.lifetime and c.lifetime.kind == "superseded" for c in old)


def test_a_restated_fact_is_reinforced_with_both_citations(scaled: dict) -> None:
    [profile] = [n for n in _notes(scaled["vault"]) if n.path.startswith("profile/")]
    by_text = {c.text: c for _, c in profile.active_claims()}
    reinforced = [by_text[t] for t in scaled["restated"] if t in by_text]
    assert reinforced, "restated claims should still be active"
    assert all(len(c.refs) >= 2 for c in reinforced), [
        (c.text, c.refs) for c in reinforced if len(c.refs) < 2]


def test_the_scaled_run_verifies(scaled: dict) -> None:
    r = memctl(scaled["vault"], "verify", "--json")
    assert json.loads(r.stdout)["ok"] is True


def test_the_vault_lock_is_free_while_the_model_thinks(
    tmp_path: Path, _fake_llm_server: FakeLLM
) -> None:
    vault = new_vault(tmp_path / "vault")
    first = tmp_path / "first.jsonl"
    first.write_text(json.dumps({"role": "user", "name": "Ada", "content":
                                 "I moved to Porto in March."}) + "\n", "utf-8")  # fmt: skip
    memctl(vault, "ingest", str(first), "--user", "ada", "--scope", "team")
    fake = _fake_llm_server
    fake.reset()
    claim = {"store": "profile", "note": "Profile: ada", "section": "Identity",
             "text": "Ada moved to Porto in March.",
             "citations": [{"turn": 1, "quote": "I moved to Porto in March."}]}  # fmt: skip
    fake.enqueue({"json": {"claims": [claim]}, "delay": 4.0}, {"json": {"claims": []}})
    cmd = [sys.executable, "-m", "memctl", "--vault", str(vault), "curate", "--model", MODEL]
    curating = subprocess.Popen(cmd, env=llm_env(fake), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)  # fmt: skip
    deadline = time.monotonic() + 60
    while not fake.chat_requests and time.monotonic() < deadline:
        time.sleep(0.05)
    assert fake.chat_requests, "curate never asked the model"
    second = tmp_path / "second.jsonl"
    second.write_text(json.dumps({"role": "user", "name": "Ada", "content":
                                  "I prefer trams over buses."}) + "\n", "utf-8")  # fmt: skip
    memctl(vault, "ingest", str(second), "--user", "ada", "--scope", "team")
    assert curating.poll() is None, "ingest should not have waited for the model"
    _, err = curating.communicate(timeout=120)
    assert curating.returncode == 0, err
    # the first session's answer was reused when curate planned again on the new commit
    assert len(fake.chat_requests) == 2
    subjects = git(vault, "log", "--format=%s").splitlines()
    assert subjects[0].startswith("curate:") and subjects[1].startswith("ingest:"), subjects
    assert "Ada moved to Porto in March." in (vault / "profile/ada.md").read_text("utf-8")
    assert git(vault, "status", "--porcelain") == ""
    fake.reset()
