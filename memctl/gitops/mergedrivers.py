"""Git merge drivers, so that revert, cherry-pick, rebase, merge and sync never conflict.

Git calls `python -m memctl.gitops.mergedrivers KIND BASE OURS THEIRS PATH` for the files
`.gitattributes` assigns to a memctl driver; the merged text replaces OURS and exit 0
tells git it is resolved. `memctl init` registers them in the repository's own config
(a clone must run `memctl init` once: git never takes drivers from a remote).

- index: INDEX.md files are generated from the notes. Git merges a whole tree before it
  writes any file, so a driver cannot regenerate from the merged notes; it merges the
  generated lines instead, one per note or session keyed by its link (3-way: a line either
  side dropped is dropped, a line either side changed takes that change, counts add up).
  That is what regenerating gives in every case but ties in ordering, and the next memctl
  write regenerates; `memctl doctor` reports any that are stale.
- note: claim lines merge as a set (see `merge_notes`).
- raw: a raw session only ever grows, so the longer of two versions that agree on the
  shorter's turns is the merge. Two versions that differ in a turn are both kept: theirs
  is saved beside as a session of its own, nothing is lost.
- state: curation watermarks merge by taking the further of the two per session.

Kept free of gitpython, tantivy and typer: git runs this once per conflicting file.
"""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from pathlib import Path

DRIVERS = {
    "memctl-note": ("note", "memctl: merge claim lines of a note"),
    "memctl-index": ("index", "memctl: merge a generated INDEX.md"),
    "memctl-raw": ("raw", "memctl: raw sessions only grow"),
    "memctl-state": ("state", "memctl: curation watermarks"),
}

ATTRIBUTES = """\
# memctl: merge drivers, registered in .git/config by `memctl init` (run it in every clone)
*.md merge=memctl-note
raw/** merge=memctl-raw
INDEX.md merge=memctl-index
.memctl/state/curation.json merge=memctl-state
.memctl/state/removed.jsonl merge=union
"""
MARK = "# memctl: merge drivers"
# The same bindings in the repository's own attributes file, which outranks any tracked
# .gitattributes: a pulled .gitattributes cannot point a note at another driver (or at
# `union`), nor set a filter that runs code or rewrites bytes on checkout.
# Nor may it change the bytes a checkout writes (`text eol=crlf` turned every note and raw
# session CRLF in the work tree) or name a diff driver: vault files are kept byte for byte.
INFO_ATTRIBUTES = """\
# memctl: bound here by `memctl init`/`memctl sync`; a tracked .gitattributes cannot override
* !merge !filter !ident !working-tree-encoding !diff -text !eol
""" + "\n".join(x for x in ATTRIBUTES.splitlines()[1:]) + "\n"
# what earlier versions wrote there, replaced by `bind`
_OLD_INFO = (INFO_ATTRIBUTES.replace(" !diff -text !eol", ""),)
CONFLICTS_DIR = ".memctl/conflicts"


def attributes_text(existing: str | None) -> str | None:
    """The .gitattributes with memctl's lines; None when they are already there."""
    if existing is None:
        return ATTRIBUTES
    if MARK in existing:
        return None
    return existing.rstrip("\n") + "\n\n" + ATTRIBUTES


def driver_command(kind: str) -> str:
    exe = sys.executable.replace("'", "'\\''")
    return f"'{exe}' -m memctl.gitops.mergedrivers {kind} %O %A %B %P"


def _info_attributes(root: Path) -> Path:
    from memctl.core.localstate import git_dir

    return git_dir(root) / "info" / "attributes"


def bound(root: Path) -> bool:
    """Are the drivers bound through .git/info/attributes (where a pull cannot reach)?"""
    try:
        return INFO_ATTRIBUTES in _info_attributes(root).read_text(encoding="utf-8")
    except OSError:
        return False


def bind(root: Path) -> bool:
    """Write memctl's lines into .git/info/attributes (other lines kept, ours last so they
    win); True when the file changed."""
    from memctl.core.store import atomic_write

    p = _info_attributes(root)
    try:
        have = p.read_text(encoding="utf-8")
    except OSError:
        have = ""
    if INFO_ATTRIBUTES in have and have.endswith(INFO_ATTRIBUTES):
        return False
    rest = have
    for block in (*_OLD_INFO, INFO_ATTRIBUTES):
        rest = rest.replace(block, "")
    rest = rest.rstrip("\n")
    p.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(p, (rest + "\n\n" if rest else "") + INFO_ATTRIBUTES)
    return True


def install(root: Path) -> list[str]:
    """Register every driver in the repository's local config, and bind them in its own
    attributes; the names that changed."""
    changed = ["attributes"] if bind(root) else []
    for name in installed(root):  # one git run reads them all: init runs this every time
        kind, label = DRIVERS[name]
        for key, value in (("name", label), ("driver", driver_command(kind))):
            subprocess.run(
                ["git", "-C", str(root), "config", "--local", f"merge.{name}.{key}", value],
                capture_output=True,
                check=True,
            )
        changed.append(name)
    return changed


def installed(root: Path) -> list[str]:
    """Drivers missing from the local config (a fresh clone that has not run init), or
    registered with another command (a memctl from before its drivers moved)."""
    out = subprocess.run(
        ["git", "-C", str(root), "config", "--local", "--get-regexp", r"^merge\.memctl-"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    have = {
        line.split(".")[1]: line.split(" ", 1)[1]
        for line in out.splitlines()
        if ".driver " in line
    }
    return [n for n, (kind, _) in DRIVERS.items() if have.get(n) != driver_command(kind)]


# ---- INDEX.md --------------------------------------------------------------------------------

_LINK = re.compile(r"\]\(([^)\s]+)\)")
_COUNT = re.compile(r"· (\d+) (notes?) ·")
_MORE = re.compile(r"^- … (\d+) more")
_SESSION = re.compile(r"^- (\d{4}-\d{2}-\d{2}|undated) · ")
_NOTE_ROW = re.compile(r"^- \[(?P<title>.*)\]\([^)]*\) · (?P<updated>\d{4}-\d{2}-\d{2})")
_PLACEHOLDERS = ("- no notes yet", "- none yet")
RECENT = 15


def _sections(text: str) -> list[tuple[str, list[str], list[str]]]:
    """(heading, lines before the list, list lines) per `## ` section; heading '' first."""
    out: list[tuple[str, list[str], list[str]]] = [("", [], [])]
    for line in text.splitlines():
        if line.startswith("## "):
            out.append((line, [], []))
        elif line.startswith("- "):
            out[-1][2].append(line)
        elif not out[-1][2]:
            out[-1][1].append(line)
    return out


def _key(line: str) -> str:
    m = _LINK.search(line)
    return m.group(1) if m else line


def _merge_count(o: str | None, a: str, b: str) -> str:
    """Both sides changed a store's line: counts of notes add their changes up."""
    ma, mb = _COUNT.search(a), _COUNT.search(b)
    mo = _COUNT.search(o) if o else None
    if not (ma and mb and mo):
        return a
    n = int(ma.group(1)) + int(mb.group(1)) - int(mo.group(1))
    n = max(n, 0)
    return a[: ma.start()] + f"· {n} note{'s' * (n != 1)} ·" + a[ma.end() :]


def _merge_items(o: list[str], a: list[str], b: list[str]) -> list[str]:
    om = {_key(x): x for x in o}
    am = {_key(x): x for x in a}
    bm = {_key(x): x for x in b}
    out: dict[str, str] = {}
    for k in [*am, *(k for k in bm if k not in am)]:
        ina, inb, ino = k in am, k in bm, k in om
        if ino and not (ina and inb):
            continue  # one side dropped it (the note or session is gone)
        if not ino:
            out[k] = am[k] if ina else bm[k]
            continue
        if am[k] == om[k]:
            out[k] = bm[k]
        elif bm[k] == om[k] or am[k] == bm[k]:
            out[k] = am[k]
        else:
            out[k] = _merge_count(om[k], am[k], bm[k])
    return list(out.values())


def _order(items: list[str]) -> list[str]:
    """The order the generators write: sessions and notes newest first."""
    if items and all(_SESSION.match(x) for x in items):
        items = sorted(items, key=lambda x: _key(x), reverse=True)
        return sorted(items, key=lambda x: x[2:12], reverse=True)
    if items and all(_NOTE_ROW.match(x) for x in items):

        def title(x: str) -> str:
            m = _NOTE_ROW.match(x)
            return m.group("title") if m else x

        def updated(x: str) -> str:
            m = _NOTE_ROW.match(x)
            return (m.group("updated") or "") if m else ""

        items = sorted(items, key=title)
        return sorted(items, key=updated, reverse=True)
    return items


def merge_index(base: str, ours: str, theirs: str) -> str:
    """Three-way merge of a generated INDEX.md, line per note/session."""
    so, sa, sb = _sections(base), _sections(ours), _sections(theirs)
    by_o = {h: (p, items) for h, p, items in so}
    by_b = {h: (p, items) for h, p, items in sb}
    out: list[str] = []
    heads = [h for h, _, _ in sa] + [h for h, _, _ in sb if h not in {x for x, _, _ in sa}]
    by_a = {h: (p, items) for h, p, items in sa}
    for h in heads:
        pre, a_items = by_a.get(h) or by_b[h]
        o_items = by_o.get(h, ([], []))[1]
        b_items = by_b.get(h, ([], []))[1]

        def split(items: list[str]) -> tuple[list[str], int, str | None]:
            more = 0
            holder = None
            keep = []
            for x in items:
                m = _MORE.match(x)
                if m:
                    more = int(m.group(1))
                elif x.startswith(_PLACEHOLDERS):
                    holder = x
                else:
                    keep.append(x)
            return keep, more, holder

        oi, om, oh = split(o_items)
        ai, am, ah = split(a_items)
        bi, bm, bh = split(b_items)
        merged = _order(_merge_items(oi, ai, bi))
        total = len(ai) + am + (len(bi) + bm) - (len(oi) + om)
        if am or bm:
            extra = max(total - min(len(merged), RECENT), 0)
            merged = merged[:RECENT]
            if extra:
                tail = next(x for x in (*a_items, *b_items) if _MORE.match(x))
                merged.append(_MORE.sub(f"- … {extra} more", tail))
        if not merged and (ah or bh or oh):
            merged = [ah or bh or oh or ""]
        if h:
            out.append(h)
        out += pre
        if merged:
            out += merged
            out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


# ---- raw sessions ----------------------------------------------------------------------------


def merge_raw(base: str, ours: str, theirs: str, path: str, root: Path) -> str:
    """The longer of two agreeing versions; divergent turns keep theirs as its own session."""
    from memctl.core.raw import parse_session

    try:
        _, a = parse_session(ours, path)
        _, b = parse_session(theirs, path)
    except Exception:
        return ours if len(ours) >= len(theirs) else theirs
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return ours if len(a) >= len(b) else theirs
    digest = hashlib.sha1(theirs.encode("utf-8", "surrogatepass")).hexdigest()[:6]
    _aside(root, f"raw/{Path(path).stem}-{digest}.md", theirs)
    return ours


def _aside(root: Path, rel: str, text: str) -> None:
    """Write into the conflicts folder, never through a link (a pull may not plant one)."""
    from memctl.core.store import atomic_write

    target = root / CONFLICTS_DIR / rel
    cur = root
    for part in Path(CONFLICTS_DIR, rel).parts[:-1]:
        cur = cur / part
        if cur.is_symlink():
            raise OSError(f"{cur} is a link; memctl never writes through one")
    atomic_write(target, text)


# ---- curation watermarks ---------------------------------------------------------------------


def merge_state(base: str, ours: str, theirs: str) -> str:
    def load(text: str) -> dict[str, dict[str, int]]:
        try:
            data = json.loads(text)
            return {k: {p: int(n) for p, n in v.items()} for k, v in data["stores"].items()}
        except (ValueError, KeyError, TypeError, AttributeError):
            return {}

    a, b = load(ours), load(theirs)
    for store, marks in b.items():
        mine = a.setdefault(store, {})
        for p, n in marks.items():
            mine[p] = max(mine.get(p, 0), n)
    data = {"version": 1, "stores": {k: dict(sorted(v.items())) for k, v in sorted(a.items())}}
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


# ---- notes -----------------------------------------------------------------------------------


def _text_merge(base: Path, ours: Path, theirs: Path) -> int:
    """Not a memctl note (a README, an adopted page): git's own line merge."""
    return subprocess.run(
        ["git", "merge-file", "-L", "ours", "-L", "base", "-L", "theirs",
         str(ours), str(base), str(theirs)],
        check=False,
    ).returncode  # fmt: skip


def main(argv: list[str]) -> int:
    if len(argv) != 5 or argv[0] not in {k for k, _ in DRIVERS.values()}:
        sys.stderr.write(
            "usage: python -m memctl.gitops.mergedrivers note|index|raw|state O A B PATH\n"
        )
        return 2
    kind, o, a, b, path = argv
    po, pa, pb = Path(o), Path(a), Path(b)

    def read(p: Path) -> str:
        with p.open("r", encoding="utf-8", newline="") as fh:
            return fh.read()

    root = Path.cwd()
    base, ours, theirs = read(po), read(pa), read(pb)
    if kind == "index":
        result = merge_index(base, ours, theirs)
    elif kind == "raw":
        result = merge_raw(base, ours, theirs, path, root)
    elif kind == "state":
        result = merge_state(base, ours, theirs)
    else:
        from memctl.gitops.notemerge import NotANote, merge_notes

        try:
            result, proposal = merge_notes(base, ours, theirs, path)
        except NotANote:
            return _text_merge(po, pa, pb)
        if proposal is not None:
            _aside(root, path[:-3] + ".proposed.md", proposal)
    with pa.open("w", encoding="utf-8", newline="") as fh:
        fh.write(result)  # git's own temp file, not a vault file
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
