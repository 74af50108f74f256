"""`remember`: one claim written on an agent's behalf, cited to the turn or note it rests on
(its quote verified against the raw turn), or marked as the agent's own reading; merged into
its note by the curation engine's note code and committed as the agent, or proposed for review
when the store (or a shared scope for an unsupported claim) asks a person first.
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from memctl.core.notes import claim_key, parse_note
from memctl.core.plaintext import MAX_NAME_CHARS, MAX_TITLE_CHARS, hidden, label_shaped
from memctl.core.provenance import (
    MIN_QUOTE_CHARS,
    RawTurns,
    Refused,
    Verified,
    quote_in,
    squash,
    verify_citation,
    visible,
)
from memctl.core.redact import redact
from memctl.core.refs import Ref
from memctl.core.store import read_text
from memctl.curate import engine
from memctl.curate.merge import PROPOSED_SUFFIX, NoteSet, is_proposal
from memctl.errors import InputError, MemctlError
from memctl.recall.results import AGENT_TAG, visible_scopes
from memctl.recall.words import content_terms

if TYPE_CHECKING:
    from memctl.core.floor import Floor

MAX_CLAIM_CHARS = 600
# A section is a heading name: words, spaces and a little punctuation, never markup.
_SECTION = re.compile(r"[^\W_][\w .,'&()/+-]{0,59}")


@dataclass(frozen=True)
class Remembered:
    """What `remember` wrote."""

    action: str  # added | reinforced | updated | noop | proposed
    path: str
    text: str
    basis: str  # stated | agent
    citations: list[dict[str, str]]
    commit: str | None
    # why the claim was kept as the agent's own, when it was; that it waits for review, when it does
    notice: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# Stores whose notes belong to the code base the cited session worked in.
PROJECT_STORES = ("projects", "decisions", "sessions")


def _project_of(
    vault: Floor, turns: RawTurns, cites: list[tuple[str, str]], store: str
) -> dict[str, str]:
    """The project identity of what an agent remembers from a session in a code base (its
    working directory, recorded portably, and the project's id); for the projects store
    also that project's note title, so the fact joins the note the project's sessions
    fill. A claim from no code base (a chat, an agent's own reading) is no project's."""
    if store not in PROJECT_STORES or not cites:
        return {}
    from memctl.curate.builtin.coding.project import find_project_note, project_dir
    from memctl.recall.project import project_id

    try:
        header, _ = turns.session(cites[-1][0].split("#", 1)[0])
    except MemctlError:
        return {}
    meta = dict(header.extra).get("source_meta")
    cwd = meta.get("cwd") if isinstance(meta, dict) else None
    if not isinstance(cwd, str) or not cwd:
        return {}
    where = project_dir(cwd)
    home = vault.config.home
    found = find_project_note(vault.root, where, None, home)
    known: dict[str, Any] = {}
    if found is not None:
        with contextlib.suppress(MemctlError, OSError):
            known = dict(parse_note(read_text(vault.root / found), found).meta)
    pid = str(known.get("project_id") or "") or project_id(known.get("remote"), where) or ""
    out = {"cwd": str(known.get("cwd") or where)}
    if store == "projects":
        out["project_id"] = pid
        if found is not None:
            out["title"] = str(known.get("title") or "")
        else:
            spec = engine.load_specs(vault).get("projects")
            name = where.rstrip("/").rsplit("/", 1)[-1]
            out["title"] = spec.title.format(topic=name, name=name) if spec else name
    else:
        out["project"] = pid
    return {k: v for k, v in out.items() if v}


def _scope_rank(scope: str) -> int:
    return {"global": 0, "team": 1}.get(scope, 2)


def remember(
    vault: Floor,
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
    replaces: str | None = None,
    today: str | None = None,
) -> Remembered:
    """Merge one claim into memory through the curation engine's note code, in one commit.

    `source` names a turn, a note, or a whole session: then the turn is the person's message
    in it that holds `quote` (the latest, when several do), so an agent that knows its
    session but not memctl's turn numbers can cite what was said. `replaces` is the text of
    a claim in the same note that this one supersedes (it moves to History, dated)."""

    _check_names(user, note)
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
    if "<!--" in text or "-->" in text or text.startswith("#") or hidden(text):
        raise InputError(
            "a claim is one line of plain text: no HTML comments, headings, control or "
            "invisible characters"
        )
    if label_shaped(text):
        raise InputError(
            "the claim ends in a provenance label ([stated · …], #agent): memctl writes those "
            "itself; give the claim's words only"
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
            named = _turn_holding(turns, named, str(quote or ""))
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
        except MemctlError as exc:
            raise InputError(exc.message) from None
        if header.scope not in scopes:
            raise InputError(f"{ref} is not visible to {user}")
        if _scope_rank(want) < _scope_rank(header.scope):
            raise InputError(
                f"{ref} is private ({header.scope}); a note citing it cannot be {want}: "
                "use scope='user'"
            )
        # the verdict curation gets: a quote it would refuse is refused here too
        verdict = verify_citation(text, ref, q, turns=turns)
        if isinstance(verdict, Refused) and (role := verdict.speaker):
            who = "a spawning agent's" if role == "user" else (
                f"{'an' if role[:1] in 'aeiou' else 'a'} {role}")
            raise InputError(f"{ref} is {who} turn; only what people said is cited "
                             "(or use own=true)")
        if isinstance(verdict, Refused):
            raise InputError(verdict.message)
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
            # the verdict a direct citation gets: a note edited by hand to cite an
            # assistant's turn, or a comment, lends the new claim nothing
            if ct.ref is not None and isinstance(
                verify_citation(text, ct.ref, ct.quote, turns=turns), Verified
            ):
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
        where = _project_of(vault, turns, cites, store)
        title = (note or "").strip() or where.pop("title", "") or f"Remembered by {user}'s agent"
        target_note = notes.locate(store, want, title, None, propose, where)
        for key in engine.PROJECT_KEYS:  # a note from before notes recorded their project
            if where.get(key) and not target_note.meta.get(key):
                target_note.meta[key] = where[key]
        sec = _section_name(section, spec.sections)
        body = f"{text} {AGENT_TAG}" if basis == "agent" else text
        when = turns.date(cites[-1][0]) if cites else day
        old = _replaced(target_note, replaces)
        outcome = notes.apply(
            target_note,
            sec,
            spec.sections,
            body,
            cites,
            False,
            "supersede" if old else "add",
            old,
            when or day,
        )
        changed = notes.changed()
        commit = None
        if changed:
            with vault.change(
                "remember",
                subject=f"remember: {text[:60]}" + ("…" if len(text) > 60 else ""),
                user=user,
                author=vault.config.agent,
            ) as ch:
                ch.trailers["Memctl-Source"] = ", ".join(r for r, _ in cites) or "agent"
                for path, content in changed.items():
                    ch.tx.write(path, content)
                folder = spec.config.folder
                ch.tx.write(f"{folder}/INDEX.md", engine.store_index(vault, spec, notes))
            commit = ch.commit
    action = (
        "proposed" if is_proposal(target_note.path) and outcome.action != "noop" else outcome.action
    )
    if action == "proposed":
        # the caller must learn the claim is not in memory yet, and who can put it there
        pid = target_note.path.removesuffix(PROPOSED_SUFFIX)
        why = (
            "the agent's own reading reaches others only once a person accepts it"
            if basis == "agent" and want in ("team", "global")
            else f"the {store} store takes proposals"
        )
        said = f"proposed, not yet in memory ({why}): `memctl review --accept {pid}` takes it"
        notice = f"{notice}; {said}" if notice else said
    return Remembered(
        action,
        target_note.path,
        text,
        basis,
        [{"ref": r, "quote": q} for r, q in cites],
        commit,
        notice,
    )


def _replaced(note: Any, replaces: str | None) -> str | None:
    """The active claim of `note` that `replaces` names (as written, or as the agent's own
    with its #agent tag), or InputError: superseding what is not there would only add."""
    if not replaces or not replaces.strip():
        return None
    old = " ".join(replaces.split())
    keys = {claim_key(old), claim_key(f"{old} {AGENT_TAG}")}
    for _, c in note.active_claims():
        if c.key in keys:
            return str(c.text)
    raise InputError(f"{note.path} has no active claim {old[:80]!r} to replace")


def _turn_holding(turns: RawTurns, named: Ref, quote: str) -> Ref:
    """The turn of session `named` in which a person said `quote` (the latest such turn).

    A live session is brought up to date before this (`Vault.remember` ingests the
    transcript the hooks saw), so the agent can quote what was just said."""
    if len(squash(quote)) < MIN_QUOTE_CHARS:
        raise InputError(
            f"quote the person's words verbatim (at least {MIN_QUOTE_CHARS} characters): "
            f"memctl finds the turn of {named.path} that holds them"
        )
    try:
        _, messages = turns.session(named.path)
    except MemctlError as exc:
        raise InputError(exc.message) from None
    found = [
        n
        for n, m in enumerate(messages, 1)
        if m.role == "user" and quote_in(quote, visible(m.content))
    ]
    if not found:
        raise InputError(
            f"no message a person wrote in {named.path} holds that quote verbatim; copy their "
            "words exactly (or cite a turn, source=...#tN)"
        )
    return Ref("turn", named.path, found[-1])


def unsupported(claim: str, quote: str) -> str | None:
    """Why `quote` does not support `claim` (too few shared content words), or None.

    A quote only proves that someone said it; the claim is "stated" only when the quote says
    what the claim says. Shared stemmed content words are a crude but honest test: a third of
    the claim's words, and at least two (or all, for a shorter claim), must be in the quote.
    """
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


def _check_names(user: str, note: str | None) -> None:
    """The user and the note's title name files and headings: one short line each."""
    if len(user) > MAX_NAME_CHARS:
        raise InputError(f"user name too long ({len(user)} characters, at most {MAX_NAME_CHARS})")
    if note is None:
        return
    if any(c in note for c in "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"):
        raise InputError("a note title is one line: no line breaks")
    if hidden(note):
        raise InputError("a note title is plain text: no control or invisible characters")
    if len(note) > MAX_TITLE_CHARS:
        raise InputError(f"note title too long ({len(note)} characters, at most {MAX_TITLE_CHARS})")


def _section_name(section: str | None, sections: tuple[str, ...]) -> str:
    """The heading a remembered claim goes under: a name, never markup.

    The MCP tool takes it from an agent, and anything it wrote after a newline would land
    in the note as a line of its own, uncited and indistinguishable from a person's.
    """
    if section is None or not section.strip():
        return _default_section(sections)
    name = section.strip()
    if _SECTION.fullmatch(name) is None or hidden(name):
        raise InputError(
            f"section {section[:40]!r} is not a section name: give a heading's name such as "
            f"{', '.join(s for s in sections if s.casefold() != 'history') or 'Facts'}"
        )
    if name.casefold() == "history":
        raise InputError("History is kept by memctl (superseded claims); choose another section")
    by_name = {s.casefold(): s for s in sections}
    return by_name.get(name.casefold(), name)


def _agent_may_share(vault: Floor) -> bool:
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


