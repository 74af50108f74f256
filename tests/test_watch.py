"""`memctl watch` keeps search in step with hand edits and ingests transcripts as they grow."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from util import new_vault, ok


def _wait_for(pred, timeout: float = 30.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.2)
    return False


def test_watch_reindexes_hand_edits_and_ingests_new_transcripts(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    inbox = tmp_path / "inbox"
    inbox.mkdir()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("MEMCTL_VAULT", None)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memctl",
            "--vault",
            str(v),
            "watch",
            "--ingest",
            str(inbox),
            "--user",
            "dana",
            "--scope",
            "team",
            "--debounce",
            "0.3",
            "--json",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        time.sleep(1.5)  # let the observer start
        note = v / "knowledge" / "zanzibar.md"
        note.write_text("# Zanzibar\n\n- the quokka cluster runs on zanzibar hosts\n")
        assert _wait_for(lambda: _hits(v, "quokka") == ["knowledge/zanzibar.md"])
        msgs = [{"id": "w1", "role": "user", "content": "the flamingo deploy is friday"}]
        (inbox / "s.jsonl").write_text("".join(json.dumps(m) + "\n" for m in msgs))
        assert _wait_for(lambda: ok("--vault", v, "status", "--json").json()["turns"] == 1)
        assert _wait_for(lambda: len(_hits(v, "flamingo")) == 1)
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=10)
    events = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert any("knowledge/zanzibar.md" in e["reindexed"] for e in events), (out, err)
    assert any(e["turns_added"] == 1 for e in events), (out, err)


def _hits(v: Path, q: str) -> list[str]:
    r = ok("--vault", v, "search", q, "--json").json()
    return [h["ref"] for h in r["hits"]]


def test_watch_refuses_a_missing_folder(tmp_path: Path) -> None:
    from util import memctl

    v = new_vault(tmp_path)
    r = memctl("--vault", v, "watch", "--ingest", tmp_path / "nope")
    assert r.code == 2 and "nope" in r.err
