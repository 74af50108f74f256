"""Agentic mode: the agent running a session records what matters in it, once asked.

The curators read a session after the fact; the agent that ran it knows best what was
decided and why. So, once per session, memctl's Stop hook holds the agent back from
finishing and asks it to record the session's decisions with `remember` (the MCP tool, or
`memctl remember`): a claim and the person's words that support it, cited to this session.
memctl checks the words against the raw turns, so an agent can only record what a person
said there (or, marked as its own, what it concluded).

When it asks: at the first Stop once the session has `[remember] ask_after` human messages
(default 3), or at the first Stop after a compaction (PreCompact arms it: the context the
agent would record from is being summarised, while raw/ keeps every turn for `search`).
Never twice: the ask is claimed by creating a file under `.memctl/cache/agentic/`
(O_EXCL), so a second Stop, or a second process, finds it and stays silent. Never while
Claude Code is already continuing because of a Stop hook (`stop_hook_active`).
`[remember] ask = "off"` turns the ask off.

The same state remembers each session's transcript file, so a `remember` that cites this
session can ingest its newest turns first: the agent quotes what was just said.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STATE_REL = ".memctl/cache/agentic"
ASK_AFTER = 3  # human messages before a session is worth asking about
_HARNESS = ("<command-", "<local-command", "<bash-", "<ide_", "<system-reminder", "Caveat:")
_INTERRUPTED = "[Request interrupted"


@dataclass(frozen=True)
class AskConfig:
    """`[remember] ask` ("stop" or "off") and `ask_after` from the vault's config."""

    enabled: bool = True
    after: int = ASK_AFTER


def ask_config(data: Mapping[str, Any]) -> AskConfig:
    table = data.get("remember")
    if not isinstance(table, Mapping):
        return AskConfig()
    ask = table.get("ask", "stop")
    after = table.get("ask_after", ASK_AFTER)
    if type(after) is not int or after < 0:
        after = ASK_AFTER
    return AskConfig(ask != "off" and ask is not False, after)


def _state_dir(root: Path) -> Path:
    return root / STATE_REL


def _key(session: str) -> str:
    # a session id is whatever a transcript says: never a file name as it stands
    return hashlib.sha1(session.encode("utf-8", "surrogatepass")).hexdigest()


def _read(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def note_session(root: Path, session: str, transcript: str | None, **extra: Any) -> None:
    """Keep where a live session's transcript is (and any flags), for `remember` and Stop."""
    path = _state_dir(root) / f"{_key(session)}.json"
    data = _read(path)
    data["session"] = session
    if transcript:
        data["transcript"] = transcript
    data.update(extra)
    from memctl.core.store import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, json.dumps(data, ensure_ascii=False) + "\n", durable=False)


def session_state(root: Path, session: str) -> dict[str, Any]:
    return _read(_state_dir(root) / f"{_key(session)}.json")


def transcript_of(root: Path, session: str) -> Path | None:
    """The transcript file a hook saw for `session`, if it still exists."""
    t = session_state(root, session).get("transcript")
    if isinstance(t, str) and t:
        p = Path(t).expanduser()
        if p.is_file():
            return p
    return None


def claim_ask(root: Path, session: str) -> bool:
    """True for the one caller that gets to ask about `session`; False ever after."""
    path = _state_dir(root) / f"{_key(session)}.asked"
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return False
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(time.strftime("%Y-%m-%dT%H:%M:%S%z") + "\n")
    return True


def asked(root: Path, session: str) -> bool:
    return (_state_dir(root) / f"{_key(session)}.asked").exists()


def human_messages(transcript: Path, most: int) -> int:
    """How many messages a person typed in a Claude Code transcript (counting stops at `most`).

    Tool results come back as `user` lines but are not the person's words; harness markup
    (slash commands, caveats, interruptions) is not either.
    """
    n = 0
    try:
        with transcript.open("rb") as fh:
            for line in fh:
                if b'"user"' not in line:
                    continue
                with contextlib.suppress(ValueError):
                    obj = json.loads(line)
                    if isinstance(obj, dict) and _typed_by_a_person(obj):
                        n += 1
                        if n >= most:
                            return n
    except OSError:
        return n
    return n


def _typed_by_a_person(obj: dict[str, Any]) -> bool:
    if obj.get("type") != "user" or obj.get("isMeta") is True or obj.get("isSidechain") is True:
        return False
    msg = obj.get("message")
    content = msg.get("content") if isinstance(msg, dict) else None
    if isinstance(content, list):
        texts = [
            p.get("text", "")
            for p in content
            if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
        ]
        content = "\n".join(texts)
    if not isinstance(content, str) or not content.strip():
        return False
    text = content.lstrip()
    return not text.startswith(_HARNESS) and not text.startswith(_INTERRUPTED)


ASK = """\
memctl (asked once per session): before you finish, record the decisions made in this \
session in long-term memory, so the next session starts with them.

For each decision (what was chosen, and why; what was rejected), call the memctl MCP tool \
`remember` with:
- claim: one sentence in the third person, e.g. "The team chose pnpm over npm because its \
lockfile is smaller.";
- quote: the person's own words from one of their messages in this session that say it, \
copied exactly (memctl checks them against the transcript);
- source: "{session}";
- store: "decisions" (a standing preference or instruction: "profile"; a fact about the \
project: "knowledge").
Set own=true (and no quote) only for a conclusion of yours that no message states. Without \
the MCP server, run: memctl remember "<claim>" --quote "<words>" --source {session} \
--store decisions
Record only what was decided; if nothing was, say so in one line and stop. Do not record \
the same decision twice: memctl folds repeats, and replaces=<old claim> supersedes one \
that changed."""


def ask_text(session: str) -> str:
    return ASK.format(session=session)


def stop_ask(root: Path, payload: Mapping[str, Any], env: Mapping[str, str]) -> str | None:
    """The Stop hook's once-per-session request that the agent record its decisions, or
    None: not a Stop, already continuing for a Stop hook, asked before, or too early."""
    if payload.get("hook_event_name", "Stop") != "Stop" or payload.get("stop_hook_active"):
        return None  # SessionEnd cannot be held back; a continued stop is never held twice
    session = payload.get("session_id")
    transcript = payload.get("transcript_path")
    if not isinstance(session, str) or not session or not isinstance(transcript, str):
        return None
    if asked(root, session):
        return None
    state = session_state(root, session)
    if state.get("transcript") != transcript:
        note_session(root, session, transcript)
    from memctl.core.config import load_config

    cfg = ask_config(load_config(root, dict(env)).data)
    if not cfg.enabled:
        return None
    due = state.get("due") is True
    if not due and human_messages(Path(transcript).expanduser(), cfg.after) < cfg.after:
        return None
    if not claim_ask(root, session):
        return None  # another Stop got there first
    return ask_text(session)


def compacting(root: Path, payload: Mapping[str, Any]) -> str | None:
    """PreCompact: keep the transcript's path and arm the ask for the next Stop; the
    session's id, or None when the payload names none."""
    session = payload.get("session_id")
    transcript = payload.get("transcript_path")
    if not isinstance(session, str) or not session:
        return None
    note_session(root, session, transcript if isinstance(transcript, str) else None, due=True)
    return session
