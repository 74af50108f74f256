"""The viewer through Werkzeug's test client, on a real vault the real CLI built and curated.

What a person sees: sessions and what each taught (claims with their verbatim quotes, each
linked to the turn it cites), a session's turns with tool calls shown, notes with their
footnotes linked, review, diff, search, projects. What it must never do: write without
--writable, accept a POST without the token, turn transcript text into markup, answer a
host name that is not this machine's, let the page load anything.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from ccsession import Session
from util import ctrl_c_stops, git, memctl, new_vault, ok
from werkzeug.test import Client

from memctl.faces.viewer import make_app
from memctl.vault import Vault

SCRIPT = "<script>alert(1)</script>"


def build_viewer_vault(root: Path) -> Path:
    """Three sessions (a chat, an instruction, a coding session), curated: claims in
    force, two proposals waiting (instructions/team, instructions/marco), a project note."""
    root.mkdir(parents=True, exist_ok=True)
    code = Session()
    code.user("Please run the tests and fix the failing one.")
    code.bash("uv run pytest -q", "1 failed, 3 passed")
    code.edit("app.py", "x = 1", "x = 2", text="The constant was wrong.")
    code.bash("uv run pytest -q", "4 passed")
    code.say("Fixed: the constant in app.py was wrong; tests pass now.")
    dana = [
        {"role": "user", "name": "Dana", "timestamp": "2026-09-01T09:14:00Z",
         "content": "Morning! I'm a platform engineer at Acme. We're trying to cut our egress "
                    f"costs this quarter. {SCRIPT}"},
        {"role": "assistant", "content": "Good morning Dana! Happy to help with egress.",
         "timestamp": "2026-09-01T09:15:00Z"},
        {"role": "user", "name": "Dana", "timestamp": "2026-09-01T09:16:00Z",
         "content": "From now on, always run the database migrations inside a transaction."},
    ]  # fmt: skip
    marco = {"role": "user", "name": "Marco", "timestamp": "2026-09-02T10:00:00Z",
             "content": "From now on, always answer in short bullet points."}  # fmt: skip
    (root / "dana.jsonl").write_text("".join(json.dumps(m) + "\n" for m in dana), "utf-8")
    (root / "marco.jsonl").write_text(json.dumps(marco) + "\n", "utf-8")
    v = new_vault(root / "vault")
    ok("--vault", v, "ingest", root / "dana.jsonl", "--user", "dana", "--scope", "team")
    ok("--vault", v, "ingest", root / "marco.jsonl", "--user", "marco")
    ok("--vault", v, "ingest", code.write_to(root / "code.jsonl"), "--user", "dana")
    ok("--vault", v, "curate")
    return v


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_viewer_vault(tmp_path_factory.mktemp("viewer"))


@pytest.fixture
def vault(built: Path, tmp_path: Path) -> Path:
    """A copy of its own for a test that writes."""
    return Path(shutil.copytree(built, tmp_path / "vault", symlinks=True))


def client(v: Path, writable: bool = False) -> Client:
    return Client(make_app(Vault.open(v), writable=writable))


def page(c: Client, url: str, status: int = 200) -> str:
    r = c.get(url)
    assert r.status_code == status, (url, r.status_code, r.get_data(as_text=True)[-800:])
    return r.get_data(as_text=True)


def raw_of(v: Path, word: str) -> str:
    [p] = (v / "raw").rglob(f"{word}*.md")
    return p.relative_to(v).as_posix()


# ---- what a person sees ----------------------------------------------------------------


def test_the_timeline_shows_each_session_and_the_claims_it_taught(built: Path) -> None:
    html = page(client(built), "/")
    raw = raw_of(built, "morning")
    assert html.count('class="card session"') == 3
    assert "Acme is trying to cut its egress costs this quarter" in html
    # the verbatim quote, and a link to the very turn it is in
    assert "“We&#39;re trying to cut our egress costs this quarter.”" in html
    assert f'href="/session/{raw}?t=1#t1"' in html
    # a claim citing two turns of a session is one line with both quotes
    assert html.count("Tests run with `uv run pytest -q`.") == 1
    # a proposal is shown as waiting, pointing at the review page
    assert "always answer in short bullet points" in html
    assert "proposed: waits for review" in html


def test_a_session_shows_its_turns_with_the_tool_calls_and_the_cited_quote(built: Path) -> None:
    raw = raw_of(built, "please-run")
    html = page(client(built), f"/session/{raw}?t=2")
    turn2 = html.split('id="t2"', 1)[1].split("</article>", 1)[0]
    # the call, with the claim's verbatim quote marked in it
    assert "[Bash] <mark>uv run pytest -q</mark>" in turn2 and "tool call" in turn2
    assert "Tests run with `uv run pytest -q`." in html  # what the session taught
    assert f'href="/diff?session={raw}"' in html


def test_a_sub_agents_brief_is_shown_as_the_parent_agents(tmp_path: Path) -> None:
    """The brief opening a sub-agent's transcript is the spawning agent's words: the page
    names it so, never as the session's user."""
    from test_curate_coding import _mina

    root = _mina(tmp_path)
    html = page(client(root), f"/session/{raw_of(root, 'you-are-mina')}")
    turn1 = html.split('id="t1"', 1)[1].split("</article>", 1)[0]
    assert '<span class="who">parent agent</span> (user)' in turn1, turn1[:400]


def test_a_long_session_is_shown_a_window_at_a_time(tmp_path: Path) -> None:
    v = new_vault(tmp_path / "vault")
    lines = [json.dumps({"role": "user" if i % 2 else "assistant", "content": f"line {i + 1}"})
             for i in range(900)]  # fmt: skip
    (tmp_path / "long.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
    ok("--vault", v, "ingest", tmp_path / "long.jsonl", "--user", "dana")
    [raw] = [p.relative_to(v).as_posix() for p in (v / "raw").rglob("*.md") if p.name != "INDEX.md"]
    html = page(client(v), f"/session/{raw}?t=600")
    assert 'id="t600"' in html and 'id="t1"' not in html and 'id="t900"' not in html
    assert "earlier turns" in html and "later turns" in html


def test_transcript_text_is_never_markup(built: Path) -> None:
    c = client(built)
    session = f"/session/{raw_of(built, 'morning')}"
    for url in ("/", session, "/search?q=egress"):
        assert SCRIPT not in page(c, url)
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page(c, session)


def test_a_note_links_its_footnotes_to_the_turns_and_its_wiki_links_to_notes(built: Path) -> None:
    html = page(client(built), "/note/knowledge/acme.md")
    raw = raw_of(built, "morning")
    assert re.search(r'<sup>|href="#fn-[^"]+"', html)
    assert f'href="/session/{raw}?t=1#t1"' in html
    assert 'href="/note/entities/acme.md"' in html  # [[entities/acme|Acme]]


def test_projects_lists_each_project_note(built: Path) -> None:
    c = client(built)
    html = page(c, "/projects")
    assert 'href="/note/projects/shop.md"' in html and "Project: shop" in html
    assert "Tests run with `uv run pytest -q`." in page(c, "/note/projects/shop.md")


def test_search_finds_turns_and_notes_and_links_them(built: Path) -> None:
    html = page(client(built), "/search?q=egress+costs")
    assert "<mark>" in html
    assert f'href="/session/{raw_of(built, "morning")}?t=1#t1"' in html
    assert 'href="/note/knowledge/acme.md"' in html


def test_diff_of_a_session_is_what_it_taught(built: Path) -> None:
    raw = raw_of(built, "please-run")
    html = page(client(built), f"/diff?session={raw}")
    assert "Tests run with `uv run pytest -q`." in html
    assert "Acme is trying to cut" not in html  # another session's lesson
    assert "“uv run pytest -q”" in html
    cli = ok("--vault", built, "diff", "--session", raw).out
    assert "Tests run with `uv run pytest -q`." in cli and "Acme is trying" not in cli


def test_unknown_things_are_a_page_that_says_so(built: Path) -> None:
    assert "no note or session" in page(client(built), "/note/nope.md", 404)
    page(client(built), "/nowhere", 404)
    # a path routing tidies (a doubled slash) is a redirect to it, not an error page
    r = client(built).get("/note//knowledge/acme.md")
    assert r.status_code == 308 and r.headers["Location"].endswith("/note/knowledge/acme.md")


# ---- safety ------------------------------------------------------------------------------


def test_every_page_may_load_nothing_from_anywhere(built: Path) -> None:
    r = client(built).get("/")
    csp = r.headers["Content-Security-Policy"]
    assert "default-src 'none'" in csp and "script-src" not in csp
    html = r.get_data(as_text=True)
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # nothing off this server
    assert "<script" not in html


def test_another_host_name_is_refused(built: Path) -> None:
    """A site whose DNS name points at 127.0.0.1 must not read the vault through a browser."""
    r = client(built).get("/", headers={"Host": "evil.example:8080"})
    assert r.status_code == 400
    assert "Acme" not in r.get_data(as_text=True)


def test_a_path_out_of_the_vault_or_into_its_own_files_is_not_served(built: Path) -> None:
    (built.parent / "secret.md").write_text("# outside\n\nthe-outside-words\n", "utf-8")
    c = client(built)
    for url in ("/note/../secret.md", "/note/%2e%2e/secret.md", "/session/..%2fsecret.md",
                "/note/.memctl/config.toml", "/note/.git/config"):  # fmt: skip
        r = c.get(url, follow_redirects=True)
        text = r.get_data(as_text=True)
        assert r.status_code == 404, url
        assert "the-outside-words" not in text and "[stores" not in text and "[core]" not in text


def test_read_only_by_default_shows_no_form_and_refuses_a_post(vault: Path) -> None:
    c = client(vault)
    html = page(c, "/review")
    assert "instructions/team" in html and "<form" not in html.split("</header>", 1)[1]
    head = git(vault, "rev-parse", "HEAD")
    r = c.post("/review", data={"action": "accept", "id": "instructions/team"})
    assert r.status_code == 403
    assert git(vault, "rev-parse", "HEAD") == head
    assert (vault / "instructions" / "team.proposed.md").exists()


def test_a_post_without_the_token_changes_nothing(vault: Path) -> None:
    c = client(vault, writable=True)
    head = git(vault, "rev-parse", "HEAD")
    for token in (None, "guessed"):
        data = {"action": "accept", "id": "instructions/team"}
        if token:
            data["token"] = token
        assert c.post("/review", data=data).status_code == 403
    assert git(vault, "rev-parse", "HEAD") == head
    assert git(vault, "status", "--porcelain") == ""


def _token(html: str) -> str:
    got = re.search(r'name="token" value="([^"]+)"', html)
    assert got, "no token in the review form"
    return got.group(1)


def test_accept_and_reject_commit_as_the_cli_does(vault: Path) -> None:
    c = client(vault, writable=True)
    token = _token(page(c, "/review"))
    r = c.post("/review", data={"token": token, "action": "accept", "id": "instructions/team"})
    assert r.status_code == 303 and r.headers["Location"].startswith("/review?")
    assert "accepted instructions/team" in page(c, r.headers["Location"])
    assert git(vault, "log", "-1", "--format=%s") == "review: 1 accepted, 0 rejected\n"
    assert "Memctl-Command: review" in git(vault, "log", "-1", "--format=%B")
    assert "status: active" in (vault / "instructions" / "team.md").read_text("utf-8")
    r = c.post("/review", data={"token": token, "action": "reject", "id": "instructions/marco"})
    assert r.status_code == 303
    assert git(vault, "log", "-1", "--format=%s") == "review: 0 accepted, 1 rejected\n"
    assert not (vault / "instructions" / "marco.proposed.md").exists()
    assert ok("--vault", vault, "review").out.strip() == "no proposals pending"
    assert git(vault, "status", "--porcelain") == ""


def test_a_refused_accept_is_shown_and_changes_nothing(vault: Path) -> None:
    c = client(vault, writable=True)
    token = _token(page(c, "/review"))
    head = git(vault, "rev-parse", "HEAD")
    r = c.post("/review", data={"token": token, "action": "accept", "id": "instructions/nobody"})
    assert r.status_code == 303
    assert "no proposal" in page(c, r.headers["Location"])
    assert git(vault, "rev-parse", "HEAD") == head


# ---- memctl view -------------------------------------------------------------------------


def test_memctl_view_serves_on_loopback_until_interrupted(built: Path) -> None:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "BROWSER": "false"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memctl", "--vault", str(built), "view", "--no-open"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        preexec_fn=ctrl_c_stops,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        got = re.search(r"at (http://127\.0\.0\.1:(\d+)/) \(read-only", line)
        assert got, line + (proc.stderr.read() if proc.poll() is not None else "")
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        with opener.open(got.group(1), timeout=30) as r:
            assert r.status == 200 and "Acme is trying to cut" in r.read().decode()
    finally:
        proc.send_signal(signal.SIGINT)
        code = proc.wait(timeout=30)
    assert code == 0, proc.stderr.read() if proc.stderr else ""


def test_a_port_in_use_is_one_line_and_nothing_written(built: Path) -> None:
    # Werkzeug printed three lines of its own ("Address already in use ... Either identify
    # and stop that program") and exited, naming neither memctl nor --port.
    import socket

    before = git(built, "rev-parse", "HEAD")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        r = memctl("--vault", built, "view", "--no-open", "--port", str(port))
    assert r.code != 0
    assert r.err.count("\n") == 1 and r.err.startswith("memctl: "), r.err
    assert f"127.0.0.1:{port}" in r.err and "--port" in r.err, r.err
    assert git(built, "rev-parse", "HEAD") == before
