"""`memctl serve`: one resident memctl per vault answers hooks and read commands, and every
answer is the one the process would have given without it; when it is gone, stuck, stale,
moved or racing another, the hook still answers (in-process) and one service is left.

One service is shared by the tests that only read (a module fixture); the tests of its life
(crash, race, stale socket, move, idle, memory cap) each start their own on a small vault.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from gitutil import run_git
from test_forget import DANA, PRIYA, jsonl
from util import init_vault, memctl, ok, serve_pids

from memctl.faces.serve import wire

ON = {"MEMCTL_SERVE": "1"}
OFF = {"MEMCTL_SERVE": "0"}
PROMPT = "What did we decide about Grafana Cloud or Datadog for metrics?"


def _vault(tmp: Path) -> Path:
    v = tmp / "v"
    init_vault(v)
    ok("--vault", v, "ingest", jsonl(tmp / "dana.jsonl", DANA), "--user", "dana",
       "--scope", "team", "--session", "dana-1", env=OFF)
    ok("--vault", v, "ingest", jsonl(tmp / "priya.jsonl", PRIYA), "--user", "priya",
       "--session", "priya-1", env=OFF)
    ok("--vault", v, "curate", env=OFF)
    return v


def _ping(root: Path) -> dict | None:
    return wire.call(str(root), {"op": "ping"}, 2.0)[0]


def _wait(cond, seconds: float = 20.0) -> object:
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        got = cond()
        if got:
            return got
        time.sleep(0.05)
    return cond()


def _start(root: Path, *extra: str) -> subprocess.Popen:
    """`memctl serve` in the foreground of a child we own; returns once it answers."""
    env = {**os.environ, **ON}
    env.pop("MEMCTL_VAULT", None)
    proc = subprocess.Popen([sys.executable, "-m", "memctl", "--vault", str(root), "serve",
                             *extra], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)  # fmt: skip
    assert _wait(lambda: _ping(root) or proc.poll() is not None), "the service never answered"
    assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
    return proc


def _end(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.stderr:
        proc.stderr.close()


def _servers(root: Path) -> list[int]:
    return serve_pids(root)


def _stop_all(root: Path) -> None:
    for pid in _servers(root):
        os.kill(pid, signal.SIGTERM)
    _wait(lambda: not _servers(root), 10)


def _hook(root: Path, env: dict[str, str], prompt: str = PROMPT, cwd: Path | None = None):
    payload = json.dumps({"session_id": "s-1", "cwd": str(cwd or root), "prompt": prompt,
                          "hook_event_name": "UserPromptSubmit"})  # fmt: skip
    return memctl("hook", "user-prompt-submit", "--user", "dana", input=payload, env=env,
                  cwd=cwd or root)  # fmt: skip


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    v = _vault(tmp_path_factory.mktemp("serve"))
    proc = _start(v, "--idle", "120")
    yield v
    _end(proc)


def _served_count(root: Path) -> int:
    info = _ping(root)
    assert info is not None, "the service is not running"
    return int(info["served"])


# ---- the same answers -------------------------------------------------------------------------


def test_the_prompt_hook_answers_through_the_service_as_in_process(served: Path) -> None:
    before = _served_count(served)
    on, off = _hook(served, ON), _hook(served, OFF)
    assert on.code == off.code == 0, on.err + off.err
    assert "Grafana" in on.out and json.loads(on.out)["hookSpecificOutput"]
    assert on.out == off.out
    assert _served_count(served) == before + 1  # the service answered it, not the fallback


def test_session_start_answers_through_the_service_as_in_process(served: Path) -> None:
    payload = json.dumps({"session_id": "s-2", "cwd": str(served), "source": "startup"})
    before = _served_count(served)
    on = memctl("hook", "session-start", input=payload, env=ON, cwd=served)
    off = memctl("hook", "session-start", input=payload, env=OFF, cwd=served)
    assert on.code == off.code == 0 and on.out == off.out and on.out.strip()
    assert _served_count(served) == before + 1


@pytest.mark.parametrize("args", [
    ("search", "Grafana"),
    ("search", "Grafana", "--json"),
    ("recall", PROMPT, "--user", "dana"),
    ("context", "--user", "priya"),
    ("search", "--since", "not-a-date", "x"),  # an error: the same line, the same exit code
])  # fmt: skip
def test_read_commands_answer_through_the_service_as_in_process(
        served: Path, args: tuple[str, ...]) -> None:
    before = _served_count(served)
    on = memctl("--vault", served, *args, env=ON)
    off = memctl("--vault", served, *args, env=OFF)
    assert (on.code, on.out, on.err) == (off.code, off.out, off.err)
    assert _served_count(served) == before + 1


def test_a_command_the_service_ran_before_answers_again_with_its_own_options(
    served: Path,
) -> None:
    # The service builds each read command once and runs it for every request: nothing an
    # earlier run's options set (a --json, a --vault after the command, a limit) may leak
    # into the next one.
    runs = [("search", "--json", "-n", "2", "Grafana"), ("search", "Grafana"),
            ("search", "Grafana", "--vault", str(served), "-n", "1"),
            ("search", "Grafana")]  # fmt: skip
    for args in runs:
        on = memctl("--vault", served, *args, env=ON)
        off = memctl("--vault", served, *args, env=OFF)
        assert (on.code, on.out, on.err) == (off.code, off.out, off.err), args
        assert "Grafana" in on.out, args  # each run found something to show


def test_a_git_change_made_outside_memctl_is_seen_by_the_next_request(served: Path) -> None:
    note = served / "knowledge" / "zebra-crossing.md"
    note.parent.mkdir(exist_ok=True)
    note.write_text("---\ntitle: Zebra crossing\n---\n# Zebra crossing\n\n"
                    "- The quokkaflux gateway routes all egress.\n", encoding="utf-8")
    run_git(served, "add", "-A")
    run_git(served, "commit", "-qm", "a note written by hand, outside memctl")
    mine = run_git(served, "rev-parse", "HEAD").strip()
    try:
        on = memctl("--vault", served, "search", "quokkaflux", "--json", env=ON)
        off = memctl("--vault", served, "search", "quokkaflux", "--json", env=OFF)
        assert on.out == off.out and "zebra-crossing" in on.out
    finally:
        run_git(served, "revert", "--no-edit", mine)
    on = memctl("--vault", served, "search", "quokkaflux", "--json", env=ON)
    off = memctl("--vault", served, "search", "quokkaflux", "--json", env=OFF)
    assert on.code == 0 and on.out == off.out and "zebra-crossing" not in on.out


def test_the_service_opens_no_network_port(served: Path) -> None:
    info = _ping(served)
    assert info is not None
    fds = Path(f"/proc/{info['pid']}/fd")
    inodes = set()
    for fd in fds.iterdir():
        try:
            link = str(fd.readlink())
        except OSError:
            continue
        if link.startswith("socket:["):
            inodes.add(link[8:-1])
    inet = set()
    for table in ("tcp", "tcp6", "udp", "udp6"):
        p = Path(f"/proc/{info['pid']}/net/{table}")
        if p.exists():
            for line in p.read_text().splitlines()[1:]:
                inet.add(line.split()[9])
    assert inodes, "the service holds no socket at all?"
    assert not inodes & inet


def test_a_served_client_ends_at_once_with_all_its_output_and_its_code() -> None:
    """A served hook or command ends its process as soon as its answer is written
    (hookcall.done, no interpreter teardown): output past a pipe's buffer, on both
    streams, arrives whole, and the exit code is the command's."""
    code = ("import sys\nfrom memctl.faces.cli.hookcall import done\n"
            "sys.stdout.write('o' * 300_000 + 'END')\nsys.stderr.write('e' * 100_000 + 'END')\n"
            "done(3)\nraise SystemExit('not reached')\n")  # fmt: skip
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, check=False)
    assert p.returncode == 3
    assert p.stdout == b"o" * 300_000 + b"END"
    assert p.stderr == b"e" * 100_000 + b"END"


def test_the_hook_client_imports_no_more_than_the_floor(served: Path) -> None:
    """What a served hook loads: the CLI's light entry and the socket client, nothing of
    the vault (memctl.vault, the index, git, typer)."""
    payload = json.dumps({"session_id": "s-3", "cwd": str(served), "prompt": PROMPT})
    env = {**os.environ, **ON, "PYTHONIOENCODING": "utf-8"}
    env.pop("MEMCTL_VAULT", None)
    p = subprocess.run([sys.executable, "-X", "importtime", "-m", "memctl", "hook",
                        "user-prompt-submit"], input=payload.encode(), capture_output=True,
                       cwd=served, env=env, check=True)  # fmt: skip
    assert b"hookSpecificOutput" in p.stdout
    loaded = {line.split("|")[-1].strip() for line in p.stderr.decode().splitlines()
              if line.startswith("import time:")}  # fmt: skip
    ours = {m for m in loaded if m.startswith("memctl")}
    assert ours <= {"memctl", "memctl.faces", "memctl.faces.cli", "memctl.faces.cli.common",
                    "memctl.faces.cli.hookcall", "memctl.errors", "memctl.version",
                    "memctl.faces.serve", "memctl.faces.serve.wire", "memctl.__main__"}, ours
    for heavy in ("typer", "click", "tantivy", "git", "rich", "subprocess", "socket"):
        assert heavy not in loaded, heavy


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc/PID/maps")
def test_the_service_loads_what_a_prompt_needs_before_it_listens(tmp_path: Path) -> None:
    """No prompt pays for the service's start: before it answers its first request it holds
    the index's library and the tokenizer's Unicode pattern (`regex`), loaded."""
    v = _vault(tmp_path)
    proc = _start(v)
    try:
        info = _ping(v)
        assert info is not None and int(info["served"]) == 0
        maps = Path(f"/proc/{info['pid']}/maps").read_text(encoding="utf-8")
        libs = {Path(line.split()[-1]).name.split(".")[0] for line in maps.splitlines()
                if line.rstrip().endswith(".so") or ".so." in line}  # fmt: skip
        assert {"tantivy", "_regex"} <= libs, sorted(libs)
    finally:
        _end(proc)


# ---- its life ------------------------------------------------------------------------------------


def test_kill_9_mid_request_the_hook_falls_back_and_answers(tmp_path: Path) -> None:
    v = _vault(tmp_path)
    want = _hook(v, OFF).out
    proc = _start(v, "--idle", "60")
    try:
        os.kill(proc.pid, signal.SIGSTOP)  # it accepts nothing now; the kernel queues the hook
        hook = subprocess.Popen([sys.executable, "-m", "memctl", "hook", "user-prompt-submit",
                                 "--user", "dana"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, cwd=v,
                                env={**os.environ, **ON})  # fmt: skip
        assert hook.stdin is not None
        hook.stdin.write(json.dumps({"session_id": "s-1", "cwd": str(v), "prompt": PROMPT,
                                     "hook_event_name": "UserPromptSubmit"}).encode())
        hook.stdin.close()
        time.sleep(1.0)  # the hook sent its request and waits for the answer
        assert hook.poll() is None
        os.kill(proc.pid, signal.SIGKILL)
        assert hook.stdout is not None
        out = hook.stdout.read().decode()
        assert hook.wait(60) == 0 and out == want
        # the next hook is answered (a new service was started for it, or in-process)
        assert _hook(v, ON).out == want
        assert _wait(lambda: _ping(v)), "no service was started again"
    finally:
        _end(proc)
        _stop_all(v)


def test_a_stuck_service_is_stopped_and_the_hook_answers_in_time(tmp_path: Path) -> None:
    v = _vault(tmp_path)
    want = _hook(v, OFF).out
    proc = _start(v, "--idle", "60")
    try:
        os.kill(proc.pid, signal.SIGSTOP)  # as if a call into C held it
        t0 = time.monotonic()
        r = _hook(v, {**ON, "MEMCTL_HOOK_DEADLINE": "1"})
        assert r.code == 0 and r.out == want
        assert time.monotonic() - t0 < 20
        assert _wait(lambda: proc.poll() is not None, 10), "the stuck service is still there"
    finally:
        _end(proc)
        _stop_all(v)


def test_two_hooks_racing_start_one_service(tmp_path: Path) -> None:
    v = _vault(tmp_path)
    want = _hook(v, OFF).out
    try:
        payload = json.dumps({"session_id": "s-1", "cwd": str(v), "prompt": PROMPT}).encode()
        env = {**os.environ, **ON, "PYTHONIOENCODING": "utf-8"}
        hooks = [subprocess.Popen([sys.executable, "-m", "memctl", "hook", "user-prompt-submit",
                                   "--user", "dana"], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, cwd=v, env=env)
                 for _ in range(3)]  # fmt: skip
        outs = [h.communicate(payload, timeout=60)[0].decode() for h in hooks]
        assert all(h.returncode == 0 for h in hooks) and outs == [want] * 3
        assert _wait(lambda: _ping(v)), "no service was started"
        # the losers give up; one is left, and it is the one holding the lock
        assert _wait(lambda: len(_servers(v)) == 1, 20), _servers(v)
        info = _ping(v)
        assert info is not None and _servers(v) == [info["pid"]]
        lock = Path(wire.paths(str(v))[1])
        assert int(lock.read_text().split()[0]) == info["pid"]
        # and a second `memctl serve` by hand leaves at once, the first still serving
        r = memctl("--vault", v, "serve", env=ON, timeout=30)
        assert r.code == 0 and _servers(v) == [info["pid"]]
    finally:
        _stop_all(v)


def test_a_vault_whose_cache_folder_comes_later_still_gets_one_service(
    tmp_path: Path,
) -> None:
    """A vault copied or cloned has `.memctl/` but no `.memctl/cache/` until a command
    writes there. The service started before that must be the one found after: the socket's
    place was chosen by whether the cache folder could be written, so the first hook's
    service listened in /tmp and, once the folder existed, the next hook started a second."""
    v = _vault(tmp_path)
    _stop_all(v)
    shutil.rmtree(v / ".memctl" / "cache")
    before = wire.paths(str(v))
    try:
        want = _hook(v, OFF).out  # a command writes the cache folder (index, tokenizer)
        assert (v / ".memctl" / "cache").is_dir()
        assert wire.paths(str(v)) == before, "the socket moved once the folder existed"
        shutil.rmtree(v / ".memctl" / "cache")
        assert _hook(v, ON).out == want  # answers in-process, starts the service
        assert _wait(lambda: _ping(v)), "no service was started"
        for _ in range(3):
            assert _hook(v, ON).out == want
        assert len(_servers(v)) == 1, _servers(v)
    finally:
        _stop_all(v)


def test_a_stale_socket_is_replaced(tmp_path: Path) -> None:
    v = _vault(tmp_path)
    want = _hook(v, OFF).out
    sock_path, lock_path = wire.paths(str(v))
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(sock_path)  # a socket file nobody listens on, as a killed service leaves it
    dead.close()
    Path(lock_path).write_text("999999\n")  # and its lock file, naming a dead pid
    try:
        r = _hook(v, ON)
        assert r.code == 0 and r.out == want
        assert _wait(lambda: _ping(v)), "no service replaced the stale socket"
        assert _hook(v, ON).out == want
        assert len(_servers(v)) == 1
    finally:
        _stop_all(v)


def test_a_moved_vault_is_served_from_its_new_place(tmp_path: Path) -> None:
    v = _vault(tmp_path)
    proc = _start(v, "--idle", "60")
    moved = tmp_path / "moved"
    try:
        v.rename(moved)
        want = _hook(moved, OFF).out
        r = _hook(moved, ON)
        assert r.code == 0 and r.out == want and "Grafana" in r.out
        assert _wait(lambda: proc.poll() is not None, 15), "the old service still runs"
        info = _wait(lambda: _ping(moved))
        assert info and info["pid"] != proc.pid
        assert _hook(moved, ON).out == want
        assert _servers(moved) == [info["pid"]]
    finally:
        _end(proc)
        _stop_all(moved)


def test_a_vault_path_too_long_for_a_socket_uses_a_short_one(tmp_path: Path) -> None:
    deep = tmp_path
    while len(str(deep)) < 120:
        deep = deep / "a-rather-long-folder-name"
    deep.mkdir(parents=True)
    v = _vault(deep)
    runtime = Path(tempfile.mkdtemp(prefix="m-", dir="/tmp"))  # as short as /run/user/N
    env = {**ON, "XDG_RUNTIME_DIR": str(runtime)}
    os.environ["XDG_RUNTIME_DIR"] = str(runtime)
    try:
        sock_path, _ = wire.paths(str(v))
        assert Path(sock_path).parent == runtime and len(sock_path) < 108
        want = _hook(v, OFF).out
        assert _hook(v, env).out == want
        assert _wait(lambda: _ping(v)), "no service on the short socket"
        assert _hook(v, env).out == want
    finally:
        _stop_all(v)
        del os.environ["XDG_RUNTIME_DIR"]
        shutil.rmtree(runtime, ignore_errors=True)


def test_it_stops_itself_when_idle_and_removes_its_socket(tmp_path: Path) -> None:
    v = _vault(tmp_path)
    proc = _start(v, "--idle", "1")
    try:
        assert proc.wait(20) == 0
        assert not Path(wire.paths(str(v))[0]).exists()
        assert "stopped: idle for 1s" in (v / ".memctl/cache/hooks.log").read_text()
    finally:
        _end(proc)


def test_it_stops_itself_past_its_memory_cap(tmp_path: Path) -> None:
    v = _vault(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "memctl", "--vault", str(v), "serve",
                             "--max-memory", "1"],  # 1 MB: the first check passes it
                            env={**os.environ, **ON})  # fmt: skip
    try:
        assert proc.wait(20) == 0
        assert "passed the cap of 1 MB" in (v / ".memctl/cache/hooks.log").read_text()
    finally:
        _end(proc)


def test_http_serves_the_viewer_beside_the_hooks(tmp_path: Path) -> None:
    # `memctl serve --http` runs the viewer on a thread of the resident process: its pages
    # answer on loopback, and the socket keeps answering hooks meanwhile.
    import urllib.request

    v = _vault(tmp_path)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = _start(v, "--http", f"127.0.0.1:{port}")
    try:
        page = _wait(lambda: _get(urllib.request, f"http://127.0.0.1:{port}/"))
        assert page and "dana" in str(page).lower(), page
        assert _ping(v) is not None
    finally:
        _end(proc)


def _get(request: object, url: str) -> str | None:
    try:
        with request.urlopen(url, timeout=2) as r:  # type: ignore[attr-defined]
            return str(r.read().decode("utf-8")) if r.status == 200 else None
    except OSError:
        return None


def test_the_client_waits_as_long_as_the_handler_allows() -> None:
    """The served hook waits for the handler's own deadline (plus grace), read without
    importing the handler: the two constants must stay one."""
    from memctl.faces.cli import hookcall
    from memctl.faces.hooks import handlers

    assert hookcall._DEADLINE == handlers.DEADLINE


def test_a_command_under_a_file_size_limit_starts_no_service(tmp_path: Path) -> None:
    """A search run under `ulimit -f` started the vault's service, which kept that limit for
    its life: every later search through it failed to write the index ("search index not
    updated (... File too large)"), long after the limit was gone (bench/crash.py's full
    disk points, which set the limit, found it). Without the limit the same search starts
    one, so the first half is no vacuous pass."""
    v = _vault(tmp_path)
    try:
        r = memctl("--vault", v, "search", "Grafana", env=ON, fsize_limit=1 << 30)
        assert r.code == 0, r.err
        time.sleep(1.0)  # a service started in the background would answer by now
        assert _ping(v) is None and _servers(v) == []
        r = memctl("--vault", v, "search", "Grafana", env=ON)
        assert r.code == 0, r.err
        assert _wait(lambda: _ping(v)), "no service was started"
        r = memctl("--vault", v, "search", "Grafana", env=ON)
        assert r.code == 0 and "search index" not in r.err, r.err
    finally:
        _stop_all(v)


# ---- the code it runs ---------------------------------------------------------------------


def _raw_ping(root: Path) -> dict | None:
    """A ping that says nothing of the asker's memctl (as a client from before that did)."""
    import socket as socket_

    sock_path, _ = wire.paths(str(root))
    s = socket_.socket(socket_.AF_UNIX, socket_.SOCK_STREAM)
    try:
        s.settimeout(2.0)
        s.connect(sock_path)
        wire.send(s, {"v": wire.PROTOCOL, "root": str(root), "op": "ping"})
        return wire.receive(s)
    except OSError:
        return None
    finally:
        s.close()


def test_a_service_answers_only_its_own_memctl_and_stops_when_that_changes_on_disk(
    tmp_path: Path,
) -> None:
    # A service kept answering with the code it loaded: after `pip install -U memctl` (or an
    # edit of an editable install), every hook got the old memctl's answer until the service
    # idled out; and a hook from another install got this one's. Here the service runs a
    # copy of memctl, as another install would.
    import memctl

    code = tmp_path / "code"
    shutil.copytree(Path(memctl.__file__).parent, code / "memctl",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    v = _vault(tmp_path)
    env = {**os.environ, **ON, "PYTHONPATH": str(code)}
    env.pop("MEMCTL_VAULT", None)
    proc = subprocess.Popen([sys.executable, "-m", "memctl", "--vault", str(v), "serve"],
                            env=env, cwd=tmp_path, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)  # fmt: skip
    try:
        assert _wait(lambda: _raw_ping(v) or proc.poll() is not None)
        assert proc.poll() is None
        before = int(_raw_ping(v)["served"])
        # this process's memctl is another install: the hook does the work itself, and
        # starts no second service
        on, off = _hook(v, ON), _hook(v, OFF)
        assert on.code == 0 and on.out == off.out and "additionalContext" in on.out
        assert int(_raw_ping(v)["served"]) == before
        assert _servers(v) == [proc.pid]
        # its own code changes on disk: it stops itself
        newer = time.time() + 5
        os.utime(code / "memctl" / "recall" / "prompt.py", (newer, newer))
        proc.wait(15)
        said = (v / ".memctl" / "cache" / "hooks.log").read_text(encoding="utf-8")
        assert "stopped: memctl's code on disk changed" in said, said[-500:]
    finally:
        _end(proc)
        _stop_all(v)
