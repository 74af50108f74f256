"""Notes are read and written through python-frontmatter, as any editor saves them: a BOM,
CRLF line endings, both; a rewrite keeps the file's own style."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from util import ROOT, new_vault, ok

from memctl.errors import MemctlError
from memctl.notes import parse_note, render_note

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
    code = ("import sys\nfrom memctl.notes import parse_note, render_note\n"
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
