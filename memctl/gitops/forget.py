"""Forget: take a turn, a session, a note, a claim, an entity or a user out of memory.

Removal follows provenance, because every claim says where it came from:

- a forgotten session's raw file goes; a forgotten turn keeps its place (turn numbers
  never change, so every other citation stays valid) but its words become `[forgotten]`;
- a claim citing only forgotten turns goes; a claim with other sources loses only the
  forgotten citations; a note left with no claims goes;
- watermarks, the removed-claims record, INDEX files and the search index follow;
- one commit lists what was removed.

`--purge` then erases the content from every commit of every branch with git-filter-repo
(whole files for forgotten sessions, the words themselves everywhere else; see
`memctl.gitops.purge`), and prints what each clone and remote must do; memctl never
force-pushes.

The reference grammar lives in `resolve` alone, so a shared resolver can replace it.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memctl.core import attachments
from memctl.core.model import Message
from memctl.core.notes import (
    Claim,
    claim_key,
    escape_quote,
    parse_note,
    render_note,
    strip_links,
)
from memctl.core.raw import make_header, parse_session, render_session, session_path, title_from
from memctl.core.store import Transaction, read_text, walk_markdown
from memctl.errors import InputError, MemctlError
from memctl.gitops.purge import (
    FORGOTTEN,
    drop_intent,
    filter_repo_cmd,
    finish_purge,
    purge_plan,
    write_intent,
)

if TYPE_CHECKING:
    from memctl.core.floor import Floor

_WIKI = re.compile(r"\[\[([^\]|#]+)")


@dataclass
class Targets:
    """What a reference names, before the cascade."""

    kind: str
    label: str
    sessions: set[str] = field(default_factory=set)  # raw paths
    turns: set[str] = field(default_factory=set)  # raw/...md#tN
    notes: set[str] = field(default_factory=set)
    claims: set[tuple[str, str]] = field(default_factory=set)  # (note path, claim key)
    entities: set[str] = field(default_factory=set)  # entity note ids (path without .md)


@dataclass
class ForgetResult:
    """The cascade: everything a forget removed (or would remove, in a dry run)."""

    ref: str
    kind: str
    dry_run: bool
    sessions_deleted: list[str] = field(default_factory=list)
    turns_forgotten: list[str] = field(default_factory=list)
    sessions_renamed: dict[str, str] = field(default_factory=dict)
    claims_removed: list[dict[str, str]] = field(default_factory=list)
    citations_removed: list[dict[str, str]] = field(default_factory=list)
    notes_deleted: list[str] = field(default_factory=list)
    notes_changed: list[str] = field(default_factory=list)
    index_files: list[str] = field(default_factory=list)
    commit: str | None = None
    purged: bool = False
    purge_notes: list[str] = field(default_factory=list)
    purge_secrets: list[str] = field(default_factory=list, repr=False)
    # images only the forgotten turns referred to (not in to_json: its schema is fixed)
    attachments_deleted: list[str] = field(default_factory=list, repr=False)

    @property
    def empty(self) -> bool:
        return not (
            self.sessions_deleted
            or self.turns_forgotten
            or self.claims_removed
            or self.citations_removed
            or self.notes_deleted
        )

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d.pop("attachments_deleted", None)
        d.pop("purge_secrets", None)
        return d


# ---- references ------------------------------------------------------------------------------


def _store_of(vault: Floor, rel: str) -> str | None:
    for s in vault.config.stores.values():
        if rel.startswith(s.folder.rstrip("/") + "/"):
            return s.name
    return None


def note_files(vault: Floor) -> list[str]:
    out = []
    for folder in sorted({s.folder for s in vault.config.stores.values()}):
        for p in walk_markdown(vault.root, folder):
            if p.name != "INDEX.md":
                out.append(p.relative_to(vault.root).as_posix())
    return out


def resolve(vault: Floor, ref: str, user: str | None = None) -> Targets:
    """REF -> what it names: a turn, a session, a note, a claim, an entity, or a user's all.

    Sessions, turns and notes in the shared grammar of `memctl.core.refs` (what every command
    accepts); claims as `NOTE#L12` (the line) or words of one claim (unique across notes);
    entities as `entity:NAME` or an entities note.
    """
    if user is not None:
        t = Targets("user", f"user {user}")
        for s in vault.sessions():
            if str(s.get("user")) == user:
                t.sessions.add(s["path"])
        for rel in note_files(vault):
            try:
                note = parse_note(read_text(vault.root / rel), rel)
            except MemctlError:
                continue
            if note.scope == f"user:{user}":
                t.notes.add(rel)
        if not t.sessions and not t.notes:
            raise InputError(f"user {user!r} has no sessions and no notes in this vault")
        return t
    if not ref:
        raise InputError("forget what? give a REF (turn, session, note, claim) or --user U")
    if ref.startswith("entity:"):
        name = ref[7:].strip().casefold()
        for rel in note_files(vault):
            if _store_of(vault, rel) != "entities":
                continue
            note = parse_note(read_text(vault.root / rel), rel)
            names = {note.title.casefold(), *(a.casefold() for a in note.aliases)}
            if name in names or rel[:-3].casefold().endswith("/" + name):
                t = Targets("entity", f"entity {note.title}")
                t.notes.add(rel)
                t.entities.add(rel[:-3])
                return t
        raise InputError(f"no entity {ref[7:]!r} in this vault")
    from memctl.core import refs

    path, _, anchor = ref.partition("#")
    if re.fullmatch(r"L\d+", anchor):
        note_ref = refs.resolve(vault, path)
        note_rel = note_ref.path
        if note_ref.kind != "note" or _store_of(vault, note_rel) is None:
            raise InputError(f"{path} is not a note in a store folder; #L<line> names a claim")
        line = int(anchor[1:])
        lines = read_text(vault.root / note_rel).split("\n")
        key = _line_claim_key(lines[line - 1]) if 1 <= line <= len(lines) else ""
        whole = parse_note(read_text(vault.root / note_rel), note_rel)
        if not key or not any(c.key == key for _, c in whole.all_claims()):
            raise InputError(f"{note_rel}:{line} is not a claim line")
        t = Targets("claim", f"claim {note_rel}:{line}")
        t.claims.add((note_rel, key))
        return t
    try:
        found: refs.Ref | None = refs.resolve(vault, ref)
        not_a_ref: InputError | None = None
    except InputError as exc:
        found, not_a_ref = None, exc
    if found is not None:
        if found.kind == "index":
            raise InputError(f"{found.path} is generated from the notes; forget a note instead")
        if found.kind == "note":
            store = _store_of(vault, found.path)
            if store is None:
                raise InputError(f"{found.path} is not in a store folder")
            kind = "entity" if store == "entities" else "note"
            t = Targets(kind, f"{kind} {found.path}")
            t.notes.add(found.path)
            if kind == "entity":
                t.entities.add(found.path[:-3])
            return t
        if found.kind == "turn":
            _, messages = parse_session(read_text(vault.root / found.path), found.path)
            n = found.turn or 0
            if not 1 <= n <= len(messages):
                raise InputError(f"{found.path} has turns t1..t{len(messages)}; no #t{n}")
            t = Targets("turn", f"turn {found.text}")
            t.turns.add(found.text)
            return t
        t = Targets("session", f"session {found.path}")
        t.sessions.add(found.path)
        return t
    # words of a claim
    want = claim_key(ref)
    hits: list[tuple[str, str]] = []
    for rel in note_files(vault):
        try:
            note = parse_note(read_text(vault.root / rel), rel)
        except MemctlError:
            continue
        for _, c in note.all_claims():
            if want and (c.key == want or want in c.key):
                hits.append((rel, c.key))
    keys = {k for _, k in hits}
    if len(keys) == 1:
        t = Targets("claim", f"claim {ref!r}")
        t.claims.update(hits)
        return t
    if len(keys) > 1:
        where = ", ".join(sorted({r for r, _ in hits})[:5])
        raise InputError(
            f"{ref!r} matches {len(keys)} different claims (in {where}); "
            "name one as NOTE#L<line>"
        )
    raise InputError(
        f"nothing called {ref!r} here: not a session, turn, note, entity (entity:NAME) or "
        f"the words of a claim; {not_a_ref.message if not_a_ref else ''}".rstrip("; ")
    )


def _line_claim_key(line: str) -> str:
    from memctl.core.notes import parse_claim

    c = parse_claim(line)
    return c.key if c else ""


# ---- the cascade -----------------------------------------------------------------------------


def _links_to(text: str, entities: set[str]) -> bool:
    return any(m.group(1).strip() in entities for m in _WIKI.finditer(text))


def _forget_turns(text: str, rel: str, turns: set[int]) -> tuple[str, list[Message], str]:
    """The session with `turns` blanked (place, role and time kept); new text, messages, title."""
    header, messages = parse_session(text, rel)
    new = []
    for i, m in enumerate(messages, 1):
        if i in turns:
            new.append(Message(m.role, FORGOTTEN, None, None, m.timestamp, {}))
        else:
            new.append(m)
    title = header.title
    first = next((m.content for m in messages if m.role == "user" and m.content.strip()), "")
    lead = " ".join(title.replace("…", " ").split()[:3])
    if any(messages[i - 1].content == first for i in turns) or (
        lead and any(lead in messages[i - 1].content for i in turns)
    ):
        kept = [m for m in new if m.content != FORGOTTEN]
        title = title_from(kept) if kept else "Forgotten session"
    h = make_header(
        header.session,
        title,
        header.source_format,
        header.origin,
        header.user,
        header.scope,
        new,
        dict(header.extra),
    )
    return render_session(h, new), new, title


def plan(vault: Floor, targets: Targets, res: ForgetResult, tx: Transaction | None) -> None:
    """Work out (and with `tx`, write) the whole cascade of forgetting `targets`."""
    from memctl.core.raw import now_utc, parse_time
    from memctl.curate import removals
    from memctl.curate.specs import STATE_REL, load_state, render_state

    root = vault.root
    gone_paths = set(targets.sessions)
    gone_turns = set(targets.turns)
    secrets: list[str] = []
    renamed: dict[str, str] = {}
    retitled: dict[str, str] = {}  # old session title -> new one
    said: list[tuple[str, str]] = []  # each forgotten turn's words, its session's new title
    dropped: set[str] = set()  # attachment files of the forgotten turns
    rewritten: dict[str, str] = {}
    for rel in sorted(gone_paths):
        text = read_text(root / rel)
        header, gone_msgs = parse_session(text, rel)
        dropped |= attachments.files_of(gone_msgs)
        secrets += [header.title, rel]  # the file itself leaves history whole
        res.sessions_deleted.append(rel)
        if tx is not None:
            tx.delete(rel)
    by_session: dict[str, set[int]] = {}
    for ref in gone_turns:
        p, _, num = ref.partition("#t")
        if p not in gone_paths:
            by_session.setdefault(p, set()).add(int(num))
    for rel, nums in sorted(by_session.items()):
        text = read_text(root / rel)
        header, messages = parse_session(text, rel)
        dropped |= attachments.files_of([messages[n - 1] for n in nums])
        for n in nums:
            secrets.append(messages[n - 1].content)
            secrets += _strings(messages[n - 1].meta)
            secrets += [v for v in (messages[n - 1].name, messages[n - 1].id) if v]
        res.turns_forgotten += [f"{rel}#t{n}" for n in sorted(nums)]
        new_text, new_msgs, title = _forget_turns(text, rel, nums)
        said += [(_words(messages[n - 1].content), title) for n in nums]
        target = rel
        if title != header.title:
            secrets += [header.title, rel]
            retitled[header.title] = title
            started = parse_time(header.started) or now_utc()
            target = session_path(header.session, new_msgs, started)
            if target != rel:
                renamed[rel] = target
                res.sessions_renamed[rel] = target
        rewritten[rel] = new_text
        if tx is not None:
            if target != rel:
                tx.delete(rel)
            tx.write(target, new_text)
    res.attachments_deleted = _unreferenced(vault, dropped, gone_paths, rewritten)
    for rel in res.attachments_deleted:
        if tx is not None:
            tx.delete(rel)

    def gone(ref: str | None) -> bool:
        if not ref:
            return False
        return ref.split("#", 1)[0] in gone_paths or ref in gone_turns

    def moved(ref: str) -> str:
        p, sep, n = ref.partition("#")
        return renamed.get(p, p) + sep + n

    records: list[removals.Removal] = []
    day = removals.today()
    for rel in note_files(vault):
        text = read_text(root / rel)
        try:
            note = parse_note(text, rel)
        except MemctlError:
            continue
        whole = rel in targets.notes
        changed = False
        for old_title, new_title in [*retitled.items(), *_quoting(note.title, said)]:
            fixed = _retitle(note.title, old_title, new_title)
            if fixed != note.title:
                secrets.append(note.title)
                note.title = fixed
                note.meta["title"] = fixed
                changed = True
        emptied: list[Any] = []
        for sec in note.sections:
            items: list[Any] = []
            for item in sec.items:
                if not isinstance(item, Claim):
                    items.append(item)
                    continue
                cites = note.citations(item)
                named = (rel, item.key) in targets.claims or _links_to(item.text, targets.entities)
                lost = [r for r in item.refs if r in note.footnotes and gone(note.footnotes[r].ref)]
                if whole or named or (item.refs and len(lost) == len(item.refs)):
                    res.claims_removed.append({"note": rel, "text": item.text})
                    secrets.append(item.text)
                    secrets += [c.quote for c in cites]
                    if named and not whole:
                        refs = tuple(sorted({c.ref for c in cites if c.ref}))
                        store = _store_of(vault, rel) or ""
                        digest = removals.claim_digest(item.text)
                        records.append(
                            removals.Removal(digest, refs, store, rel, "forget", day, None)
                        )
                    changed = True
                    continue
                if lost:
                    for r in lost:
                        res.citations_removed.append(
                            {"note": rel, "text": item.text, "ref": str(note.footnotes[r].ref)}
                        )
                        secrets.append(note.footnotes[r].quote)
                    keep = tuple(r for r in item.refs if r not in lost)
                    item = Claim(item.text, keep, item.inferred, item.lifetime, item.observed)
                    changed = True
                items.append(item)
            if len(items) != len(sec.items) and not any(
                isinstance(i, Claim) or i.strip() for i in items
            ):
                emptied.append(sec)
            sec.items = items
        for label, cit in list(note.footnotes.items()):
            if cit.ref is not None and gone(cit.ref):
                secrets.append(cit.quote)
                del note.footnotes[label]
                changed = True
            elif cit.ref is not None and cit.path in renamed:
                note.footnotes[label] = type(cit)(moved(cit.ref), cit.quote, cit.raw)
                changed = True
        note.forget_citations()
        note.sections = [x for x in note.sections if x not in emptied]
        if whole or (changed and not any(note.all_claims())):
            res.notes_deleted.append(rel)
            secrets += [rel, rel[:-3]]  # its name may carry the words (decisions/...-slug)
            if tx is not None:
                tx.delete(rel)
            continue
        if changed:
            note.prune_footnotes()
            res.notes_changed.append(rel)
            if tx is not None:
                tx.write(rel, render_note(note))

    # watermarks and the removed-claims record name sessions too
    state = load_state(vault)
    new_state = {
        store: {renamed.get(p, p): n for p, n in marks.items() if p not in gone_paths}
        for store, marks in state.items()
    }
    rec = removals.Removals.load(root)
    before = rec.render()
    rec.drop_sources(gone_paths)
    for record in records:
        rec.add(record)
    if renamed:
        rec = removals.Removals(
            removals.Removal(
                r.claim, tuple(sorted(moved(s) for s in r.sources)), r.store, r.note, r.by,
                r.date, r.text,
            )
            for r in rec.records.values()
        )  # fmt: skip
    if tx is not None:
        if new_state != state:
            tx.write(STATE_REL, render_state(new_state))
        if rec.render() != before:
            tx.write(removals.REMOVED_REL, rec.render())
        from memctl.curate import indexfiles

        res.index_files = indexfiles.refresh(vault, tx)
    res.purge_secrets = _expand(secrets)


def _unreferenced(
    vault: Floor, files: set[str], gone: set[str], rewritten: dict[str, str]
) -> list[str]:
    """Of the attachment `files` the forgotten turns held, those no other turn refers to
    (the same picture pasted in another session stays for that one)."""
    left = {f for f in files if (vault.root / f).is_file()}
    for rel in vault.session_map().values():
        if not left:
            break
        if rel in gone:
            continue
        text = rewritten.get(rel)
        if text is None:
            try:
                text = read_text(vault.root / rel)
            except OSError:
                continue
        left = {f for f in left if f not in text}
    return sorted(left)


def _retitle(title: str, old: str, new: str) -> str:
    """A note titled after a session (`Session: <its title>`) follows the session's new title.

    Curators may trim the start of a session title (a greeting), so the longest tail of
    the old title, from a word boundary, that the note's title ends with is replaced.
    """
    words = old.split(" ")
    for i in range(len(words)):
        tail = " ".join(words[i:])
        if len(tail) < 12:
            break
        if title.endswith(tail):
            return title[: len(title) - len(tail)] + new
    return title


def _words(text: str) -> str:
    return " ".join(re.findall(r"[\w'’-]+", text.casefold()))


def _quoting(title: str, said: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """(the note title's tail, the session's new title) when that tail quotes a forgotten
    turn: a sub-agent's session note is titled by the task its brief (turn 1) sets."""
    tail = title.split(": ", 1)[-1]
    words = _words(tail.rstrip("…"))
    if len(words) < 12:
        return []
    return [(tail, new) for gone, new in said if words in gone]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if len(value) >= 12 else []
    if isinstance(value, dict):
        return [x for v in value.values() for x in _strings(v)]
    if isinstance(value, list):
        return [x for v in value for x in _strings(v)]
    return []


def _expand(secrets: list[str]) -> list[str]:
    """Every form the forgotten words take in files: as written, quoted, line by line."""
    out: set[str] = set()
    for s in [*secrets, *(strip_links(x) for x in secrets if x and "[[" in x)]:
        if not s or not s.strip():
            continue
        for form in (s, escape_quote(s), s.replace("\n", " "), s.removeprefix("raw/")):
            out.add(form)
        out.add(s.replace("[", "(").replace("]", ")"))  # as INDEX lines write titles
        if "/" in s and s.endswith(".md") and " " not in s:
            out.add(s.split("/", 1)[1])  # as its folder's INDEX.md links it
        out.add(s.replace("'", "''"))  # as YAML quotes it
        for line in s.splitlines():
            if len(line.strip()) >= 12:
                out.add(line.strip())
        if len(s) > 90:
            out.add(s[:89].rstrip())  # the gist an INDEX line shows
        if len(s) > 80:
            out.add(s[:80])  # what a commit body quotes
    return sorted((s for s in out if len(s) >= 6), key=lambda s: (-len(s), s))


# ---- the command -----------------------------------------------------------------------------


def forget(
    vault: Floor,
    ref: str | None = None,
    *,
    user: str | None = None,
    dry_run: bool = False,
    purge: bool = False,
) -> ForgetResult:
    """Forget what REF (or `user`) names, cascading through provenance; one commit."""
    if purge and dry_run:
        raise InputError("--purge and --dry-run: run --dry-run first, then --purge")
    with vault.lock:
        if purge:
            dirty = vault.history.dirty()
            if dirty:
                raise MemctlError(
                    f"--purge rewrites history and needs a clean working tree; "
                    f"{len(dirty)} uncommitted change(s), e.g. {dirty[0].strip()}: "
                    "commit or stash them first",
                    exit_code=3,
                )
            filter_repo_cmd()  # refuse before changing anything when the tool is missing
        targets = resolve(vault, ref or "", user)
        res = ForgetResult(ref or f"--user {user}", targets.kind, dry_run)
        if dry_run:
            plan(vault, targets, res, None)
            return res
        # on success the files are what git recorded, and the change drops the journal's
        # copies of what was there (the forgotten words among them) before history is
        # rewritten below
        with vault.change("forget") as ch:
            ch.on_failure(lambda: drop_intent(vault.root))
            plan(vault, targets, res, ch.tx)
            if res.empty:
                ch.drop()
                return res
            ch.subject = _subject(res, targets)
            ch.body = commit_body(res)
            ch.trailers.update({
                "Memctl-Forgot": targets.kind,
                "Memctl-Sessions-Deleted": str(len(res.sessions_deleted)),
                "Memctl-Turns-Forgotten": str(len(res.turns_forgotten)),
                "Memctl-Claims-Removed": str(len(res.claims_removed)),
                "Memctl-Citations-Removed": str(len(res.citations_removed)),
                "Memctl-Notes-Deleted": str(len(res.notes_deleted)),
            })
            if purge:
                # journalled before the forget commit: a kill from here on leaves a record
                # that the next command finishes (or drops, if the commit never landed)
                gone = [*res.sessions_deleted, *res.sessions_renamed, *res.notes_deleted,
                        *res.attachments_deleted]
                ch.before_commit.append(
                    lambda: write_intent(vault, purge_plan(vault.root, res.purge_secrets, gone))
                )
        res.commit = ch.commit
        # recall's per-session word counts (memctl.recall.termcache) and its parsed notes
        # (memctl.recall.notecache) hold the forgotten words until asked about again:
        # they go now
        shutil.rmtree(vault.root / ".memctl" / "cache" / "terms", ignore_errors=True)
        shutil.rmtree(vault.root / ".memctl" / "cache" / "notes", ignore_errors=True)
        prune_folders(vault.root, [*res.sessions_deleted, *res.sessions_renamed,
                                    *res.notes_deleted, *res.attachments_deleted])  # fmt: skip
        if purge:
            res.purge_notes = finish_purge(vault)
            res.purged = True
    return res


def prune_folders(root: Path, removed: list[str]) -> None:
    """Folders a forget emptied (raw/2026/09/08/) go too; git never tracked them."""
    import contextlib

    for rel in removed:
        folder = (root / rel).parent
        while folder != root and folder.is_dir() and not any(folder.iterdir()):
            with contextlib.suppress(OSError):
                folder.rmdir()
            folder = folder.parent


def _subject(res: ForgetResult, t: Targets) -> str:
    bits = []
    for n, word in (
        (len(res.sessions_deleted), "session"),
        (len(res.turns_forgotten), "turn"),
        (len(res.claims_removed), "claim"),
        (len(res.notes_deleted), "note"),
    ):
        if n:
            bits.append(f"{n} {word}{'s' * (n != 1)}")
    return f"forget: {t.kind}; removed {', '.join(bits) or 'nothing'}"


def commit_body(res: ForgetResult) -> str:
    lines = []
    lines += [f"- session deleted: {p}" for p in res.sessions_deleted]
    lines += [f"- turn forgotten: {p}" for p in res.turns_forgotten]
    lines += [f"- session renamed: {a} -> {b}" for a, b in res.sessions_renamed.items()]
    lines += [f"- claim removed: {c['note']}: {c['text']}" for c in res.claims_removed]
    lines += [
        f"- citation removed: {c['note']}: {c['text']} (was {c['ref']})"
        for c in res.citations_removed
    ]
    lines += [f"- note deleted: {p}" for p in res.notes_deleted]
    return "\n".join(lines)
