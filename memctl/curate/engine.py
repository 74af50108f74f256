"""One curation run: read uncurated turns, let the curator propose, verify, merge, commit.

The order of work is the safety argument:

1. Under the vault lock, find each store's watermark (turns already curated per session).
2. The curator reads only sessions' new turns and proposes claims. It writes nothing.
3. Each claim is checked here, whatever curator made it: the store must be configured and
   not off (instructions/ only ever as a proposal), every citation must name a user's turn
   in this session and quote it verbatim. Anything else is rejected and reported.
4. Accepted claims merge into in-memory notes, session by session, oldest first, so later
   sessions supersede earlier ones.
5. Notes, store INDEX.md files, the root INDEX.md and the watermarks are written in one
   transaction and one commit by the agent; any failure rolls every file back.
"""

from __future__ import annotations

import difflib
import time
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from memctl.core.branches import rewound_text
from memctl.core.notes import HISTORY, strip_links
from memctl.core.pasted import pasted_by
from memctl.core.plaintext import label_shaped, one_line
from memctl.core.provenance import (
    RawTurns,
    Refused,
    by_person,
    inference_supported,
    supports,
    turn_texts,
    unquoted_links,
    verify_citation,
)
from memctl.core.redact import find_secrets, redact
from memctl.core.store import read_text
from memctl.curate.merge import NoteSet, note_scope, visible_scopes
from memctl.curate.model import (
    Batch,
    Curator,
    Extraction,
    KnownClaim,
    KnownEntity,
    KnownNote,
    Proposal,
    StoreSpec,
)
from memctl.curate.registry import get_curator
from memctl.curate.removals import screen as screen_removed
from memctl.curate.specs import (
    STATE_REL,
    forced_proposal,
    load_specs,
    load_state,
    render_state,
    store_index,
)
from memctl.errors import CurationError, InputError

if TYPE_CHECKING:
    from memctl.core.floor import Floor

MAX_CLAIM_CHARS = 600


# ---- results ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rejection:
    """A claim that was not written, and why."""

    store: str
    note: str
    text: str
    reason: str
    ref: str | None = None
    quote: str | None = None


@dataclass
class CurateResult:
    """What a curation run read, wrote, refused, and what it cost."""

    curator: str
    model: str | None
    dry_run: bool
    stores: list[str]
    sessions: int = 0
    turns_read: int = 0
    added: int = 0
    reinforced: int = 0
    updated: int = 0
    superseded: int = 0
    retracted: int = 0
    resolved: int = 0
    proposed: int = 0
    noop: int = 0
    rejected: list[Rejection] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    commit: str | None = None
    diff: str = ""
    calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = None
    seconds: float = 0.0
    # what the model calls cost, session by session: {session, calls, tokens_in, tokens_out,
    # cost}; cost is litellm's price for the model (None: litellm has no price for it)
    per_session: list[dict[str, Any]] = field(default_factory=list)
    # claim changes by action as `memctl diff` counts them: the commit subject and trailers
    # say these, and so does the CLI (the fields above are the curator's own tally)
    counts: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        d = asdict(self)
        d["rejected"] = [asdict(r) for r in self.rejected]
        d["claims_rejected"] = len(self.rejected)
        return d


MAX_REPLANS = 5  # memory changed under a waiting model this often: give up, write nothing

# ---- the context a curator may read -----------------------------------------------------------


class _View:
    """Memory visible to one session (its scope, its user's, anything wider it belongs to).

    Nothing changes while a curator reads one batch (merging happens after), so what it
    reads is computed once per store.
    """

    def __init__(
        self,
        notes: NoteSet,
        specs: dict[str, StoreSpec],
        header: Any,
        people: dict[str, list[str]],
    ) -> None:
        self._notes = notes
        self._specs = specs
        self._header = header
        self._scopes = visible_scopes(header.scope, header.user)
        self._people = people
        self._claims: dict[str, list[KnownClaim]] = {}

    def people(self) -> list[str]:
        names: dict[str, None] = {}
        for scope in sorted(self._scopes):
            for p in self._people.get(scope, []):
                names.setdefault(p, None)
        return list(names)

    def notes(self, store: str) -> list[KnownNote]:
        if store not in self._specs:
            return []
        return [
            KnownNote(store, n.title, n.path, dict(n.meta))
            for n in self._notes.active(store, self._scopes)
        ]

    def path_for(self, store: str, title: str, slug: str | None = None) -> str:
        spec = self._specs[store]
        scope = note_scope(spec.config.scope, self._header.scope, self._header.user)
        return self._notes.reserve(store, scope, title, slug)

    def _store_claims(self, name: str) -> list[KnownClaim]:
        if name not in self._claims:
            self._claims[name] = [
                KnownClaim(name, n.title, n.path, section, text, cites)
                for n in self._notes.active(name, self._scopes)
                for section, text, cites in self._notes.summary(n)
            ]
        return self._claims[name]

    def claims(self, store: str | None = None) -> list[KnownClaim]:
        names = [store] if store else list(self._specs)
        return [c for name in names if name in self._specs for c in self._store_claims(name)]

    def entities(self) -> list[KnownEntity]:
        if "entities" not in self._specs:
            return []
        return [
            KnownEntity(
                n.title,
                tuple(n.aliases),
                n.path,
                str((n.meta.get("tags") or ["thing"])[0]),
            )
            for n in self._notes.active("entities", self._scopes)
        ]


def _people_by_scope(sessions: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Display names of the people in each scope's sessions, in order of appearance."""
    out: dict[str, dict[str, None]] = {}
    for s in sessions:
        names = out.setdefault(str(s.get("scope")), {})
        for p in s.get("participants") or []:
            if p not in ("user", "assistant", "system", "tool"):
                names.setdefault(str(p), None)
    return {k: list(v) for k, v in out.items()}


# ---- the run ----------------------------------------------------------------------------------


def _today() -> str:
    return datetime.now(UTC).date().isoformat()


def run(
    vault: Floor,
    *,
    store: str | list[str] | None = None,
    session: str | None = None,
    dry_run: bool = False,
    model: str | None = None,
    curator: str | None = None,
    today: str | None = None,
) -> CurateResult:
    """Curate every uncurated turn (or one store / one session) into notes."""
    started = time.perf_counter()
    specs = load_specs(vault)
    wanted = [store] if isinstance(store, str) else list(store or [])
    for w in wanted:
        if w not in specs:
            raise InputError(f"no store {w!r}: configured stores are {', '.join(specs)}")
    targets = {
        n: s for n, s in specs.items() if (not wanted or n in wanted) and s.config.mode != "off"
    }
    name = curator or vault.config.curator
    if model and curator is None and name == "builtin":
        name = "llm"  # `--model M` alone means: curate with that model
    model = model or vault.config.model
    cur: Curator = get_curator(name, vault, model=model)
    res = CurateResult(name, cur.model, dry_run, sorted(targets))
    day = today or _today()
    label = cur.name if not cur.model else f"{cur.name} {cur.model}"

    answers: dict[tuple[str, int, tuple[str, ...]], Extraction] = {}
    if not cur.model:
        # An offline curator takes milliseconds a session: one pass under the lock.
        with vault.lock:
            plan = _plan(vault, cur, res, specs, targets, session, day, label, answers)
            return _finish(vault, plan, res, started)
    # A model takes seconds a call: never hold the vault lock while waiting on one. Plan
    # from what the files say now, then write only if nobody changed memory meanwhile;
    # if somebody did, plan again on their result, reusing the model's answers.
    for _ in range(MAX_REPLANS):
        seen = _fingerprint(vault)
        fresh = CurateResult(name, cur.model, dry_run, sorted(targets))
        plan = _plan(vault, cur, fresh, specs, targets, session, day, label, answers)
        with vault.lock:
            if _fingerprint(vault) == seen:
                _carry_cost(fresh, answers)
                fresh.per_session = _session_costs(answers)
                return _finish(vault, plan, fresh, started)
    raise CurationError(
        f"memory changed {MAX_REPLANS} times while the model was answering; nothing was "
        "written (run memctl curate again; the model is asked again only for new turns)"
    )


@dataclass
class _Plan:
    """Everything a run would write, computed in memory: notes, INDEX files, watermarks."""

    files: dict[str, str]
    changed: dict[str, str]
    new_state: str
    old_state: str | None


def _fingerprint(vault: Floor) -> tuple[str, ...]:
    """What memory looks like on disk: HEAD, uncommitted changes, the curation watermarks."""
    state = vault.root / STATE_REL
    head = vault.history.head_sha() or ""
    return (head, *vault.history.dirty(), read_text(state) if state.exists() else "")


def _carry_cost(res: CurateResult, answers: dict[Any, Extraction]) -> None:
    """A plan made again on cached answers still reports what the model calls cost."""
    res.calls = sum(e.calls for e in answers.values())
    res.tokens_in = sum(e.tokens_in for e in answers.values())
    res.tokens_out = sum(e.tokens_out for e in answers.values())
    costs = [e.cost for e in answers.values() if e.cost is not None]
    res.cost = sum(costs) if costs else None


def _session_costs(answers: dict[Any, Extraction]) -> list[dict[str, Any]]:
    """The model's calls, tokens and cost per session, in the order sessions were curated."""
    out: dict[str, dict[str, Any]] = {}
    for (path, _, _), e in answers.items():
        if not e.calls:
            continue
        row = out.setdefault(
            path, {"session": path, "calls": 0, "tokens_in": 0, "tokens_out": 0, "cost": None}
        )
        row["calls"] += e.calls
        row["tokens_in"] += e.tokens_in
        row["tokens_out"] += e.tokens_out
        if e.cost is not None:
            row["cost"] = (row["cost"] or 0.0) + e.cost
    return list(out.values())


def _plan(
    vault: Floor,
    cur: Curator,
    res: CurateResult,
    specs: dict[str, StoreSpec],
    targets: dict[str, StoreSpec],
    session: str | None,
    day: str,
    label: str,
    answers: dict[tuple[str, int, tuple[str, ...]], Extraction],
) -> _Plan:
    """Read memory, ask the curator about every uncurated turn, merge in memory."""
    state = load_state(vault)
    turns = RawTurns(vault.root)
    notes = NoteSet(vault.root, {n: s.config.folder for n, s in specs.items()}, day, turns, label)
    all_sessions = vault.sessions()
    people = _people_by_scope(all_sessions)
    sessions = sorted(all_sessions, key=lambda s: (str(s.get("started") or ""), s["path"]))
    if session:
        only = vault.resolve_session(session)
        sessions = [s for s in sessions if s["path"] == only]
    for s in sessions:
        path = s["path"]
        total = int(s.get("turns") or 0)
        marks = {n: state.get(n, {}).get(path, 0) for n in targets}
        if not marks:
            break
        start = min(marks.values()) + 1
        if start > total:
            continue
        header, messages = turns.session(path)
        total = len(messages)
        if start > total:
            continue
        view = _View(notes, specs, header, people)
        batch_stores = {n: sp for n, sp in targets.items() if marks[n] < total and not sp.plugin}
        batch = Batch(path, header, messages, start, batch_stores, view, day)
        key = (path, start, tuple(sorted(batch_stores)))
        if key in answers:
            ext = Extraction(list(answers[key].claims))
        else:
            ext = cur.extract(batch) if batch_stores else Extraction()
            answers[key] = ext
            res.calls += ext.calls
            res.tokens_in += ext.tokens_in
            res.tokens_out += ext.tokens_out
            if ext.cost is not None:
                res.cost = (res.cost or 0.0) + ext.cost
            ext = Extraction(list(ext.claims))
        for n, sp in targets.items():
            if sp.plugin and marks[n] < total:
                ext.claims += _plugin_claims(
                    sp, Batch(path, header, messages, start, {n: sp}, view, day)
                )
        ext.claims = screen_removed(vault, notes, path, ext.claims, dry_run=res.dry_run)
        res.sessions += 1
        res.turns_read += total - start + 1
        for p in ext.claims:
            _merge_one(p, batch, specs, targets, marks, notes, turns, res)
        for n in targets:
            state.setdefault(n, {})[path] = total

    changed = notes.changed()
    res.notes = sorted(changed)
    touched_stores = sorted(
        {notes.notes[p].store for p in changed if notes.notes[p].store in specs}
    )
    files: dict[str, str] = dict(changed)
    for st in touched_stores:
        files[f"{specs[st].config.folder}/INDEX.md"] = store_index(vault, specs[st], notes)
    old_state = read_text(vault.root / STATE_REL) if (vault.root / STATE_REL).exists() else None
    return _Plan(files, dict(changed), render_state(state), old_state)


def _finish(vault: Floor, plan: _Plan, res: CurateResult, started: float) -> CurateResult:
    """Under the lock: show the diff (dry run) or write the plan as one commit."""
    files = plan.files
    res.seconds = round(time.perf_counter() - started, 3)
    res.counts = _counts(vault, plan.changed)
    if res.dry_run:
        res.diff = _diff(vault, files)
        return res
    if not files and plan.new_state == plan.old_state:
        return res
    _commit_hand_edits(vault, files)
    if plan.new_state != plan.old_state:
        files[STATE_REL] = plan.new_state
    res.commit = vault.write_notes(
        files,
        command="curate",
        subject=_subject(res),
        trailers=_trailers(res),
        author=vault.config.agent,
        body=_body(res),
        refresh=bool(plan.changed),
    )
    res.seconds = round(time.perf_counter() - started, 3)
    return res


def _commit_hand_edits(vault: Floor, files: dict[str, str]) -> None:
    """Record a human's uncommitted edits to notes this run rewrites, as the human's commit.

    Otherwise the agent's commit would carry the human's lines and `memctl diff` could not
    tell who wrote what.
    """
    dirty = {line[3:].strip().strip('"') for line in vault.history.dirty()}
    edited = sorted(dirty & set(files))
    if not edited:
        return
    n = len(edited)
    vault.commit_hand_edits(edited, f"edit: {n} note{'s' * (n != 1)} edited by hand", notes=str(n))


def _plugin_claims(spec: StoreSpec, batch: Batch) -> list[Proposal]:
    from memctl.curate.stores import plugin_claims

    return plugin_claims(spec, batch)


def _reject(
    res: CurateResult, p: Proposal, reason: str, ref: str | None = None, quote: str | None = None
) -> None:
    # Rejections are printed and go into the commit message: never with a secret in them.
    text = redact(p.text)[0]
    quote = redact(quote)[0] if quote else quote
    res.rejected.append(Rejection(p.store, p.note, text, reason, ref, quote))


def _merge_one(
    p: Proposal,
    batch: Batch,
    specs: dict[str, StoreSpec],
    targets: dict[str, StoreSpec],
    marks: dict[str, int],
    notes: NoteSet,
    turns: RawTurns,
    res: CurateResult,
) -> None:
    """Verify one proposed claim and merge it, or record why it was refused."""
    spec = specs.get(p.store)
    if spec is None:
        _reject(
            res,
            p,
            f"store {p.store!r} is not configured; curation writes only to configured stores",
        )
        return
    if p.store not in targets:
        why = "off" if spec.config.mode == "off" else "not selected for this run"
        _reject(res, p, f"store {p.store!r} is {why}")
        return
    propose = spec.config.mode == "propose"
    if forced_proposal(spec.config) and not propose:
        _reject(
            res,
            p,
            f"store {p.store!r} writes to instructions/ in {spec.config.mode} mode; "
            "instructions are only ever proposed",
        )
        return
    if p.action not in ("retract", "resolve") and not p.text.strip():
        _reject(res, p, "claim has no text")
        return
    if p.citations and all(q.turn - 1 in batch.rewound for q in p.citations):
        # said on a branch the person went back from: still said, never the current word
        if p.action != "add":
            _reject(res, p, f"{p.action} cites only turns of a branch the user rewound")
            return
        p = replace(p, text=rewound_text(p.text))
    if len(p.text) > MAX_CLAIM_CHARS:
        _reject(res, p, f"claim is longer than {MAX_CLAIM_CHARS} characters; one claim per line")
        return
    if not p.citations:
        _reject(res, p, "claim cites no turn")
        return
    if find_secrets(p.text):
        _reject(res, p, "claim contains a secret; memory never copies one")
        return
    if label_shaped(p.text):
        # recall prints provenance after a claim; a claim that brings its own would pass
        # for another basis ("[human · …]") when shown
        _reject(res, p, "claim holds a provenance label ([stated · …]); memctl writes those")
        return
    cites: list[tuple[str, str]] = []
    fresh = False
    for q in p.citations:
        ref = f"{batch.session}#t{q.turn}"
        if not 1 <= q.turn <= len(batch.messages):
            _reject(
                res,
                p,
                f"cites t{q.turn}, but the session has t1..t{len(batch.messages)}",
                ref,
                q.quote,
            )
            return
        verdict = verify_citation(
            p.text, ref, q.quote, turn=batch.messages[q.turn - 1],
            observed=p.observed and not forced_proposal(spec.config),
        )  # fmt: skip
        if isinstance(verdict, Refused):
            _reject(res, p, verdict.why, ref, q.quote)
            return
        fresh = fresh or q.turn > marks.get(p.store, 0)
        cites.append((ref, q.quote))
    if not fresh:
        return  # everything it cites was curated before: nothing new to say
    scope = note_scope(spec.config.scope, batch.scope, batch.user)
    if p.about and p.about != batch.user and spec.config.scope == "user":
        # What another speaker said of themselves is as visible as the session it was said in,
        # never filed in that person's private scope by someone else's session.
        scope = batch.scope if batch.scope in ("team", "global") else f"user:{batch.user}"
    section = _section(spec, p.section)
    meta: dict[str, Any] = dict(p.meta)
    if p.entity is not None:
        meta["aliases"] = sorted({a for a in p.entity.aliases if a and a != p.note})
        meta["tags"] = [p.entity.type]
    note = notes.locate(p.store, scope, p.note, p.slug or _slug_hint(spec, p.note), propose, meta)
    if p.entity is not None:
        _merge_meta(note, meta)
    for key in PROJECT_KEYS:  # a note from before the curator recorded its project
        if meta.get(key) and not note.meta.get(key):
            note.meta[key] = meta[key]
    when = turns.date(cites[-1][0]) or batch.today
    text = one_line(p.text)  # a turn's bidi, zero-width and control characters stay in raw/
    # A claim whose quotes share no content word with it is read from the turn, not said in
    # it ("chose pnpm" quoting "yes, the second one"): it is kept as inferred, the label
    # recall shows and the test `memctl verify` applies (core.provenance.supports).
    # An observed claim is read from what the agent's or a tool's turn shows (a command, a
    # commit): labelled #observed, never #inferred, never as said.
    # What a person pasted into their turn (a test run, a log) is shown there, not said by
    # them: a claim read from it is observed too (core.pasted draws the line, as for titles).
    observed = p.observed and any(
        not by_person(m := batch.messages[q.turn - 1]) or pasted_by(m, q.quote)
        for q in p.citations
    )
    inferred = not observed and (p.inferred or not supports(text, [q for _, q in cites]))
    if (inferred or observed) and not supports(text, [q for _, q in cites]) and not (
        inference_supported(text, turn_texts(turns, [r for r, _ in cites]))
    ):
        # nor with the turns it cites and those just before them: not read from them at all
        links = unquoted_links(strip_links(text), [q for _, q in cites])
        why = (f"states {links[0]!r}, which none of its quotes holds" if links
               else "shares no word with its quotes or the turns they answer")  # fmt: skip
        _reject(res, p, why, cites[0][0] if cites else None)
        return
    out = notes.apply(
        note, section, spec.sections, text, cites, inferred, p.action, p.replaces, when, observed
    )
    if out.action == "noop":
        res.noop += 1
        return
    if propose:
        res.proposed += 1
        return
    attr = {
        "added": "added",
        "reinforced": "reinforced",
        "updated": "updated",
        "superseded": "superseded",
        "retracted": "retracted",
        "resolved": "resolved",
    }[out.action]
    setattr(res, attr, getattr(res, attr) + 1)


# Where a derived note's work was done (memctl.recall.project): kept on notes made before.
PROJECT_KEYS = ("project", "project_id", "cwd", "remote")


def _slug_hint(spec: StoreSpec, title: str) -> str:
    """A file name from a title, without the template's fixed prefix ("Profile: kim" -> kim)."""
    prefix = spec.title.split("{", 1)[0]
    if "{" in spec.title and prefix and title.startswith(prefix) and len(title) > len(prefix):
        return title[len(prefix) :]
    return title


def _merge_meta(note: Any, meta: dict[str, Any]) -> None:
    for key in ("aliases", "tags"):
        if meta.get(key):
            have = list(note.meta.get(key) or [])
            for v in meta[key]:
                if v not in have and v != note.title:
                    have.append(v)
            note.meta[key] = have


def _section(spec: StoreSpec, name: str) -> str:
    """The template's own spelling of a section; unknown names go to the first section."""
    for s in spec.sections:
        if s.casefold() == name.strip().casefold() and s != HISTORY:
            return s
    if spec.free_sections and name.strip() and name.strip().casefold() != HISTORY.casefold():
        return " ".join(name.split())
    return spec.sections[0]


def _diff(vault: Floor, files: dict[str, str]) -> str:
    parts: list[str] = []
    for rel in sorted(files):
        target = vault.root / rel
        old = read_text(target) if target.exists() else ""
        new = files[rel]
        if old == new:
            continue
        parts += difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            f"a/{rel}" if old else "/dev/null",
            f"b/{rel}",
        )
    return "".join(parts)


def _counts(vault: Floor, changed: dict[str, str]) -> dict[str, int]:
    from memctl.curate.claimdiff import count_changes

    before = {
        rel: read_text(vault.root / rel) if (vault.root / rel).is_file() else None
        for rel in changed
    }
    return count_changes({rel: (before[rel], text) for rel, text in changed.items()})


def _subject(res: CurateResult) -> str:
    bits = [f"{k} {a}" for a, k in res.counts.items()] or ["no claim changes"]
    if res.proposed and "proposed" not in res.counts:
        bits.append(f"{res.proposed} proposed")
    if res.rejected:
        bits.append(f"{len(res.rejected)} rejected")
    n = res.turns_read
    return f"curate: {', '.join(bits)} from {n} turn{'s' * (n != 1)}"


def _trailers(res: CurateResult) -> dict[str, str]:
    t = {
        "Memctl-Curator": res.curator,
        "Memctl-Model": res.model or "none",
        "Memctl-Sessions": str(res.sessions),
        "Memctl-Turns-Read": str(res.turns_read),
        "Memctl-Claims-Added": str(res.counts.get("added", 0)),
        "Memctl-Claims-Updated": str(
            res.counts.get("reinforced", 0) + res.counts.get("edited", 0)
        ),
        "Memctl-Claims-Superseded": str(res.counts.get("superseded", 0)),
        "Memctl-Claims-Retracted": str(
            res.counts.get("retracted", 0) + res.counts.get("resolved", 0)
        ),
        "Memctl-Claims-Proposed": str(res.proposed),
        "Memctl-Claims-Rejected": str(len(res.rejected)),
    }
    if res.calls:
        t["Memctl-Tokens"] = f"{res.tokens_in}+{res.tokens_out}"
        t["Memctl-Cost"] = "unknown" if res.cost is None else f"{res.cost:.6f}"
    return t


def _body(res: CurateResult) -> str:
    if not res.rejected:
        return ""
    lines = ["Rejected:"]
    for r in res.rejected[:30]:
        where = f" ({r.ref})" if r.ref else ""
        lines.append(f"- {r.store}: {r.text[:80]}{where}: {r.reason}")
    if len(res.rejected) > 30:
        lines.append(f"- … {len(res.rejected) - 30} more")
    return "\n".join(lines)
