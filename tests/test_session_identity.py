"""Session identity: which turns belong to one session, and its file name.

One rule: an id the transcript carries (a Claude Code sessionId, a ChatGPT conversation
id, a `session` field, `--session`) names the same session from wherever it is read; an id
made from the file name alone is qualified by the file's real path, so `a/chat.jsonl` and
`b/chat.jsonl` never merge. Every new raw file name ends with the whole sha1 of the id.
Vaults written before this rule (6 hex digits in the name, bare file-name ids) keep working:
a session is found by the id its header records, never by recomputing its name.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from crashkit import assert_healthy, head_turn_ids
from util import git, memctl, new_vault, ok


def _line(role: str, content: str, **extra: object) -> str:
    return json.dumps({"role": role, "content": content, **extra}) + "\n"


def _chat(path: Path, turns: int, tag: str, **extra: object) -> Path:
    """A JSONL transcript of `turns` turns with unique ids `<tag>-m<k>`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(
        _line("user" if k % 2 == 0 else "assistant", f"{tag} says thing number {k}",
              id=f"{tag}-m{k}", timestamp=f"2026-05-0{1 + k % 9}T10:00:00Z", **extra)
        for k in range(turns)))
    return path


def _raw_files(vault: Path) -> list[str]:
    return sorted(p.relative_to(vault).as_posix() for p in (vault / "raw").rglob("*.md")
                  if p.name != "INDEX.md")


def _header_id(vault: Path, rel: str) -> str:
    m = re.search(r"^session: (.+)$", (vault / rel).read_text(), re.M)
    assert m, rel
    return m.group(1).strip().strip("'\"")


def _sha1(text: str) -> str:
    return hashlib.sha1(text.encode()).hexdigest()


def test_every_new_raw_file_name_ends_with_the_whole_hash_of_its_id(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    _chat(tmp_path / "one.jsonl", 2, "x", session="conv-7f3a")
    _chat(tmp_path / "chat.jsonl", 2, "y")
    ok("--vault", vault, "ingest", tmp_path / "one.jsonl", tmp_path / "chat.jsonl")
    files = _raw_files(vault)
    assert len(files) == 2
    for rel in files:
        sid = _header_id(vault, rel)
        assert rel.endswith(f"-{_sha1(sid)}.md"), (rel, sid)
        slug = rel.rsplit("/", 1)[1][: -len(f"-{_sha1(sid)}.md")]
        assert 0 < len(slug) <= 40 and slug[0].isalnum()  # readable: the slug comes first
        assert len(rel) <= 15 + 40 + 1 + 40 + 3  # raw/YYYY/MM/DD/ slug - hash .md
    assert "conv-7f3a" in {_header_id(vault, rel) for rel in files}  # a real id is kept as is


def test_file_name_ids_are_qualified_by_path_whatever_the_order(tmp_path: Path) -> None:
    a = _chat(tmp_path / "a" / "chat.jsonl", 2, "a")
    b = _chat(tmp_path / "b" / "chat.jsonl", 2, "b")
    ids = []
    for name, order in (("v1", (a, b)), ("v2", (b, a))):
        vault = new_vault(tmp_path, name)
        for src in order:
            ok("--vault", vault, "ingest", src)
        ids.append({_header_id(vault, rel) for rel in _raw_files(vault)})
        assert len(ids[-1]) == 2 and all(i.startswith("chat-") for i in ids[-1]), ids[-1]
    # the id depends on the file, not on which folder memctl happened to read first
    assert ids[0] == ids[1]
    # the file name still names a session, and says when it names two
    r = memctl("--vault", vault, "show", "chat")
    assert r.code == 2 and "ambiguous" in r.err, r.err
    ok("--vault", new_vault(tmp_path, "v3"), "ingest", a)
    assert "a says thing number 1" in ok("--vault", tmp_path / "v3", "show", "chat").out


def test_the_same_file_by_another_spelling_of_its_path_is_the_same_session(
    tmp_path: Path,
) -> None:
    vault = new_vault(tmp_path)
    src = _chat(tmp_path / "a" / "chat.jsonl", 2, "a")
    ok("--vault", vault, "ingest", src)
    r = ok("--vault", vault, "ingest", "chat.jsonl", cwd=tmp_path / "a")
    assert r.out.startswith("nothing new"), r.out
    _chat(src, 4, "a")  # the session grew
    ok("--vault", vault, "ingest", "a/chat.jsonl", cwd=tmp_path)
    assert len(_raw_files(vault)) == 1
    assert sorted(head_turn_ids(vault)) == [f"a-m{k}" for k in range(4)]


def test_a_real_session_id_is_one_session_from_any_path(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    uuid = "5b1f7c2e-0d43-4c8e-9a3b-2f6d1e8c7a90"

    def cc(folder: str, turns: int) -> Path:
        path = tmp_path / folder / f"{uuid}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps({
            "type": "user" if k % 2 == 0 else "assistant", "sessionId": uuid,
            "uuid": f"u{k}", "message": {"role": "user" if k % 2 == 0 else "assistant",
                                         "content": f"turn {k} about the billing move"}}) + "\n"
            for k in range(turns)))
        return path

    ok("--vault", vault, "ingest", cc("laptop", 2))
    r = ok("--vault", vault, "ingest", cc("backup", 4))  # a copy that went on longer
    assert "+2 turns" in r.out, r.out
    files = _raw_files(vault)
    assert len(files) == 1 and _header_id(vault, files[0]) == uuid
    assert files[0].endswith(f"-{_sha1(uuid)}.md")


# ---- vaults written before the rule ------------------------------------------------------------


def _make_old_style(vault: Path, old_id: str, origin: str | None = None) -> str:
    """Turn the vault's one raw session into what memctl wrote before: a name ending in 6
    hex digits of sha1(old_id), `old_id` recorded in the header (and the origin, if given),
    INDEX files pointing at it; committed. Returns the old-style path."""
    (rel,) = _raw_files(vault)
    text = (vault / rel).read_text()
    text = re.sub(r"^session: .+$", f"session: {json.dumps(old_id)}", text, count=1, flags=re.M)
    if origin is not None:
        text = re.sub(r"^  origin: .+$", f"  origin: {json.dumps(origin)}", text, count=1,
                      flags=re.M)
    old = re.sub(r"-[0-9a-f]{40}\.md$", f"-{_sha1(old_id)[:6]}.md", rel)
    assert old != rel
    (vault / old).write_text(text)
    (vault / rel).unlink()
    for index in ("INDEX.md", "raw/INDEX.md"):
        p = vault / index
        p.write_text(p.read_text().replace(rel.rsplit("/", 1)[1], old.rsplit("/", 1)[1]))
    git(vault, "add", "-A")
    git(vault, "-c", "user.name=old", "-c", "user.email=old@example.invalid", "commit", "-q",
        "-m", "ingest: written by an older memctl")
    return old


def _reingest_grown(vault: Path, src: Path, tag: str, old: str, cwd: Path | None = None,
                    arg: str | Path | None = None) -> None:
    _chat(src, 5, tag)
    r = ok("--vault", vault, "ingest", arg or src, cwd=cwd)
    assert "+3 turns" in r.out, r.out
    assert _raw_files(vault) == [old], "a second file for a session already on disk"
    assert sorted(head_turn_ids(vault)) == [f"{tag}-m{k}" for k in range(5)]
    assert_healthy(vault)


def test_an_old_six_hex_session_with_a_real_id_grows_in_place(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    src = _chat(tmp_path / "s.jsonl", 2, "r", session="conv-42")
    ok("--vault", vault, "ingest", src)
    old = _make_old_style(vault, "conv-42")
    _chat(src, 5, "r", session="conv-42")
    r = ok("--vault", vault, "ingest", src)
    assert "+3 turns" in r.out, r.out
    assert _raw_files(vault) == [old]
    assert sorted(head_turn_ids(vault)) == [f"r-m{k}" for k in range(5)]
    assert_healthy(vault)


def test_an_old_bare_file_name_id_grows_in_place(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    src = _chat(tmp_path / "a" / "chat.jsonl", 2, "a")
    ok("--vault", vault, "ingest", src)
    old = _make_old_style(vault, "chat", origin=str(src))
    _reingest_grown(vault, src, "a", old)
    # another folder's chat.jsonl is another session: neither merged nor refused
    ok("--vault", vault, "ingest", _chat(tmp_path / "b" / "chat.jsonl", 2, "b"))
    assert len(_raw_files(vault)) == 2
    assert sorted(head_turn_ids(vault)) == sorted(
        [f"a-m{k}" for k in range(5)] + ["b-m0", "b-m1"])


def test_an_old_bare_id_with_a_relative_origin_grows_in_place(tmp_path: Path) -> None:
    """memctl recorded the path as typed; from another folder it can't be compared, so the
    session's own turns decide: a transcript that continues them is that session."""
    vault = new_vault(tmp_path)
    src = _chat(tmp_path / "a" / "chat.jsonl", 2, "a")
    ok("--vault", vault, "ingest", "chat.jsonl", cwd=tmp_path / "a")
    old = _make_old_style(vault, "chat", origin="chat.jsonl")
    _reingest_grown(vault, src, "a", old, cwd=tmp_path)
    other = _chat(tmp_path / "b" / "chat.jsonl", 2, "b")
    ok("--vault", vault, "ingest", "chat.jsonl", cwd=other.parent)
    assert len(_raw_files(vault)) == 2


def test_an_old_path_qualified_id_grows_in_place(tmp_path: Path) -> None:
    """The second `chat.jsonl` used to get `chat-<8 hex of sha256(path)>`."""
    vault = new_vault(tmp_path)
    src = _chat(tmp_path / "b" / "chat.jsonl", 2, "b")
    ok("--vault", vault, "ingest", src)
    short = hashlib.sha256(str(src.resolve()).encode()).hexdigest()[:8]
    old = _make_old_style(vault, f"chat-{short}", origin=str(src))
    _reingest_grown(vault, src, "b", old)
