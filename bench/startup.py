"""What `memctl --version` and `memctl --help` cost, against the interpreter's own start.

    python bench/startup.py            # 15 rounds
    python bench/startup.py --rounds 5

Each round runs `python -c pass` (the floor every Python program pays), `memctl --version`
and `memctl --help` as fresh processes, alternating, and reports the best and the median
of each with its ratio to the floor. This was a test (tests/test_cli_basics.py asserted
under 0.6 s) once: a wall-clock bound fails on a loaded machine and says nothing
on an idle one; a ratio in the same run says what memctl itself adds.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time


def _timed(args: list[str]) -> float:
    t = time.perf_counter()
    subprocess.run(args, capture_output=True, check=True)
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15)
    opts = ap.parse_args()
    py = sys.executable
    runs = {
        "python -c pass": [py, "-c", "pass"],
        "memctl --version": [py, "-m", "memctl", "--version"],
        "memctl --help": [py, "-m", "memctl", "--help"],
    }
    times: dict[str, list[float]] = {k: [] for k in runs}
    for _ in range(opts.rounds):
        for name, args in runs.items():
            times[name].append(_timed(args))
    floor = statistics.median(times["python -c pass"])
    print("| command | best ms | median ms | median / python floor |")
    print("|---|---:|---:|---:|")
    for name, ts in times.items():
        med = statistics.median(ts)
        print(f"| `{name}` | {min(ts) * 1000:.0f} | {med * 1000:.0f} | {med / floor:.1f}x |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
