"""Crash harness: SIGKILL memctl commands at random moments, then check.

    .venv/bin/python bench/crash.py                    # 100 points over seven commands
    .venv/bin/python bench/crash.py --points 20 --json out.json
    .venv/bin/python bench/crash.py --kinds purge,undo --points 30

Commands and their share of the points: ingest 20, curate 15, forget 15, purge 15, undo 15,
rollback 10, gc 10, sync 10, diskfull 10 (of 120).

Each point runs a real `memctl` (its process group is killed, git children included, a
third of the points once git holds .git/index.lock), then one ordinary command, and checks
what a crash test asks: `git status --porcelain` clean, every acknowledged turn in HEAD exactly
once, `git fsck` clean, every note parsing, no journal left. A forget (of a whole session,
or of a turn, which renames its session's file) must be finished or undone whole: what it
was forgetting is gone from the tree and HEAD in one commit, or all still there. A purge
done leaves the session in no object, commit message or memctl file; undo, rollback and gc
are one commit on top of HEAD before, or nothing. A sync (two clones curating into the same
notes; a third of its kills land mid-rebase, while git runs memctl's merge drivers) must
leave no rebase, no detached HEAD and no driver temp file after the next command, every
claim the victim had committed still in HEAD, and the sync after it must hold both sides'
new claims.
A diskfull point is no kill: an ingest or a curate runs with the disk full at a random size
(tests/diskfull.py; a file size limit stands in for the full disk). It either fits, or is
refused in one line with every file and HEAD as before; with room again the next command
heals the vault, the command goes through, no half-built index folder is left and no
acknowledged turn is lost. In the table, "killed" counts the refused points.
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
from diskfull import diskfull_points

SHARES = {"ingest": 20, "curate": 15, "forget": 15, "purge": 15, "undo": 15, "rollback": 10,
          "gc": 10, "sync": 10, "diskfull": 10}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", type=Path, help="write the results here too")
    ap.add_argument("--kinds", default=",".join(SHARES), help="commands to kill, comma-separated")
    args = ap.parse_args()
    kinds = [k for k in args.kinds.split(",") if k]
    total = sum(SHARES[k] for k in kinds)
    plan = {k: max(1, round(args.points * SHARES[k] / total)) for k in kinds}
    plan[kinds[0]] += args.points - sum(plan.values())
    results = []
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="memctl-crash-") as tmp:
        for kind, n in plan.items():
            t0 = time.monotonic()
            if kind == "diskfull":
                res = diskfull_points(Path(tmp) / kind, n, seed=args.seed)
            else:
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
    print("\n| command | points | killed | finished first | survived | lost |")
    print("|---|---|---|---|---|---|")
    for r in results:
        ok = not r["failures"]
        print(f"| {r['kind']} | {r['points']} | {r['killed']} | {r['finished_first']} | "
              f"{r['killed'] if ok else 'FAILED'} | {r['lost'] if ok else '?'} |")
    if args.json:
        args.json.write_text(json.dumps({"runs": results, "summary": summary}, indent=2))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
