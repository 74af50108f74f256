"""Notes are read and written through python-frontmatter, as any editor saves them: a BOM,
CRLF line endings, both; a rewrite keeps the file's own style."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from util import ROOT, new_vault, ok

from memctl.core.notes import parse_note, render_note
from memctl.errors import MemctlError

NOTE = (
    "---\nid: knowledge/acme\nschema: 1\nstore: knowledge\ntitle: Acme\nscope: user:dana\n"
    "status: active\ncreated: 2026-11-01\nupdated: 2026-11-01\n---\n\n# Acme\n\n## Facts\n\n"
    "- The quokka cluster runs on zanzibar hosts.\n"
)


@pytest.mark.parametrize(("bom", "newline"), [("\ufeff", "\n"), ("", "\r\n"), ("\ufeff", "\r\n")])
def test_bom_and_crlf_notes_parse_and_round_trip(bom: str, newline: str) -> None:
    text = bom + NOTE.replace("\n", newline)
    note = parse_note(text, "knowledge/acme.md")
    assert note.scope == "user:dana" and note.title == "Acme"
    assert [c.text for _, c in note.all_claims()] == ["The quokka cluster runs on zanzibar hosts."]
    assert render_note(note) == render_note(parse_note(render_note(note), "x.md"))
    out = render_note(note)
    assert out.startswith(bom + "---" + newline) and out.count("\n") == out.count(newline)


def test_a_yaml_error_names_the_line_in_the_file() -> None:
    bad = "\ufeff---\r\nid: x\r\ntitle: [unclosed\r\n---\r\n# X\r\n"
    with pytest.raises(MemctlError) as err:
        parse_note(bad, "knowledge/x.md")
    assert err.value.path == "knowledge/x.md" and err.value.line in (3, 4)


def test_notes_go_through_python_frontmatter() -> None:
    code = ("import sys\nfrom memctl.core.notes import parse_note, render_note\n"
            f"render_note(parse_note({NOTE!r}, 'k.md'))\nprint('frontmatter' in sys.modules)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       cwd=ROOT)
    assert r.stdout.strip() == "True"


def test_a_private_crlf_note_stays_private_in_search(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    (v / "knowledge" / "acme.md").write_bytes(("\ufeff" + NOTE).replace("\n", "\r\n").encode())
    hits = ok("--vault", v, "search", "quokka", "--scope", "team", "--json").json()["hits"]
    assert hits == []  # read as a user:dana note, not as a frontmatter-less (team) one
    mine = ok("--vault", v, "search", "quokka", "--json").json()["hits"]
    assert [h["ref"] for h in mine] == ["knowledge/acme.md"]
    assert ok("--vault", v, "verify").out.startswith("verify: ok")


# ---- the plain-frontmatter reader gives exactly what YAML gives ------------------------------


def _typed(value: object) -> object:
    """A value with its types spelt out, so True == 1 or a date == its string cannot pass."""
    if isinstance(value, dict):
        return ("dict", [(_typed(k), _typed(v)) for k, v in value.items()])
    if isinstance(value, list):
        return ("list", [_typed(v) for v in value])
    return (type(value).__name__, value)


def _same_as_yaml(fm: str) -> bool:
    """True when the plain reader answered (and then as YAML does), False when it declined."""
    import yaml

    from memctl.core.notes import _plain_yaml

    got = _plain_yaml(fm)
    if got is None:
        return False
    try:
        want = yaml.safe_load(fm)
    except yaml.YAMLError:
        raise AssertionError(f"plain reader accepted what YAML refuses: {fm!r}") from None
    assert _typed(got) == _typed(want or {}), fm
    return True


def test_every_note_memctl_wrote_reads_the_same_without_yaml() -> None:
    fms = [
        p.read_text(encoding="utf-8").split("\n---\n", 1)[0][4:] + "\n"
        for p in (ROOT / "sample-vault").rglob("*.md")
        if p.read_text(encoding="utf-8").startswith("---\n") and "/raw/" not in str(p)
    ]
    assert len(fms) > 20
    assert all(_same_as_yaml(fm) for fm in fms)  # memctl's own shape: always the fast way


TRICKY = [
    "yes", "No", "ON", "off", "null", "Null", "~", "true", "y", "n", "Yes please", "nullable",
    "2026-11-01", "2026-1-5", "2026-13-45", "2026-11-01T10:00:00Z", "2026-11-01 10:00",
    "0", "7", "010", "1_000", "+1", "-1", "1.5", ".inf", "1e3", "0x1f", "12:30",
    "user:dana", "user: dana", "a:b:c", "a:", "key:x", "a #b", "a#b", "#c", "a  b", " a", "a ",
    "Dana's notes", "'quoted'", "'it''s'", "'a'b'", "''", "'", "'a # b'", "'\u2028'", "'\x07'",
    "[]", "[a]", "{}", "{a: 1}", "- x", "-x", "? x", "!tag x", "&a x", "*a", "|", ">", "%x",
    "@x", "`x", '"dq"', "a, b", "(a)", "a/b.c", "é", "Ünïcode", "a\tb", "=", "<<",
]  # fmt: skip


@pytest.mark.parametrize("value", TRICKY)
def test_a_tricky_scalar_is_read_as_yaml_reads_it_or_left_to_yaml(value: str) -> None:
    for fm in (f"\nk: {value}\n", f"\nk:\n- {value}\n- plain\n", f"\n{value}: v\n"):
        _same_as_yaml(fm)


def test_a_random_frontmatter_is_read_as_yaml_reads_it_or_left_to_yaml() -> None:
    from hypothesis import given, settings
    from hypothesis import strategies as st

    token = st.sampled_from(TRICKY) | st.text(
        st.characters(codec="utf-8", categories=("L", "N", "P", "S", "Zs")), max_size=12
    )
    line = st.one_of(
        st.tuples(st.sampled_from(["id", "title", "k", "yes", "tags"]), token).map(
            lambda kv: f"{kv[0]}: {kv[1]}"
        ),
        st.sampled_from(["tags:", "derived_by:", "", " ", "---x"]),
        token.map(lambda v: f"- {v}"),
    )

    @settings(max_examples=400, deadline=None, derandomize=True)
    @given(st.lists(line, max_size=8))
    def check(lines: list[str]) -> None:
        _same_as_yaml("\n" + "\n".join(lines) + "\n")

    check()
