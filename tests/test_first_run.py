"""The first hour reads well: the demo is plain text when piped and its numbers agree, the top
search hit shows why it matched, and the test run prints only what matters."""

from __future__ import annotations

import re
import subprocess
import warnings

import pytest
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


def test_a_warning_fails_the_test_that_raises_it() -> None:
    """The run prints no third-party warnings: not because one run of test_fakellm.py was
    checked for them (a pytest inside pytest, the slowest test of the suite), but because
    pyproject's filterwarnings makes every warning an error in every test, so the tests
    that import litellm, pydantic, tantivy or gitpython are each the check. Only the noise
    named there by module is let through."""
    def warn(category: type[Warning], module: str) -> None:
        warnings.warn_explicit("noise", category, f"{module}/x.py", 1, module=module)

    for category in (UserWarning, DeprecationWarning, PendingDeprecationWarning,
                     RuntimeWarning, FutureWarning, SyntaxWarning):
        with pytest.raises(category):
            warn(category, "somelib")
    with pytest.raises(DeprecationWarning):
        warn(DeprecationWarning, "memctl.curate.llm")
    warn(DeprecationWarning, "litellm")  # litellm on pydantic 2.11+, named in pyproject
    warn(DeprecationWarning, "pydantic")
    with pytest.raises(UserWarning):
        warn(UserWarning, "litellm")  # only what pyproject names, nothing more
