"""What a new contributor reads first holds: the license the package declares, the fast loop
CONTRIBUTING.md gives (the `slow` marker registered, tests/slow.txt naming real tests), and
the glossary's words."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_license_file_is_the_license_pyproject_declares() -> None:
    declared = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert declared["project"]["license"] == "MIT"
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n") and "Permission is hereby granted" in text


def test_contributing_gives_the_fast_loop_and_the_glossary() -> None:
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    assert '-m "not slow"' in text and "./scripts/test" in text
    words = set(re.findall(r"^\| ([\w ]+?) \|", text, flags=re.M))
    assert {"floor", "face", "front door", "request", "change"} <= words
    markers = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert any(m.startswith("slow:") for m in markers["tool"]["pytest"]["ini_options"]["markers"])


def test_every_line_of_the_slow_list_names_a_test_that_exists() -> None:
    """A renamed test would quietly join the fast loop; the list is kept honest instead."""
    missing = []
    for line in (ROOT / "tests" / "slow.txt").read_text(encoding="utf-8").splitlines():
        if not line or line.startswith("#"):
            continue
        module, _, test = line.partition("::")
        path = ROOT / module
        name = test.split("[", 1)[0].split("::")[-1]
        if not path.is_file() or (
            name and not re.search(rf"^\s*def {re.escape(name)}\(", path.read_text("utf-8"), re.M)
        ):
            missing.append(line)
    assert missing == []
