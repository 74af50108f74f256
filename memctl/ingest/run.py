"""Ingest: transcripts in any supported format -> verbatim, redacted raw session files.

A session is known by the id its transcript carries; a longer copy appends its new turns, a
copy whose past turns differ is refused, and named files are all-or-nothing together while a
folder goes file by file (see README "Transcript formats").
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from memctl.core import attachments
from memctl.core.model import Message, Transcript
from memctl.core.raw import (
    file_name_id,
    header_data,
    legacy_file_name_ids,
    make_header,
    now_utc,
    parse_session,
    portable_dir,
    portable_path,
    remember_parsed,
    render_header,
    render_session,
    render_turn,
    session_path,
    slugify,
    title_from,
)
from memctl.core.store import Transaction, read_text
from memctl.errors import ConflictError, InputError, MemctlError, NotATranscriptError
from memctl.results import FileProblem, IngestResult, SessionChange

if TYPE_CHECKING:
    from memctl.core.floor import Floor
    from memctl.index.writer import Feed

ProgressFn = Callable[[int, int, str], None]


def _valid_scope(scope: str) -> str:
    if scope in ("team", "global") or (scope.startswith("user:") and len(scope) > 5):
        return scope
    raise InputError(f"invalid scope {scope!r}: use 'user:NAME', 'team' or 'global'")


def ingest(
    vault: Floor,
    sources: list[str | Path],
    *,
    fmt: str | None = None,
    user: str | None = None,
    scope: str | None = None,
    session: str | None = None,
    redact: bool | None = None,
    stdin: BinaryIO | None = None,
    progress: ProgressFn | None = None,
    skip_bad_lines: bool = False,
) -> IngestResult:
    """Write transcripts verbatim as raw sessions; all of it, or none of it.

    `skip_bad_lines` is the Stop hook's: a line of a Claude Code session it cannot read is
    left out and listed in the result's `bad_lines` instead of refusing the whole file.
    """
    from memctl.index import writer  # tantivy loads only when a command needs it
    from memctl.ingest import formats

    if not sources:
        raise InputError("nothing to ingest: give files, folders or - for stdin")
    chosen = user or vault.config.user or None
    login = vault.default_user()
    fixed_scope = scope or vault.config.scope
    if fixed_scope:
        fixed_scope = _valid_scope(fixed_scope)
    do_redact = vault.config.redact if redact is None else redact
    paths: list[Path] = []
    use_stdin = False
    for s in sources:
        if str(s) == "-":
            use_stdin = True
            continue
        p = Path(s)
        if not p.exists():
            raise InputError("no such file or folder", p)
        paths.append(p)
    files = formats.iter_files(paths)
    named = {p for p in paths if not p.is_dir()}
    failed: list[FileProblem] = []
    skipped: list[FileProblem] = []
    if not files and not use_stdin:
        raise InputError("no transcript files found", paths[0] if paths else None)
    changes: list[SessionChange] = []
    bad: list[InputError] | None = [] if skip_bad_lines else None
    left_out: list[str] = []  # images not kept, each with its turn and why
    with vault.lock:
        sessions = vault.session_map()
        feed = writer.Feed(vault)
        stager = vault.history.stager()
        with vault.change("ingest", redact=do_redact, index=False) as ch:
            tx = ch.tx

            def abort() -> None:
                feed.abort()
                stager.wait()
                with contextlib.suppress(Exception):
                    vault.history.unstage(stager.staged)

            ch.on_failure(abort)
            units: list[Path | BinaryIO] = list(files)
            if use_stdin:
                units.append(stdin if stdin is not None else _stdin_bytes())
            for i, unit in enumerate(units):
                label = str(unit) if isinstance(unit, Path) else "<stdin>"
                if progress:
                    progress(i, len(units), label)
                # A file found in a folder stands alone: if it is bad, its writes are
                # undone and it is reported; named files are all-or-nothing together.
                alone = isinstance(unit, Path) and unit not in named
                mark = tx.mark() if alone else None
                known = dict(sessions) if alone else sessions
                done: list[SessionChange] = []
                try:
                    if isinstance(unit, Path):
                        _utf8_name(unit)
                    for tr in formats.read_transcripts(
                        unit, fmt, session=session, bad_lines=bad
                    ):
                        who, source = (chosen, "flag") if chosen else _speaker(tr, login)
                        where = fixed_scope or _valid_scope(f"user:{who}")
                        change = _write_transcript(
                            vault, tx, tr, who, where, do_redact, sessions, feed, left_out
                        )
                        done.append(
                            dataclasses.replace(change, user=who, user_from=source)
                        )
                except (InputError, ConflictError) as exc:
                    if mark is None:
                        raise
                    undone = tx.undo_to(mark)
                    feed.drop(undone)
                    sessions.clear()
                    sessions.update(known)
                    problem = FileProblem(
                        exc.path or label, exc.line, exc.message, exc.exit_code
                    )
                    (skipped if isinstance(exc, NotATranscriptError) else failed).append(
                        problem
                    )
                    continue
                if mark is not None:
                    tx.release(mark)
                changes.extend(done)
                for change in done:
                    if change.action != "unchanged":
                        stager.add(change.path)
            if progress:
                progress(len(units), len(units), "")
            changed = [c for c in changes if c.action != "unchanged"]
            if changed:
                turns = sum(c.turns_added for c in changed)
                n = len(changed)
                ch.subject = (
                    f"ingest: {n} session{'s' * (n != 1)}, {turns} turn{'s' * (turns != 1)}"
                )
                ch.trailers["Memctl-Sessions"] = str(n)
                ch.trailers["Memctl-Turns"] = str(turns)
                ch.trailers["Memctl-Redactions"] = str(sum(c.redactions for c in changed))
                ch.before_commit.append(stager.wait)
            elif tx.touched:
                ch.drop()  # every session was as it stood: nothing to commit
        notices = feed.finish(tx.touched).notices  # the index could not follow: say so
    bad_lines = [FileProblem(str(e.path or ""), e.line, e.message) for e in bad or []]
    problems = [n for n in notices if n.startswith("search index not updated")]
    return IngestResult(changes, ch.commit, len(units), failed, skipped, bad_lines,
                        left_out + problems)  # fmt: skip

def _utf8_name(path: Path) -> None:
    """A file name becomes a session's origin in YAML, a commit trailer and a line of output,
    all UTF-8: a name that is not (bytes from another system's locale) is refused by name,
    alone, and the folder's other files go in."""
    try:
        str(path).encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(path).decode("utf-8", "backslashreplace")
        raise InputError(
            "the file name is not UTF-8; rename the file to ingest it", Path(shown)
        ) from None


def _session_id(vault: Floor, tr: Transcript, sessions: dict[str, str]) -> str:
    """The id a transcript's session goes by (see `raw.file_name_id` for the rule).

    A file-name id first looks for the session under the ids older memctl gave it, so
    a vault written before the rule grows its sessions in place instead of doubling them.
    """
    from memctl.ingest.formats._common import NameId

    sid = str(tr.session_id or "session")  # a plain str: YAML knows no NameId
    if not isinstance(tr.session_id, NameId):
        return sid
    qualified = file_name_id(sid, tr.origin)
    if qualified in sessions:
        return qualified
    *older, bare = legacy_file_name_ids(sid, tr.origin)
    for old in older:
        if old in sessions:
            return old
    if bare in sessions and _same_source(vault, bare, sessions[bare], tr):
        return bare
    return qualified


def _same_source(vault: Floor, sid: str, rel: str, tr: Transcript) -> bool:
    """Is the session older memctl recorded under the bare file name `sid` this one?

    Its origin names the file when it was recorded as an absolute path; a relative one
    (the path as typed, from a folder we no longer know) cannot be compared, so there
    the turns decide: a transcript that continues the session's turns, or that they
    continue, is that session; another conversation is another session.
    """
    origin = vault.origins.get(sid)
    if origin and origin.startswith("~/") and vault.config.home is not None:
        origin = str(vault.config.home / origin[2:])
    if origin and Path(origin).is_absolute():
        return Path(origin).resolve() == Path(tr.origin).resolve()
    try:
        _, old = parse_session(read_text(vault.root / rel), rel)
    except (OSError, MemctlError):
        return False
    norm = [_normalise(m) for m in _as_stored(tr, old)]
    k = min(len(old), len(norm))
    return k > 0 and old[:k] == norm[:k]


def _as_stored(tr: Transcript, old: list[Message]) -> list[Message]:
    """The transcript's messages as a session stored before ingest named sub-agents reads
    them: a sub-agent's turns stored as "assistant" stay so, and the session goes on as it
    began (its turns are the record, never rewritten)."""
    agent = tr.meta.get("agent_name") if isinstance(tr.meta, dict) else None
    if not agent or any(m.name == agent for m in old):
        return tr.messages
    return [
        Message(m.role, m.content, m.id, None, m.timestamp, m.meta)
        if m.role == "assistant" and m.name == agent else m
        for m in tr.messages
    ]  # fmt: skip

def _write_transcript(
    vault: Floor,
    tx: Transaction,
    tr: Transcript,
    user: str,
    scope: str,
    do_redact: bool,
    sessions: dict[str, str],
    feed: Feed,
    left_out: list[str],
) -> SessionChange:
    if do_redact:
        from memctl.core.redact import redact

        tr, redactions = _redact_transcript(tr)
        # the header's own strings: the file is written as rendered, unredacted after
        user, scope = redact(user)[0], redact(scope)[0]
        origin = redact(tr.origin)[0]
    else:
        redactions = 0
        origin = tr.origin
    messages = tr.messages
    if not messages:
        raise InputError("transcript has no messages", tr.origin, tr.line)
    left = attachments.keep(vault.config.data, tr, do_redact)
    sid = _session_id(vault, tr, sessions)
    # found by the id its header records: a session keeps the name it was first given
    rel = sessions.get(sid) or session_path(sid, messages, now_utc())
    title = tr.title or title_from(messages)
    target = tx.path(rel)
    if target.exists():
        header, old = parse_session(read_text(target), rel)
        if header.session != sid:
            raise ConflictError(
                f"{rel} holds session {header.session!r}, not {sid!r}; its header was "
                "changed by hand (run `memctl doctor`)",
                tr.origin,
                tr.line,
            )
        messages = _as_stored(tr, old)
        norm = [_normalise(m) for m in messages]
        k, new = _align(old, norm)
        if k is not None:
            raise ConflictError(
                f"session {sid!r} differs from {rel} at turn t{k + 1}; refusing to "
                "rewrite history (ingest it with a different --session to keep both)",
                tr.origin,
                tr.line,
            )
        if not new:
            return SessionChange(sid, rel, "unchanged", 0, len(old), 0, tr.origin)
        allm = old + new
        h = make_header(
            header.session,
            header.title,
            header.source_format,
            header.origin,
            header.user,
            header.scope,
            allm,
            dict(header.extra),
        )
        text = read_text(target)
        body_start = text.index("\n---\n", 3) + 5
        appended = "".join(render_turn(len(old) + i, m) for i, m in enumerate(new, 1))
        new_text = render_header(h) + text[body_start:] + appended
        _within_limit(vault, new_text, tr)
        attachments.write(tx, tr, new)
        written = tx.write(rel, new_text)
        feed.session(rel, new_text, h, allm, written)
        vault.catalog.put(rel, header_data(h), written, new_text)
        remember_parsed(rel, new_text, h, allm)
        sessions[sid] = rel
        left_out.extend(_left_out(left, rel, new, len(old)))
        return SessionChange(sid, rel, "appended", len(new), len(allm), redactions, tr.origin)
    # the transcript's own context fields are kept as they came, but a raw file is shared:
    # where the session ran is recorded as where the file was, never by this machine's path
    # (the turns keep their words; the curator reads the full path back from them)
    meta = dict(tr.meta)
    if isinstance(meta.get("cwd"), str):
        meta["cwd"] = portable_dir(meta["cwd"], vault.config.home)
    extra = {"source_meta": meta} if meta else {}
    origin = portable_path(tr.origin, vault.root, vault.config.home)
    h = make_header(sid, title, tr.source_format, origin, user, scope, messages, extra)
    text = render_session(h, messages)
    _within_limit(vault, text, tr)
    attachments.write(tx, tr, messages)
    written = tx.write(rel, text)
    feed.session(rel, text, h, messages, written)
    vault.catalog.put(rel, header_data(h), written, text)
    remember_parsed(rel, text, h, messages)
    sessions[sid] = rel
    left_out.extend(_left_out(left, rel, messages, 0))
    return SessionChange(
        sid, rel, "created", len(messages), len(messages), redactions, tr.origin
    )


def _left_out(
    left: list[dict[str, Any]], rel: str, written: list[Message], before: int
) -> list[str]:
    """One line per image of the turns just written that was not kept."""
    out = []
    for info in left:
        n = attachments.turn_of(info, written)
        if n is not None:
            out.append(f"left out an image in {rel}#t{before + n}: {info['left_out']}")
    return out



def _within_limit(vault: Floor, text: str, tr: Transcript) -> None:
    """A raw session past the vault's limit is refused whole: sync would refuse to pull
    it in every other clone, and every reader would pay for it."""
    from memctl.core.localstate import human_size, limits

    _, limit = limits(vault.config.data)
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > limit:
        raise InputError(
            f"session is {human_size(size)}, over the {human_size(limit)} limit "
            "for a raw session ([limits] raw in .memctl/config.toml)", tr.origin, tr.line,
        )


def _stdin_bytes() -> BinaryIO:
    import sys

    return sys.stdin.buffer




# meta keys that say where a message sits, not what it says
_STRUCTURAL = frozenset({"parentUuid", "isSidechain", "model", "recipient", "content_type"})


def _placeholder(m: Message) -> bool:
    """A turn older memctl stored for a message with no words (an empty assistant
    placeholder); readers now drop such messages, so a stored one is passed over."""
    return not m.content.strip() and set(m.meta) <= _STRUCTURAL


def _context(m: Message) -> bool:
    return m.meta.get("content_type") == "user_editable_context"


def _align(old: list[Message], norm: list[Message]) -> tuple[int | None, list[Message]]:
    """Match a stored session's turns against the transcript read again.

    Returns (the first stored turn that differs, or None; the messages to append). Stored
    placeholder turns are passed over, and a ChatGPT context node older memctl dropped is
    appended, since turn numbers never change: both come from readers that now keep every
    node with words and no node without.
    """
    i = j = 0
    held: list[Message] = []
    had_context = any(_context(m) for m in old)
    while i < len(old) and j < len(norm):
        if old[i] == norm[j] or attachments.bare(old[i]) == attachments.bare(norm[j]):
            i += 1
            j += 1
        elif _placeholder(old[i]):
            i += 1
        elif _context(norm[j]) and not had_context:
            held.append(norm[j])
            j += 1
        else:
            return i, []
    if j >= len(norm):
        return None, held if i >= len(old) else []
    return None, [*held, *norm[j:]]


def _normalise(m: Message) -> Message:
    """What a message looks like after a trip through a raw file (JSON-normal meta)."""
    if not m.meta:
        return m
    meta = json.loads(json.dumps(m.meta, ensure_ascii=False))
    return Message(m.role, m.content, m.id, m.name, m.timestamp, meta)


def _redact_transcript(tr: Transcript) -> tuple[Transcript, int]:
    """Redact every string a transcript brings: messages, and also its session id, title
    and transcript-level meta (a text preamble, an export's stray top-level keys), which
    end up in frontmatter, raw/INDEX.md and INDEX.md.

    This is the one redaction pass a raw session gets: the store writes raw files as
    rendered (a pass over JSON-escaped text would alter what the hash covers), so every
    string that reaches the file is redacted here, each as itself."""
    import dataclasses

    from memctl.core.redact import redact

    messages, count = _redact_all(tr.messages)
    changes: dict[str, Any] = {}
    for name in ("session_id", "title"):
        value = getattr(tr, name)
        if isinstance(value, str):
            new, found = redact(value)
            if found:
                changes[name] = new
                count += len(found)
    if tr.meta:
        meta, n = _redact_value(tr.meta)
        if n:
            changes["meta"] = meta
            count += n
    if messages is not tr.messages:
        changes["messages"] = messages
    return (dataclasses.replace(tr, **changes) if changes else tr), count


def _redact_value(value: Any, key: str | None = None) -> tuple[Any, int]:
    """Redact every string inside a JSON-like value; under a key the key is context
    ({"password": "hunter2"} is a secret even though "hunter2" alone is not)."""
    from memctl.core.redact import redact, redact_field

    if isinstance(value, str):
        new, found = redact_field(key, value) if key else redact(value)
        return new, len(found)
    if isinstance(value, list):
        pairs = [_redact_value(v) for v in value]
        return [v for v, _ in pairs], sum(n for _, n in pairs)
    if isinstance(value, dict):
        out, count = {}, 0
        for k, v in value.items():
            out[k], n = _redact_value(v, str(k))
            count += n
        return out, count
    return value, 0


def _redact_all(messages: list[Message]) -> tuple[list[Message], int]:
    """Redact content, the speaker's name and every string inside meta (tool inputs carry
    secrets too); the list itself comes back unchanged when nothing was found."""
    from memctl.core.redact import redact

    count = 0
    out = []
    for m in messages:
        content, found = redact(m.content)
        n = len(found)
        meta, k = _redact_value(m.meta) if m.meta else (m.meta, 0)
        # a speaker's name is rarely long enough to hold a secret; the store checks it anyway
        name, found_name = redact(m.name) if m.name and len(m.name) >= 8 else (m.name, [])
        n += k + len(found_name)
        # almost every message is clean: keep it rather than build an equal copy
        if n:
            m = Message(m.role, content, m.id, name, m.timestamp, meta)
            count += n
        out.append(m)
    return (out if count else messages), count


_NOT_A_NAME = frozenset({"user", "human", "me", "you", "customer", "client", "anonymous"})


def _speaker(tr: Transcript, login: str) -> tuple[str, str]:
    """Whose session this is when `--user` is not given: the human the transcript names.

    Chat exports and team transcripts name who spoke; the login name of whoever runs the
    import is only a last resort, and the result says when it was used.
    """
    for m in tr.messages:
        name = (m.name or "").strip()
        if m.role == "user" and name and name.lower() not in _NOT_A_NAME:
            slug = slugify(name, 40)
            if slug:
                return slug, "transcript"
    return login, "login"
