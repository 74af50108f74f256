"""`memctl verify`: a citation holds only if its quote is verbatim in the turn it names."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from test_curate import SAMPLE, copy, memctl, new_vault

MARCO = SAMPLE / "marco" / "2026-09-10-egress-bill-alerting.jsonl"


@pytest.fixture(scope="module")
def marco(tmp_path_factory: pytest.TempPathFactory) -> Path:
    vault = new_vault(tmp_path_factory.mktemp("marco") / "vault")
    # the file name as the id, as in the sample vault: labels (def585-t7) do not depend on
    # where this checkout is (a file-name id is qualified by the real path otherwise)
    memctl(vault, "ingest", str(MARCO), "--user", "marco", "--scope", "team",
           "--session", MARCO.stem)
    memctl(vault, "curate")
    return vault


def line_of(path: Path, needle: str) -> int:
    return next(i for i, t in enumerate(path.read_text().splitlines(), 1) if needle in t)


def test_a_curated_vault_verifies_and_counts_what_it_checked(marco: Path) -> None:
    res = json.loads(memctl(marco, "verify", "--json").stdout)
    assert res["memctl_result_version"] == 1 and res["command"] == "verify"
    assert res["ok"] and res["problems"] == []
    assert res["notes"] == 5 and res["claims"] >= 10 and res["raw_sessions"] == 1
    assert res["human_lines"] == 0
    text = memctl(marco, "verify").stdout
    assert text.startswith("verify: ok · 5 notes, ")


def test_every_way_a_citation_can_break_is_reported_with_file_and_line(
    marco: Path, tmp_path: Path
) -> None:
    vault = copy(marco, tmp_path / "v")
    know = vault / "knowledge" / "acme.md"
    text = know.read_text(encoding="utf-8")
    text = text.replace('"We manage all alarms in Terraform."', '"We manage all alarms in Pulumi."')
    text = re.sub(r"(\[\^def585-t7-606e\]: raw/\S+)#t7", r"\1#t99", text)
    text = text.replace(
        "- [[entities/acme|Acme]] manages",
        "- A human line without a source.\n"
        "- [[entities/acme|Acme]] cites nothing real. [^nowhere]\n"
        "- [[entities/acme|Acme]] manages",
    )
    know.write_text(text, encoding="utf-8")
    prof = vault / "profile" / "marco.md"
    prof.write_text(
        re.sub(r"raw/2026/09/10/[^#]+#t3", "raw/2026/01/01/gone-000000.md#t3", prof.read_text()),
        encoding="utf-8",
    )
    raw = next((vault / "raw").rglob("*-def585*.md"))
    raw.write_text(raw.read_text().replace("about $40k a month", "about $4k a month"))

    proc = memctl(vault, "verify", check=False)
    assert proc.returncode == 1
    err = proc.stderr
    k = "knowledge/acme.md"
    assert f"{k}:{line_of(know, 'Pulumi')}: raw/" in err and "quote is not verbatim" in err
    assert f"{k}:{line_of(know, '#t99')}: " in err and "has turns t1..t12; no t99" in err
    assert f"{k}:{line_of(know, '[^nowhere]')}: claim cites [^nowhere] but no footnote" in err
    assert "profile/marco.md:" in err and "cited session raw/2026/01/01/gone-000000.md" in err
    rel = raw.relative_to(vault).as_posix()
    assert f"{rel}:1: raw session was edited after ingest (content_hash differs)" in err
    # The edited raw turn no longer holds the quote either: both failures are reported.
    assert "Our egress bill is about $40k a month." in err
    res = json.loads(memctl(vault, "verify", "--json", check=False).stdout)
    assert not res["ok"] and res["human_lines"] == 1
    only = memctl(vault, "verify", "entities/acme.md", "--json", check=False)
    assert json.loads(only.stdout)["notes"] == 1


def test_whitespace_may_differ_but_nothing_else(marco: Path, tmp_path: Path) -> None:
    vault = copy(marco, tmp_path / "v")
    ref = next((vault / "raw").rglob("*-def585*.md")).relative_to(vault).as_posix()
    # t3 reads "I'm on call every third week. I hate alerts nobody can act on." (one line)
    (vault / "knowledge" / "hand.md").write_text(
        "---\nid: knowledge/hand\nschema: 1\nstore: knowledge\ntitle: Hand\nscope: team\n"
        "status: active\ncreated: 2026-11-30\nupdated: 2026-11-30\n---\n# Hand\n\n## Facts\n\n"
        "- Marco is on call. [^a]\n- Marco hates alerts. [^b]\n\n"
        f'[^a]: {ref}#t3 "I\'m on call every\\nthird   week."\n'
        f'[^b]: {ref}#t3 "I hate \\"alerts\\" nobody can act on."\n',
        encoding="utf-8",
    )
    res = json.loads(memctl(vault, "verify", "knowledge/hand.md", "--json", check=False).stdout)
    [problem] = res["problems"]
    assert problem["label"] == "b" and "quote is not verbatim" in problem["message"]
