"""Curation state a pull may bring, and what it may not decide for this clone.

`.memctl/state/curation.json` (which turns of which session each store has curated) and
`.memctl/state/removed.jsonl` (claims a person took out, never to be learned again from the
same turns) are shared, and that buys the team two things: a session a teammate curated is
not curated again by everyone who pulls it, and a claim a person removed is not learned
back by a teammate's curator. But both only ever *stop* learning, so a remote that could
write them freely could keep memory from ever learning what this clone's own sessions say.
After each pull, sync therefore screens what the pull changed in them against git:

- A watermark a pull advanced for a session this clone ingested itself (a commit in its
  own reflog added the raw file, memctl.core.lineage) is set back to this clone's: the
  owner curates their own sessions, so a teammate having curated one first costs one more
  curation of it (the builtin curator writes nothing new; a model is asked again), never
  the session. A watermark past the end of its session is cut to the session's turns
  (a session can grow: the turns appended later must still be curated).
- A removal record a pull added is kept only if the note it names held that claim in some
  commit of the history being pulled into (someone really took it out); one for a claim
  the notes never held would stop it from ever being learned, and is left out.

What was set back or left out is written in sync's own commit (and pushed, so the remote
is put right too) and reported. A plain `git pull` is not screened: sync is the way a vault
takes in a remote (docs/sync.md).
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

from memctl.core.lineage import cat_file_objects
from memctl.errors import MemctlError

_TURNS = re.compile(r"^turns: (\d+)\s*$", re.M)


def _git(root: Path, *args: str, input: bytes | None = None) -> bytes | None:
    proc = subprocess.run(["git", "-C", str(root), *args], input=input, capture_output=True,
                          check=False)  # fmt: skip
    return proc.stdout if proc.returncode == 0 else None


def _show(root: Path, rev: str, rel: str) -> str:
    out = _git(root, "show", f"{rev}:{rel}")
    return "" if out is None else out.decode("utf-8", "replace")


def _marks(text: str) -> dict[str, dict[str, int]]:
    try:
        data = json.loads(text) if text.strip() else {}
        stores = data.get("stores", {}) if isinstance(data, dict) else {}
        return {str(k): {str(p): int(n) for p, n in v.items()} for k, v in stores.items()}
    except (ValueError, TypeError, AttributeError):
        return {}


def _own_sessions(root: Path, raws: set[str]) -> set[str]:
    """Which of `raws` a commit this clone made added (the user's own ingest)."""
    from memctl.core.lineage import own_commits

    out = _git(root, "log", "--diff-filter=A", "--name-only", "--format=%x00%H", "HEAD",
               "--", "raw/")  # fmt: skip
    if out is None:
        return set()
    own = own_commits(root)
    mine: set[str] = set()
    for chunk in out.decode("utf-8", "replace").split("\0"):
        sha, _, names = chunk.strip().partition("\n")
        if sha in own:
            mine.update(n for n in names.split("\n") if n in raws)
    return mine


def _turns(root: Path, raw: str) -> int | None:
    try:
        with (root / raw).open("rb") as fh:
            head = fh.read(4096).decode("utf-8", "replace")
    except OSError:
        return None
    m = _TURNS.search(head)
    return int(m.group(1)) if m else None


def screen_watermarks(root: Path, ours: str) -> tuple[str | None, list[str]]:
    """(the corrected curation.json, or None when the pull's is fine; report lines)."""
    from memctl.curate.specs import STATE_REL, render_state

    path = root / STATE_REL
    if not path.is_file() or path.is_symlink():
        return None, []
    now_text = path.read_text(encoding="utf-8")
    old, new = _marks(_show(root, ours, STATE_REL)), _marks(now_text)
    raised = {(store, raw) for store, marks in new.items() for raw, n in marks.items()
              if n > old.get(store, {}).get(raw, 0)}  # fmt: skip
    if not raised:
        return None, []
    mine = _own_sessions(root, {raw for _, raw in raised})
    kept: set[str] = set()
    cut: set[str] = set()
    for store, raw in sorted(raised):
        if raw in mine:
            was = old.get(store, {}).get(raw)
            if was is None:
                new[store].pop(raw, None)
            else:
                new[store][raw] = was
            kept.add(raw)
            continue
        turns = _turns(root, raw)
        if turns is not None and new[store][raw] > turns:
            new[store][raw] = turns
            cut.add(raw)
    report = []
    if kept:
        more = f" and {len(kept) - 3} more" if len(kept) > 3 else ""
        report.append(
            f"curation watermarks: the pull marked {len(kept)} of your own sessions as curated "
            f"({', '.join(sorted(kept)[:3])}{more}); kept yours, so `memctl curate` learns them"
        )
    if cut:
        report.append(f"curation watermarks: {len(cut)} pulled past the end of their session "
                      f"(e.g. {sorted(cut)[0]}); cut to its turns")  # fmt: skip
    if not report:
        return None, []
    return render_state({k: v for k, v in new.items() if v}), report


def _held(root: Path, note: str) -> set[str]:
    """Digests of every claim the note held in any commit of HEAD's history."""
    from memctl.curate.removals import agent_claims, claim_digest

    revs = _git(root, "rev-list", "HEAD", "--", note)
    if not revs:
        return set()
    specs = "".join(f"{sha}:{note}\n" for sha in revs.decode().split())
    out = _git(root, "cat-file", "--batch", input=specs.encode()) or b""
    digests: set[str] = set()
    for _, _, blob in cat_file_objects(out):
        text = blob.decode("utf-8", "replace")
        digests.update(claim_digest(t) for t, _, _ in agent_claims(text, note))
    return digests


def screen_removals(root: Path, ours: str) -> tuple[str | None, list[str]]:
    """(the removed-claims record without what the history does not bear out; report)."""
    from memctl.curate.removals import REMOVED_REL, Removals

    path = root / REMOVED_REL
    if not path.is_file() or path.is_symlink():
        return None, []
    old_lines = set(_show(root, ours, REMOVED_REL).splitlines())
    try:
        rec = Removals.load(root)
    except MemctlError:
        return None, []
    added: list[Any] = []
    for key, r in rec.records.items():
        if r.to_line() not in old_lines:
            added.append((key, r))
    if not added:
        return None, []
    held: dict[str, set[str]] = {}
    dropped = []
    for key, r in added:
        if r.note not in held:
            held[r.note] = _held(root, r.note) if r.note.endswith(".md") else set()
        if r.claim not in held[r.note]:
            rec.records.pop(key)
            dropped.append(r)
    if not dropped:
        return None, []
    return rec.render(), [
        f"removals: {len(dropped)} removal record(s) the pull brought name claims "
        f"{dropped[0].note or 'a note'} never held; left out (they would keep those claims "
        "from ever being learned)"
    ]


def screen(root: Path, ours: str) -> tuple[dict[str, str], list[str]]:
    """What a pull onto `ours` (this clone's head before it) changed in the curation state
    that this clone does not take: the files to write instead, and the report."""
    from memctl.curate.removals import REMOVED_REL
    from memctl.curate.specs import STATE_REL

    files: dict[str, str] = {}
    report: list[str] = []
    for rel, fn in ((STATE_REL, screen_watermarks), (REMOVED_REL, screen_removals)):
        text, lines = fn(root, ours)
        if text is not None:
            files[rel] = text
        report += lines
    return files, report
