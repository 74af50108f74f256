"""Ingest through the real CLI: verbatim, idempotent, all-or-nothing, secrets never on disk."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from util import DATA, git, memctl, new_vault, ok, snapshot

FORMATS = DATA / "formats"


def _jsonl(path: Path, messages: list[dict]) -> Path:
    path.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
    return path


def _folder(tmp_path: Path, n: int, messages: Callable[[int], list[dict]]) -> Path:
    """A folder of n transcripts, part000.jsonl ..., file k holding messages(k)."""
    src = tmp_path / "src"
    src.mkdir()
    for k in range(n):
        _jsonl(src / f"part{k:03d}.jsonl", messages(k))
    return src


def _msgs(n: int, start: int = 0) -> list[dict]:
    return [
        {"id": f"m{i}", "role": "user" if i % 2 == 0 else "assistant",
         "content": f"message number {i}", "name": "dana" if i % 2 == 0 else None,
         "timestamp": f"2026-09-01T10:{i:02d}:00Z"}
        for i in range(start, start + n)
    ]


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("memctl.jsonl", "jsonl"),
        ("openai.json", "openai"),
        ("claude_code.jsonl", "claude_code"),
        ("chatgpt_conversations.json", "chatgpt"),
        ("transcript.md", "text"),
    ],
)
def test_every_format_ingests_and_is_detected(tmp_path: Path, name: str, fmt: str) -> None:
    v = new_vault(tmp_path)
    res = ok("--vault", v, "ingest", FORMATS / name, "--json").json()
    assert res["memctl_result_version"] == 1
    assert res["sessions_changed"] >= 1 and res["turns_added"] > 0
    for s in res["sessions"]:
        text = (v / s["path"]).read_text(encoding="utf-8")
        assert f"format: {fmt}" in text
        assert s["path"].startswith("raw/20") and s["path"].endswith(".md")
    subject = git(v, "log", "-1", "--format=%s").strip()
    n = res["sessions_changed"]
    assert subject == f"ingest: {n} session{'s' * (n != 1)}, {res['turns_added']} turns"
    body = git(v, "log", "-1", "--format=%b")
    assert "Memctl-Command: ingest" in body and f"Memctl-Turns: {res['turns_added']}" in body
    assert git(v, "status", "--porcelain") == ""


def test_forced_format_overrides_detection(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    r = memctl("--vault", v, "ingest", FORMATS / "memctl.jsonl", "--format", "chatgpt")
    assert r.code == 2


def test_same_transcript_twice_changes_nothing(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    f = _jsonl(tmp_path / "s.jsonl", _msgs(6))
    ok("--vault", v, "ingest", f)
    before = snapshot(v)
    r = ok("--vault", v, "ingest", f, "--json").json()
    assert r["sessions_changed"] == 0 and r["commit"] is None
    assert snapshot(v) == before


def test_longer_version_appends_only_new_turns(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    f = tmp_path / "s.jsonl"
    _jsonl(f, _msgs(4))
    first = ok("--vault", v, "ingest", f, "--json").json()["sessions"][0]
    _jsonl(f, _msgs(7))
    second = ok("--vault", v, "ingest", f, "--json").json()["sessions"][0]
    assert second["action"] == "appended" and second["turns_added"] == 3
    assert second["path"] == first["path"] and second["turns_total"] == 7
    diff = git(v, "diff", "HEAD~1", "--", first["path"])
    removed = [ln for ln in diff.splitlines() if ln.startswith("-") and not ln.startswith("---")]
    # Only frontmatter summary lines change; no turn text is touched.
    assert all(ln.startswith(("-ended:", "-turns:", "-content_hash:")) for ln in removed), removed
    assert "+## t7 · dana (user) · 2026-09-01 10:06" in diff


def test_changed_past_turn_is_refused(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    f = tmp_path / "s.jsonl"
    msgs = _msgs(4)
    _jsonl(f, msgs)
    ok("--vault", v, "ingest", f)
    before = snapshot(v)
    msgs[1]["content"] = "rewritten"
    _jsonl(f, [*msgs, *_msgs(2, 4)])
    r = memctl("--vault", v, "ingest", f)
    assert r.code == 3 and "turn t2" in r.err
    assert snapshot(v) == before


def test_export_gives_back_exact_messages(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    msgs = [
        {"id": "a", "role": "user", "content": "```py\nprint('## t2 · x')\n```\n## t9 · fake",
         "name": "Dana", "timestamp": "2026-09-01T10:00:00+02:00", "extra": {"k": [1, 2]}},
        {"role": "assistant", "content": "  spaces \r\n and é 😀 漢字\n\n"},
    ]
    f = _jsonl(tmp_path / "x.jsonl", msgs)
    sid = ok("--vault", v, "ingest", f, "--session", "sess-1", "--json").json()["sessions"][0]
    assert sid["session"] == "sess-1"
    out = ok("--vault", v, "export", "sess-1", "--format", "jsonl").out
    back = [json.loads(line) for line in out.splitlines()]
    assert back == msgs


def test_stdin_ingest(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    data = "".join(json.dumps(m) + "\n" for m in _msgs(3))
    r = ok("--vault", v, "ingest", "-", "--format", "jsonl", "--json", input=data).json()
    assert r["turns_added"] == 3
    again = ok("--vault", v, "ingest", "-", "--format", "jsonl", "--json", input=data).json()
    assert again["sessions_changed"] == 0


def test_folder_ingests_recursively_with_user_and_scope(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    src = tmp_path / "src" / "deep"
    src.mkdir(parents=True)
    _jsonl(src / "a.jsonl", _msgs(2))
    _jsonl(src.parent / "b.jsonl", _msgs(3))
    r = ok("--vault", v, "ingest", tmp_path / "src", "--user", "marco", "--scope", "team",
           "--json").json()
    assert r["sessions_changed"] == 2 and r["turns_added"] == 5
    st = ok("--vault", v, "status", "--json").json()
    assert st["users"] == {"marco": {"sessions": 2, "turns": 5}}
    text = (v / r["sessions"][0]["path"]).read_text()
    assert "user: marco" in text and "scope: team" in text


def test_bad_scope_is_refused(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    f = _jsonl(tmp_path / "s.jsonl", _msgs(2))
    r = memctl("--vault", v, "ingest", f, "--scope", "everyone")
    assert r.code == 2 and "scope" in r.err


BAD = sorted((FORMATS / "bad").glob("*")) if (FORMATS / "bad").exists() else []


@pytest.fixture(scope="module")
def ingested(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A vault holding one good session, built once; each case below works on a copy."""
    root = tmp_path_factory.mktemp("ingested")
    v = new_vault(root)
    ok("--vault", v, "ingest", _jsonl(root / "good.jsonl", _msgs(3)))
    return v


@pytest.mark.parametrize("bad", BAD, ids=[p.name for p in BAD])
def test_bad_input_is_one_line_exit_2_and_vault_unchanged(
    tmp_path: Path, bad: Path, ingested: Path
) -> None:
    v = tmp_path / "vault"
    shutil.copytree(ingested, v, symlinks=True)
    before = snapshot(v)
    # The good file comes first so a partial write would show.
    good2 = _jsonl(tmp_path / "good2.jsonl", _msgs(3, 10))
    r = memctl("--vault", v, "ingest", good2, bad)
    assert r.code == 2, r.err
    lines = r.err.strip().splitlines()
    assert len(lines) == 1, r.err
    assert bad.name in lines[0]
    assert snapshot(v) == before
    assert git(v, "status", "--porcelain") == ""


def test_missing_file_is_an_input_error(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    r = memctl("--vault", v, "ingest", tmp_path / "nope.jsonl")
    assert r.code == 2 and "nope.jsonl" in r.err


def test_secrets_never_reach_disk_or_git(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    aws = "AKIA" + "Q7ZP4XW2LM9RT3VB"
    pw = "Xk7pQ2vN9rT4zz"
    gh = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    msgs = [{"role": "user", "content": f"key {aws}\nDATABASE_URL=postgres://bob:{pw}@db:5432/x"},
            {"role": "assistant", "content": "ok", "tool": {"cmd": f"export GH={gh}"},
             "tool_input": {"password": "hunter2-tool-pw"}}]
    f = _jsonl(tmp_path / "s.jsonl", msgs)
    r = ok("--vault", v, "ingest", f, "--json").json()
    assert r["redactions"] >= 4
    everything = b"".join(p.read_bytes() for p in v.rglob("*") if p.is_file())
    objects = subprocess.run(["git", "-C", str(v), "log", "-p", "--all"], capture_output=True,
                             check=True).stdout
    for secret in (aws, pw, gh, "hunter2-tool-pw"):
        assert secret.encode() not in everything
        assert secret.encode() not in objects
    text = (v / r["sessions"][0]["path"]).read_text()
    assert "[REDACTED:" in text
    # --no-redact keeps them for those who ask for it.
    v2 = new_vault(tmp_path, "v2")
    r2 = ok("--vault", v2, "ingest", f, "--no-redact", "--json").json()
    assert aws in (v2 / r2["sessions"][0]["path"]).read_text()


def test_concurrent_writers_lose_nothing(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    files = []
    for k in range(6):
        msgs = [{**m, "id": f"w{k}-{m['id']}", "content": f"writer {k} {m['content']}"}
                for m in _msgs(5)]
        files.append(_jsonl(tmp_path / f"w{k}.jsonl", msgs))
    procs = [subprocess.Popen([sys.executable, "-m", "memctl", "--vault", str(v), "ingest",
                               str(f)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for f in files]
    for p in procs:
        _, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    st = ok("--vault", v, "status", "--json").json()
    assert st["sessions"] == 6 and st["turns"] == 30
    assert st["uncommitted"] == []
    subjects = git(v, "log", "--format=%s").splitlines()
    assert subjects.count("ingest: 1 session, 5 turns") == 6


def test_show_log_status(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    f = _jsonl(tmp_path / "s.jsonl", _msgs(4))
    path = ok("--vault", v, "ingest", f, "--json").json()["sessions"][0]["path"]
    turn = ok("--vault", v, "show", f"{path}#t3", "--json").json()
    assert turn["kind"] == "turn" and turn["text"] == "message number 2"
    assert turn["meta"]["id"] == "m2" and turn["meta"]["name"] == "dana"
    plain = ok("--vault", v, "show", f"{path}#t3").out
    assert plain.endswith("message number 2\n")
    assert ok("--vault", v, "show", "s").out.startswith("---\ntype: raw-session")
    r = memctl("--vault", v, "show", f"{path}#t99")
    assert r.code == 2 and "t1..t4" in r.err
    log = ok("--vault", v, "log", "--json").json()["commits"]
    assert [c["subject"] for c in log] == ["ingest: 1 session, 4 turns", "init: memctl vault"]
    assert log[0]["trailers"]["Memctl-Turns"] == "4"
    (v / "knowledge" / "hand.md").write_text("# hand edit\n")
    st = ok("--vault", v, "status", "--json").json()
    assert any("knowledge/hand.md" in line for line in st["uncommitted"])


def _run_on_a_terminal(args: list[str]) -> tuple[int, bytes]:
    """Run memctl with a pseudo-terminal as stdout, the way a person at a shell sees it."""
    import os
    import pty

    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
    env.pop("MEMCTL_VAULT", None)
    proc = subprocess.Popen([sys.executable, "-m", "memctl", *args], stdout=slave,
                            stderr=slave, env=env)
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return proc.wait(timeout=120), out


def test_progress_bar_on_a_terminal_and_silence_when_piped(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    src = _folder(tmp_path, 3, lambda k: [{**m, "id": f"p{k}{m['id']}"} for m in _msgs(2)])
    code, out = _run_on_a_terminal(["--vault", str(v), "ingest", str(src)])
    assert code == 0
    assert b"\x1b[" in out and "━".encode() in out  # a bar was drawn (rich, transient)
    assert b"ingest: 3 sessions, 6 turns" in out
    _jsonl(src / "part9.jsonl", _msgs(2, 50))
    piped = ok("--vault", v, "ingest", src)
    assert "\x1b[" not in piped.out + piped.err
    assert piped.out.endswith("ingest: 1 session, 2 turns · commit " + piped.out[-11:])


def test_a_large_folder_with_a_bad_file_late_ingests_the_rest_and_stages_nothing_else(
    tmp_path: Path,
) -> None:
    # A folder is not all-or-nothing. The bad file is reported with its line (exit 2)
    # and its writes are undone; the 300 good ones are committed; ingest stages files in git
    # as it writes them, and nothing of the bad one may stay staged.
    v = new_vault(tmp_path)
    src = _folder(tmp_path, 300, lambda k: [{**m, "session": f"s{k}"} for m in _msgs(2)])
    (src / "zz-bad.jsonl").write_text('{"role": "user", "content": "ok"}\n{oops\n')
    r = memctl("--vault", v, "ingest", src)
    assert r.code == 2 and "zz-bad.jsonl:2" in r.err
    assert len(r.err.strip().splitlines()) == 1, r.err
    assert "ingest: 300 sessions, 600 turns" in r.out
    assert git(v, "status", "--porcelain") == ""
    assert git(v, "diff", "--cached", "--name-only") == ""
    raw = [f for f in git(v, "ls-tree", "-r", "--name-only", "HEAD", "raw").split()
           if not f.endswith("INDEX.md")]
    assert len(raw) == 300


def test_hand_edits_of_index_files_are_committed_before_ingest_rewrites_them(
    tmp_path: Path,
) -> None:
    """memctl regenerates INDEX files; one person's uncommitted edit of two of them (found by
    one `git status` for all) is each kept in a commit of its own first, and said so."""
    vault = new_vault(tmp_path)
    first = tmp_path / "a.txt"
    first.write_text("User: We deploy on Fridays.\nAssistant: Noted.\n")
    ok("--vault", vault, "ingest", first, "--user", "dana")
    for rel in ("INDEX.md", "raw/INDEX.md"):
        with (vault / rel).open("a", encoding="utf-8") as fh:
            fh.write(f"\nmy own line in {rel}\n")
    second = tmp_path / "b.txt"
    second.write_text("User: We pin numpy below 2.\nAssistant: Noted.\n")
    r = ok("--vault", vault, "ingest", second, "--user", "dana")
    for rel in ("INDEX.md", "raw/INDEX.md"):
        assert f"{rel} had uncommitted hand edits: kept in commit" in r.err, r.err
        sha = git(vault, "log", "-1", "--format=%H", "--grep", f"edit: {rel} edited by hand")
        assert sha.strip(), git(vault, "log", "--format=%s")
        assert f"my own line in {rel}" in git(vault, "show", f"{sha.strip()}:{rel}")
    assert git(vault, "status", "--porcelain") == ""
