"""Fourth round of integrity faults, the rest: a corrupt line in a live session, a full
disk, attachments. Each test failed on main before its fix.
"""

from __future__ import annotations

import base64
import json
import random
import shutil
import string
from pathlib import Path

from ccsession import Session
from diskfull import diskfull_points
from gitutil import run_git
from util import Run, git, memctl, new_vault, snapshot

# ---- a corrupt line in a Claude Code session ---------------------------------------------


def _stop(vault: Path, transcript: Path, sid: str) -> None:
    payload = json.dumps({"transcript_path": str(transcript), "session_id": sid})
    r = memctl("--vault", vault, "hook", "stop", "--worker", input=payload)
    assert r.code == 0 and r.out == "", r.err


def git_status(vault: Path) -> str:
    return git(vault, "status", "--porcelain")


def _raw_sessions(vault: Path) -> str:
    return "".join(p.read_text() for p in sorted((vault / "raw").rglob("*/*/*/*.md")))


def _raw(vault: Path) -> str:
    return "".join(p.read_text() for p in sorted((vault / "raw").rglob("*/*.md")))


def test_a_corrupt_line_costs_that_line_only_and_the_next_session_start_names_it(
    tmp_path: Path,
) -> None:
    vault = new_vault(tmp_path)
    s = Session(sid="5e6f7a8b-1c2d-4e3f-9a0b-c1d2e3f4a5b6")
    s.user("We ship the billing service on Thursdays only.").say("Noted, Thursdays.")
    lines = [json.dumps(r) for r in s.rows]
    lines.append('{"type": "user", "message": {"role": "user", "content": "half a li')
    s.rows.clear()
    s.user("The staging database moved to eu-west-3 last week.").say("Understood.")
    lines += [json.dumps(r) for r in s.rows]
    transcript = tmp_path / f"{s.sid}.jsonl"
    transcript.write_text("\n".join(lines) + "\n")

    _stop(vault, transcript, s.sid)
    raw = _raw(vault)
    assert "Thursdays only" in raw and "eu-west-3" in raw  # before and after the bad line

    r = memctl("--vault", vault, "hook", "session-start", input=json.dumps({"session_id": "x"}))
    assert r.code == 0, r.err
    msg = json.loads(r.out)["systemMessage"]
    assert "\n" not in msg and f"{transcript.name}:3" in msg, msg

    # the session goes on: later turns are saved too, and the old line is not told again
    s.rows.clear()
    s.user("Rotate the deploy keys every ninety days.").say("Will do.")
    with transcript.open("a") as fh:
        fh.write("\n".join(json.dumps(r) for r in s.rows) + "\n")
    _stop(vault, transcript, s.sid)
    assert "ninety days" in _raw(vault)
    r = memctl("--vault", vault, "hook", "session-start", input=json.dumps({"session_id": "y"}))
    assert "systemMessage" not in (json.loads(r.out) if r.out.strip() else {})


def test_ingest_by_hand_still_refuses_the_corrupt_line(tmp_path: Path) -> None:
    """Only the Stop hook, which must not lose a live session, skips a bad line; an ingest
    a person runs names it and writes nothing."""
    vault = new_vault(tmp_path)
    s = Session().user("We ship on Thursdays.")
    transcript = tmp_path / f"{s.sid}.jsonl"
    transcript.write_text(json.dumps(s.rows[0]) + "\n{broken\n")
    r = memctl("--vault", vault, "ingest", transcript)
    assert r.code == 2 and f"{transcript.name}:2" in r.err
    assert [p.name for p in (vault / "raw").rglob("*.md")] == ["INDEX.md"]


# ---- a full disk ---------------------------------------------------------------------------


def full(*args: str | Path, limit: int = 60_000) -> Run:
    """A command whose writes past `limit` bytes fail with EFBIG, as with ENOSPC on a full disk."""
    return memctl(*args, fsize_limit=limit)


def _many_sessions(path: Path, n: int = 150) -> Path:
    """Sessions of a few small turns: each raw file stays small, the index over all of them
    does not, so the index is what meets the limit."""
    rng = random.Random(7)
    words = ["".join(rng.choice(string.ascii_lowercase) for _ in range(rng.randrange(4, 10)))
             for _ in range(5000)]  # fmt: skip
    rows = [{"session": f"s{s}", "role": "user",
             "content": "billing " + " ".join(rng.choice(words) for _ in range(60))}
            for s in range(n) for _ in range(3)]  # fmt: skip
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return path


def _generations(vault: Path) -> list[str]:
    return sorted(p.name for p in (vault / ".memctl" / "index").iterdir() if p.is_dir())


def test_a_full_disk_warns_on_ingest_and_reads_answer_from_the_index_there_is(
    tmp_path: Path,
) -> None:
    vault = new_vault(tmp_path)
    first = tmp_path / "first.jsonl"
    first.write_text(json.dumps({"role": "user", "content": "Egress costs doubled in March."}))
    assert memctl("--vault", vault, "ingest", first).code == 0
    r = full("--vault", vault, "ingest", _many_sessions(tmp_path / "many.jsonl"))
    assert r.code == 0, r.err  # the sessions are committed; only the index could not follow
    warn = [ln for ln in r.err.splitlines() if "search index" in ln]
    assert len(warn) == 1 and "disk full or file size limit" in warn[0], r.err
    assert "Traceback" not in r.err

    for args in (["search", "egress"], ["recall", "what happened to egress costs?"],
                 ["context"]):  # fmt: skip
        r = full("--vault", vault, *args)
        assert r.code == 0 and "Traceback" not in r.err, r.err
        lines = [ln for ln in r.err.splitlines() if "search index" in ln]
        assert len(lines) == 1 and "disk full or file size limit" in lines[0], r.err
        if args[0] != "context":
            assert "Egress costs doubled" in r.out  # from the index there is
    assert len(_generations(vault)) == 1  # no half-built generations left behind

    r = memctl("--vault", vault, "search", "billing")  # room again: the index catches up
    assert r.code == 0 and "raw/" in r.out and "search index" not in r.err, r.err
    assert len(_generations(vault)) == 1


def test_a_vault_with_no_index_yet_still_answers_on_a_full_disk(tmp_path: Path) -> None:
    # A vault cloned (its index is never committed) onto a disk with no room left: the
    # first search cannot build the index there, and answers from one built in memory.
    vault = new_vault(tmp_path)
    assert memctl("--vault", vault, "ingest", _many_sessions(tmp_path / "many.jsonl", 40)).code == 0
    first = tmp_path / "first.jsonl"
    first.write_text(json.dumps({"role": "user", "content": "Egress costs doubled in March."}))
    assert memctl("--vault", vault, "ingest", first).code == 0
    shutil.rmtree(vault / ".memctl" / "index")
    for args in (["search", "egress"], ["recall", "what happened to egress costs?"]):
        r = full("--vault", vault, *args, limit=4_000)
        assert r.code == 0 and "Traceback" not in r.err, r.err
        lines = [ln for ln in r.err.splitlines() if "search index" in ln]
        assert len(lines) == 1 and "disk full or file size limit" in lines[0], r.err
        assert "Egress costs doubled" in r.out, r.out
        left = vault / ".memctl" / "index"
        assert not left.is_dir() or not _generations(vault), "a half-built index was left"
    r = memctl("--vault", vault, "search", "egress")  # room again: the index is built on disk
    assert r.code == 0 and "Egress costs doubled" in r.out, r.err
    assert "built it from the files" in r.err and len(_generations(vault)) == 1
    r = memctl("--vault", vault, "search", "egress")
    assert r.code == 0 and "Egress costs doubled" in r.out and r.err == "", r.err


def test_a_broken_index_on_a_full_disk_still_answers(tmp_path: Path) -> None:
    # A damaged generation must be rebuilt; with no room for the rebuild, the search
    # answers from the index built in memory rather than fail with "cannot build".
    vault = new_vault(tmp_path)
    first = tmp_path / "first.jsonl"
    first.write_text(json.dumps({"role": "user", "content": "Egress costs doubled in March."}))
    assert memctl("--vault", vault, "ingest", first).code == 0
    assert memctl("--vault", vault, "ingest", _many_sessions(tmp_path / "many.jsonl", 40)).code == 0
    gen = vault / ".memctl" / "index" / _generations(vault)[0]
    (gen / "meta.json").write_text("{ not json", encoding="utf-8")
    r = full("--vault", vault, "search", "egress", limit=4_000)
    assert r.code == 0 and "Traceback" not in r.err, r.err
    assert "Egress costs doubled" in r.out, r.out
    r = memctl("--vault", vault, "search", "egress")  # room again: rebuilt on disk
    assert r.code == 0 and "Egress costs doubled" in r.out, r.err
    r = memctl("--vault", vault, "search", "egress")
    assert r.code == 0 and r.err == "", r.err


def test_a_write_that_meets_a_size_limit_is_one_line_and_changes_nothing(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    before = snapshot(vault)
    big = tmp_path / "big.jsonl"
    big.write_text(json.dumps({"role": "user", "content": "We deploy on Thursdays. " * 4000}))
    r = full("--vault", vault, "ingest", big, limit=20_000)
    assert r.code != 0 and "Traceback" not in r.err
    assert len(r.err.strip().splitlines()) == 1 and "disk full or file size limit" in r.err
    assert snapshot(vault) == before


def test_ingest_and_curate_on_a_disk_full_at_random_sizes_lose_nothing(tmp_path: Path) -> None:
    """A few of bench/crash.py's disk-full points: each command fits or is refused in one
    line with the vault as before; with room again nothing is lost or left half-built."""
    res = diskfull_points(tmp_path, 6, seed=3)
    assert res["failures"] == [] and res["killed"] and res["finished_first"], res


# ---- attachments ---------------------------------------------------------------------------


def _png(n: int, seed: int) -> bytes:
    rng = random.Random(seed)
    return b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(rng.randrange(256) for _ in range(n))


def _image(data: bytes) -> dict:
    return {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                        "data": base64.b64encode(data).decode()}}  # fmt: skip


def _screenshot_session(tmp_path: Path, shot: bytes, read: bytes) -> Path:
    s = Session(sid="7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d")
    s.turn("user", [{"type": "text", "text": "The checkout page is blank, see the screenshot."},
                    _image(shot)])  # fmt: skip
    s.say("Let me look at the mockup too.")
    s.tool("Read", {"file_path": "/home/dana/src/shop/mockup.png"}, "")
    s.rows[-1]["message"]["content"][0]["content"] = [_image(read)]  # Read of an image
    s.say("The header overlaps the form.")
    path = tmp_path / f"{s.sid}.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in s.rows) + "\n")
    return path


def _images_of(export: str) -> list[bytes]:
    out = []
    for line in export.splitlines():
        rec = json.loads(line)
        content = rec.get("message", {}).get("content")
        blocks = content if isinstance(content, list) else []
        for b in blocks:
            inner = b.get("content") if b.get("type") == "tool_result" else [b]
            for part in inner if isinstance(inner, list) else []:
                if part.get("type") == "image":
                    out.append(base64.b64decode(part["source"]["data"]))
    return out


def test_a_screenshot_is_kept_under_raw_and_export_brings_it_back(tmp_path: Path) -> None:
    shot, read = _png(3000, 1), _png(1500, 2)
    vault = new_vault(tmp_path)
    src = _screenshot_session(tmp_path, shot, read)
    r = memctl("--vault", vault, "ingest", src)
    assert r.code == 0, r.err
    kept = {p.read_bytes() for p in (vault / "raw").rglob("*") if p.suffix == ".png"}
    assert kept == {shot, read}
    raw = _raw_sessions(vault)
    for p in (vault / "raw").rglob("*.png"):
        assert p.relative_to(vault).as_posix() in raw  # referenced from its turn
    assert memctl("--vault", vault, "ingest", src).code == 0  # the same again: nothing new
    assert git_status(vault) == ""

    r = memctl("--vault", vault, "export", "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d",
               "--format", "claude_code")  # fmt: skip
    assert r.code == 0, r.err
    assert _images_of(r.out) == [shot, read]
    again = tmp_path / "again.jsonl"
    again.write_text(r.out)
    other = new_vault(tmp_path, "other")
    assert memctl("--vault", other, "ingest", again).code == 0
    assert {p.read_bytes() for p in (other / "raw").rglob("*.png")} == {shot, read}


def test_an_image_over_the_limit_is_named_at_ingest_and_in_its_turn(tmp_path: Path) -> None:
    shot, read = _png(300_000, 3), _png(1500, 4)
    vault = new_vault(tmp_path)
    with (vault / ".memctl" / "config.toml").open("a") as fh:
        fh.write('\n[limits]\nattachment = "100KB"\n')
    run_git(vault, "commit", "-qam", "attachment limit")
    r = memctl("--vault", vault, "ingest", _screenshot_session(tmp_path, shot, read))
    assert r.code == 0, r.err
    said = [ln for ln in (r.out + r.err).splitlines() if "left out" in ln]
    assert len(said) == 1 and "#t1" in said[0] and "attachment limit" in said[0], r.out + r.err
    assert {p.read_bytes() for p in (vault / "raw").rglob("*.png")} == {read}
    assert "attachment limit" in _raw_sessions(vault)  # the turn says what was left out


def test_forgetting_a_screenshot_turn_takes_its_image_too(tmp_path: Path) -> None:
    shot, read = _png(2000, 5), _png(1800, 6)
    vault = new_vault(tmp_path)
    assert memctl("--vault", vault, "ingest", _screenshot_session(tmp_path, shot, read)).code == 0
    rel = next(p for p in (vault / "raw").rglob("*/*/*/*.md")).relative_to(vault).as_posix()
    r = memctl("--vault", vault, "forget", f"{rel}#t1")
    assert r.code == 0, r.err
    assert {p.read_bytes() for p in (vault / "raw").rglob("*.png")} == {read}
    assert git_status(vault) == ""
    r = memctl("--vault", vault, "forget", "7a8b9c0d-1e2f-4a3b-8c4d-5e6f7a8b9c0d")
    assert r.code == 0, r.err
    assert not list((vault / "raw").rglob("*.png")) and git_status(vault) == ""
