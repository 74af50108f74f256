"""A list question finds the turn that names an instance of the kind it asks for.

"Which European countries did they visit?" is answered by "two weeks in Spain", which shares
no word with it: the turn's KINDS field (WordNet kinds of its words, memctl.index.kinds) holds
"european country". Real files, a real git commit and the real index.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from searchutil import turn_refs
from test_recall import build_vault

from memctl.index import kinds, reader, schema, search
from memctl.vault import Vault

T = "2026-10-0{}T10:00:00Z"
SESSIONS = [
    (
        "s-trip",
        "ann",
        "team",
        [
            ("Ann", "user", "We spent two weeks in Spain, then flew home.", T.format(1)),
            ("Bo", "user", "Nice. I stayed in and repainted the kitchen.", T.format(1)),
        ],
    ),
    (
        "s-plans",
        "ann",
        "team",
        [
            ("Ann", "user", "Which countries are cheap to visit in winter?", T.format(2)),
            ("Bo", "user", "No idea, I never plan that far ahead.", T.format(2)),
        ],
    ),
]
LIST_Q = "Which European countries did they visit?"


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> tuple[Vault, dict[str, str]]:
    return build_vault(tmp_path_factory.mktemp("kinds") / "v", SESSIONS, [])


def test_the_table_knows_kinds_of_nouns_and_their_plurals() -> None:
    assert {"european", "country"} <= set(kinds.kinds("spain"))
    assert kinds.kinds("countries") == kinds.kinds("country") != ()
    assert kinds.kinds("children") == kinds.kinds("child") != ()  # WordNet's irregular forms
    assert kinds.kinds("zzzq") == () and kinds.kinds("a") == ()
    assert "country" in kinds.kinds_text("Spain, then Spain again").split()


def test_the_binary_search_finds_every_line_of_the_table_and_nothing_else() -> None:
    """The lookup reads the sorted file in place; a wrong bound would lose words silently."""
    lines = [ln for ln in kinds.TABLE.read_bytes().split(b"\n") if ln]
    keys = [ln.split(b" ", 1)[0] for ln in lines]
    assert keys == sorted(set(keys))  # sorted and unique, as the search needs
    assert [kinds._line(k) for k in keys] == lines
    have = set(keys)
    # words just before, between and after the keys are not in it
    probes = {k[:-1] for k in keys} | {k + b"a" for k in keys} | {b"", b"0", b"~"}
    assert not [w for w in sorted(probes - have) if kinds._line(w) is not None]


def test_a_list_question_finds_the_instance_that_shares_no_word(
    vault: tuple[Vault, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    v, paths = vault
    spain = f"{paths['s-trip']}#t1"
    assert search.parse_query(LIST_Q).kind == ("european", "countri")
    assert spain in turn_refs(v, LIST_Q, 3)  # with the turns that share "countries", "visit"
    monkeypatch.setattr(search, "W_KIND", 0.0)
    assert spain not in turn_refs(v, LIST_Q)  # no word in common: only its kinds find it


def test_an_ordinary_query_never_reads_the_kinds_field(
    vault: tuple[Vault, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    v, _ = vault
    queries = ["Where did Ann spend two weeks?", "countries cheap in winter", "What did Bo paint?"]
    for q in queries:
        plan = search.build_plan(search.parse_query(q), reader.Filters())
        assert all(fld != schema.KINDS for fld, _, _ in plan.should), q
    before = [turn_refs(v, q) for q in queries]
    assert any(before)
    monkeypatch.setattr(search, "W_KIND", 0.0)
    assert [turn_refs(v, q) for q in queries] == before


def test_only_indexing_reads_the_table(vault: tuple[Vault, dict[str, str]], tmp_path: Path) -> None:
    # searching, a list question included, needs only the question's own words
    code = (
        "import sys\n"
        "from memctl.vault import Vault\n"
        f"v = Vault.open({str(vault[0].root)!r})\n"
        "v.search('Where did Ann spend two weeks?')\n"
        f"v.search({LIST_Q!r})\n"
        f"v.recall({LIST_Q!r}, user='ann')\n"  # what the UserPromptSubmit hook asks
        "print('LOADED', 'memctl.index.kinds' in sys.modules)\n"
        "from memctl.index.writer import rebuild\n"
        "rebuild(v)\n"
        "print('INDEXED', 'memctl.index.kinds' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "LOADED False" in out.stdout and "INDEXED True" in out.stdout, out.stderr


def test_the_table_and_its_license_ship_in_the_package(tmp_path: Path) -> None:
    # run from elsewhere, so the package is found as installed, not as the working directory
    code = (
        "import memctl.index.kinds as k\n"
        "print(k.TABLE.parent.parent.name, k.TABLE.is_file(), ' '.join(k.kinds('spain')))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert out.stdout.startswith("memctl True ") and "country" in out.stdout.split()
    notice = kinds.TABLE.with_name("WORDNET-LICENSE.txt").read_text(encoding="utf-8")
    assert "WordNet 3.0 Copyright 2006 by Princeton University" in notice
