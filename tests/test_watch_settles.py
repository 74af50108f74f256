"""`memctl watch` settles: one hand edit is one reindex, the watcher's own
reads never wake it, and it uses no CPU while nothing changes."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path

from crashkit import transcripts
from util import new_vault, ok


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _events(proc: subprocess.Popen[str], seconds: float, settle: float | None = None) -> list[dict]:
    """The JSON events the watcher prints within `seconds`, or until `settle` seconds pass
    with none after one came (a second reindex of one edit would follow the first within
    the debounce and one reindex's time: 0.3 s and a fraction here)."""
    out = []
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)  # type: ignore[arg-type]
    end = time.monotonic() + seconds
    while (left := end - time.monotonic()) > 0:
        if sel.select(timeout=left):
            line = proc.stdout.readline()  # type: ignore[union-attr]
            if not line:
                break
            out.append(json.loads(line))
            if settle is not None:
                end = min(end, time.monotonic() + settle)
    return out


def test_one_edit_is_one_reindex_and_idle_is_idle(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    ok("--vault", v, "ingest", transcripts(tmp_path / "t", 60, 6))
    ok("--vault", v, "search", "Postgres")
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("MEMCTL_VAULT", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "memctl", "--vault", str(v), "watch", "--debounce", "0.3",
         "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )
    try:
        assert "watching" in json.loads(proc.stdout.readline())  # type: ignore[union-attr]
        # reading every file of the vault (as search, recall or an editor does) is no change
        for p in v.rglob("*.md"):
            p.read_bytes()
        ok("--vault", v, "search", "billing")
        assert _events(proc, 2.0) == []
        note = v / "knowledge" / "hand.md"
        note.write_text("# Hand\n\n- the quokka cluster runs on zanzibar hosts\n")
        got = _events(proc, 4.0, settle=1.5)
        assert [e["reindexed"] for e in got] == [["knowledge/hand.md"]], got
        assert all(not e["error"] for e in got)
        before = _cpu_seconds(proc.pid)
        assert _events(proc, 3.0) == []
        assert _cpu_seconds(proc.pid) - before < 0.3
        note.unlink()
        got = _events(proc, 4.0)  # no idle window follows: the whole 4 s catch a second one
        assert [e["reindexed"] for e in got] == [["knowledge/hand.md"]], got
    finally:
        proc.terminate()
        proc.wait(timeout=10)
