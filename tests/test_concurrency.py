"""Eight writers at once, with searches and a watcher beside them: nothing lost, nothing
duplicated, and the search index equals the files afterwards."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from crashkit import assert_healthy, curatable, head_turn_ids, transcripts
from util import memctl, new_vault, ok


def _popen(*args: str | Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("MEMCTL_VAULT", None)
    return subprocess.Popen([sys.executable, "-m", "memctl", *map(str, args)], text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def test_eight_writers_searches_and_a_watcher(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    ok("--vault", vault, "ingest", curatable(tmp_path / "cur", 12), "--user", "dana",
       "--scope", "team")
    watcher = _popen("--vault", vault, "watch", "--debounce", "0.2", "--json")
    assert "watching" in json.loads(watcher.stdout.readline())  # type: ignore[union-attr]
    try:
        folders = [transcripts(tmp_path / f"w{k}", 6, 8, tag=f"w{k}x") for k in range(7)]
        writers = [_popen("--vault", vault, "ingest", f) for f in folders]
        writers.append(_popen("--vault", vault, "curate"))
        searches = 0
        while any(w.poll() is None for w in writers):
            r = memctl("--vault", vault, "search", "Postgres billing", "--json")
            assert r.code == 0, r.err
            searches += 1
        for w in writers:
            _, err = w.communicate()
            assert w.returncode == 0, err
        # each session grows: the second round appends to every file at once
        for k, f in enumerate(folders):
            transcripts(f, 6, 12, tag=f"w{k}x")
        writers = [_popen("--vault", vault, "ingest", f) for f in folders]
        writers.append(_popen("--vault", vault, "curate"))
        for w in writers:
            _, err = w.communicate()
            assert w.returncode == 0, err
        # a hand edit while everything settles: the watcher indexes it
        (vault / "knowledge" / "hand.md").write_text("# Hand\n\n- zanzibar quokka line\n")
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            hits = memctl("--vault", vault, "search", "zanzibar quokka", "--json").json()
            if hits.get("hits"):
                break
            time.sleep(0.3)
        assert hits.get("hits"), "the watcher never indexed the hand edit"
    finally:
        watcher.terminate()
        watcher.wait(timeout=10)
    assert searches >= 1
    ids = head_turn_ids(vault)
    want = {f"w{k}x{i}-m{t}" for k in range(7) for i in range(6) for t in range(12)}
    mine = [i for i in ids if i and i.startswith("w")]
    assert sorted(mine) == sorted(want), "a turn was lost or duplicated"
    doctor = memctl("--vault", vault, "doctor", "--json").json()
    checks = {c["name"]: c for c in doctor["checks"]}
    assert checks["search index"]["problems"] == []  # the index equals the files
    assert checks["journal"]["ok"], checks
    (vault / "knowledge" / "hand.md").unlink()
    doctor = memctl("--vault", vault, "doctor", "--json").json()
    checks = {c["name"]: c for c in doctor["checks"]}
    assert checks["INDEX files"]["ok"], checks["INDEX files"]
    assert_healthy(vault)
