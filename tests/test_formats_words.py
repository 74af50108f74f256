"""Every node that carries words is kept, placeholders are not turns, and a session's
title is its own."""

from __future__ import annotations

import json
from pathlib import Path

from util import new_vault, ok

from memctl.core.raw import parse_session, read_header

PROFILE = "I'm a pastry chef in Porto. I bake with rye and spelt."
INSTRUCTIONS = "Answer in metric units and keep it short."


def _node(nid: str, parent: str | None, children: list[str], msg: dict | None) -> dict:
    return {"id": nid, "message": msg, "parent": parent, "children": children}


def _msg(nid: str, role: str, content: dict, hidden: bool = False, t: float = 1714557845.0
         ) -> dict:
    meta = {"is_visually_hidden_from_conversation": True} if hidden else {}
    return {"id": nid, "author": {"role": role, "name": None, "metadata": {}},
            "create_time": t, "content": content, "metadata": meta, "recipient": "all"}


def _chatgpt(path: Path) -> Path:
    mapping = {
        "root": _node("root", None, ["ctx"], None),
        "ctx": _node("ctx", "root", ["u1"], _msg("ctx", "user", {
            "content_type": "user_editable_context",
            "user_profile": PROFILE, "user_instructions": INSTRUCTIONS}, hidden=True)),
        "u1": _node("u1", "ctx", ["a0"], _msg("u1", "user", {
            "content_type": "text", "parts": ["Which flour for a dense loaf?"]})),
        "a0": _node("a0", "u1", ["a1"], _msg("a0", "assistant", {
            "content_type": "text", "parts": [""]})),
        "a1": _node("a1", "a0", [], _msg("a1", "assistant", {
            "content_type": "text", "parts": ["Rye: it holds water."]}, t=1714557850.0)),
    }
    conv = {"title": "Dense loaf flour", "conversation_id": "c-ctx-1", "mapping": mapping,
            "current_node": "a1", "create_time": 1714557845.0}
    path.write_text(json.dumps([conv]), encoding="utf-8")
    return path


def _sessions(vault: Path) -> list[tuple[str, object, list]]:
    out = []
    for p in sorted((vault / "raw").rglob("*.md")):
        if p.name == "INDEX.md":
            continue
        rel = p.relative_to(vault).as_posix()
        h, msgs = parse_session(p.read_text(encoding="utf-8"), rel)
        out.append((rel, h, msgs))
    return out


def test_chatgpt_context_node_is_kept_and_placeholder_is_not_a_turn(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    ok("--vault", vault, "ingest", _chatgpt(tmp_path / "conversations.json"))
    [(_, header, msgs)] = _sessions(vault)
    ctx = [m for m in msgs if m.meta.get("content_type") == "user_editable_context"]
    assert len(ctx) == 1, [m.content for m in msgs]
    assert PROFILE in ctx[0].content and INSTRUCTIONS in ctx[0].content
    assert ctx[0].meta.get("content", {}).get("user_profile") == PROFILE  # verbatim
    assert all(m.content.strip() or m.meta.get("content") for m in msgs), msgs
    assert [m.content for m in msgs if m.role == "assistant"] == ["Rye: it holds water."]
    assert header.title == "Dense loaf flour"
    ok("--vault", vault, "verify")
    hits = ok("--vault", vault, "search", "pastry chef Porto", "--json").json()
    assert hits.get("data", hits)["hits"]


def _cc(path: Path, sid: str, lines: list[dict]) -> Path:
    rows = []
    for i, x in enumerate(lines):
        if x.get("type") in ("user", "assistant"):
            x = {"sessionId": sid, "uuid": f"{sid[:4]}-{i}", "parentUuid": None,
                 "timestamp": f"2026-02-0{1 + i // 50}T10:{i % 60:02d}:00Z", **x}
        rows.append(x)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_claude_code_title_is_never_another_sessions_summary(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    sid = "7d6c5b4a-0000-4000-8000-00000000aaaa"
    src = _cc(tmp_path / f"{sid}.jsonl", sid, [
        {"type": "summary", "summary": "Local Command Execution and Screen Clearing",
         "leafUuid": "9999-other-session-leaf"},
        {"type": "user", "message": {"role": "user", "content": "Please add a dark mode toggle "
                                     "to the settings page"}},
        {"type": "assistant", "message": {"role": "assistant",
                                          "content": [{"type": "text", "text": "Done."}]}},
    ])
    ok("--vault", vault, "ingest", src)
    [(rel, header, _)] = _sessions(vault)
    assert "Screen Clearing" not in header.title
    assert header.title.startswith("Please add a dark mode toggle")
    recalled = ok("--vault", vault, "show", rel).out
    assert "Screen Clearing" not in recalled


def test_claude_code_own_summary_still_titles_it(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    sid = "7d6c5b4a-0000-4000-8000-00000000bbbb"
    src = _cc(tmp_path / f"{sid}.jsonl", sid, [
        {"type": "summary", "summary": "Dark mode toggle", "leafUuid": f"{sid[:4]}-2"},
        {"type": "user", "message": {"role": "user", "content": "Please add a dark mode"}},
        {"type": "assistant", "message": {"role": "assistant",
                                          "content": [{"type": "text", "text": "Done."}]}},
    ])
    ok("--vault", vault, "ingest", src)
    [(_, header, _)] = _sessions(vault)
    assert header.title == "Dark mode toggle"


def test_markup_names_neither_the_title_nor_the_file(tmp_path: Path) -> None:
    vault = new_vault(tmp_path)
    sid = "7d6c5b4a-0000-4000-8000-00000000cccc"
    src = _cc(tmp_path / f"{sid}.jsonl", sid, [
        {"type": "user", "message": {"role": "user", "content":
            "<command-name>/clear</command-name>\n<command-message>clear</command-message>\n"
            "<command-args></command-args>"}},
        {"type": "user", "message": {"role": "user", "content":
            "<local-command-stdout></local-command-stdout>"}},
        {"type": "user", "message": {"role": "user", "content":
            "<ide_opened_file>The user opened the file /src/app/settings.py in the IDE."
            "</ide_opened_file>Why does the settings page crash on save?"}},
        {"type": "assistant", "message": {"role": "assistant",
                                          "content": [{"type": "text", "text": "A None."}]}},
        {"type": "assistant", "message": {"role": "assistant", "content": []}},
    ])
    ok("--vault", vault, "ingest", src)
    [(rel, header, msgs)] = _sessions(vault)
    for bad in ("command", "clear", "ide", "opened", "<"):
        assert bad not in header.title.lower(), header.title
        assert bad not in rel.rsplit("/", 1)[1].rsplit("-", 1)[0], rel
    assert header.title.startswith("Why does the settings page crash")
    # the markup turns are kept verbatim (they are what was said), the empty one is not a turn
    assert msgs[0].content.startswith("<command-name>/clear")
    assert [m.content for m in msgs if m.role == "assistant"] == ["A None."]
    head = read_header((vault / rel).read_text(encoding="utf-8"), rel)
    assert head["turns"] == 4


def test_a_session_stored_with_a_placeholder_turn_still_grows_in_place(tmp_path: Path) -> None:
    """Older memctl stored empty placeholder turns; a live session read again, now without
    them, appends its new turns instead of being refused as rewritten history."""
    from gitutil import run_git

    from memctl.core.model import Message
    from memctl.core.raw import make_header, render_session, session_path
    from memctl.core.raw import now_utc as _now
    from memctl.ingest import formats

    vault = new_vault(tmp_path)
    sid = "7d6c5b4a-0000-4000-8000-00000000dddd"
    turns = [
        {"type": "user", "message": {"role": "user", "content": "Rename the billing module"}},
        {"type": "assistant", "message": {"role": "assistant",
                                          "content": [{"type": "text", "text": "Renamed."}]}},
    ]
    src = _cc(tmp_path / f"{sid}.jsonl", sid, turns)
    [tr] = list(formats.read_transcripts(src))
    ph = Message("assistant", "", "ph-1", None, "2026-02-01T10:00:30Z", {"parentUuid": None})
    stored = [tr.messages[0], ph, tr.messages[1]]
    rel = session_path(sid, stored, _now())
    h = make_header(sid, "Rename the billing module", "claude_code", str(src), "dana",
                    "user:dana", stored, {"source_meta": tr.meta})
    (vault / rel).parent.mkdir(parents=True, exist_ok=True)
    (vault / rel).write_text(render_session(h, stored), encoding="utf-8")
    run_git(vault, "add", "-A")
    run_git(vault, "commit", "-qm", "a session stored by older memctl")
    ok("--vault", vault, "reindex")
    _cc(src, sid, [*turns, {"type": "user", "message": {"role": "user",
                                                        "content": "Now update the imports"}}])
    r = ok("--vault", vault, "ingest", src)
    assert "appended" in r.out, r.out
    [(_, _, msgs)] = _sessions(vault)
    assert [m.content for m in msgs] == ["Rename the billing module", "", "Renamed.",
                                         "Now update the imports"]
    ok("--vault", vault, "verify")


def test_a_pasted_log_names_neither_the_title_nor_the_file(tmp_path: Path) -> None:
    """redteam20: a session opened with a paste ("seeing this on staging:\\n\\nTraceback ...")
    is named by the person's words around the paste, never by the log; nor the session note."""
    vault = new_vault(tmp_path)
    for sid, paste in (
        ("7d6c5b4a-0000-4000-8000-00000000eeee",
         'Traceback (most recent call last):\n  File "/app/jobs.py", line 88, in run\n'
         "    conn = pool.acquire()\nbilling.db.PoolExhausted: no free connections"),
        ("7d6c5b4a-0000-4000-8000-00000000ffff",
         "Uncaught TypeError: Cannot read properties of undefined (reading 'id')\n"
         "    at readCart (cart.ts:41:22)"),
    ):
        src = _cc(tmp_path / f"{sid}.jsonl", sid, [
            {"type": "user", "message": {"role": "user", "content":
                f"{paste}\n\nseeing this on staging since the deploy, please find out why"}},
            {"type": "assistant", "message": {"role": "assistant",
                                              "content": [{"type": "text", "text": "On it."}]}},
        ])
        ok("--vault", vault, "ingest", src, "--user", "dana")
    ok("--vault", vault, "curate")
    for rel, header, _ in _sessions(vault):
        name = rel.rsplit("/", 1)[1].lower()
        for bad in ("traceback", "uncaught", "typeerror", "file-", "(most"):
            assert bad not in header.title.lower() and bad not in name, (header.title, rel)
        assert header.title.startswith("seeing this on staging"), header.title
    for p in (vault / "sessions").glob("2*.md"):
        head = p.read_text(encoding="utf-8").split("\n# ", 1)[0].lower()
        assert "traceback" not in head and "uncaught" not in head and "traceback" not in p.name


def test_the_settings_node_names_neither_the_title_nor_the_file(tmp_path: Path) -> None:
    """redteam20: the app's preamble in `user_editable_context` ("The user provided the
    following information ...") is no one's first words: the first real question names the
    file (and the title, when the export gives none)."""
    vault = new_vault(tmp_path)
    src = _chatgpt(tmp_path / "conversations.json")
    data = json.loads(src.read_text(encoding="utf-8"))
    ctx = data[0]["mapping"]["ctx"]["message"]["content"]
    ctx["user_profile"] = ("The user provided the following information about themselves. "
                           "User profile:\n```" + PROFILE + "```")
    data[0]["title"] = None
    src.write_text(json.dumps(data), encoding="utf-8")
    ok("--vault", vault, "ingest", src)
    [(rel, header, msgs)] = _sessions(vault)
    assert "provided" not in rel and "pastry" not in rel, rel
    assert header.title.startswith("Which flour for a dense loaf"), header.title
    assert msgs[0].meta.get("content_type") == "user_editable_context"  # still kept verbatim


def test_an_inline_subagent_prompt_names_nothing_and_is_nobodys_request(tmp_path: Path) -> None:
    """redteam20: a Task sub-agent's prompt written inline (`isSidechain: true`, role user)
    named the raw file and the session and was learned as the person's words."""
    vault = new_vault(tmp_path)
    sid = "7d6c5b4a-0000-4000-8000-0000000abcde"
    src = _cc(tmp_path / f"{sid}.jsonl", sid, [
        {"type": "user", "isSidechain": True, "message": {"role": "user", "content":
            "Search the codebase for every call to rateLimit() and report the files."}},
        {"type": "assistant", "isSidechain": True, "message": {"role": "assistant",
            "content": [{"type": "text", "text": "Found 3 call sites."}]}},
        {"type": "user", "message": {"role": "user", "content": [{"type": "text", "text":
            "[Request interrupted by user]ok, make the limiter configurable per route"}]}},
        {"type": "assistant", "message": {"role": "assistant",
                                          "content": [{"type": "text", "text": "Done."}]}},
    ])
    ok("--vault", vault, "ingest", src, "--user", "kai")
    ok("--vault", vault, "curate")
    [(rel, header, _)] = _sessions(vault)
    assert "search" not in rel.rsplit("/", 1)[1] and "Search" not in header.title, rel
    learned = "\n".join(p.read_text(encoding="utf-8") for p in (vault / "sessions").glob("2*.md"))
    body = "\n".join(x for x in learned.splitlines() if x.startswith("- "))
    assert "rateLimit" not in body, body
    assert "make the limiter configurable per route" in body, body  # after the notice: theirs


def test_older_exports_settings_on_a_system_message_are_kept_and_learned(tmp_path: Path) -> None:
    """redteam20: older ChatGPT exports keep the custom instructions on a hidden system
    message's `metadata.user_context_message_data` (about_user_message, about_model_message);
    ingest dropped the hidden message, so they were neither in raw/ nor learned."""
    about = {"about_user_message": "I'm a sommelier in Lyon. I mostly drink natural wine.",
             "about_model_message": "Keep answers under 100 words."}
    mapping = {
        "root": _node("root", None, ["sys"], None),
        "sys": _node("sys", "root", ["u1"], {
            "id": "sys", "author": {"role": "system", "metadata": {}}, "create_time": None,
            "content": {"content_type": "text", "parts": [""]}, "recipient": "all",
            "metadata": {"is_visually_hidden_from_conversation": True,
                         "user_context_message_data": about}}),
        "u1": _node("u1", "sys", ["a1"], _msg("u1", "user", {
            "content_type": "text", "parts": ["Which grape for a light red?"]})),
        "a1": _node("a1", "u1", [], _msg("a1", "assistant", {
            "content_type": "text", "parts": ["Gamay."]}, t=1714557850.0)),
    }
    src = tmp_path / "conversations.json"
    src.write_text(json.dumps([{"title": "Light red", "conversation_id": "c-old-1",
                                "mapping": mapping, "current_node": "a1",
                                "create_time": 1714557845.0}]), encoding="utf-8")
    vault = new_vault(tmp_path)
    ok("--vault", vault, "ingest", src, "--user", "zoe")
    [(_, _, msgs)] = _sessions(vault)
    ctx = [m for m in msgs if m.meta.get("content_type") == "user_editable_context"]
    assert len(ctx) == 1 and ctx[0].meta["content"] == about  # verbatim, fields and all
    ok("--vault", vault, "curate")
    ok("--vault", vault, "verify")
    profile = (vault / "profile" / "zoe.md").read_text(encoding="utf-8")
    assert "Zoe is a sommelier in [[entities/lyon|Lyon]]." in profile or (
        "Zoe is a sommelier in Lyon." in profile), profile
    learned = "\n".join(p.read_text(encoding="utf-8") for p in vault.rglob("instructions/*.md"))
    assert "- Keep answers under 100 words. [^" in learned, learned
    assert "Keep answers" not in profile  # how to answer is an instruction, not who they are
