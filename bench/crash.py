"""Crash harness (issues 9, 22): SIGKILL ingest, curate, sync and forget at random moments.

    .venv/bin/python bench/crash.py        # 100 points: 35 ingest, 25 curate, 20 sync, 20 forget
    .venv/bin/python bench/crash.py --points 20 --json out.json

Each point runs a real `memctl` (its process group is killed, git children included, a
third of the points once git holds .git/index.lock), then one ordinary command, and checks
what issue 9 asks: `git status --porcelain` clean, every acknowledged turn in HEAD exactly
once, `git fsck` clean, every note parsing, no journal left. A forget (of a whole session,
or of a turn, which renames its session's file) must be finished or undone whole: what it
was forgetting is gone from the tree and HEAD in one commit, or all still there. A sync
(two clones curating into the same notes; a third of its kills land mid-rebase, while git
runs memctl's merge drivers) must leave no rebase, no detached HEAD and no driver temp
file after the next command, every claim the victim had committed still in HEAD, and the
sync after it must hold both sides' claims.
The test suite runs the same code at a handful of points (tests/test_crash.py); this runs
the full hundred.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from crashkit import kill_points


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", type=Path, help="write the results here too")
    args = ap.parse_args()
    ingest_points = round(args.points * 0.35)
    curate_points = round(args.points * 0.25)
    sync_points = round(args.points * 0.2)
    forget_points = args.points - ingest_points - curate_points - sync_points
    results = []
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="memctl-crash-") as tmp:
        for kind, n in (("ingest", ingest_points), ("curate", curate_points),
                        ("sync", sync_points), ("forget", forget_points)):
            t0 = time.monotonic()
            res = kill_points(Path(tmp) / kind, kind, n, seed=args.seed)
            res["seconds"] = round(time.monotonic() - t0, 1)
            results.append(res)
            print(json.dumps(res), flush=True)
    total_killed = sum(int(r["killed"]) for r in results)
    failed = [f for r in results for f in r["failures"]]
    summary = {
        "points": args.points,
        "per_command": {str(r["kind"]): int(r["points"]) for r in results},
        "killed": total_killed,
        "git_phase": sum(int(r["git_phase"]) for r in results),
        "landed": {k: sum(r["phases"][k] for r in results) for k in results[0]["phases"]},
        "finished_before_kill": sum(int(r["finished_first"]) for r in results),
        "survived": total_killed if not failed else None,
        "failures": failed,
        "lost_turns": 0 if not failed else None,
        "seconds": round(time.monotonic() - start, 1),
    }
    print(json.dumps(summary, indent=2))
    if args.json:
        args.json.write_text(json.dumps({"runs": results, "summary": summary}, indent=2))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
