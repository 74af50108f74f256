"""Memory for a Python agent loop: `recall` before the model call, `process(messages)` after.

    lm = LearningMachine("~/memory", user="dana")
    memory = lm.recall(prompt).text            # cited memories, within the token budget
    reply = call_the_model(system=memory, messages=messages)
    lm.process(messages + [reply])              # ingest what was said; curate in background

`process` writes the conversation verbatim as one raw session (new turns are appended, the
past is never rewritten) and then runs curation in a background thread, each store in its
configured mode, so the next `recall` can use what was learned. `remember` writes a single
claim on the agent's behalf, cited to the turn (or note) it comes from, or marked as the
agent's own; the MCP server's `remember` tool is this function.
"""

from __future__ import annotations

import io
import json
import threading
import uuid
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.requests import IngestRequest, RecallRequest, RememberRequest

if TYPE_CHECKING:
    from memctl.curate.remember import Remembered
    from memctl.recall import RecallResult
    from memctl.results import IngestResult
    from memctl.vault import Vault

KEEP_ROLES = ("user", "assistant")  # system prompts carry recalled memory: never re-ingest them


# ---- the loop ---------------------------------------------------------------------------------


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _content(value: Any) -> str:
    """OpenAI-style content: a string, or a list of parts whose text parts are kept."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for p in value:
            if isinstance(p, str):
                parts.append(p)
            elif isinstance(p, Mapping) and isinstance(p.get("text"), str):
                parts.append(p["text"])
        return "\n".join(parts)
    return "" if value is None else str(value)


class LearningMachine:
    """Long-term memory around a model call: recall before it, process after it."""

    def __init__(
        self,
        vault: Vault | str | Path,
        *,
        user: str | None = None,
        session: str | None = None,
        scope: str | None = None,
        budget: int | None = None,
        fmt: str = "md",
        curate: bool = True,
        background: bool = True,
    ) -> None:
        from memctl.vault import Vault

        self.vault = vault if isinstance(vault, Vault) else Vault.open(vault)
        self.user = (user or self.vault.default_user()).strip()
        self.session = session or f"lm-{uuid.uuid4().hex[:12]}"
        self.scope = scope
        self.budget = budget
        self.fmt = fmt
        self.curate = curate
        self.background = background
        self.errors: list[BaseException] = []
        self.last_curation: Any = None
        self._history: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._worker: threading.Thread | None = None
        self._again = False

    # -- before the model call ------------------------------------------------------------

    def recall(
        self,
        query: str,
        *,
        budget: int | None = None,
        fmt: str | None = None,
        history: bool = False,
        enabled: bool = True,
        now: datetime | None = None,
        project: str | None = None,
        session: str | None = None,
    ) -> RecallResult:
        """Cited memories for `query`, packed into the budget (`.text` goes in the prompt);
        `project`: the working directory, whose project note then stands; `session`: a
        session whose turns the model has already, left out of the answer."""
        return self.vault.handle(RecallRequest(
            query=query,
            user=self.user,
            budget=self.budget if budget is None else budget,
            fmt=fmt or self.fmt,
            history=history,
            enabled=enabled,
            now=now,
            project=project,
            session=session,
        ))

    def context(
        self,
        *,
        budget: int | None = None,
        fmt: str | None = None,
        enabled: bool = True,
        now: datetime | None = None,
    ) -> RecallResult:
        """The start-of-session block: profile, decisions, open threads, team knowledge."""
        return self.vault.context(
            user=self.user,
            budget=self.budget if budget is None else budget,
            fmt=fmt or self.fmt,
            enabled=enabled,
            now=now,
        )

    # -- after the model call -------------------------------------------------------------

    def _normalise(self, m: Mapping[str, Any]) -> dict[str, Any] | None:
        role = str(m.get("role") or "")
        if role not in KEEP_ROLES:
            return None
        out: dict[str, Any] = {"role": role, "content": _content(m.get("content"))}
        name = m.get("name") or (self.user if role == "user" else None)
        if name:
            out["name"] = str(name)
        if m.get("id"):
            out["id"] = str(m["id"])
        out["timestamp"] = str(m.get("timestamp") or _now())
        return out

    def _new_messages(self, messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        """The messages not seen before: the whole conversation or only its new part works."""
        kept = [(m, n) for m in messages if (n := self._normalise(m)) is not None]
        seen = self._history
        if len(kept) >= len(seen) and all(
            n["role"] == h["role"] and n["content"] == h["content"]
            for (_, n), h in zip(kept, seen, strict=False)
        ):
            return [n for _, n in kept[len(seen) :]]
        return [n for _, n in kept]

    def process(self, messages: Sequence[Mapping[str, Any]]) -> IngestResult | None:
        """Keep the conversation (verbatim, appended) and curate it in the background."""
        new = self._new_messages(messages)
        if not new:
            return None
        history = self._history + new
        data = "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in history)
        res = self.vault.handle(IngestRequest(
            sources=["-"],
            fmt="jsonl",
            user=self.user,
            scope=self.scope,
            session=self.session,
            stdin=io.BytesIO(data.encode("utf-8")),
        ))
        self._history = history
        if self.curate and res.changed:
            self._curate()
        return res

    def _curate(self) -> None:
        if not self.background:
            self.last_curation = self.vault.curate()
            return
        with self._lock:
            if self._worker is not None and self._worker.is_alive():
                self._again = True  # the running pass will go round once more
                return
            self._worker = threading.Thread(
                target=self._curate_loop, name="memctl-curate", daemon=False
            )
            self._worker.start()

    def _curate_loop(self) -> None:
        from memctl.vault import Vault

        # Its own Vault, so its own lock file descriptor: the flock then serialises this
        # thread against ingest in the caller's thread exactly as it does across processes.
        vault = Vault(self.vault.root, self.vault.config)
        while True:
            try:
                self.last_curation = vault.curate()
            except BaseException as exc:  # reported through .errors; the loop must not die
                self.errors.append(exc)
            with self._lock:
                if not self._again:
                    self._worker = None
                    return
                self._again = False

    def remember(
        self,
        claim: str,
        *,
        source: str | None = None,
        quote: str | None = None,
        store: str = "knowledge",
        note: str | None = None,
        section: str | None = None,
        scope: str = "user",
        own: bool = False,
        replaces: str | None = None,
        today: str | None = None,
    ) -> Remembered:
        """One claim into memory, cited (source + quote) or as the agent's own (own=True);
        `replaces`: the text of a claim of the same note that this one supersedes."""
        return self.vault.handle(RememberRequest(
            user=self.user,
            claim=claim,
            source=source,
            quote=quote,
            store=store,
            note=note,
            section=section,
            scope=scope,
            own=own,
            replaces=replaces,
            today=today,
        ))

    def wait(self, timeout: float | None = None) -> None:
        """Block until background curation is done (call before the program exits)."""
        worker = self._worker
        if worker is not None:
            worker.join(timeout)

    def close(self) -> None:
        self.wait()

    def __enter__(self) -> LearningMachine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
