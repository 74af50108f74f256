"""Hostile and awkward input: each case is a real file on a real vault."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from crashkit import head_turn_ids
from util import git, memctl, new_vault, ok


def _line(role: str, content: str, **extra: object) -> str:
    return json.dumps({"role": role, "content": content, **extra}) + "\n"


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_json_nested_100k_deep_is_one_line_in_every_json_reader(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    deep = "[" * 100_000 + "]" * 100_000
    cases = {
        "a.jsonl": '{"role": "user", "content": "hi", "x": ' + deep + "}\n",
        "b.json": '[{"role": "user", "content": "hi", "x": ' + deep + "}]",
        "c.jsonl": '{"type": "user", "sessionId": "s", "message": {"role": "user", '
                   '"content": "hi"}, "x": ' + deep + "}\n",
        "d.json": '[{"id": "c", "mapping": ' + deep + "}]",
        "e.jsonl": deep + "\n",
    }
    for name, text in cases.items():
        (tmp_path / name).write_text(text)
        r = memctl("--vault", vault, "ingest", tmp_path / name)
        assert r.code == 2, (name, r.err[-300:])
        assert name in _one_line(r.err)
    assert git(vault, "status", "--porcelain") == ""


def test_a_huge_one_line_jsonl_and_a_bom_are_detected(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    big = tmp_path / "big.jsonl"
    big.write_text(_line("user", "x" * 3_000_000) + _line("assistant", "ok"))
    r = ok("--vault", vault, "ingest", big)
    assert "+2 turns" in r.out
    bom = tmp_path / "bom.jsonl"
    bom.write_bytes(b"\xef\xbb\xbf" + _line("user", "hello from a BOM file").encode())
    r = ok("--vault", vault, "ingest", bom)
    assert "+1 turn)" in r.out
    claude = tmp_path / "live.jsonl"
    claude.write_text(json.dumps({"type": "user", "sessionId": "live", "message": {
        "role": "user", "content": "y" * 200_000}}) + "\n")
    assert "+1 turn)" in ok("--vault", vault, "ingest", claude).out


def test_a_trailing_half_written_line_is_left_for_the_next_run(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    src = tmp_path / "live.jsonl"
    done = _line("user", "first", id="m1") + _line("assistant", "second", id="m2")
    half = '{"role": "user", "content": "thi'
    src.write_text(done + half)
    r = ok("--vault", vault, "ingest", src)
    assert "+2 turns" in r.out
    src.write_text(done + _line("user", "third", id="m3"))
    r = ok("--vault", vault, "ingest", src)
    assert "appended" in r.out and "+1 turn)" in r.out
    assert sorted(head_turn_ids(vault)) == ["m1", "m2", "m3"]
    # a Claude Code session being written, cut in the middle of a character
    cc = tmp_path / "cc.jsonl"
    line = json.dumps({"type": "user", "sessionId": "cc", "uuid": "u1",
                       "message": {"role": "user", "content": "héllo"}}, ensure_ascii=False)
    cc.write_bytes((line + "\n").encode() + line.encode()[:line.encode().index(b"\xc3") + 1])
    assert "+1 turn)" in ok("--vault", vault, "ingest", cc).out


def test_a_folder_reports_bad_files_skips_non_transcripts_and_ingests_the_rest(
    tmp_path: Path,
) -> None:
    vault = new_vault(tmp_path)
    src = tmp_path / "projects"
    src.mkdir()
    (src / "README.md").write_text("# My transcripts\n\nExported from the app.\n")
    (src / "notes.bin").write_bytes(b"\x00\x01binary")
    (src / "a-good.jsonl").write_text(_line("user", "good one", id="g1"))
    (src / "b-bad.jsonl").write_text(_line("user", "fine") + "{oops\n")
    (src / "c-good.jsonl").write_text(_line("user", "good two", id="g2"))
    r = memctl("--vault", vault, "ingest", src)
    assert r.code == 2, r.err
    err = r.err.strip().splitlines()
    assert [e for e in err if "error" in e] == [
        f"memctl: error: {src / 'b-bad.jsonl'}:2: malformed JSON: Expecting property name "
        "enclosed in double quotes (column 2); each line must be one JSON object"]
    assert sum("skipped" in e for e in err) == 2 and any("README.md" in e for e in err)
    assert "ingest: 2 sessions, 2 turns" in r.out
    assert sorted(head_turn_ids(vault)) == ["g1", "g2"]
    assert git(vault, "status", "--porcelain") == ""


def test_sub_agent_files_are_their_own_sessions_linked_to_the_parent(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    proj = tmp_path / "proj"
    (proj / "sess-1" / "subagents").mkdir(parents=True)

    def cc(uuid: str, text: str, side: bool) -> str:
        return json.dumps({"type": "user", "sessionId": "sess-1", "uuid": uuid,
                           "isSidechain": side, "agentId": "a7" if side else None,
                           "message": {"role": "user", "content": text}}) + "\n"

    (proj / "sess-1.jsonl").write_text(cc("p1", "parent asks", False))
    (proj / "sess-1" / "subagents" / "agent-a7.jsonl").write_text(cc("s1", "sub-agent works", True))
    r = ok("--vault", vault, "ingest", proj)
    assert "ingest: 2 sessions" in r.out
    texts = {p.name: p.read_text() for p in (vault / "raw").rglob("*.md") if p.name != "INDEX.md"}
    sub = [t for t in texts.values() if "sub-agent works" in t]
    assert len(sub) == 1 and "session: sess-1/agent-a7" in sub[0]
    assert "parent_session: sess-1" in sub[0]
    assert ok("--vault", vault, "ingest", proj).out.startswith("nothing new")


def test_same_file_name_in_two_folders_makes_two_sessions(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    for d, text in (("a", "from folder a"), ("b", "from folder b")):
        (tmp_path / d).mkdir()
        (tmp_path / d / "chat.jsonl").write_text(_line("user", text))
    r = ok("--vault", vault, "ingest", tmp_path / "a", tmp_path / "b")
    assert "ingest: 2 sessions" in r.out, r.out
    r = ok("--vault", vault, "ingest", tmp_path / "a", tmp_path / "b")
    assert r.out.startswith("nothing new")


def test_two_ids_whose_short_hashes_collide_get_two_files(tmp_path: Path) -> None:
    seen: dict[str, str] = {}
    k = 0
    while True:
        sid = f"s{k}"
        short = hashlib.sha1(sid.encode()).hexdigest()[:6]
        if short in seen:
            pair = (seen[short], sid)
            break
        seen[short] = sid
        k += 1
    vault = new_vault(tmp_path)
    src = tmp_path / "pair.jsonl"
    src.write_text(_line("user", "same words here", id="x1", session=pair[0],
                         timestamp="2026-01-02T03:04:05Z")
                   + _line("user", "same words here", id="y1", session=pair[1],
                           timestamp="2026-01-02T03:04:05Z"))
    r = ok("--vault", vault, "ingest", src)
    assert "ingest: 2 sessions, 2 turns" in r.out
    assert sorted(head_turn_ids(vault)) == ["x1", "y1"]
