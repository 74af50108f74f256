"""Killing real memctl processes at chosen moments, and checking the vault they leave.

Shared by tests/test_crash.py (a few kill points per run) and bench/crash.py (the full
hundred). A kill is a SIGKILL to the whole process group, so a git child dies with memctl
and its lock files stay behind, as after a power cut or an OOM kill.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from util import git, memctl, ok, spawn


def transcripts(folder: Path, sessions: int, turns: int, tag: str = "s") -> Path:
    """`sessions` JSONL files of `turns` turns each, every turn with a unique id."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(sessions):
        lines = []
        for t in range(turns):
            role = "user" if t % 2 == 0 else "assistant"
            text = f"{tag} session {i} turn {t}: we chose Postgres {i} for the billing service"
            lines.append(json.dumps({"id": f"{tag}{i}-m{t}", "role": role, "content": text,
                                     "timestamp": f"2026-03-{1 + i % 28:02d}T10:{t % 60:02d}:00Z"}))
        (folder / f"{tag}{i:04d}.jsonl").write_text("\n".join(lines) + "\n")
    return folder


_WORDS = ("Alpha", "Bravo", "Cobalt", "Delta", "Ember", "Falcon", "Garnet", "Harbor", "Indigo",
          "Juniper", "Kestrel", "Lumen", "Meridian", "Nimbus", "Onyx", "Pylon", "Quartz", "Raven",
          "Sierra", "Tundra")


def curatable(folder: Path, sessions: int, tag: str = "c") -> Path:
    """Short sessions the builtin curator learns a lot from: ~3 notes each."""
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(sessions):
        org = _WORDS[i % 20] + _WORDS[(i // 20) % 20]
        msgs = [
            {"id": f"{tag}{i}-m1", "role": "user",
             "timestamp": f"2026-03-{1 + i % 28:02d}T09:00:00Z",
             "content": f"I'm a platform engineer at {org}. We decided to move billing to "
                        f"Postgres. I prefer Terraform over Pulumi. {org} is cutting cloud costs "
                        "this quarter."},
            {"id": f"{tag}{i}-m2", "role": "assistant", "content": "Sounds good."},
        ]
        (folder / f"{tag}{i:03d}.jsonl").write_text("\n".join(json.dumps(m) for m in msgs) + "\n")
    return folder


def note_files(vault: Path) -> list[Path]:
    return [p for p in vault.rglob("*.md")
            if not p.relative_to(vault).as_posix().startswith(("raw/", ".git/", ".memctl/"))
            and p.name != "INDEX.md"]


def memctl_popen(args: list[str], cwd: Path | None = None) -> Any:
    """`memctl ARGS` started in a process group of its own (which a kill takes down whole),
    forked from the warm CLI host, else a fresh interpreter: a `subprocess.Popen` or the
    part of one that kill_when and the tests use."""
    env = dict(os.environ)
    env.pop("MEMCTL_VAULT", None)
    started = spawn(args, cwd, env)
    if started is not None:
        return started
    return subprocess.Popen([sys.executable, "-m", "memctl", *args], cwd=cwd, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)


def kill_when(proc: Any, cond: Callable[[], bool] | None = None,
              after: float | None = None, timeout: float = 120) -> bool:
    """SIGKILL the process group once `cond()` holds or `after` seconds passed.

    Returns False when the process finished before that (no kill happened).
    """
    start = time.monotonic()
    while proc.poll() is None:
        now = time.monotonic() - start
        if (after is not None and now >= after) or (cond is not None and cond()):
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return True
        if now > timeout:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            raise AssertionError("process neither finished nor met the kill condition")
        time.sleep(0.002)
    return False


def head_turn_ids(vault: Path) -> list[str]:
    """Every turn id in every raw session of HEAD, with repeats (so duplicates show).

    A forgotten turn keeps its place but loses its id; it is no turn anyone can lose.
    """
    names = git(vault, "ls-tree", "-r", "--name-only", "HEAD", "raw/").split()
    ids: list[str] = []
    for name in names:
        if name.endswith("INDEX.md"):
            continue
        text = git(vault, "show", f"HEAD:{name}")
        for line in text.splitlines():
            if line.startswith("<!-- memctl:turn "):
                rec = json.loads(line[len("<!-- memctl:turn "):-len(" -->")])
                if rec.get("id") is not None:
                    ids.append(rec["id"])
    return ids


def assert_healthy(vault: Path) -> None:
    """The vault after recovery: clean status, fsck clean, every note parses."""
    from memctl.core.notes import parse_note
    from memctl.core.raw import parse_session

    status = git(vault, "status", "--porcelain", "--untracked-files=all")
    assert status == "", f"git status not clean after recovery:\n{status}"
    fsck = subprocess.run(["git", "-C", str(vault), "fsck", "--no-progress"],
                          capture_output=True, text=True, check=False)
    assert fsck.returncode == 0, fsck.stderr
    for p in vault.rglob("*.md"):
        rel = p.relative_to(vault).as_posix()
        if rel.startswith((".git/", ".memctl/")):
            continue
        text = p.read_text(encoding="utf-8")
        if rel.startswith("raw/") and not rel.endswith("INDEX.md"):
            parse_session(text, rel)
        elif not rel.endswith("INDEX.md"):
            parse_note(text, rel)
    assert not (vault / ".memctl" / "journal").exists() or not any(
        d.is_dir() for d in (vault / ".memctl" / "journal").iterdir()
    ), "a journal survived recovery"


def _ingest_calibrate(vault: Path, src: Path) -> float:
    start = time.monotonic()
    proc = memctl_popen(["--vault", str(vault), "ingest", str(src)])
    proc.communicate()
    return time.monotonic() - start


def kill_points(root: Path, kind: str, points: int, seed: int = 0,
                sessions: int = 40, turns: int = 20) -> dict[str, object]:
    """Run `kind` (ingest, curate or forget) `points` times, each killed with SIGKILL at a
    random moment (a third of them once git has taken its index lock), then check the vault.

    Returns counts: points killed, points the command finished before its kill time,
    failures (each a message; the run stops at the first), and turns acknowledged.
    """
    import random

    if kind == "forget":
        return _forget_points(root, points, seed)
    if kind == "sync":
        return _sync_points(root, points, seed)
    if kind in ("purge", "undo", "rollback", "gc"):
        return _op_points(root, kind, points, seed)
    rnd = random.Random(seed)
    vault = root / f"{kind}-vault"
    ok("init", vault)
    acknowledged: set[str] = set()
    killed = finished = git_phase = 0
    phases = {"before writing": 0, "writing": 0, "git": 0}
    failures: list[str] = []
    lock = vault / ".git" / "index.lock"

    def ack_ingest(src: Path, ids: set[str]) -> None:
        r = _memctl(vault, "ingest", str(src), "--user", "dana", "--scope", "team")
        if r.returncode != 0:
            failures.append(f"ingest after recovery failed: {r.stderr.strip()}")
        acknowledged.update(ids)

    if kind == "curate":
        src = curatable(root / "cur-seed", 30, tag="seed")
        ack_ingest(src, {f"seed{i}-m{t}" for i in range(30) for t in (1, 2)})
        base = 1.0
    else:
        base = _ingest_calibrate(vault, transcripts(root / "calib", sessions, turns, "cal"))
        acknowledged.update(f"cal{i}-m{t}" for i in range(sessions) for t in range(turns))
    for point in range(points):
        tag = f"p{point}x"
        if kind == "ingest":
            # new sessions, plus a longer version of the previous point's (appends)
            src = transcripts(root / f"in{point}", sessions, turns, tag)
            if point:
                transcripts(root / f"in{point - 1}", sessions, turns + 5, f"p{point - 1}x")
            args = ["ingest", str(src)] + ([str(root / f"in{point - 1}")] if point else [])
        else:
            ack_ingest(curatable(root / f"cur{point}", 8, tag=tag),
                       {f"{tag}{i}-m{t}" for i in range(8) for t in (1, 2)})
            args = ["curate"]
        proc = memctl_popen(["--vault", str(vault), *args])
        at_git = point % 3 == 2
        after = None if at_git else rnd.uniform(0.05, max(0.1, base * 1.2))
        hit = kill_when(proc, lock.exists if at_git else None, after=after, timeout=300)
        if hit:
            killed += 1
            git_phase += at_git
            # where the kill landed: before any write, while writing (a journal is open)
            journal = vault / ".memctl" / "journal"
            writing = journal.is_dir() and any(d.is_dir() for d in journal.iterdir())
            phases["git" if lock.exists() else "writing" if writing else "before writing"] += 1
        else:
            finished += 1
            if kind == "ingest" and proc.returncode == 0:
                acknowledged.update(_ids_of(src) | (_ids_of(root / f"in{point - 1}")
                                                    if point else set()))
        # the next command, whatever it is, recovers
        r = _memctl(vault, "status")
        if r.returncode != 0 or "Traceback" in r.stderr:
            failures.append(f"point {point}: status after the kill failed: {r.stderr.strip()}")
            break
        try:
            assert_healthy(vault)
            ids = head_turn_ids(vault)
            assert len(ids) == len(set(ids)), "a turn is in HEAD twice"
            lost = acknowledged - set(ids)
            assert not lost, f"{len(lost)} acknowledged turns missing, e.g. {sorted(lost)[:3]}"
            if kind == "curate":
                log = git(vault, "log", "--format=%s")
                assert "edited by hand" not in log, "the agent's output was taken for a human's"
                for note in note_files(vault):
                    lines = [x for x in note.read_text().splitlines() if x.startswith("- ")]
                    assert len(lines) == len(set(lines)), f"duplicated lines in {note.name}"
        except AssertionError as exc:
            failures.append(f"point {point} ({'git phase' if at_git else 'random'}): {exc}")
            break
    # finally everything once more, to completion: every turn in HEAD exactly once
    if not failures and kind == "ingest":
        for point in range(points):
            ack_ingest(root / f"in{point}", _ids_of(root / f"in{point}"))
        ids = head_turn_ids(vault)
        if sorted(ids) != sorted(acknowledged):
            failures.append("after re-running every ingest, HEAD's turns differ from the input")
    return {"kind": kind, "points": points, "killed": killed, "git_phase": git_phase,
            "finished_first": finished, "failures": failures, "phases": phases,
            "acknowledged_turns": len(acknowledged), "lost": 0 if not failures else None}


def _ids_of(folder: Path) -> set[str]:
    out = set()
    for f in folder.glob("*.jsonl"):
        for line in f.read_text().splitlines():
            if line.strip():
                out.add(json.loads(line)["id"])
    return out


def _memctl(vault: Path, *args: str) -> subprocess.CompletedProcess[str]:
    r = memctl("--vault", vault, *args, timeout=600)
    return subprocess.CompletedProcess(["memctl", *args], r.code, r.out, r.err)


def _where_killed(vault: Path) -> str:
    journal = vault / ".memctl" / "journal"
    if (vault / ".git" / "index.lock").exists():
        return "git"
    if journal.is_dir() and any(d.is_dir() for d in journal.iterdir()):
        return "writing"
    return "before writing"


def _forget_points(root: Path, points: int, seed: int) -> dict[str, object]:
    """forget killed at `points` random moments: each time a whole session or one turn
    (which renames the session's file, its first words being forgotten).

    After the next command, what was being forgotten is either gone everywhere (working
    tree and HEAD: its file or words, and every citation of them, in one forget commit on
    top of the commit before) or all still there (HEAD and the tree as before); never half.
    No acknowledged turn that was not being forgotten is lost, none is there twice.
    """
    import random

    rnd = random.Random(seed)
    vault = root / "forget-vault"
    ok("init", vault)
    n = points + 1
    src = curatable(root / "forget-src", n, tag="f")
    failures: list[str] = []
    r = _memctl(vault, "ingest", str(src), "--user", "dana", "--scope", "team")
    if r.returncode != 0 or _memctl(vault, "curate").returncode != 0:
        return {"kind": "forget", "points": points, "failures": [f"setup failed: {r.stderr}"]}
    acknowledged = {f"f{i}-m{t}" for i in range(n) for t in (1, 2)}

    def raw_of(i: int) -> str:
        for name in git(vault, "ls-tree", "-r", "--name-only", "HEAD", "raw/").split():
            if not name.endswith("INDEX.md") and f"f{i}-m2" in git(vault, "show", f"HEAD:{name}"):
                return name
        raise AssertionError(f"session f{i} is not in HEAD")

    def cited(rel: str, turn: str = "") -> bool:
        """Does any file of HEAD other than the session itself cite `rel` (`#tN`)?"""
        r = subprocess.run(["git", "-C", str(vault), "grep", "-F", "-l", "-e", rel + turn,
                            "HEAD", "--", ".", ":!raw/20*"],
                           capture_output=True, text=True, check=False)
        return bool(r.stdout.strip())

    # one whole forget first: how long one takes, to spread the kill moments over it
    start = time.monotonic()
    r = _memctl(vault, "forget", raw_of(points))
    base = time.monotonic() - start
    if r.returncode != 0:
        failures.append(f"an uninterrupted forget failed: {r.stderr.strip()}")
    acknowledged -= {f"f{points}-m1", f"f{points}-m2"}
    killed = finished = git_phase = 0
    phases = {"before writing": 0, "writing": 0, "git": 0}
    outcomes = {"gone": 0, "kept": 0}
    for point in range(points if not failures else 0):
        whole = point % 2 == 0
        rel = raw_of(point)
        ref = rel if whole else f"{rel}#t1"
        forgotten = {f"f{point}-m1", f"f{point}-m2"} if whole else {f"f{point}-m1"}
        before = git(vault, "rev-parse", "HEAD").strip()
        before_tree = git(vault, "rev-parse", "HEAD^{tree}").strip()
        at_git = point % 3 == 2
        lock = vault / ".git" / "index.lock"
        proc = memctl_popen(["--vault", str(vault), "forget", ref])
        after = None if at_git else rnd.uniform(0.05, max(0.1, base * 1.2))
        if kill_when(proc, lock.exists if at_git else None, after=after, timeout=300):
            killed += 1
            git_phase += at_git
            phases[_where_killed(vault)] += 1
        else:
            finished += 1
            if proc.returncode != 0:
                failures.append(f"point {point}: forget failed: {proc.stderr.read().decode()}")
                break
        r = _memctl(vault, "status")
        if r.returncode != 0 or "Traceback" in r.stderr:
            failures.append(f"point {point}: status after the kill failed: {r.stderr.strip()}")
            break
        try:
            assert_healthy(vault)
            head = git(vault, "rev-parse", "HEAD").strip()
            ids = head_turn_ids(vault)
            if head == before:
                assert git(vault, "rev-parse", "HEAD^{tree}").strip() == before_tree
                assert forgotten <= set(ids), "kept, but some of its turns are not in HEAD"
                outcomes["kept"] += 1
            else:
                assert git(vault, "rev-parse", "HEAD^").strip() == before, "not one commit"
                assert git(vault, "log", "-1", "--format=%s").startswith("forget:")
                assert not forgotten & set(ids), "forgotten, but a turn of it is in HEAD"
                if whole:
                    names = git(vault, "ls-tree", "-r", "--name-only", "HEAD").split()
                    assert rel not in names, "forgotten, but its file is in HEAD"
                    assert not cited(rel), "forgotten, but a file of HEAD still cites it"
                else:
                    now = raw_of(point)  # renamed when its first words went
                    assert not cited(rel, "#t1") and not cited(now, "#t1"), \
                        "forgotten, but its turn is still cited"
                    assert f"f{point}-m2" in ids, "a turn that was not forgotten went too"
                acknowledged -= forgotten
                outcomes["gone"] += 1
            assert len(ids) == len(set(ids)), "a turn is in HEAD twice"
            lost = acknowledged - set(ids)
            assert not lost, f"{len(lost)} acknowledged turns missing, e.g. {sorted(lost)[:3]}"
        except AssertionError as exc:
            failures.append(f"point {point} ({'git phase' if at_git else 'random'}, "
                            f"{'session' if whole else 'turn'}): {exc}")
            break
    return {"kind": "forget", "points": points, "killed": killed, "git_phase": git_phase,
            "finished_first": finished, "failures": failures, "phases": phases,
            "outcomes": outcomes, "acknowledged_turns": len(acknowledged),
            "lost": 0 if not failures else None}


def _claims(vault: Path, rev: str = "HEAD") -> set[tuple[str, str]]:
    """(note, claim line less its citations) of every note of `rev`."""
    out = set()
    for name in git(vault, "ls-tree", "-r", "--name-only", rev).split():
        if name.startswith(("raw/", ".")) or not name.endswith(".md") or name.endswith("INDEX.md"):
            continue
        out |= {(name, _CITES.sub("", x)) for x in git(vault, "show", f"{rev}:{name}").splitlines()
                if x.startswith("- ")}
    return out


_CITES = re.compile(r"(\s*\[\^[^\]]+\])+\s*$")  # a merge folds two lines' citations into one


def _sync_points(root: Path, points: int, seed: int) -> dict[str, object]:
    """sync killed at `points` moments (a third of them mid-rebase, while git runs memctl's
    merge drivers), both clones having curated into the same notes since the last sync.

    After the next command: git status clean, no rebase left, on the branch, no driver temp
    files, every note parses; every claim the victim had committed is still in its HEAD and
    every turn it had is there once; a sync run to the end then holds both sides' new claims.
    """
    import random

    rnd = random.Random(seed)
    remote = root / "remote.git"
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)  # git's default
    a, b = root / "a", root / "b"
    failures: list[str] = []
    ok("init", a)
    git(a, "remote", "add", "origin", str(remote))
    _memctl(a, "ingest", str(curatable(root / "seed", 3, tag="seed")), "--user", "dana",
            "--scope", "team")
    _memctl(a, "curate")
    r = _memctl(a, "sync")
    branch = git(a, "rev-parse", "--abbrev-ref", "HEAD").strip()
    subprocess.run(["git", "clone", "-q", "-b", branch, str(remote), str(b)], check=True,
                   capture_output=True)
    r2 = _memctl(b, "init")
    if r.returncode or r2.returncode:
        return {"kind": "sync", "points": points, "failures": [f"setup: {r.stderr}{r2.stderr}"]}
    rebasing = a / ".git" / "rebase-merge"
    killed = finished = git_phase = 0
    phases = {"before writing": 0, "writing": 0, "git": 0}
    start = time.monotonic()
    for point in range(points):
        # both curate the same organisations (same notes) from sessions of their own
        theirs_before = _claims(b)
        for v, who in ((b, "marco"), (a, "dana")):
            src = curatable(root / f"{who}{point}", 2, tag=f"{who[0]}{point}x")
            _memctl(v, "ingest", str(src), "--user", who, "--scope", "team")
            _memctl(v, "curate")
            if v is b:
                t0 = time.monotonic()
                r = _memctl(b, "sync")
                # a's sync below does the same work (fetch, rebase, push): its kill time is
                # drawn within this one's length, so a fast machine cannot outrun every kill
                span = time.monotonic() - t0
                if r.returncode:
                    failures.append(f"point {point}: the other clone's sync failed: {r.stderr}")
                    break
        if failures:
            break
        mine, turns = _claims(a), set(head_turn_ids(a))
        theirs = _claims(b) - theirs_before  # what the other clone learned and pushed
        mid = point % 3 == 2
        proc = memctl_popen(["--vault", str(a), "sync"])
        after = None if mid else rnd.uniform(0.05, max(0.1, 0.8 * span))
        if kill_when(proc, rebasing.exists if mid else None, after=after, timeout=300):
            killed += 1
            git_phase += rebasing.exists()
            phases["git" if rebasing.exists() else _where_killed(a)] += 1
        else:
            finished += 1
        r = _memctl(a, "status")
        try:
            assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
            assert not rebasing.exists() and not (a / ".git" / "rebase-apply").exists(), \
                "a rebase was left in progress"
            assert git(a, "rev-parse", "--abbrev-ref", "HEAD").strip() == branch, "off branch"
            assert not list(a.glob(".merge_file_*")), "merge driver temp files left"
            assert_healthy(a)
            assert mine <= _claims(a), f"claims lost: {sorted(mine - _claims(a))[:2]}"
            assert turns <= set(head_turn_ids(a)), "turns lost"
            r = _memctl(a, "sync")
            assert r.returncode == 0, f"the sync after recovery failed: {r.stderr}"
            gone = (mine | theirs) - _claims(a)
            assert not gone, f"a claim of either side is missing: {sorted(gone)[:3]}"
            assert_healthy(a)
        except AssertionError as exc:
            failures.append(f"point {point} ({'mid-rebase' if mid else 'random'}): {exc}")
            break
    return {"kind": "sync", "points": points, "killed": killed, "git_phase": git_phase,
            "finished_first": finished, "failures": failures, "phases": phases,
            "seconds": round(time.monotonic() - start, 1), "lost": 0 if not failures else None}


# ---- purge, undo, rollback, gc -----------------------------------------------------


def _all_objects(vault: Path) -> str:
    """Every object git holds, reachable or not, and every commit message of every ref."""
    objs = subprocess.run(["git", "-C", str(vault), "cat-file", "--batch-all-objects", "--batch"],
                          capture_output=True, check=False).stdout.decode("utf-8", "replace")
    return objs + git(vault, "log", "--all", "--format=%B")


def _memctl_files(vault: Path) -> str:
    """What memctl keeps beside the files (journal, purge record, caches), as text."""
    out = []
    for p in (vault / ".memctl").rglob("*"):
        if p.is_file() and "index" not in p.relative_to(vault / ".memctl").parts[:1]:
            out.append(p.read_bytes().decode("utf-8", "replace"))
    return "\n".join(out)


def _raw_with(vault: Path, needle: str) -> str | None:
    for name in git(vault, "ls-tree", "-r", "--name-only", "HEAD", "raw/").split():
        if not name.endswith("INDEX.md") and needle in git(vault, "show", f"HEAD:{name}"):
            return name
    return None


def _op_points(root: Path, kind: str, points: int, seed: int) -> dict[str, object]:
    """`kind` (purge, undo, rollback or gc) killed at `points` moments, each checked.

    Each point first gives the command something to do (new sessions, curated), records
    HEAD, runs the command and SIGKILLs it at a random moment (every third point at the
    moment that matters most: purge once its forget commit landed and the rewrite runs, undo
    once `git revert` has staged its changes, rollback and gc once git holds its index lock).
    After the next command: the vault is healthy (status clean, fsck clean, no journal),
    the command is done whole (one commit on top of HEAD before, of that command) or not at
    all (HEAD and its tree as before), and no acknowledged turn it was not removing is lost.
    A purge done leaves the forgotten words in no object, message or memctl file.
    """
    import random

    rnd = random.Random(seed)
    vault = root / f"{kind}-vault"
    ok("init", vault)
    if kind == "gc":
        cfg = vault / ".memctl" / "config.toml"
        cfg.write_text(cfg.read_text() + '\n[retention]\nraw_max_age = "30d"\n')
        git(vault, "-c", "user.name=Dana", "-c", "user.email=dana@example.com", "commit",
            "-qam", "retention: 30 days")
    failures: list[str] = []
    acknowledged: set[str] = set()
    lock = vault / ".git" / "index.lock"
    journal = vault / ".memctl" / "journal"
    purge_rec = journal / "purge.json"
    killed = finished = at_phase = 0
    outcomes = {"done": 0, "not done": 0}
    prefix = {"purge": "forget:", "undo": "undo:", "rollback": "rollback:", "gc": "gc:"}[kind]

    def feed(point: int, n: int) -> Path:
        tag = f"{kind[0]}{point}x"
        src = curatable(root / f"src{point}", n, tag=tag)
        r = _memctl(vault, "ingest", str(src), "--user", "dana", "--scope", "team")
        c = _memctl(vault, "curate")
        if r.returncode != 0 or c.returncode != 0:
            failures.append(f"point {point}: setup failed: {r.stderr.strip()} {c.stderr.strip()}")
        return src

    # purge: every point forgets one session of a pool ingested at the start
    if kind == "purge":
        pool = curatable(root / "pool", points + 1, tag="f")
        _memctl(vault, "ingest", str(pool), "--user", "dana", "--scope", "team")
        _memctl(vault, "curate")
        acknowledged = {f"f{i}-m{t}" for i in range(points + 1) for t in (1, 2)}

    def args_for(point: int) -> tuple[list[str], set[str]]:
        """The command, and the acknowledged turn ids it removes if it is done."""
        if kind == "purge":
            rel = _raw_with(vault, f"f{point}-m2")
            assert rel is not None
            return ["forget", rel, "--purge"], {f"f{point}-m1", f"f{point}-m2"}
        if kind == "undo":
            feed(point, 2)
            acknowledged.update(f"u{point}x{i}-m{t}" for i in range(2) for t in (1, 2))
            return ["undo"], set()
        if kind == "rollback":
            feed(point, 2)
            acknowledged.update(f"r{point}x{i}-m{t}" for i in range(2) for t in (1, 2))
            changed = [p for p in git(vault, "show", "--name-only", "--format=", "HEAD").split()
                       if p.endswith(".md") and not p.startswith("raw/")
                       and not p.endswith("INDEX.md")]
            return ["rollback", sorted(changed)[0], "--to", "HEAD~1"], set()
        feed(point, 2)  # gc: these sessions are months old, so past 30 days
        ids = {f"g{point}x{i}-m{t}" for i in range(2) for t in (1, 2)}
        return ["gc", "--apply"], ids

    # one uninterrupted run first, to spread the kill moments over its length
    args, _ = args_for(points)
    start = time.monotonic()
    r = _memctl(vault, *args)
    base = time.monotonic() - start
    if r.returncode != 0:
        failures.append(f"an uninterrupted {kind} failed: {r.stderr.strip()}")
    if kind == "purge":
        acknowledged -= {f"f{points}-m1", f"f{points}-m2"}

    def phase() -> bool:
        if kind == "purge":
            return purge_rec.exists() and git(vault, "rev-parse", "HEAD").strip() != before
        if kind == "undo":
            return (vault / ".git" / "REVERT_HEAD").exists()
        return lock.exists()

    for point in range(points if not failures else 0):
        try:
            args, removes = args_for(point)
        except AssertionError:
            failures.append(f"point {point}: nothing to {kind}")
            break
        if failures:
            break
        before = _head(vault)
        before_tree = git(vault, "rev-parse", "HEAD^{tree}").strip()
        at = point % 3 == 2
        proc = memctl_popen(["--vault", str(vault), *args])
        # within the uninterrupted run's time: these commands take a fraction of a second,
        # and past 1.2x of it a faster machine (or warm caches) finishes before the kill
        after = None if at else rnd.uniform(0.02, max(0.05, base * 0.8))
        if kill_when(proc, phase if at else None, after=after, timeout=300):
            killed += 1
            at_phase += at
        else:
            finished += 1
            if proc.returncode != 0:
                failures.append(f"point {point}: {kind} failed: {proc.stderr.read().decode()}")
                break
        r = _memctl(vault, "status")
        if r.returncode != 0 or "Traceback" in r.stderr:
            failures.append(f"point {point}: status after the kill failed: {r.stderr.strip()}")
            break
        try:
            assert_healthy(vault)
            assert not purge_rec.exists(), f"a purge record survived the next command: {r.stderr}"
            for op in ("REVERT_HEAD", "MERGE_HEAD", "CHERRY_PICK_HEAD", "sequencer"):
                assert not (vault / ".git" / op).exists(), f"a git {op} is left in progress"
            head = _head(vault)
            ids = head_turn_ids(vault)
            if head == before:
                assert git(vault, "rev-parse", "HEAD^{tree}").strip() == before_tree, \
                    "HEAD is where it was, but its tree is not"
                outcomes["not done"] += 1
            else:
                subject = git(vault, "log", "-1", "--format=%s")
                if kind == "purge":  # history rewritten: HEAD^ is the old HEAD, rewritten
                    assert subject.startswith(prefix), f"HEAD is {subject!r}"
                    assert int(git(vault, "rev-list", "--count", "HEAD")) == \
                        int(_count(vault, before)) + 1, "not one commit on top"
                    held = _all_objects(vault)
                    for tid in removes:  # the session's turns are only in its raw file
                        assert f'"{tid}"' not in held, "purged, but git still holds the session"
                        assert f'"{tid}"' not in _memctl_files(vault), \
                            "purged, but a memctl file (journal, cache) still holds it"
                    assert not removes & set(ids), "purged, but a turn of it is in HEAD"
                else:
                    assert git(vault, "rev-parse", "HEAD^").strip() == before, "not one commit"
                    assert subject.startswith(prefix), f"HEAD is {subject!r}"
                acknowledged -= removes
                outcomes["done"] += 1
            assert len(ids) == len(set(ids)), "a turn is in HEAD twice"
            lost = acknowledged - set(ids)
            assert not lost, f"{len(lost)} acknowledged turns missing, e.g. {sorted(lost)[:3]}"
            assert "edited by hand" not in git(vault, "log", "--format=%s"), \
                "memctl's own output was taken for a human's"
        except AssertionError as exc:
            failures.append(f"point {point} ({'phase' if at else 'random'}): {exc}")
            break
    return {"kind": kind, "points": points, "killed": killed, "git_phase": at_phase,
            "finished_first": finished, "failures": failures,
            "phases": {"before writing": 0, "writing": 0, "git": at_phase},
            "outcomes": outcomes, "acknowledged_turns": len(acknowledged),
            "lost": 0 if not failures else None}


_BEFORE_COUNTS: dict[str, int] = {}


def _head(vault: Path) -> str:
    sha = git(vault, "rev-parse", "HEAD").strip()
    _BEFORE_COUNTS[sha] = int(git(vault, "rev-list", "--count", "HEAD"))
    return sha


def _count(vault: Path, sha: str) -> int:
    """How many commits HEAD had when it was `sha` (a purge rewrites the ids after)."""
    return _BEFORE_COUNTS[sha]
