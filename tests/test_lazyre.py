"""Patterns compiled on first use (memctl/core/lazyre.py): the same answers as re.compile,
no compile cost for a command that never runs them."""

from __future__ import annotations

import re
import subprocess
import sys
import types

from memctl.core.lazyre import lazy


def test_a_lazy_pattern_answers_as_the_compiled_one_and_then_is_one() -> None:
    mod = types.ModuleType("lazy_probe")
    exec("from memctl.core.lazyre import lazy\nP = lazy(r'(?P<w>ab)+', 2)\nB = lazy(rb'a')\n",
         mod.__dict__)  # fmt: skip
    stand_in = mod.P
    assert not isinstance(stand_in, re.Pattern) and stand_in.pattern == "(?P<w>ab)+"
    assert stand_in.search("xxABab").group("w") == "ab"
    assert stand_in.groupindex == {"w": 1} and stand_in.flags == re.compile("", re.I).flags
    assert [m.span() for m in stand_in.finditer("ab ab")] == [(0, 2), (3, 5)]
    assert stand_in.sub("-", "abxAB") == "-x-"
    # the module's own name now holds the compiled pattern, for the hot loops
    assert isinstance(mod.P, re.Pattern) and mod.P.flags & re.I
    assert mod.B.findall(b"aba") == [b"a", b"a"] and isinstance(mod.B, re.Pattern)
    assert lazy("x").fullmatch("x") is not None


def test_importing_redaction_and_the_builtin_curator_compiles_no_rule() -> None:
    code = (
        "import memctl.core.redact as r, memctl.curate.builtin.claims, sys\n"
        "from memctl.core.lazyre import _LazyPattern\n"
        "mods = [m for n, m in sys.modules.items() if n.startswith(('memctl.core.redact',"
        " 'memctl.curate.builtin'))]\n"
        "lazy = [v for m in mods for v in vars(m).values() if isinstance(v, _LazyPattern)]\n"
        "print(len(lazy), sum('search' in v.__dict__ for v in lazy))\n"
        "r.redact('export GITHUB_TOKEN=ghp_' + 'a1B2c3D4e5' * 4)\n"
        "print(sum('search' in v.__dict__ for v in lazy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()  # fmt: skip
    waiting, compiled, after = map(int, out)
    assert waiting > 250 and compiled == 0
    assert 0 < after < waiting  # a token compiles the detectors it needs, not all of them
