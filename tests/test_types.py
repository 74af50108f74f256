"""memctl is a typed library: it ships `py.typed`, and a caller's type checker sees what
each action returns. mypy runs over memctl/ itself in scripts/test (pyproject's [tool.mypy]);
here it reads a caller's program, as a user's checker would."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

CALLER = '''\
from memctl import Vault
from memctl.requests import RecallRequest, RememberRequest, SearchRequest

def use(vault: Vault) -> None:
    reveal_type(vault.handle(RememberRequest(user="dana", claim="x", own=True)))
    reveal_type(vault.handle(SearchRequest(query="postgres")))
    reveal_type(vault.handle(RecallRequest(query="postgres")).text)
    RememberRequest(user="dana", claim="x", owned=True)
'''


def test_the_package_says_it_is_typed() -> None:
    assert (ROOT / "memctl" / "py.typed").is_file()


@pytest.mark.slow
def test_a_callers_type_checker_sees_each_actions_result(tmp_path: Path) -> None:
    (tmp_path / "caller.py").write_text(CALLER, encoding="utf-8")
    r = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-incremental", "--ignore-missing-imports",
         "--follow-imports=silent", "caller.py"],
        cwd=tmp_path, capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    out = r.stdout
    assert 'Revealed type is "memctl.curate.remember.Remembered"' in out, out
    assert 'Revealed type is "memctl.index.search.SearchResult"' in out, out
    assert 'Revealed type is "str"' in out, out
    # a misspelt field is caught before the program runs
    assert 'Unexpected keyword argument "owned"' in out, out
