"""One reference grammar: every reference memctl prints is accepted back by show, export and
MCP read, on a real vault built from the sample vault the way the demo builds it."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from util import DATA, ROOT, memctl, ok

from memctl.core.raw import short_digest
from memctl.core.refs import digest_of, resolve
from memctl.errors import InputError
from memctl.vault import Vault

SRC = DATA / "sample-transcripts"
RAW_REF = re.compile(r"raw/[\w/.-]+?\.md(?:#t\d+)?")
SHORT_REF = re.compile(r"(?<![\w/-])([0-9a-f]{6})(#t\d+)?(?![\w-])")
NOTE_REF = re.compile(
    r"(?<![\w/])(?:profile|sessions|entities|knowledge|decisions|feedback|instructions)"
    r"/[\w.-]+?\.md"
)
NOTE_ID = re.compile(r"^id: (\S+)$", re.M)
LABEL = re.compile(r"\[\^([0-9a-f]{6}-t\d+(?:-[0-9a-z]+)?)\]")


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo's vault: the sample vault, two new sessions, curated."""
    v = tmp_path_factory.mktemp("refs") / "acme"
    shutil.copytree(ROOT / "sample-vault", v)
    ok("init", v)
    ok("--vault", v, "ingest", SRC / "priya/2026-10-29-berlin-forecast-review.jsonl",
       "--user", "priya", "--scope", "user:priya")
    ok("--vault", v, "ingest", SRC / "dana/2026-11-03-cdn-and-phase2-egress-review.jsonl",
       "--user", "dana", "--scope", "team")
    ok("--vault", v, "curate")
    return v


def _session_of(v: Path, needle: str) -> str:
    return next(p.relative_to(v).as_posix() for p in (v / "raw").rglob(f"*{needle}*.md"))


def test_show_takes_the_digest_and_turn_that_recall_cites(demo: Path) -> None:
    rel = _session_of(demo, "observability")
    digest = digest_of(rel)
    assert digest
    r = ok("--vault", demo, "show", f"{digest}#t11", "--json").json()
    assert r["kind"] == "turn" and r["ref"] == f"{rel}#t11"
    assert "Grafana Cloud" in r["text"]
    # a digest prefix, and the digest alone for the whole session
    assert ok("--vault", demo, "show", f"{digest[:4]}#t1", "--json").json()["ref"] == f"{rel}#t1"
    assert ok("--vault", demo, "show", digest, "--json").json()["kind"] == "session"


def test_show_takes_a_note_id(demo: Path) -> None:
    r = ok("--vault", demo, "show", "profile/priya", "--json").json()
    assert r["kind"] == "note" and r["ref"] == "profile/priya.md"
    assert "id: profile/priya" in r["text"]
    assert ok("--vault", demo, "show", "profile/INDEX.md", "--json").json()["kind"] == "index"


def test_export_takes_every_session_form_and_a_turn(demo: Path) -> None:
    rel = _session_of(demo, "observability")
    digest = digest_of(rel)
    header = ok("--vault", demo, "show", rel, "--json").json()["meta"]["session"]
    whole = ok("--vault", demo, "export", rel).out
    for form in (digest, header, header[:12], f"{rel}#t2"[: len(rel)]):
        assert ok("--vault", demo, "export", form).out == whole, form
    one = ok("--vault", demo, "export", f"{digest}#t11").out.splitlines()
    assert len(one) == 1 and json.loads(one[0]) == json.loads(whole.splitlines()[10])


def test_footnote_labels_name_their_turn(demo: Path) -> None:
    rel = _session_of(demo, "freelance-data-scientist")
    digest = short_digest(rel)  # a label carries the first 6 hex of the name's digest
    vault = Vault.open(demo, env={})
    for label in (f"{digest}-t1", f"[^{digest}-t1]", f"{digest}-t1-a7d1"):
        assert resolve(vault, label).text == f"{rel}#t1", label
    note = ok("--vault", demo, "show", "profile/priya").out
    assert f"[^{digest}-t1]" in note
    assert ok("--vault", demo, "show", f"[^{digest}-t1]", "--json").json()["ref"] == f"{rel}#t1"


def test_bad_references_are_one_plain_error(demo: Path) -> None:
    for ref, words in (
        ("profile/priya.md#t1", "only sessions have turns"),
        ("zzzzzz#t1", "no session 'zzzzzz'"),
        ("../outside.md", "outside the vault"),
        ("knowledge/none.md", "no note or session"),
        ("a#tx", "bad turn anchor"),
    ):
        r = memctl("--vault", demo, "show", ref)
        assert r.code == 2, (ref, r.out, r.err)
        assert words in r.err and r.err.count("\n") == 1, (ref, r.err)
    rel = _session_of(demo, "observability")
    r = memctl("--vault", demo, "show", f"{rel}#t99")
    assert r.code == 2 and "no #t99" in r.err


def test_the_digest_is_six_hex_digits_or_the_whole_hash_after_a_collision() -> None:
    full = "0123456789abcdef0123456789abcdef01234567"
    assert digest_of("raw/2026/01/02/hello-there-a1b2c3.md") == "a1b2c3"
    assert digest_of(f"raw/2026/01/02/hello-there-{full}.md") == full
    assert digest_of("raw/2026/01/02/hello-there.md") is None


def test_an_ambiguous_prefix_names_the_candidates(tmp_path: Path) -> None:
    vault, _ = Vault.init(tmp_path / "v", env={})
    for sid in ("same-start-one", "same-start-two"):
        import io

        vault.ingest(["-"], fmt="jsonl", session=sid, redact=False,
                     stdin=io.BytesIO(b'{"role": "user", "content": "hello there"}\n'))
    with pytest.raises(InputError, match="ambiguous: same-start-one, same-start-two"):
        resolve(vault, "same-start")
    assert resolve(vault, "same-start-two#t1").turn == 1


def _printed(demo: Path) -> str:
    """What a user sees from the commands that print references."""
    runs = [
        ("search", "egress costs"),
        ("search", "Grafana", "--json"),
        ("recall", "Should we use Datadog or Grafana?", "--user", "marco"),
        ("recall", "Where does Priya live?", "--user", "priya", "--json"),
        ("context", "--user", "dana"),
        ("diff", "--since", "30d"),
        ("diff", "--since", "30d", "--json"),
        ("status", "--json"),
        ("show", "profile/priya.md"),
    ]
    return "\n".join(ok("--vault", demo, *args).out for args in runs)


def test_every_printed_reference_is_accepted_back(demo: Path) -> None:
    text = _printed(demo)
    refs = set(RAW_REF.findall(text)) | set(NOTE_REF.findall(text))
    refs |= {d + (t or "") for d, t in SHORT_REF.findall(text)}
    refs |= set(NOTE_ID.findall(text)) | set(LABEL.findall(text))
    kinds = {_shape(r) for r in refs}
    # each shape was printed at least once, so the loop below tests all of them
    assert (True, False, False) in kinds, "no digest#tN printed"
    assert (True, True, True) in kinds, "no raw path#tN printed"
    assert (False, False, True) in kinds, "no note path printed"
    assert len(refs) > 20
    vault = Vault.open(demo, env={})
    one_per_shape: dict[tuple[bool, bool, bool, str], str] = {}
    for ref in sorted(refs):
        r = resolve(vault, ref)
        assert vault.show(ref).ref == r.text, ref
        if r.is_raw:
            assert list(vault.export(ref)), ref
        one_per_shape.setdefault((*_shape(ref), r.kind), ref)
    # and through the CLI, one of each shape (a subprocess each: ~0.5 s)
    for ref in one_per_shape.values():
        shown = ok("--vault", demo, "show", ref, "--json").json()
        assert shown["ref"] == resolve(vault, ref).text, ref


def _shape(ref: str) -> tuple[bool, bool, bool]:
    return "#" in ref, ref.startswith("raw/"), "/" in ref
