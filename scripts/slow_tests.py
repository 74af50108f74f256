#!/usr/bin/env python3
"""Write tests/slow.txt, the tests the fast loop (`pytest -m "not slow"`) leaves out, and
tests/heavy.txt, the modules that take longest, from the timings of a whole run on the
two-core machine CI has:

    .venv/bin/python -m pytest -q -p no:cacheprovider -n 2 --dist loadscope --durations=0 \\
        > /tmp/durations.txt
    .venv/bin/python scripts/slow_tests.py /tmp/durations.txt

A test is slow when its setup or its call takes TEST_SECONDS or more. A whole module is
slow when a fixture it shares costs MODULE_SECONDS or more (left out test by test, that
cost would fall on the next fast test of the module), or when none of its tests is fast.
tests/conftest.py marks what the file names; `@pytest.mark.slow` on a test does the same.

tests/heavy.txt lists every module of HEAVY_SECONDS or more, longest first: conftest puts
them first, so the two workers start on the long ones and the run does not end with one
worker busy on a long module while the other idles.
"""

from __future__ import annotations

import re
import sys
from collections import defaultdict
from pathlib import Path

TEST_SECONDS = 0.3
MODULE_SECONDS = 1.5
HEAVY_SECONDS = 3.0
OUT = Path(__file__).resolve().parent.parent / "tests" / "slow.txt"
HEAVY = OUT.with_name("heavy.txt")
_LINE = re.compile(r"^\s*([\d.]+)s (setup|call|teardown)\s+(tests/\S.*?)\s*$")


def plan(log: str) -> tuple[list[str], list[str], float]:
    """(slow modules, slow tests of the other modules, seconds the fast tests take)."""
    setup: dict[str, float] = defaultdict(float)
    rest: dict[str, float] = defaultdict(float)
    for line in log.splitlines():
        if m := _LINE.match(line):
            (setup if m.group(2) == "setup" else rest)[m.group(3)] += float(m.group(1))
    by_module: dict[str, list[str]] = defaultdict(list)
    for node in {*setup, *rest}:
        by_module[node.split("::")[0]].append(node)
    modules, tests, fast_seconds = [], [], 0.0
    for module, nodes in sorted(by_module.items()):
        fast = [n for n in nodes if setup[n] < TEST_SECONDS and rest[n] < TEST_SECONDS]
        shared = max(setup[n] for n in nodes)
        if not fast or shared >= MODULE_SECONDS:
            modules.append(module)
            continue
        tests += sorted(n for n in nodes if n not in fast)
        fast_seconds += sum(setup[n] + rest[n] for n in fast)
        fast_seconds += shared if shared >= TEST_SECONDS else 0.0
    return modules, tests, fast_seconds


def heavy(log: str) -> list[tuple[str, float]]:
    """(module, seconds) of the modules of HEAVY_SECONDS or more, longest first."""
    total: dict[str, float] = defaultdict(float)
    for line in log.splitlines():
        if m := _LINE.match(line):
            total[m.group(3).split("::")[0]] += float(m.group(1))
    ranked = sorted(total.items(), key=lambda kv: (-kv[1], kv[0]))
    return [(module, secs) for module, secs in ranked if secs >= HEAVY_SECONDS]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        sys.stderr.write(__doc__ or "")
        return 2
    log = Path(argv[1]).read_text(encoding="utf-8")
    modules, tests, seconds = plan(log)
    HEAVY.write_text(
        "# The longest modules, longest first (seconds of test time in the run it was written\n"
        "# from): conftest runs them first. Written by scripts/slow_tests.py.\n"
        + "".join(f"{module} {secs:.1f}\n" for module, secs in heavy(log)),
        encoding="utf-8",
    )
    header = (
        "# Tests the fast loop leaves out (pytest -m \"not slow\"), written by\n"
        "# scripts/slow_tests.py from a timed run: a module, or one test, a line.\n"
    )
    OUT.write_text(header + "".join(f"{x}\n" for x in [*modules, *tests]), encoding="utf-8")
    sys.stdout.write(
        f"{len(modules)} modules and {len(tests)} tests slow; the rest take {seconds:.0f} s "
        "of test time (about half that on two workers)\n"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
