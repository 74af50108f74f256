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
import re
import threading
import unicodedata
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.errors import InputError, MemctlError
from memctl.recall import AGENT_TAG

if TYPE_CHECKING:
    from memctl.recall import RecallResult
    from memctl.results import IngestResult
    from memctl.vault import Vault

MAX_CLAIM_CHARS = 600
MIN_QUOTE_CHARS = 8
KEEP_ROLES = ("user", "assistant")  # system prompts carry recalled memory: never re-ingest them
_HIDDEN = re.compile(r"<!--.*?-->", re.DOTALL)
# A section is a heading name: words, spaces and a little punctuation, never markup.
_SECTION = re.compile(r"[^\W_][\w .,'&()/+-]{0,59}")
_INVISIBLE = frozenset(("Cc", "Cf", "Co", "Cs", "Zl", "Zp"))


@dataclass(frozen=True)
class Remembered:
    """What `remember` wrote."""

    action: str  # added | reinforced | updated | noop | proposed
    path: str
    text: str
    basis: str  # stated | agent
    citations: list[dict[str, str]]
    commit: str | None
    notice: str | None = None  # why the claim was kept as the agent's own, when it was

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _scope_rank(scope: str) -> int:
    return {"global": 0, "team": 1}.get(scope, 2)


def remember(
    vault: Vault,
    user: str,
    claim: str,
    *,
    source: str | None = None,
    quote: str | None = None,
    store: str = "knowledge",
    note: str | None = None,
    section: str | None = None,
    scope: str = "user",
    own: bool = False,
    today: str | None = None,
) -> Remembered:
    """Merge one claim into memory through the curation engine's note code, in one commit."""
    from memctl.curate import engine
    from memctl.curate.merge import NoteSet, is_proposal
    from memctl.notes import parse_note
    from memctl.provenance import RawTurns, check, quote_in, squash
    from memctl.recall import visible_scopes
    from memctl.redact import redact
    from memctl.store import Transaction, read_text
    from memctl.version import __version__

    # Masked before anything else sees them: the claim and the note's title become a file
    # name, a commit subject and the answer the agent is shown.
    text = redact(" ".join(str(claim or "").split()))[0]
    note = redact(note)[0] if note else note
    if not text:
        raise InputError("remember needs the claim's text")
    if len(text) > MAX_CLAIM_CHARS:
        raise InputError(f"a claim is one line of at most {MAX_CLAIM_CHARS} characters")
    if "[^" in text:
        raise InputError("the claim text cannot contain footnote markers ([^...])")
    if "<!--" in text or "-->" in text or text.startswith("#") or _invisible(text):
        raise InputError(
            "a claim is one line of plain text: no HTML comments, headings or invisible characters"
        )
    specs = engine.load_specs(vault)
    spec = specs.get(store)
    if spec is None:
        raise InputError(f"no store {store!r}: configured stores are {', '.join(specs)}")
    if spec.config.mode == "off":
        raise InputError(f"store {store!r} is off; nothing is written to it")
    propose = spec.config.mode == "propose" or engine.forced_proposal(spec.config)
    scopes = visible_scopes(user)
    want = {"user": f"user:{user}", "private": f"user:{user}"}.get(scope, scope)
    if want not in scopes:
        raise InputError(f"scope must be 'user' (private to {user}), 'team' or 'global'")

    turns = RawTurns(vault.root)
    cites: list[tuple[str, str]] = []
    basis = "stated"
    notice = None
    named = None
    if source and not own:
        # every reference form show accepts (64628a#t3, a session id#tN, a note id)
        named = vault.resolve(source)
        if named.kind == "session":
            raise InputError(f"cite one turn of {named.path}: add #tN (e.g. {named.path}#t1)")
    if own:
        if source or quote:
            raise InputError("own=true means no source; give either a source or own=true")
        basis = "agent"
    elif not source:
        raise InputError(
            "cite where this comes from: source=raw/...md#tN (or a note path) with a verbatim "
            "quote, or set own=true to record it as the agent's own"
        )
    elif named is not None and named.kind == "turn":
        ref = named.text
        q = str(quote or "")
        if len(squash(q)) < MIN_QUOTE_CHARS:
            raise InputError(f"quote the turn verbatim (at least {MIN_QUOTE_CHARS} characters)")
        try:
            header, _ = turns.session(ref.split("#", 1)[0])
            msg = turns.turn(ref)
        except MemctlError as exc:
            raise InputError(exc.message) from None
        if header.scope not in scopes:
            raise InputError(f"{ref} is not visible to {user}")
        if _scope_rank(want) < _scope_rank(header.scope):
            raise InputError(
                f"{ref} is private ({header.scope}); a note citing it cannot be {want}: "
                "use scope='user'"
            )
        if msg.role != "user":
            raise InputError(
                f"{ref} is a {msg.role} turn; only what people said is cited (or use own=true)"
            )
        problem = check(turns, ref, q)
        if problem:
            raise InputError(problem)
        if not quote_in(q, _HIDDEN.sub(" ", msg.content)):
            # text a reader never sees is where prompt injections hide
            raise InputError(f"{ref}: the quote is inside a hidden HTML comment")
        notice = unsupported(text, q)
        if notice is None:
            cites.append((ref, q))
        else:
            basis = "agent"  # verbatim, but not what the claim says: not "stated" there
    else:
        assert named is not None
        rel = named.path
        if named.kind != "note":
            raise InputError(f"source {source!r} is neither a turn nor a note")
        target = vault.root / rel
        if not target.is_file() or rel.startswith("raw/"):
            raise InputError(f"source {source!r} is neither a turn raw/...md#tN nor a note")
        src = parse_note(read_text(target), rel)
        if src.scope not in scopes:
            raise InputError(f"{rel} is not visible to {user}")
        if _scope_rank(want) < _scope_rank(src.scope):
            raise InputError(f"{rel} is {src.scope}; a note built on it cannot be {want}")
        q = squash(str(quote or ""))
        if len(q) < MIN_QUOTE_CHARS:
            raise InputError("quote the claim of that note you are building on")
        found = next(
            (
                c
                for _, c in src.active_claims()
                if q in squash(c.text) or any(q in squash(ct.quote) for ct in src.citations(c))
            ),
            None,
        )
        if found is None:
            raise InputError(f"no active claim in {rel} contains that quote")
        for ct in src.citations(found):
            if ct.ref is not None and check(turns, ct.ref, ct.quote) is None:
                cites.append((ct.ref, ct.quote))
        if not cites:
            basis = "agent"  # built on a line a person wrote: it stays the agent's own reading
    if basis == "agent" and want in ("team", "global") and not _agent_may_share(vault):
        propose = True  # the agent's own reading reaches others only once a person accepts it

    day = today or datetime.now(UTC).date().isoformat()
    label = f"memctl remember ({user})"
    with vault.lock:
        notes = NoteSet(
            vault.root, {n: s.config.folder for n, s in specs.items()}, day, turns, label
        )
        title = (note or "").strip() or f"Remembered by {user}'s agent"
        target_note = notes.locate(store, want, title, None, propose, {})
        sec = _section_name(section, spec.sections)
        body = f"{text} {AGENT_TAG}" if basis == "agent" else text
        when = turns.date(cites[-1][0]) if cites else day
        outcome = notes.apply(
            target_note, sec, spec.sections, body, cites, False, "add", None, when or day
        )
        changed = notes.changed()
        commit = None
        if changed:
            tx = Transaction(vault.root)
            try:
                for path, content in changed.items():
                    tx.write(path, content)
                tx.write(f"{spec.config.folder}/INDEX.md", engine._store_index(vault, spec, notes))
                vault._refresh_indexes(tx)
                tx.flush()
                commit = vault.history.commit(
                    tx.touched,
                    f"remember: {text[:60]}" + ("…" if len(text) > 60 else ""),
                    {
                        "Memctl-Version": __version__,
                        "Memctl-Command": "remember",
                        "Memctl-User": user,
                        "Memctl-Source": ", ".join(r for r, _ in cites) or "agent",
                    },
                    author=vault.config.agent,
                )
                vault._after_write(tx.touched)
            except BaseException:
                tx.rollback()
                raise
    action = (
        "proposed" if is_proposal(target_note.path) and outcome.action != "noop" else outcome.action
    )
    return Remembered(
        action,
        target_note.path,
        text,
        basis,
        [{"ref": r, "quote": q} for r, q in cites],
        commit,
        notice,
    )


def unsupported(claim: str, quote: str) -> str | None:
    """Why `quote` does not support `claim` (too few shared content words), or None.

    A quote only proves that someone said it; the claim is "stated" only when the quote says
    what the claim says. Shared stemmed content words are a crude but honest test: a third of
    the claim's words, and at least two (or all, for a shorter claim), must be in the quote.
    """
    from memctl.recall.words import content_terms

    want = content_terms(claim)
    have = content_terms(quote)
    shared = want & have
    if want and len(shared) >= min(2, len(want)) and len(shared) * 3 >= len(want):
        return None
    return (
        f"the quote does not support the claim (it shares {len(shared)} of the claim's "
        f"{len(want)} content words), so the claim was kept as the agent's own; to keep it "
        "as stated, quote the words in that turn that say it"
    )


def _invisible(text: str) -> bool:
    return not text.isascii() and any(unicodedata.category(c) in _INVISIBLE for c in text)


def _section_name(section: str | None, sections: tuple[str, ...]) -> str:
    """The heading a remembered claim goes under: a name, never markup.

    The MCP tool takes it from an agent, and anything it wrote after a newline would land
    in the note as a line of its own, uncited and indistinguishable from a person's.
    """
    if section is None or not section.strip():
        return _default_section(sections)
    name = section.strip()
    if _SECTION.fullmatch(name) is None or _invisible(name):
        raise InputError(
            f"section {section[:40]!r} is not a section name: give a heading's name such as "
            f"{', '.join(s for s in sections if s.casefold() != 'history') or 'Facts'}"
        )
    if name.casefold() == "history":
        raise InputError("History is kept by memctl (superseded claims); choose another section")
    by_name = {s.casefold(): s for s in sections}
    return by_name.get(name.casefold(), name)


def _agent_may_share(vault: Vault) -> bool:
    """`[remember] agent_shared = "write"` lets an agent's own claims into team and global
    notes directly; by default they become proposals a person reviews."""
    table = vault.config.data.get("remember")
    return isinstance(table, dict) and table.get("agent_shared") == "write"


def _default_section(sections: tuple[str, ...]) -> str:
    """Facts (or Notes) when the template has them: a remembered fact is not a goal."""
    by_name = {s.casefold(): s for s in sections}
    for want in ("facts", "notes"):
        if want in by_name:
            return by_name[want]
    return next((s for s in sections if s.casefold() != "history"), "Notes")


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
    ) -> RecallResult:
        """Cited memories for `query`, packed into the budget (`.text` goes in the prompt)."""
        return self.vault.recall(
            query,
            user=self.user,
            budget=self.budget if budget is None else budget,
            fmt=fmt or self.fmt,
            history=history,
            enabled=enabled,
            now=now,
        )

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
        res = self.vault.ingest(
            ["-"],
            fmt="jsonl",
            user=self.user,
            scope=self.scope,
            session=self.session,
            stdin=io.BytesIO(data.encode("utf-8")),
        )
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

    def remember(self, claim: str, **options: Any) -> Remembered:
        """One claim into memory, cited (source + quote) or as the agent's own (own=True)."""
        return remember(self.vault, self.user, claim, **options)

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
