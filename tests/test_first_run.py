"""The first hour reads well: the demo is plain text when piped and its numbers agree, the top
search hit shows why it matched, and the test run prints only what matters."""

from __future__ import annotations

import re
import subprocess
import sys

from util import ROOT


def test_the_demo_piped_is_plain_and_its_numbers_agree() -> None:
    r = subprocess.run(["bash", str(ROOT / "scripts" / "demo")], capture_output=True, text=True,
                       check=False, cwd=ROOT, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    out = r.stdout
    assert "\x1b" not in out, "escape codes in piped output"
    curate = out.split("$ memctl curate\n", 1)[1].split("\n$ ", 1)[0]
    diff = out.split("$ memctl diff HEAD~1..HEAD\n", 1)[1]
    diff = diff.split("\n", 1)[0]
    said = curate.splitlines()[1].strip()  # the claim counts, in diff's words
    assert re.fullmatch(r"(\d+ \w+)(, \d+ \w+)*", said), curate
    assert diff.endswith(f": {said}"), (said, diff)
    # the top hit for "egress costs" shows both words in its snippet
    search = out.split('$ memctl search egress costs --limit 5\n', 1)[1]
    top = search.splitlines()[0].split("\t")[3].lower()
    assert "egress" in top and "cost" in top, top
    # the demo's vault holds everything it made, committed: sample-vault/ has .memctl/ but no
    # .git, and init used to adopt none of it (26 untracked entries, a hand-edit commit)
    vault = out.rsplit("The vault is at ", 1)[1].split(" — ", 1)[0]
    status = subprocess.run(["git", "-C", vault, "status", "--porcelain"], capture_output=True,
                            text=True, check=True).stdout
    assert status == "", status
    log = subprocess.run(["git", "-C", vault, "log", "--format=%s"], capture_output=True,
                         text=True, check=True).stdout
    assert "edited by hand" not in log, log


def test_the_test_run_prints_no_third_party_warnings() -> None:
    # the tests that load litellm are the ones that used to print ~60 lines of warnings
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
         "tests/test_fakellm.py"],
        capture_output=True, text=True, check=False, cwd=ROOT, timeout=300,
    )
    assert r.returncode == 0, r.stdout[-2000:]
    assert "warnings summary" not in r.stdout and "Warning" not in r.stdout, r.stdout[-3000:]
