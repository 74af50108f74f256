"""The Claude Code hook handlers: JSON in on stdin, Claude Code's hook JSON out on stdout.

A hook must never stand between the user and their prompt. Every handler here catches
everything: on any failure it returns no output (exit status 0, so Claude Code carries on
as if there were no hook) and appends one line to the vault's hook log,
`.memctl/cache/hooks.log` (the cache folder is git-ignored in every vault, so the log never
shows up as an uncommitted change), or to stderr when there is no vault to log into.

- `session-start`: the `memctl context` block, as SessionStart additionalContext.
- `user-prompt-submit`: `memctl recall` for the prompt, as UserPromptSubmit additionalContext.
- `stop` (Stop and SessionEnd): hands the payload to a detached `memctl hook stop --worker`
  and returns at once; the worker ingests the session's transcript file and then curates,
  each store in its configured mode. Once per session a Stop is held back
  (`decision: block`) with a request that the agent record the session's decisions
  (`memctl.curate.agentic`).
- `pre-compact` (PreCompact): the same worker, and the ask armed for the next Stop.

Imports stay inside the functions: this module is on the path of every prompt.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from memctl.requests import IngestRequest, RecallRequest

LOG_REL = ".memctl/cache/hooks.log"
# Failures of the detached Stop worker, waiting to be shown: the worker has no terminal, so
# the next hook that Claude Code runs (any of them) shows them to the user as its
# systemMessage and clears the file. `memctl doctor` lists them too.
LOG_MAX_BYTES = 1_000_000  # past this the log keeps its newer half
EVENT_NAMES = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "stop": "Stop",
    "pre-compact": "PreCompact",
}


@dataclass
class HookOutcome:
    """What the CLI should print (maybe nothing) and what was logged."""

    stdout: str = ""
    logged: str | None = None
    late: bool = False  # the work outran its deadline and is still running: exit at once


T = TypeVar("T")

# Claude Code gives a hook 10 s (memctl installs it so); the answer goes out before that,
# with memory or with a line saying why not. MEMCTL_HOOK_DEADLINE overrides (seconds).
DEADLINE = 8.0


class _Late(Exception):
    pass


def _within(seconds: float, work: Callable[[], T]) -> T:
    """`work()`, or _Late once `seconds` passed (the work goes on in a daemon thread)."""
    import threading

    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = work()
        except BaseException as exc:  # handed to the caller as it is
            box["error"] = exc

    t = threading.Thread(target=run, name="memctl-hook", daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        raise _Late
    if "error" in box:
        raise box["error"]
    return box["value"]  # type: ignore[no-any-return]


def deadline(env: Mapping[str, str]) -> float:
    """The prompt hooks' deadline in seconds: MEMCTL_HOOK_DEADLINE, else DEADLINE."""
    try:
        return float(env.get("MEMCTL_HOOK_DEADLINE") or DEADLINE)
    except ValueError:
        return DEADLINE


def late(root: Path | None, name: str, limit: float) -> HookOutcome:
    """The answer of a prompt hook whose recall outran its deadline: no memory, and why."""
    why = f"{'recall' if name == 'user-prompt-submit' else 'context'} took over {limit:g}s"
    line = log(root, name, f"failed: {why}; answered without memory")
    alert = take_alerts(root)
    note = f"memctl: {why}, so this prompt has no memory; `memctl doctor` checks the vault"
    return HookOutcome(stdout=_alert_json(alert + ("\n" if alert else "") + note),
                       logged=line, late=True)  # fmt: skip


def root_of(raw: bytes | str, vault_path: str | None, env: Mapping[str, str]) -> Path | None:
    """The vault a hook's input and flags name, or None (never raises)."""
    try:
        return _vault_root(_payload(raw), vault_path, env)
    except Exception:  # a bad payload: the flag, env and cwd may still name it
        with contextlib.suppress(Exception):
            return _vault_root({}, vault_path, env)
    return None


def _vault_root(
    payload: Mapping[str, Any], vault_path: str | None, env: Mapping[str, str]
) -> Path | None:
    """The vault: --vault, then MEMCTL_VAULT, then walking up from the session's cwd."""
    from memctl.vault import find_root

    for cand in (vault_path, env.get("MEMCTL_VAULT")):
        if cand:
            p = Path(cand).expanduser()
            return p.resolve() if (p / ".memctl").is_dir() else None
    cwd = payload.get("cwd")
    for start in (Path(cwd) if isinstance(cwd, str) and cwd else None, Path.cwd()):
        if start is not None and start.is_dir():
            found = find_root(start)
            if found is not None:
                return found
    return None


def log(root: Path | None, event: str, message: str) -> str:
    """Append one line to the hook log (or stderr); never raises."""
    line = f"{time.strftime('%Y-%m-%dT%H:%M:%S%z')} {event} {' '.join(message.split())}\n"
    try:
        if root is None:
            raise OSError("no vault")
        path = root / LOG_REL
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists() and path.stat().st_size > LOG_MAX_BYTES:
            tail = path.read_bytes()[-LOG_MAX_BYTES // 2 :]
            path.write_bytes(tail[tail.find(b"\n") + 1 :])
        with path.open("a", encoding="utf-8") as fh:
            fh.write(line)
    except OSError:
        # a hook must not fail because stderr is closed either
        with contextlib.suppress(Exception):
            sys.stderr.write(f"memctl hook: {line}")
    return line.strip()


def log_lines(root: Path, failures: bool = False) -> list[str]:
    """The hook log's lines, oldest first; `failures`: only the runs that failed."""
    try:
        text = (root / LOG_REL).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    lines = [line for line in text.splitlines() if line.strip()]
    return [line for line in lines if is_failure(line)] if failures else lines


def is_failure(line: str) -> bool:
    """A log line that says a hook failed (the log's other lines are what hooks did)."""
    parts = line.split(" ", 2)
    return len(parts) == 3 and parts[2].startswith("failed: ")


def _payload(raw: bytes | str) -> dict[str, Any]:
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    if not text.strip():
        return {}
    data = json.loads(text)
    if not isinstance(data, dict):
        raise ValueError("hook input is not a JSON object")
    return data


def _context_json(event: str, text: str, alert: str = "") -> str:
    if not text.strip():
        return _alert_json(alert)
    out: dict[str, Any] = {
        "hookSpecificOutput": {"hookEventName": event, "additionalContext": text}
    }
    if alert:
        out["systemMessage"] = alert
    return json.dumps(out, ensure_ascii=False) + "\n"


def _alert_json(alert: str) -> str:
    return json.dumps({"systemMessage": alert}, ensure_ascii=False) + "\n" if alert else ""


def _alert(root: Path, message: str) -> None:
    """Keep a Stop worker's failure for the next hook to show; never raises."""
    line = f"{time.strftime('%Y-%m-%d %H:%M')} {' '.join(message.split())}\n"
    from memctl.vault import HOOK_ALERTS_REL

    with contextlib.suppress(OSError):
        path = root / HOOK_ALERTS_REL
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as fh:
            fh.write(line)


def _joined(alert: str, said: list[str]) -> str:
    """The waiting alerts and this run's notices, as one systemMessage (or "")."""
    lines = [alert] if alert else []
    lines += [f"memctl: {line}" for line in dict.fromkeys(said)]
    return "\n".join(lines)


def take_alerts(root: Path | None) -> str:
    """The waiting Stop-worker failures as one message (and forget them), or ""."""
    if root is None or not (root / ".memctl" / "cache").is_dir():
        return ""
    from memctl.vault import HOOK_ALERTS_REL  # only a vault that has a cache can hold alerts

    path = root / HOOK_ALERTS_REL
    try:
        lines = [ln for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]
        path.unlink()
    except OSError:
        return ""
    if not lines:
        return ""
    more = f" (and {len(lines) - 1} earlier)" if len(lines) > 1 else ""
    return f"memctl: {lines[-1]}{more}; details in {LOG_REL}, `memctl doctor` checks the vault"


# `memctl serve` answers every prompt of a session in one process: the name `git config
# user.name` gives is kept while the files git reads it from are unchanged, for at most
# _NAME_TTL seconds (an included file is not watched), instead of a git process per prompt.
_NAME_TTL = 30.0
_names: dict[tuple[Any, ...], tuple[float, tuple[str, str]]] = {}


def _whoami(vault: Any, env: Mapping[str, str]) -> tuple[str, str]:
    if vault.config.user:
        return vault.whoami()
    home = Path(env.get("HOME") or "~").expanduser()
    xdg = Path(env.get("XDG_CONFIG_HOME") or home / ".config")
    files = [home / ".gitconfig", xdg / "git" / "config", vault.root / ".git" / "config",
             Path("/etc/gitconfig"), Path(env.get("GIT_CONFIG_GLOBAL") or home / ".gitconfig")]
    stats: list[tuple[int, int] | None] = []
    for f in files:
        try:
            st = f.stat()
            stats.append((st.st_mtime_ns, st.st_size))
        except OSError:
            stats.append(None)
    git_env = tuple(sorted((k, v) for k, v in env.items() if k.startswith("GIT_")))
    login = (env.get("USER"), env.get("LOGNAME"))  # the login name, the last resort
    key = (str(vault.root), str(home), str(xdg), git_env, tuple(stats), login)
    now = time.monotonic()
    kept = _names.get(key)
    if kept is not None and now - kept[0] < _NAME_TTL:
        return kept[1]
    got = vault.whoami()
    if len(_names) > 64:
        _names.clear()
    _names[key] = (now, got)
    return got


def handle(
    name: str,
    raw: bytes | str,
    *,
    vault_path: str | None = None,
    user: str | None = None,
    env: Mapping[str, str] | None = None,
    worker: bool = False,
) -> HookOutcome:
    """Run one hook; whatever happens, the caller exits 0 and prints `stdout`."""
    env = dict(os.environ) if env is None else env
    root: Path | None = None
    try:
        try:
            payload = _payload(raw)
        except ValueError:
            # find the vault anyway (flag, env, cwd) so the failure lands in its log
            root = _vault_root({}, vault_path, env)
            raise
        root = _vault_root(payload, vault_path, env)
        if root is None:
            return HookOutcome(logged=log(None, name, "no memctl vault found; nothing to do"))
        if name == "stop":
            if worker:
                return HookOutcome(logged=_stop_work(root, payload, user, env))
            alert = take_alerts(root)
            spawned = _spawn_stop(root, raw, user)
            try:
                from memctl.vault import agent_ask

                ask = agent_ask(root, payload, env)
            except Exception as exc:  # the ask is a nicety: the session is saved regardless
                ask = None
                spawned = log(root, name, f"failed: asking the agent: {type(exc).__name__}: {exc}")
            if ask is not None:
                held = {"decision": "block", "reason": ask}
                if alert:
                    held["systemMessage"] = alert
                sid = payload["session_id"]
                line = log(root, name, f"asked the agent to record {sid}'s decisions")
                return HookOutcome(stdout=json.dumps(held, ensure_ascii=False) + "\n", logged=line)
            return HookOutcome(stdout=_alert_json(alert), logged=spawned)
        if name == "pre-compact":
            logged = _pre_compact(root, raw, payload, user)
            return HookOutcome(stdout=_alert_json(take_alerts(root)), logged=logged)
        from memctl.vault import Vault

        if Vault.recall_off(env):
            return HookOutcome()
        if name not in ("session-start", "user-prompt-submit"):
            return HookOutcome(logged=log(root, name, f"unknown hook {name!r}"))
        prompt = payload.get("prompt")
        if name == "user-prompt-submit" and (
            not isinstance(prompt, str) or not prompt.strip() or prompt.lstrip().startswith("/")
        ):
            return HookOutcome()  # nothing to recall for, or a slash command
        here = root
        cwd = payload.get("cwd")
        project = cwd if isinstance(cwd, str) and cwd else None  # its project note stands

        said: list[str] = []  # what the vault did on the user's behalf (a git pull followed)

        def work() -> str:
            vault = Vault.open(here, env=dict(env), one_shot=True, notice=said.append)
            who, source = (user, None) if user else _whoami(vault, env)
            if name == "session-start":
                return vault.context(user=who, project=project, user_from=source).text
            sid = payload.get("session_id")
            live = sid if isinstance(sid, str) and sid else None  # its turns: in the context
            ask = RecallRequest(query=str(prompt), user=who, project=project, session=live)
            return vault.handle(ask).text

        limit = deadline(env)
        try:
            text = _within(limit, work)
        except _Late:
            return late(root, name, limit)
        return HookOutcome(
            stdout=_context_json(EVENT_NAMES[name], text, _joined(take_alerts(root), said))
        )
    except BaseException as exc:
        if isinstance(exc, KeyboardInterrupt | SystemExit):
            raise
        line = log(root, name, f"failed: {type(exc).__name__}: {exc}")
        if name == "stop" and worker and root is not None:
            _alert(root, f"saving the session failed: {exc}")
        return HookOutcome(logged=line, stdout=_alert_json(take_alerts(root)) if not worker else "")


def _pre_compact(
    root: Path, raw: bytes | str, payload: Mapping[str, Any], user: str | None
) -> str | None:
    """Claude Code is about to summarise the context: keep every turn (the Stop worker
    ingests the transcript now) and arm the ask, so the agent's next stop records what
    the session decided even if it was too short to be asked before."""
    from memctl.vault import agent_compacting

    session = agent_compacting(root, payload)
    if session is None:
        return log(root, "pre-compact", "no session_id in the hook input; nothing to do")
    _spawn_stop(root, raw, user)
    return log(root, "pre-compact", f"{session}: saving the transcript; the next stop asks")


def _spawn_stop(root: Path, raw: bytes | str, user: str | None) -> str | None:
    """Start the ingest+curate worker detached, so Claude Code is not kept waiting."""
    import subprocess

    cmd = [sys.executable, "-m", "memctl", "--vault", str(root), "hook", "stop", "--worker"]
    if user:
        cmd += ["--user", user]
    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # survives Claude Code closing the hook's process group
        close_fds=True,
    )
    assert proc.stdin is not None
    proc.stdin.write(data)
    proc.stdin.close()
    return None


def _stop_work(
    root: Path, payload: Mapping[str, Any], user: str | None, env: Mapping[str, str]
) -> str:
    """Ingest the session's transcript (new turns only), then curate in each store's mode."""
    from memctl.vault import Vault

    transcript = payload.get("transcript_path")
    session = payload.get("session_id")
    if not isinstance(transcript, str) or not transcript:
        return log(root, "stop", "no transcript_path in the hook input; nothing to ingest")
    path = Path(transcript).expanduser()
    if not path.is_file():
        return log(root, "stop", f"transcript {path} does not exist; nothing to ingest")
    said: list[str] = []
    vault = Vault.open(root, env=dict(env), one_shot=True, notice=said.append)
    res = vault.handle(IngestRequest(
        sources=[path],
        fmt="claude_code",
        user=user or vault.whoami()[0],  # the person SessionStart said the memory is for
        session=session if isinstance(session, str) and session else None,
        skip_bad_lines=True,  # one corrupt line must not stop every save of a live session
    ))
    told = _tell_bad_lines(root, path, res.bad_lines)
    if not res.changed:
        _keep(root, said)
        return told or log(root, "stop", f"{path.name}: no new turns")
    cur = vault.curate()
    _keep(root, said)
    unkept = _curation_unkept(cur, path.name, res.turns_added, _a_person_spoke(vault, res))
    if unkept and not told:  # a save that lost a line is the one thing to tell of it
        _alert(root, unkept)  # the person sees it on the next hook, once
    added = getattr(cur, "added", "?")
    return told or log(
        root,
        "stop",
        f"{path.name}: ingested {res.turns_added} turns; curated: {added} claims added, "
        f"commit {str(getattr(cur, 'commit', None))[:10]}",
    )


_BAD_LINES_REL = ".memctl/cache/hook-bad-lines"


def _tell_bad_lines(root: Path, path: Path, bad: Sequence[Any]) -> str | None:
    """A transcript line the Stop worker left out, told once: logged as a failure (doctor
    lists it) and kept as an alert the next hook (SessionStart) shows in one line."""
    seen_path = root / _BAD_LINES_REL
    try:
        seen = set(seen_path.read_text(encoding="utf-8").splitlines())
    except OSError:
        seen = set()
    new = [b for b in bad if f"{path}:{b.line}" not in seen]
    if not new:
        return None
    first = new[0]
    more = f" and {len(new) - 1} more line{'s' * (len(new) > 2)}" if len(new) > 1 else ""
    what = f"{path}:{first.line} ({first.message}){more}"
    with contextlib.suppress(OSError), seen_path.open("a", encoding="utf-8") as fh:
        fh.write("".join(f"{path}:{b.line}\n" for b in new))
    _alert(root, f"saving the session failed at {what}: left out, the turns around it are saved")
    return log(root, "stop", f"failed: could not read {what}; saved the turns around it")


def _keep(root: Path, said: list[str]) -> None:
    """The worker's notices (a pull it followed, settings held) for the next hook to show."""
    for line in dict.fromkeys(said):
        _alert(root, line)


def _a_person_spoke(vault: Any, res: Any) -> bool:
    """Do the turns this save added hold anything a person said? Only then is keeping
    nothing from them worth telling. True when a session cannot be read back: better one
    alert too many than one missed."""
    for change in res.changed:
        try:
            if vault.a_person_spoke(change):
                return True
        except Exception:
            return True
    return False


def _curation_unkept(cur: Any, name: str, turns: int, spoke: bool = True) -> str | None:
    """One line when curating a saved session kept nothing from what a person said, or
    refused claims; else None."""
    rejected = list(getattr(cur, "rejected", []) or [])
    kept = sum(int(getattr(cur, k, 0) or 0) for k in (
        "added", "reinforced", "updated", "superseded", "retracted", "resolved", "proposed",
        "noop"))
    if rejected:
        first = rejected[0]
        why = f"{getattr(first, 'reason', '')}".strip() or "not verified"
        more = f" (and {len(rejected) - 1} more)" if len(rejected) > 1 else ""
        return (f"curating {name} refused {len(rejected)} claim(s): {why}{more}; "
                f"{kept} kept; `memctl curate --dry-run` shows them")  # fmt: skip
    if kept == 0 and spoke and getattr(cur, "turns_read", None):
        return (f"curating {name} ({turns} new turns) kept no claim; "
                "`memctl curate --dry-run` shows what the curator saw")  # fmt: skip
    return None
