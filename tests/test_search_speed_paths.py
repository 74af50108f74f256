"""The shortcuts search takes for speed give exactly what the long way gives.

Each test pits one shortcut against the plain computation it replaced: a turn's text read
by its byte span through a bare file descriptor (against the turn as the raw file parses),
the snippet's highlight offsets and flattening for ASCII text (against the byte-prefix
decoding and translation every snippet once paid), and filter lists asked as disjunctions
of terms (against the term set queries they were).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import tantivy
from searchutil import ok, transcript

from memctl.core.raw import parse_session
from memctl.index import reader, schema, writer
from memctl.index.search import build_plan, make_filters, parse_query
from memctl.vault import Vault

TURNS = [
    ("user", "Dana", "The egress bill doubled after the CDN move; NAT gateway charges again."),
    ("assistant", None, "Line one about egress.\nLine two\tabout the NAT gateway.\r\nDone."),
    ("user", "Dana", "Café egress — naïve NAT gateway maths, 日本語 and 🙂 egress."),
    ("assistant", None, "egress " * 80 + "and a NAT gateway at the very end."),
    ("user", "Dana", "\x0bvertical\x0cfeed egress\x0bNAT gateway"),
]


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("searchspeed")
    v = tmp / "vault"
    ok("init", v)
    for i in range(3):
        src = tmp / f"s{i}.jsonl"
        transcript(src, f"egress-{i}", TURNS[i:] + TURNS[:i], 3 + i)
        ok("--vault", v, "ingest", src, "--user", "dana", "--scope", "team")
    return v


def test_turn_texts_read_by_span_are_the_turns_as_parsed(vault: Path) -> None:
    v = Vault.open(vault)
    hits = [h for q in ("egress", "NAT gateway", "café naïve", "vertical feed") for h in
            v.search(q, kind="turn", limit=50).hits]  # fmt: skip
    assert len({h.ref for h in hits}) >= 12
    for h in hits:
        rel, _, n = h.ref.partition("#t")
        _, messages = parse_session((vault / rel).read_bytes().decode("utf-8"), rel)
        assert h.text == messages[int(n) - 1].content, h.ref


def test_a_turn_whose_file_moved_on_is_read_the_slow_way(vault: Path, tmp_path: Path) -> None:
    """A raw file changed in place (same length, so only the mtime tells): the span is not
    trusted, the turn comes from parsing the file, and the file is named as moved."""
    v = Vault.open(vault)
    hit = v.search("vertical feed", kind="turn", limit=1, sync=False).hits[0]
    rel = hit.ref.split("#", 1)[0]
    path = vault / rel
    data = path.read_bytes()
    st = path.stat()
    try:
        path.write_bytes(data.replace(b"vertical", b"VERTICAL"))
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
        r = reader.Reader(v)
        fields = [dict(r.stored(c.addr)) for c in _cands(r, "vertical feed")]
        texts = reader._turn_texts(vault, fields, r.moved)
        assert rel in r.moved
        assert any(t is not None and "VERTICAL" in t for t in texts)
    finally:
        path.write_bytes(data)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _cands(r: reader.Reader, q: str) -> list[Any]:
    return r.candidates(build_plan(parse_query(q), make_filters(kind="turn")), 10)


def _snippet_the_long_way(gen: Any, text: str, width: int) -> tuple[str, tuple[Any, ...]]:
    """reader._snippet as it was: every fragment's offsets decoded from byte prefixes, every
    fragment translated (then grown to whole words, as reader._snippet does since)."""
    if gen is not None and text:
        doc = tantivy.Document()
        doc.add_text(schema.BODY, text)
        sn = gen.snippet_from_doc(doc)
        frag = sn.fragment()
        ranges = sn.highlighted()
        if frag and ranges:
            raw = frag.encode("utf-8")
            marks = tuple(
                (
                    len(raw[: r.start].decode("utf-8", "ignore")),
                    len(raw[: r.end].decode("utf-8", "ignore")),
                )
                for r in ranges
            )
            # the edges grown over glued punctuation, the same way on both paths
            frag, marks = reader._whole_words(text, frag, marks)
            return frag.translate(reader._FLAT), marks
    flat = " ".join(text.split())
    return (flat[: width - 1] + "…" if len(flat) > width else flat), ()


def test_snippets_and_highlights_are_as_before(vault: Path) -> None:
    v = Vault.open(vault)
    r = reader.Reader(v)
    texts = [t for _, _, t in TURNS] + ["", "no match here", "egress\n\negress", "é" * 300]
    ascii_seen = other_seen = 0
    for q in ("egress", "NAT gateway", "café", "日本語", "vertical feed", "egress naïve"):
        plan = build_plan(parse_query(q), make_filters())
        snip_q = reader._text_query(plan, (schema.BODY,))
        assert snip_q is not None
        for width in (40, 200):
            gen = tantivy.SnippetGenerator.create(r.searcher, snip_q, schema.SCHEMA, schema.BODY)
            gen.set_max_num_chars(width)
            for text in texts:
                got = reader._snippet(gen, text, width)
                assert got == _snippet_the_long_way(gen, text, width), (q, width, text[:40])
                if got[1]:
                    ascii_seen += got[0].isascii()
                    other_seen += not got[0].isascii()
    assert ascii_seen > 5 and other_seen > 2, (ascii_seen, other_seen)



def test_filter_lists_match_what_a_term_set_matched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A filter of several values is asked as a disjunction of terms (walked lazily), not a
    term set query (a bit set of every matching document first): the same hits, in the same
    order, with the same scores, for every filter that takes a list."""
    from searchutil import make_vault, note, turn_ref

    root = make_vault(tmp_path)
    turns = [("dana-egress", 1), ("dana-egress", 2), ("marco-exporter", 1), ("priya-forecast", 2)]
    refs = [turn_ref(root, s, n) for s, n in turns]
    cites = "".join(f'[^c{j}]: {ref} "egress"\n' for j, ref in enumerate(refs))
    homes = [("knowledge", "team"), ("decisions", "team"), ("profile", "user:dana"),
             ("knowledge", "user:priya")]  # fmt: skip
    for i, (store, scope) in enumerate(homes):
        body = ""
        for sec in ("Goals", "Facts"):
            body += f"## {sec}\n\n"
            body += "".join(f"- {sec} {i}.{j}: egress NAT gateway forecast Berlin [^c{j}]\n"
                            for j in range(len(refs)))  # fmt: skip
            body += "\n"
        note(root, f"{store}/keys-{i}.md", store, f"Keys {i}", "active", body + cites, scope=scope)
    v = Vault.open(root)
    writer.sync(v)
    r = reader.Reader(v)
    scopes = ["team", "user:dana", "user:marco", "user:priya", "global"]
    filters = [
        {"scope": scopes[:2]},
        {"scope": scopes},
        {"kind": "turn", "scope": ["team", "user:priya"]},
        {"kind": "note", "store": ["knowledge", "decisions", "instructions"], "status": "all"},
        {"kind": "note", "status": ["active", "superseded", "proposed"]},
        {"kind": "claim", "cite": refs, "scope": scopes},
        {"kind": "claim", "cite": refs[1:3], "status": "active", "store": ["profile", "decisions"]},
        {"kind": "claim", "section": ["facts", "goals", "claims"], "scope": scopes[1:]},
        {"user": ["dana", "marco"], "speaker": ["dana", "marco", "priya"]},
    ]
    asked = 0
    for q in ("", "egress", "NAT gateway charges", "forecast Berlin", "CloudFront Fastly"):
        for fk in filters:
            plan = build_plan(parse_query(q), make_filters(**fk))
            monkeypatch.setattr(reader, "ANY_OF_TERMS", 1)  # every list as a term set
            before = [(c.score, c.sess, c.addr.segment_ord, c.addr.doc)
                      for c in r.candidates(plan, 50)]  # fmt: skip
            monkeypatch.setattr(reader, "ANY_OF_TERMS", 512)
            after = [(c.score, c.sess, c.addr.segment_ord, c.addr.doc)
                     for c in r.candidates(plan, 50)]  # fmt: skip
            assert after == before, (q, fk)
            asked += bool(before)
    assert asked >= 30, asked
