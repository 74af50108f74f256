"""The shape of `.memctl/config.toml`: every section and key, its type and its range.

Checked once, when the config is loaded, so a typo or a wrong type is one line naming the
key and the file (and its line) instead of a TypeError deep inside `gc` or a string read
a character at a time. A key memctl does not know is refused too: a misspelt key that is
silently ignored is a setting the person believes in and does not have.

Add a key here when code starts reading it; the table is the one place that lists them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memctl.errors import MemctlError

# Retention ages above this are a typo, not a policy (and past it timedelta overflows).
MAX_AGE_DAYS = 1000 * 366
MODES = ("background", "propose", "off")

Check = Callable[[Any], str | None]  # None when fine, else what the value must be


def _str(value: Any) -> str | None:
    return None if isinstance(value, str) else "a string"


def _vault_path(hidden: bool) -> Check:
    """A store's folder or template: a path inside the vault. A pulled (then accepted)
    `template = "/home/dana/.ssh/id_rsa"` was read into the extraction prompt; a folder of
    `../elsewhere` stopped every curate."""

    def check(value: Any) -> str | None:
        from memctl.core.store import lexical_problem

        if not isinstance(value, str) or not value.strip("/. "):
            return "a path inside the vault"
        why = lexical_problem(value, hidden)
        if why is None and not hidden and value.strip("/").split("/")[0] == "raw":
            why = "raw/ holds the sessions"
        return None if why is None else f"a path inside the vault ({why})"

    return check


def _bool(value: Any) -> str | None:
    return None if isinstance(value, bool) else "true or false"


def _int(lo: int, hi: int) -> Check:
    def check(value: Any) -> str | None:
        ok = isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi
        return None if ok else f"a whole number from {lo} to {hi}"

    return check


def _num(lo: float, hi: float) -> Check:
    def check(value: Any) -> str | None:
        ok = isinstance(value, int | float) and not isinstance(value, bool) and lo <= value <= hi
        return None if ok else f"a number from {lo:g} to {hi:g}"

    return check


def _choice(*options: str) -> Check:
    def check(value: Any) -> str | None:
        return None if value in options else "one of " + ", ".join(repr(o) for o in options)

    return check


def duration(value: Any) -> str | None:
    """A retention age: "90d", "12w", "2y" (at most a thousand years)."""
    from memctl.core.when import parse_duration

    if not isinstance(value, str):
        return 'a duration string such as "90d", "12w" or "2y"'
    try:
        d = parse_duration(value.strip().lower())
    except OverflowError:
        d = None
    if d is None or d.total_seconds() <= 0 or d.days > MAX_AGE_DAYS:
        return 'a duration such as "90d", "12w" or "2y" (at most 1000y)'
    return None


def _size(value: Any) -> str | None:
    """A size limit: bytes, or "1MB", "500KB" (what memctl.core.localstate.parse_size reads)."""
    from memctl.core.localstate import parse_size

    try:
        parse_size(value, "")
    except MemctlError:
        return 'a size such as "1MB" or "500KB"'
    return None


def _str_list(value: Any) -> str | None:
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return None
    return 'a list of strings, e.g. ["decisions/*"]'


def _str_or_list(value: Any) -> str | None:
    return None if isinstance(value, str) or _str_list(value) is None else "a string or a list"


def _patterns(value: Any) -> str | None:
    bad = _str_or_list(value)
    if bad:
        return bad
    for p in [value] if isinstance(value, str) else value:
        try:
            re.compile(p)
        except re.error as exc:
            return f"regular expressions ({p!r}: {exc})"
    return None


def _durations_by_scope(value: Any) -> str | None:
    if not isinstance(value, dict):
        return 'a table of scope = duration, e.g. { "user:*" = "90d" }'
    for v in value.values():
        if duration(v) is not None:
            return 'a table of scope = duration, e.g. { "user:*" = "90d" }'
    return None


SECTIONS: dict[str, dict[str, Check]] = {
    "vault": {"user": _str, "scope": _str},
    "ingest": {"redact": _bool},
    "git": {"agent_name": _str, "agent_email": _str, "human_name": _str, "human_email": _str},
    "curate": {
        "curator": _str,
        "model": _str,
        "max_retries": _int(0, 20),
        "api_base": _str,
        "temperature": _num(0, 2),
    },
    "recall": {"budget": _int(1, 1_000_000), "standing": _num(0, 1)},
    "remember": {
        "agent_shared": _choice("write", "propose"),
        # the Stop hook's ask to remember (helper agentic): "stop" or "off" (or a bool)
        "ask": lambda v: None if v in ("stop", "off") or isinstance(v, bool)
        else '"stop" or "off"',
        "ask_after": _int(0, 10_000),
    },
    # the largest note and raw session a pull may bring, and the largest image kept
    "limits": {"note": _size, "raw": _size, "attachment": _size},
    "retention": {
        "raw_max_age": duration,
        "raw_max_age_by_scope": _durations_by_scope,
        "pinned": _str_list,
    },
}
STORE_KEYS: dict[str, Check] = {
    "folder": _vault_path(hidden=False),
    "scope": _str,
    "mode": _choice(*MODES),
    "template": _vault_path(hidden=True),
    "instructions": _str,
    "match": _patterns,
    "plugin": _str,
    "ttl": duration,
}


def validate(data: dict[str, Any], path: Path, text: str = "") -> None:
    """Raise one MemctlError (exit 2) for the first key that is unknown or of a wrong shape."""

    def fail(where: str, what: str, section: str, key: str | None) -> None:
        raise MemctlError(f"{where} {what}", path, _line(text, section, key), exit_code=2)

    for section, table in data.items():
        if section == "stores":
            if not isinstance(table, dict):
                fail("[stores]", "must be a table of [stores.NAME] tables", "stores", None)
            for name, spec in table.items():
                sec = f"stores.{name}"
                if not isinstance(spec, dict):
                    fail(f"[{sec}]", "must be a table", sec, None)
                for key, value in spec.items():
                    check = STORE_KEYS.get(key)
                    if check is None:
                        known = ", ".join(STORE_KEYS)
                        fail(f"[{sec}] {key}:", f"unknown key (known: {known})", sec, key)
                    elif (want := check(value)) is not None:
                        fail(f"[{sec}] {key} = {value!r}:", f"must be {want}", sec, key)
            continue
        keys = SECTIONS.get(section)
        if keys is None:
            known = ", ".join([*SECTIONS, "stores"])
            fail(f"[{section}]:", f"unknown section (known: {known})", section, None)
            continue
        if not isinstance(table, dict):
            fail(f"{section} =", f"must be a table ([{section}])", "", section)
            continue
        for key, value in table.items():
            check = keys.get(key)
            if check is None:
                fail(f"[{section}] {key}:", f"unknown key (known: {', '.join(keys)})", section, key)
            elif (want := check(value)) is not None:
                fail(f"[{section}] {key} = {value!r}:", f"must be {want}", section, key)


def _line(text: str, section: str, key: str | None) -> int | None:
    """Where the key (or the section's header) is written; None when it can't be told."""
    lines = text.splitlines()
    header = re.compile(r"^\s*\[\s*" + re.escape(section).replace(r"\.", r"\s*\.\s*") + r"\s*\]")
    start = 0
    if section:
        for i, line in enumerate(lines):
            if header.match(line):
                start = i
                if key is None:
                    return i + 1
                break
        else:
            return None
    if key is None:
        return None
    pat = re.compile(r"^\s*[\"']?" + re.escape(key) + r"[\"']?\s*=")
    for i in range(start, len(lines)):
        if i > start and section and lines[i].lstrip().startswith("["):
            break
        if pat.match(lines[i]):
            return i + 1
    return None
