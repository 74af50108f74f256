"""`memctl gc`: retention policies from config, applied through forget's cascade.

    [retention]
    raw_max_age = "2y"                         # raw sessions older than this are forgotten
    raw_max_age_by_scope = { "user:*" = "90d" }   # per scope (a trailing * matches a prefix)
    pinned = ["decisions/*"]                   # notes gc never removes (globs; or `pinned: true`)

    [stores.sessions]
    ttl = "180d"                               # notes of this store not updated for this long

A dry run by default: `memctl gc` prints what would go, `memctl gc --apply` does it in one
commit. An expired session goes the way `memctl forget` takes it (claims learned only from
it go, others lose its citation), except that a session a pinned note cites is kept, and a
pinned note is never removed.
"""

from __future__ import annotations

import fnmatch
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from memctl.core.store import read_text
from memctl.errors import MemctlError

if TYPE_CHECKING:
    from memctl.core.floor import Floor


@dataclass
class GcResult:
    """What retention removes (or would): sessions past their age, notes past their TTL."""

    dry_run: bool
    expired_sessions: list[str] = field(default_factory=list)
    expired_notes: list[str] = field(default_factory=list)
    kept_pinned: list[str] = field(default_factory=list)
    cascade: dict[str, Any] = field(default_factory=dict)
    commit: str | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def _age(value: Any, what: str) -> int:
    from memctl.core.when import parse_duration

    d = parse_duration(str(value).strip().lower())
    if d is None:
        raise MemctlError(f"[retention] {what} = {value!r} is not a duration (90d, 12w, 2y)",
                          ".memctl/config.toml", exit_code=2)  # fmt: skip
    return int(d.total_seconds())


def _policy(vault: Floor) -> tuple[int | None, dict[str, int], list[str], dict[str, int]]:
    data = vault.config.data if isinstance(vault.config.data, dict) else {}
    ret = data.get("retention", {})
    if not isinstance(ret, dict):
        raise MemctlError("[retention] must be a table", ".memctl/config.toml", exit_code=2)
    raw = _age(ret["raw_max_age"], "raw_max_age") if ret.get("raw_max_age") else None
    by_scope = {
        str(k): _age(v, f"raw_max_age_by_scope.{k}")
        for k, v in (ret.get("raw_max_age_by_scope") or {}).items()
    }
    pinned = [str(p) for p in ret.get("pinned") or []]
    ttls = {}
    for name, over in (data.get("stores") or {}).items():
        if isinstance(over, dict) and over.get("ttl"):
            ttls[str(name)] = _age(over["ttl"], f"stores.{name}.ttl")
    return raw, by_scope, pinned, ttls


def _max_age(scope: str, default: int | None, by_scope: dict[str, int]) -> int | None:
    if scope in by_scope:
        return by_scope[scope]
    for pat, age in by_scope.items():
        if pat.endswith("*") and scope.startswith(pat[:-1]):
            return age
    return default


def _epoch(value: Any) -> float | None:
    from memctl.core.raw import parse_time

    if value is None or value == "":
        return None
    if not isinstance(value, str):
        value = str(value)
    if len(value) == 10:
        value += "T00:00:00Z"
    t = parse_time(value)
    return t.timestamp() if t else None


def gc(vault: Floor, *, apply: bool = False, now: datetime | None = None) -> GcResult:
    """Find what retention expires; with `apply`, forget it in one commit."""
    from memctl.core.notes import parse_note
    from memctl.gitops import forget as fg

    now = now or datetime.now(UTC)
    raw_age, by_scope, pinned_globs, ttls = _policy(vault)
    res = GcResult(dry_run=not apply)
    with vault.lock:
        notes = fg.note_files(vault)
        pinned: set[str] = set()
        cited_by_pinned: set[str] = set()
        parsed = {}
        for rel in notes:
            try:
                note = parse_note(read_text(vault.root / rel), rel)
            except MemctlError:
                continue
            parsed[rel] = note
            if note.meta.get("pinned") is True or any(
                fnmatch.fnmatch(rel, g) or fnmatch.fnmatch(rel[:-3], g) for g in pinned_globs
            ):
                pinned.add(rel)
                cited_by_pinned |= {c.path for c in note.footnotes.values() if c.ref}
        for s in vault.sessions():
            age = _max_age(str(s.get("scope") or ""), raw_age, by_scope)
            started = _epoch(s.get("ended") or s.get("started"))
            if age is None or started is None or now.timestamp() - started <= age:
                continue
            if s["path"] in cited_by_pinned:
                res.kept_pinned.append(s["path"])
                continue
            res.expired_sessions.append(s["path"])
        for rel, note in parsed.items():
            ttl = ttls.get(note.store)
            updated = _epoch(note.meta.get("updated"))
            if ttl is None or updated is None or now.timestamp() - updated <= ttl:
                continue
            if rel in pinned:
                res.kept_pinned.append(rel)
                continue
            res.expired_notes.append(rel)
        targets = fg.Targets("retention", "retention policy")
        targets.sessions = set(res.expired_sessions)
        targets.notes = set(res.expired_notes)
        out = fg.ForgetResult("gc", "retention", not apply)
        if not targets.sessions and not targets.notes:
            return res
        if not apply:
            fg.plan(vault, targets, out, None)
            res.cascade = out.to_json()
            return res
        n, m = len(res.expired_sessions), len(res.expired_notes)
        with vault.change(
            "gc",
            subject=f"gc: {n} session{'s' * (n != 1)} past retention, "
            f"{m} note{'s' * (m != 1)} past their store's TTL",
        ) as ch:
            fg.plan(vault, targets, out, ch.tx)
            ch.body = fg.commit_body(out)
            ch.trailers["Memctl-Sessions-Deleted"] = str(n)
            ch.trailers["Memctl-Notes-Deleted"] = str(len(out.notes_deleted))
            ch.trailers["Memctl-Claims-Removed"] = str(len(out.claims_removed))
        res.commit = ch.commit
        fg.prune_folders(vault.root, [*out.sessions_deleted, *out.notes_deleted])
        res.cascade = out.to_json()
    return res
