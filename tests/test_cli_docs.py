"""docs/cli.md is generated from --help; this fails when a command changes and the doc does not."""

from __future__ import annotations

import subprocess
import sys

from util import ROOT


def test_cli_reference_is_current() -> None:
    r = subprocess.run([sys.executable, str(ROOT / "scripts" / "gen_cli_docs.py"), "--check"],
                       capture_output=True, text=True, check=False, cwd=ROOT)
    assert r.returncode == 0, r.stderr
