"""Derived notes: markdown + frontmatter <-> model, deterministically.

A note is rendered the same way every time from the same content, so `git diff` of a note
reads like a changelog: frontmatter keys in a fixed order, one claim per line, footnote
labels derived from the cited turn (never renumbered) and footnotes sorted by session and
turn. Anything memctl does not understand (prose, tables, a human's own footnotes) is kept
line for line.

    ---
    id: profile/priya
    ...
    ---

    # Profile: priya

    ## Identity

    - Priya is a freelance data scientist. [^3f2a1c-t1]

    ## History

    - 2026-09-03 → 2026-10-29 · superseded · Priya lives in Lisbon. [^3f2a1c-t1-9b0e]

    [^3f2a1c-t1]: raw/2026/09/03/hi-im-a-freelance-3f2a1c.md#t1 "I'm a freelance data scientist."
"""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import re
from dataclasses import dataclass, field
from typing import Any

from memctl.core.plaintext import one_line
from memctl.core.plaintext import title as clean_title
from memctl.core.raw import slugify
from memctl.errors import MemctlError

SCHEMA = 1
STATUSES = ("active", "proposed", "superseded", "retracted")
HISTORY_KINDS = ("superseded", "corrected", "retracted", "resolved")
HISTORY = "History"
INFERRED_TAG = "#inferred"
# What the session shows happening (a command the agent ran, a commit, a change): cited to the
# agent's or a tool's turn, so it must never read as something a person said.
OBSERVED_TAG = "#observed"

# The order every note's frontmatter is written in; unknown keys follow in their own order.
KEY_ORDER = (
    "id",
    "schema",
    "store",
    "title",
    "scope",
    "status",
    "created",
    "updated",
    "aliases",
    "tags",
    "derived_by",
    "valid_from",
    "valid_until",
    "supersedes",
    "superseded_by",
)
_OPTIONAL = frozenset(KEY_ORDER[8:])
_DATE_KEYS = frozenset({"created", "updated", "valid_from", "valid_until"})

# A citation as the search index finds it: `raw/<path>.md#t<n>`.
REF_RE = re.compile(r"raw/[^\s#)\]]+\.md#t\d+")
_FOOTDEF = re.compile(r"^\[\^(?P<label>[^\]\s]+)\]:[ \t]*(?P<rest>.*)$")
_CITE = re.compile(
    r'^(?P<ref>raw/[^\s#)\]]+\.md#t\d+)(?:[ \t]+"(?P<quote>(?:[^"\\]|\\.)*)")?[ \t]*$'
)
_REFS = re.compile(r"\[\^([^\]\s]+)\]")
_HIST = re.compile(
    r"^(?P<since>\S+) → (?P<until>\S+) · (?P<kind>" + "|".join(HISTORY_KINDS) + r") · (?P<rest>.*)$"
)
_WIKILINK = re.compile(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]")
_LABEL_KEY = re.compile(r"^([0-9a-f]{6})-t(\d+)(?:-(.+))?$")


@dataclass(frozen=True)
class Citation:
    """A footnote: the turn a claim came from and the verbatim words that support it.

    `ref` is None for a footnote memctl did not write (a human's aside); it is kept as `raw`.
    """

    ref: str | None
    quote: str = ""
    raw: str = ""

    @property
    def path(self) -> str:
        return (self.ref or "").split("#", 1)[0]

    @property
    def turn(self) -> int:
        return int((self.ref or "#t0").rsplit("#t", 1)[1])


@dataclass(frozen=True)
class Lifetime:
    """When a claim in History held: `since` → `until` (ISO dates or '?'), and why it ended."""

    kind: str
    since: str
    until: str


AGENT_MARK = "#agent"  # a line the agent kept on its own authority (remember own=true)


@dataclass(frozen=True)
class Claim:
    """One line of a note. No refs means a human wrote it (legal, and counted as such),
    unless it ends in #agent: then the agent wrote it as its own reading, with no source."""

    text: str
    refs: tuple[str, ...] = ()
    inferred: bool = False
    lifetime: Lifetime | None = None
    observed: bool = False

    @property
    def agent(self) -> bool:
        return not self.refs and self.text.endswith(AGENT_MARK)

    @property
    def human(self) -> bool:
        return not self.refs and not self.text.endswith(AGENT_MARK)

    @property
    def basis(self) -> str:
        """Where the line comes from: `source` (cites turns), `agent` or `human`."""
        return "source" if self.refs else ("agent" if self.agent else "human")

    @property
    def key(self) -> str:
        return claim_key(self.text)


Item = Claim | str


@dataclass
class Section:
    """`## name` and its lines: claims, and any other line kept verbatim."""

    name: str
    items: list[Item] = field(default_factory=list)

    @property
    def claims(self) -> list[Claim]:
        return [i for i in self.items if isinstance(i, Claim)]


@dataclass
class Note:
    """A derived note: ordered frontmatter, a title, sections and footnotes."""

    path: str
    meta: dict[str, Any]
    title: str
    preamble: list[Item] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)
    footnotes: dict[str, Citation] = field(default_factory=dict)
    # How the file was written, so a rewrite keeps it: Windows editors save CRLF and a BOM.
    newline: str = "\n"
    bom: bool = False
    # (ref, quote) -> label, built on first use: citing stays O(1) in long notes.
    _cites: dict[tuple[str | None, str], str] | None = field(
        default=None, repr=False, compare=False
    )

    # -- reading ------------------------------------------------------------------------------

    @property
    def store(self) -> str:
        return str(self.meta.get("store", ""))

    @property
    def scope(self) -> str:
        """A note that names no scope (a person's own markdown, adopted or written in an
        editor) is the team's, as the index reads it: everyone who can recall from the vault
        can read its file anyway (scopes are not permissions)."""
        return str(self.meta.get("scope") or "team")

    @property
    def status(self) -> str:
        return str(self.meta.get("status", "active"))

    @property
    def aliases(self) -> list[str]:
        return [str(a) for a in self.meta.get("aliases") or []]

    def section(self, name: str) -> Section | None:
        for s in self.sections:
            if s.name.casefold() == name.casefold():
                return s
        return None

    def active_claims(self) -> list[tuple[Section, Claim]]:
        """Claims outside History, in order."""
        return [
            (s, c)
            for s in self.sections
            if s.name != HISTORY
            for c in s.claims
            if c.lifetime is None
        ]

    def current_claims(self) -> list[tuple[str, Claim]]:
        """(section name, claim) of every line that holds now, the lines above the first
        section included (a person's own markdown often has no sections: section "")."""
        top = [("", c) for c in self.preamble if isinstance(c, Claim) and c.lifetime is None]
        return top + [(s.name, c) for s, c in self.active_claims()]

    def history_claims(self) -> list[Claim]:
        h = self.section(HISTORY)
        return h.claims if h else []

    def all_claims(self) -> list[tuple[Section, Claim]]:
        return [(s, c) for s in self.sections for c in s.claims]

    def citations(self, claim: Claim) -> list[Citation]:
        return [self.footnotes[r] for r in claim.refs if r in self.footnotes]

    # -- changing -----------------------------------------------------------------------------

    def ensure_section(self, name: str, order: list[str] | tuple[str, ...] = ()) -> Section:
        """The section called `name`, created in template order when missing."""
        found = self.section(name)
        if found is not None:
            return found
        new = Section(name)
        rank = {n.casefold(): i for i, n in enumerate(order)}
        if name == HISTORY:
            self.sections.append(new)
            return new
        mine = rank.get(name.casefold(), len(rank))
        for i, s in enumerate(self.sections):
            theirs = rank.get(s.name.casefold(), len(rank) + 1 if s.name == HISTORY else -1)
            if s.name == HISTORY or theirs > mine:
                self.sections.insert(i, new)
                return new
        self.sections.append(new)
        return new

    def cite(self, ref: str, quote: str) -> str:
        """The footnote label for (ref, quote), adding the footnote if it is new."""
        if self._cites is None:
            self._cites = {}
            for lab, c in self.footnotes.items():
                self._cites.setdefault((c.ref, c.quote), lab)
        found = self._cites.get((ref, quote))
        if found is not None and found in self.footnotes:
            return found
        base = base_label(ref)
        label = base
        if label in self.footnotes:
            label = f"{base}-{hashlib.sha1(quote.encode()).hexdigest()[:4]}"
            n = 2
            while label in self.footnotes:
                label = f"{base}-{hashlib.sha1(quote.encode()).hexdigest()[:4]}{n}"
                n += 1
        self.footnotes[label] = Citation(ref, quote)
        self._cites[(ref, quote)] = label
        return label

    def forget_citations(self) -> None:
        """Drop the (ref, quote) -> label cache after footnotes were changed from outside."""
        self._cites = None

    def prune_footnotes(self) -> None:
        """Drop memctl footnotes no line refers to any more (a human deleted the claim)."""
        used = {r for _, c in self.all_claims() for r in c.refs}
        text = "\n".join(i for s in self.sections for i in s.items if isinstance(i, str))
        text += "\n".join(_line(i) for i in self.preamble)
        used |= set(_REFS.findall(text))
        for label in list(self.footnotes):
            if label not in used and self.footnotes[label].ref is not None:
                del self.footnotes[label]
                self._cites = None


# ---- keys and labels ---------------------------------------------------------------------------


def strip_links(text: str) -> str:
    """`[[entities/alex-morgan|Alex]]` -> `Alex`: what a reader sees."""
    return _WIKILINK.sub(lambda m: m.group(1), text)


@functools.lru_cache(maxsize=65536)
def claim_key(text: str) -> str:
    """What makes two claims the same claim: words, case- and punctuation-insensitive."""
    plain = strip_links(text).replace(INFERRED_TAG, " ").casefold()
    return " ".join(re.findall(r"[\w$%€£.,/-]+", plain)).replace(" ,", ",").strip(" .,")


def base_label(ref: str) -> str:
    """`raw/.../slug-3f2a1c.md#t7` -> `3f2a1c-t7`: stable, so diffs never renumber."""
    from memctl.core.raw import short_digest

    path, _, turn = ref.partition("#t")
    digest = short_digest(path) or hashlib.sha1(path.encode()).hexdigest()[:6]
    return f"{digest}-t{turn}"


def _label_sort(label: str) -> tuple[int, str, int, str]:
    m = _LABEL_KEY.match(label)
    if m:
        return (0, m.group(1), int(m.group(2)), m.group(3) or "")
    return (1, label, 0, "")


def escape_quote(q: str) -> str:
    """Reversible: backslash, double quote and line breaks become escapes."""
    return q.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")


def unescape_quote(q: str) -> str:
    if "\\" not in q:
        return q  # most quotes hold no escape: skip the walk, char by char
    out = []
    i = 0
    while i < len(q):
        ch = q[i]
        if ch == "\\" and i + 1 < len(q):
            nxt = q[i + 1]
            out.append({"n": "\n", "r": "\r"}.get(nxt, nxt))
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def note_id(path: str) -> str:
    """A note's id is its path without `.md`: readable, and unique in the vault."""
    return path[:-3] if path.endswith(".md") else path


def slug(text: str, limit: int = 60) -> str:
    return slugify(text, limit)


# ---- parsing -----------------------------------------------------------------------------------


def _iso(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.date().isoformat() if value.time() == dt.time() else value.isoformat()
    if isinstance(value, dt.date):
        return value.isoformat()
    return value


def parse_claim(line: str, history: bool = False) -> Claim | None:
    """A list item -> Claim, or None when the line is not a list item."""
    if not line.startswith("- "):
        return None
    at = _refs_start(line)
    body, refs = (line[2:at], tuple(_REFS.findall(line[at:]))) if at else (line[2:], ())
    body = body.rstrip()
    lifetime = None
    if history:
        hm = _HIST.match(body)
        if hm:
            lifetime = Lifetime(hm.group("kind"), hm.group("since"), hm.group("until"))
            body = hm.group("rest")
    inferred = observed = False
    if refs and (body.endswith(" " + INFERRED_TAG) or body == INFERRED_TAG):
        inferred = True
        body = body[: -len(INFERRED_TAG)].rstrip()
    elif refs and (body.endswith(" " + OBSERVED_TAG) or body == OBSERVED_TAG):
        observed = True
        body = body[: -len(OBSERVED_TAG)].rstrip()
    return Claim(body, refs, inferred, lifetime, observed)


def _refs_start(line: str) -> int:
    r"""Where the run of footnote markers (`[^label]`, no `]` or whitespace in a label) that
    ends a claim line starts (trailing blanks aside), or 0 when the line has none. The
    earliest start whose tail is markers only, as `- (.*?)((?:\[\^[^\]\s]+\])+)[ \t]*$`
    would find; that regex backtracked quadratically on long marker runs (a 480 KB note
    held sync for minutes and recall for 111 s), this reads the line once, right to left,
    and only as far as its last whitespace: markers hold none, so no run starts before it.
    """
    end = len(line.rstrip(" \t"))
    if end < 2 or line[end - 1] != "]" or "[^" not in line:
        return 0
    # tail[i]: line[i:end] is markers only; each marker ends at the first `]` after its `[^`
    best = 0
    close = -1  # the nearest `]` at or after i
    tails = {end}
    for i in range(end - 1, 1, -1):
        ch = line[i]
        if ch == "]":
            close = i
        elif ch.isspace():
            break
        elif ch == "[" and line[i + 1] == "^" and close > i + 2 and close + 1 in tails:
            tails.add(i)
            best = i
    return best


def has_frontmatter(text: str) -> bool:
    """Whether a note starts with a frontmatter block (after any BOM, with any line ending)."""
    return text.removeprefix("\ufeff").startswith(("---\n", "---\r\n"))


def read_frontmatter(text: str, path: str) -> tuple[dict[str, Any], str]:
    """A note's frontmatter and body, as python-frontmatter reads them; BOM and CRLF are
    read as any editor writes them, and an error names the file and line.

    Frontmatter in the plain shape memctl itself writes (`key: value` lines and `- item`
    lists of simple scalars) is read by `_plain_yaml`, which gives exactly what YAML gives
    and refuses anything it is not sure of; the rest goes to YAML (libyaml's CSafeLoader
    when it is installed). Importing yaml and parsing with it cost more than a recall's
    search on the per-prompt hook path.

    Raw session headers keep their own reader (raw.split_frontmatter): memctl writes them
    alone, always LF, and the catalog reads thousands of them.
    """
    text = text.removeprefix("\ufeff").replace("\r\n", "\n")
    if not text.startswith("---\n"):
        raise MemctlError("missing frontmatter (expected '---' on line 1)", path, 1)
    try:
        _, fm, body = _FM_BOUNDARY.split(text, 2)  # python-frontmatter's own split
    except ValueError:
        raise MemctlError("unterminated frontmatter (no closing '---')", path, 1) from None
    meta = _plain_yaml(fm)
    if meta is None:
        import yaml

        from memctl.core.raw import load_yaml

        try:
            meta = load_yaml(fm, path, 1) or {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            line = mark.line + 1 if mark is not None else 1
            raise MemctlError(
                f"invalid YAML frontmatter: {exc}".splitlines()[0], path, line
            ) from None
    if not isinstance(meta, dict):
        raise MemctlError("frontmatter is not a mapping", path, 1)
    return meta, body.removeprefix("\n")


_FM_BOUNDARY = re.compile(r"^-{3,}\s*$", re.MULTILINE)  # = frontmatter.YAMLHandler's
_PLAIN_KEY = re.compile(r"([A-Za-z][A-Za-z0-9_]*):(?: (.+))?")
# A plain scalar YAML reads as this very string: starts with an ASCII letter (so only the
# bool and null resolvers could claim it, checked below), then letters and digits of any
# script, a few marks, no '#', and a ':' only inside a word.
_PLAIN_STR = re.compile(r"[A-Za-z](?:[^\W_]|[ _./@+,()'-]|:(?=[^\W_]))*")
_PLAIN_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_PLAIN_INT = re.compile(r"0|[1-9][0-9]*")
_QUOTED = re.compile(r"'((?:[^']|'')*)'")
# YAML 1.1 words PyYAML resolves to bool or None, not str
_YAML_WORDS = frozenset(
    "yes Yes YES no No NO true True TRUE false False FALSE on On ON off Off OFF "
    "null Null NULL".split()
)
_NOT_PLAIN = object()


def _plain_scalar(v: str) -> Any:
    """What YAML reads `v` as, for the few shapes we are sure of; else _NOT_PLAIN."""
    if not v or v != v.strip():
        return _NOT_PLAIN
    if v == "[]":
        return []
    if v[0] == "'":
        m = _QUOTED.fullmatch(v)
        # YAML folds line breaks (\u2028 too) inside quotes and refuses control characters
        return m.group(1).replace("''", "'") if m and m.group(1).isprintable() else _NOT_PLAIN
    if _PLAIN_DATE.fullmatch(v):
        try:
            return dt.date.fromisoformat(v)
        except ValueError:
            return _NOT_PLAIN
    if _PLAIN_INT.fullmatch(v):
        return int(v)
    if v in _YAML_WORDS or not _PLAIN_STR.fullmatch(v):
        return _NOT_PLAIN
    return v


def _plain_yaml(fm: str) -> dict[str, Any] | None:
    """The mapping YAML would read from `fm`, or None when `fm` is not in the plain shape."""
    out: dict[str, Any] = {}
    listing: str | None = None  # the key whose `- item` lines are being read
    for line in fm.split("\n"):
        if not line:
            continue
        if line.startswith("- "):
            v = _plain_scalar(line[2:])
            if listing is None or v is _NOT_PLAIN:
                return None
            if out[listing] is None:
                out[listing] = []
            out[listing].append(v)
            continue
        m = _PLAIN_KEY.fullmatch(line)
        if m is None or m.group(1) in out or m.group(1) in _YAML_WORDS:
            return None
        if m.group(2) is None:
            out[m.group(1)] = None  # null, unless `- item` lines follow
            listing = m.group(1)
            continue
        v = _plain_scalar(m.group(2))
        if v is _NOT_PLAIN:
            return None
        out[m.group(1)] = v
        listing = None
    return out


def parse_note(text: str, path: str) -> Note:
    """Read a note; errors name the file and line.

    A note without frontmatter is a human's own markdown (adopted by init, or written in
    an editor): valid, every line the human's, nothing cited. memctl gives it frontmatter
    only when it writes the note itself.
    """
    bom = text.startswith("\ufeff")
    newline = "\r\n" if "\r\n" in text[: text.find("\n") + 1] else "\n"
    if has_frontmatter(text):
        meta, body = read_frontmatter(text, path)
    else:
        meta, body = {}, text.removeprefix("\ufeff").replace("\r\n", "\n")
    meta = {k: _iso(v) for k, v in meta.items()}
    lines = body.split("\n")
    title = str(meta.get("title", ""))
    preamble: list[Item] = []
    sections: list[Section] = []
    footnotes: dict[str, Citation] = {}
    seen_title = False
    current: Section | None = None
    in_fence = False
    for line in lines:
        if line.startswith("```") or line.startswith("~~~"):
            in_fence = not in_fence
        if not in_fence:
            fm = _FOOTDEF.match(line) if line.startswith("[^") else None  # its first chars
            if fm:
                label, rest = fm.group("label"), fm.group("rest")
                cm = _CITE.match(rest)
                if cm:
                    quote = unescape_quote(cm.group("quote") or "")
                    footnotes[label] = Citation(cm.group("ref"), quote)
                else:
                    footnotes[label] = Citation(None, raw=line)
                continue
            if not seen_title and current is None and line.startswith("# "):
                title = line[2:].strip()
                seen_title = True
                continue
            if line.startswith("## "):
                current = Section(line[3:].strip())
                sections.append(current)
                continue
        target = preamble if current is None else current.items
        claim = (
            None
            if in_fence
            else parse_claim(line, history=current is not None and current.name == HISTORY)
        )
        target.append(claim if claim is not None else line)
    for s in sections:
        s.items = _tidy(s.items)
    return Note(path, meta, title, _tidy(preamble), sections, footnotes, newline, bom)


def _tidy(items: list[Item]) -> list[Item]:
    """No leading/trailing blank lines and no runs of blank lines: rendering stays stable."""
    out: list[Item] = []
    for it in items:
        if isinstance(it, str) and not it.strip():
            if out and not (isinstance(out[-1], str) and not out[-1].strip()):
                out.append("")
            continue
        out.append(it)
    while out and isinstance(out[-1], str) and not out[-1].strip():
        out.pop()
    return out


# ---- rendering ---------------------------------------------------------------------------------


def render_claim(c: Claim) -> str:
    text = c.text
    if c.lifetime is not None:
        text = f"{c.lifetime.since} → {c.lifetime.until} · {c.lifetime.kind} · {text}"
    if c.observed and c.refs:
        text += " " + OBSERVED_TAG  # observed is how it was read: never also #inferred
    elif c.inferred:
        text += " " + INFERRED_TAG
    refs = "".join(f"[^{r}]" for r in c.refs)
    return f"- {text} {refs}" if refs else f"- {text}"


def _frontmatter(meta: dict[str, Any]) -> str:
    data: dict[str, Any] = {}
    for k in KEY_ORDER:
        v = meta.get(k)
        if k in _OPTIONAL and (v is None or v == [] or v == ""):
            continue
        if k in meta or k not in _OPTIONAL:
            data[k] = v
    for k, v in meta.items():
        if k not in data and k not in KEY_ORDER and v is not None:
            data[k] = v
    for k in _DATE_KEYS:
        v = data.get(k)
        if isinstance(v, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", v):
            # A real YAML date, so Obsidian shows it as a date property.
            data[k] = dt.date.fromisoformat(v)
    import frontmatter

    dumped = frontmatter.YAMLHandler().export(data, sort_keys=False, width=1000)
    return f"---\n{dumped}\n---\n"


def render_note(note: Note) -> str:
    """The one way a note is written."""
    # one line whatever the title holds: a newline in it would start a section of its own
    parts = [_frontmatter(note.meta), f"# {one_line(note.title)}", ""]
    if note.preamble:
        parts += [_line(i) for i in note.preamble] + [""]
    for s in note.sections:
        items = _tidy(s.items)
        parts += [f"## {s.name}", ""]
        if items:
            parts += [_line(i) for i in items] + [""]
    if note.footnotes:
        for label in sorted(note.footnotes, key=_label_sort):
            c = note.footnotes[label]
            if c.ref is None:
                parts.append(c.raw)
            else:
                parts.append(f'[^{label}]: {c.ref} "{escape_quote(c.quote)}"')
        parts.append("")
    text = "\n".join(parts).rstrip("\n") + "\n"
    if note.newline != "\n":
        text = text.replace("\n", note.newline)
    return "\ufeff" + text if note.bom else text


def _line(item: Item) -> str:
    return render_claim(item) if isinstance(item, Claim) else item


def new_note(
    path: str,
    store: str,
    title: str,
    scope: str,
    today: str,
    status: str = "active",
    **meta: Any,
) -> Note:
    """A fresh note with the frontmatter skeleton filled in."""
    title = clean_title(title)  # every writer's titles: one line, nothing hidden
    if status not in STATUSES:
        raise MemctlError(f"invalid note status {status!r}")
    data: dict[str, Any] = {
        "id": note_id(path),
        "schema": SCHEMA,
        "store": store,
        "title": title,
        "scope": scope,
        "status": status,
        "created": today,
        "updated": today,
    }
    data.update({k: v for k, v in meta.items() if v is not None})
    # Sections appear as claims arrive (`ensure_section`), so a new note has no empty headings.
    return Note(path, data, title)
