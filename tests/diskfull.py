"""Running real memctl commands on a disk that fills up, and checking the vault they leave.

Shared by tests/test_integrity_round4.py (a few points) and bench/crash.py (`--kinds
diskfull`). A full disk is a file size limit on the child (RLIMIT_FSIZE, with SIGXFSZ
ignored): every write past it fails with EFBIG, as on a full disk it fails with ENOSPC, in
memctl, in tantivy and in the git it runs. No root and no mount are needed, and each point
puts the limit somewhere else: in a raw file, a note, the journal, the index or git.

At each point the command either fits (exit 0, one commit, at most a warning that the
search index could not follow, and when there is none, the index did follow) or is refused
in one line with no traceback, leaving every file and HEAD as they were. A search on the
still-full disk answers from the index there is and leaves no half-built index folder.
Then, with room again, the next command brings the vault back to health, the refused
command goes through, and no acknowledged turn is lost.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

from crashkit import assert_healthy, curatable, head_turn_ids, transcripts
from util import memctl, snapshot


def run(vault: Path, *args: str, limit: int | None = None) -> subprocess.CompletedProcess[str]:
    """`memctl --vault V ARGS`, its writes past `limit` bytes failing as on a full disk."""
    r = memctl("--vault", vault, *args, timeout=300, fsize_limit=limit)
    return subprocess.CompletedProcess(["memctl", *args], r.code, r.out, r.err)


def generations(vault: Path) -> list[str]:
    base = vault / ".memctl" / "index"
    return sorted(p.name for p in base.iterdir() if p.is_dir()) if base.is_dir() else []


def diskfull_points(root: Path, points: int, seed: int = 0) -> dict[str, object]:
    """Ingest and curate `points` times, each with the disk full at a random size."""
    rnd = random.Random(seed)
    vault = root / "diskfull-vault"
    subprocess.run([sys.executable, "-m", "memctl", "init", str(vault)], check=True,
                   capture_output=True)  # fmt: skip
    acknowledged: set[str] = set()
    refused = fitted = 0
    phases = {"before writing": 0, "writing": 0, "git": 0}
    failures: list[str] = []
    for point in range(points):
        tag = f"d{point}x"
        if point % 2 == 0:
            src = transcripts(root / f"in{point}", 6, 8, tag)
            args = ["ingest", str(src), "--user", "dana", "--scope", "team"]
            ids = {f"{tag}{i}-m{t}" for i in range(6) for t in range(8)}
        else:
            src = curatable(root / f"cur{point}", 6, tag=tag)
            r = run(vault, "ingest", str(src), "--user", "dana", "--scope", "team")
            if r.returncode != 0:
                failures.append(f"point {point}: ingest with room failed: {r.stderr.strip()}")
                break
            acknowledged |= {f"{tag}{i}-m{t}" for i in range(6) for t in (1, 2)}
            args, ids = ["curate"], set()
        limit = int(2 ** rnd.uniform(11, 18))  # 2 KB .. 256 KB: every kind of file meets it
        before = snapshot(vault)
        r = run(vault, *args, limit=limit)
        try:
            assert "Traceback" not in r.stderr, f"a traceback at {limit} bytes: {r.stderr}"
            if r.returncode == 0:
                fitted += 1
                acknowledged |= ids
                others = [ln for ln in r.stderr.splitlines()
                          if ln.strip() and "search index not updated" not in ln]  # fmt: skip
                assert not others, f"exit 0 but said: {others}"
                if "search index not updated" not in r.stderr:  # then it did follow
                    doc = run(vault, "doctor", "--json")
                    checks = json.loads(doc.stdout)["checks"]
                    stale = next(c for c in checks if c["name"] == "search index")["problems"]
                    assert not stale, f"the index fell behind without a word: {stale[:2]}"
            else:
                refused += 1
                lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
                assert len(lines) == 1, f"not one line at {limit} bytes: {r.stderr}"
                low = lines[0].lower()
                phases["git" if "git" in low else "writing" if "write" in low
                       else "before writing"] += 1  # fmt: skip
                after = snapshot(vault)
                assert after == before, f"refused at {limit} bytes, but the vault changed"
            r = run(vault, "search", "billing", limit=limit)  # still full: the index there is
            assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
            said = [ln for ln in r.stderr.splitlines() if "search index" in ln]
            assert len(said) <= 1, f"search on a full disk said: {r.stderr}"
            gens = generations(vault)
            assert len(gens) <= 1, f"index folders left by a search on a full disk: {gens}"
            r = run(vault, "status")  # room again: the next command recovers whatever is left
            assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
            assert_healthy(vault)
            r = run(vault, *args)
            assert r.returncode == 0, f"with room again, {args[0]} failed: {r.stderr}"
            acknowledged |= ids
            r = run(vault, "search", "billing")
            assert r.returncode == 0 and "search index" not in r.stderr, r.stderr
            assert len(generations(vault)) == 1, f"index folders left: {generations(vault)}"
            have = head_turn_ids(vault)
            assert len(have) == len(set(have)), "a turn is in HEAD twice"
            lost = acknowledged - set(have)
            assert not lost, f"{len(lost)} acknowledged turns missing, e.g. {sorted(lost)[:3]}"
        except AssertionError as exc:
            failures.append(f"point {point} ({args[0]}, limit {limit}): {exc}")
            break
    return {"kind": "diskfull", "points": points, "killed": refused, "git_phase": phases["git"],
            "finished_first": fitted, "failures": failures, "phases": phases,
            "acknowledged_turns": len(acknowledged), "lost": 0 if not failures else None}
