"""`memctl blame NOTE` and `memctl drift [NOTE]`: who wrote each claim, and what moved.

Notes are derived from raw turns, never re-summarised from notes, so their words should
stay close to what people said. Git keeps every revision; these commands read it:

- blame: each claim line with the commit that added or last changed it, and that
  commit's command, curator, model and author (from memctl's trailers);
- drift: claims whose wording moved away from their quote across revisions (the words
  they share with their quotes fell), claims that lost sources they once had, and notes
  rewritten often.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from memctl.core.notes import Note, parse_note, strip_links
from memctl.errors import InputError, MemctlError

if TYPE_CHECKING:
    from memctl.core.floor import Floor

REWRITES = 5  # a note changed by this many commits is "rewritten often"
DRIFT = 0.25  # overlap with the quote fell by at least this much since first written
_WORD = re.compile(r"[\w$%€£]+")


@dataclass(frozen=True)
class BlameLine:
    line: int
    text: str
    commit: str
    date: str
    author: str
    command: str
    curator: str
    model: str
    human: bool


@dataclass
class DriftItem:
    note: str
    kind: str  # wording | sources | rewritten
    detail: str
    claim: str = ""


@dataclass
class DriftResult:
    notes: int = 0
    items: list[DriftItem] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"notes": self.notes, "items": [asdict(i) for i in self.items]}


def _git(vault: Floor, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(vault.root), *args], capture_output=True, check=False
    )
    if proc.returncode != 0:
        raise MemctlError(f"git {args[0]} failed: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout.decode("utf-8", "surrogateescape")


def _note_rel(vault: Floor, note: str) -> str:
    from memctl.core import refs

    ref = refs.resolve(vault, note)
    if ref.kind != "note":
        raise InputError(f"{note} is not a note")
    return ref.path


def blame(vault: Floor, note: str) -> list[BlameLine]:
    """Every claim line of NOTE with the commit (and run) that last wrote it."""
    from memctl.core.notes import parse_claim

    rel = _note_rel(vault, note)
    out = _git(vault, "blame", "--porcelain", "--", rel)
    current = (vault.root / rel).read_text(encoding="utf-8").split("\n")
    body_from = next((i + 1 for i, x in enumerate(current) if i and x == "---"), 0)
    commits: dict[str, dict[str, str]] = {}
    blames: dict[str, dict[str, str]] = {}
    lines: list[BlameLine] = []
    sha = ""
    final = 0
    for raw in out.splitlines():
        head = raw.split(" ")
        if len(head) >= 3 and re.fullmatch(r"[0-9a-f]{40}", head[0]):
            sha, final = head[0], int(head[2])
            continue
        if not raw.startswith("\t"):
            continue
        text = raw[1:]
        claim = parse_claim(text, history=True)
        if claim is None:
            continue
        if final <= body_from:
            continue  # frontmatter lists (derived_by, aliases) are not claims
        who = _origin(vault, rel, sha, text, commits, blames)
        info = commits[who]
        lines.append(BlameLine(final, text, who, info["date"], info["author"], info["command"],
                               info["curator"], info["model"], claim.human))  # fmt: skip
    return lines


def _origin(
    vault: Floor,
    rel: str,
    sha: str,
    text: str,
    commits: dict[str, dict[str, str]],
    blames: dict[str, dict[str, str]],
) -> str:
    """The commit that wrote `text`, looking through undo and rollback commits: they put
    back a line as an earlier commit wrote it, and that commit is who wrote the claim."""
    for _ in range(20):  # an undo of a rollback of an undo...: a chain, never a loop
        if sha not in commits:
            commits[sha] = _commit_info(vault, sha)
        rev = commits[sha]["restores"]
        if not rev:
            return sha
        if rev not in blames:
            blames[rev] = _line_commits(vault, rev, rel)
        earlier = blames[rev].get(text)
        if earlier is None:
            return sha  # the line is not in the version put back: the restoring commit wrote it
        sha = earlier
    return sha


def _line_commits(vault: Floor, rev: str, rel: str) -> dict[str, str]:
    """Each line of `rel` at `rev` -> the commit that last wrote it (first occurrence)."""
    try:
        out = _git(vault, "blame", "--porcelain", rev, "--", rel)
    except MemctlError:
        return {}  # the note did not exist there
    found: dict[str, str] = {}
    sha = ""
    for raw in out.splitlines():
        head = raw.split(" ")
        if len(head) >= 3 and re.fullmatch(r"[0-9a-f]{40}", head[0]):
            sha = head[0]
        elif raw.startswith("\t"):
            found.setdefault(raw[1:], sha)
    return found


def _commit_info(vault: Floor, sha: str) -> dict[str, str]:
    if set(sha) == {"0"}:
        return {"date": "", "author": "not committed", "command": "edit", "curator": "-",
                "model": "-", "restores": ""}  # fmt: skip
    from memctl.core.history import parse_trailers

    rec = _git(vault, "show", "-s", "--format=%aI%x00%an <%ae>%x00%s%x00%b", sha)
    date, author, subject, body = [*rec.split("\x00", 3), "", "", "", ""][:4]
    t = parse_trailers(body)
    cmd = t.get("Memctl-Command") or ("revert" if subject.startswith('Revert "') else "git")
    # the version an undo or rollback put back: the undone commit's parent, or REV
    restores = f"{t['Memctl-Undoes']}^" if t.get("Memctl-Undoes") else ""
    if cmd == "rollback":
        restores = t.get("Memctl-To", "")
    return {
        "date": date[:10],
        "author": author,
        "command": cmd,
        "curator": t.get("Memctl-Curator", "-"),
        "model": t.get("Memctl-Model", "-"),
        "restores": restores,
    }


def _overlap(text: str, quotes: list[str]) -> float:
    """Share of a claim's words found in its quotes (links read as what they show)."""
    words = {w.casefold() for w in _WORD.findall(strip_links(text))}
    if not words or not quotes:
        return 0.0
    said = {w.casefold() for q in quotes for w in _WORD.findall(q)}
    return len(words & said) / len(words)


def _versions(vault: Floor, rel: str) -> list[tuple[str, Note]]:
    shas = _git(vault, "log", "--format=%H", "--", rel).split()
    out = []
    for sha in reversed(shas):
        try:
            text = _git(vault, "show", f"{sha}:{rel}")
            out.append((sha, parse_note(text, rel)))
        except MemctlError:
            continue
    return out


def drift(vault: Floor, note: str | None = None) -> DriftResult:
    """Claims drifting from their quotes, claims that lost sources, notes rewritten often."""
    from memctl.gitops import forget

    rels = [_note_rel(vault, note)] if note else forget.note_files(vault)
    res = DriftResult()
    for rel in rels:
        versions = _versions(vault, rel)
        if not versions:
            continue
        res.notes += 1
        if len(versions) >= REWRITES:
            res.items.append(DriftItem(rel, "rewritten", f"changed by {len(versions)} commits"))
        first = _first_wordings(versions)
        refs_by_key: dict[str, set[str]] = {}
        for _sha, n in versions:
            for _, c in n.all_claims():
                refs = frozenset(x.ref for x in n.citations(c) if x.ref)
                if refs:
                    refs_by_key.setdefault(c.key, set()).update(refs)
        _, now = versions[-1]
        for _, c in now.all_claims():
            cites = now.citations(c)
            refs = frozenset(x.ref for x in cites if x.ref)
            if not refs:
                continue
            score = _overlap(c.text, [x.quote for x in cites])
            was_text, was = first.get(c.text, (c.text, score))
            if was_text != c.text and was - score >= DRIFT:
                res.items.append(DriftItem(
                    rel, "wording",
                    f"shares {score:.0%} of its words with its quotes, {was:.0%} when first "
                    f"written ({was_text!r})", c.text))  # fmt: skip
            lost = refs_by_key.get(c.key, set()) - refs
            if lost:
                res.items.append(DriftItem(
                    rel, "sources", f"once cited {len(lost)} more: {', '.join(sorted(lost))}",
                    c.text))  # fmt: skip
    return res


def _first_wordings(versions: list[tuple[str, Note]]) -> dict[str, tuple[str, float]]:
    """Each reworded claim's text -> its first wording and how much of that its quotes held.

    A claim is followed from one revision to the next by the turns it cites: a line gone and
    a line come, citing the same turns, are one claim reworded. One turn often gives several
    claims (a decision and the curator's own "Decided on ..." line), so a line that stayed is
    never paired with a wording another line had, and several changed at once are paired by
    the words they share.
    """
    first: dict[str, tuple[str, float]] = {}
    before: dict[frozenset[str], dict[str, float]] = {}
    for _sha, n in versions:
        now: dict[frozenset[str], dict[str, float]] = {}
        for _, c in n.all_claims():
            cites = n.citations(c)
            refs = frozenset(x.ref for x in cites if x.ref)
            if refs:
                now.setdefault(refs, {})[c.text] = _overlap(c.text, [x.quote for x in cites])
        for refs, texts in now.items():
            was = before.get(refs, {})
            gone = [t for t in was if t not in texts]
            came = [t for t in texts if t not in was]
            pairs = sorted(((_shared(g, t), g, t) for g in gone for t in came), reverse=True)
            for _, g, t in pairs:
                if g in gone and t in came:
                    gone.remove(g)
                    came.remove(t)
                    first[t] = first.get(g, (g, was[g]))
        before = now
    return first


def _shared(a: str, b: str) -> int:
    return len({w.casefold() for w in _WORD.findall(a)} & {w.casefold() for w in _WORD.findall(b)})
