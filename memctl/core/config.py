"""Configuration, resolved once at the entry point and passed down: flag > env > file > default.

Only this module and the CLI entry read the environment; everything else gets a `Config`.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memctl.core.history import Identity
from memctl.errors import MemctlError

CONFIG_REL = ".memctl/config.toml"
# Where hooks leave failures for the next prompt and for `memctl doctor` (both read it).
HOOK_ALERTS_REL = ".memctl/cache/hook-alerts.log"
MODES = ("background", "propose", "off")

# The built-in learning stores: folder, default scope ("user" means the session's user).
BUILTIN_STORES: dict[str, dict[str, str]] = {
    "profile": {"folder": "profile", "scope": "user", "mode": "background"},
    "sessions": {"folder": "sessions", "scope": "session", "mode": "background"},
    "entities": {"folder": "entities", "scope": "session", "mode": "background"},
    "knowledge": {"folder": "knowledge", "scope": "team", "mode": "background"},
    "decisions": {"folder": "decisions", "scope": "session", "mode": "background"},
    "feedback": {"folder": "feedback", "scope": "session", "mode": "background"},
    "instructions": {"folder": "instructions", "scope": "team", "mode": "propose"},
    # One note per code base (known from the session's working directory and git remote).
    "projects": {"folder": "projects", "scope": "team", "mode": "background"},
}

DEFAULT_CONFIG_TOML = """\
# memctl vault configuration. Every key is optional; the values shown are the defaults.
# Precedence: command-line flag > MEMCTL_* environment variable > this file > built-in default.

[vault]
# user = "dana"            # who sessions belong to when --user is not given (default: login name)
# scope = "user:dana"      # default scope of ingested sessions: "user:NAME", "team" or "global"

[ingest]
redact = true              # replace API keys, tokens, passwords with [REDACTED:kind] before writing

[git]
# Commits of derived learning are by the agent; ingests, reviews and edits by the human.
agent_name = "memctl agent"
agent_email = "agent@memctl.invalid"
# human_name = "Dana Reyes"          # default: git config user.name, else "memctl user"
# human_email = "dana@example.com"

[curate]
curator = "builtin"        # "builtin" (offline, deterministic) or "llm"
# model = "openai/gpt-4o-mini"   # any litellm model string; keys come from the environment only
max_retries = 2

[recall]
budget = 1500              # tokens
standing = 0.25            # share of the budget kept for standing context (goals, decisions,
                           # your preferences and instructions) whatever the prompt's words

# [retention]              # `memctl gc` (a dry run; `memctl gc --apply` forgets what expired)
# raw_max_age = "2y"                          # raw sessions older than this are forgotten
# raw_max_age_by_scope = { "user:*" = "90d" } # per scope (a trailing * matches a prefix)
# pinned = ["decisions/*"]                    # notes gc never removes (globs), as does a
                                              # note's own `pinned: true`

# [remember]
# agent_shared = "propose"  # "write" lets an agent's own claims into team and global notes

# Built-in stores can be retuned, and custom stores declared, with a [stores.NAME] table:
# [stores.instructions]
# mode = "propose"         # background | propose | off
#
# [stores.sessions]
# ttl = "180d"             # `memctl gc`: notes of this store not updated for this long go
#
# [stores.runbooks]
# folder = "runbooks"
# template = "templates/runbooks.md"   # frontmatter skeleton, sections and extraction prompt
# scope = "team"
# mode = "propose"
# instructions = "Extract step-by-step operational procedures the user states."
# match = ['\\brunbook\\b']   # sentences the builtin curator files here (regular expressions)
# plugin = "project"         # a store with code: entry point in the memctl.stores group
"""


@dataclass(frozen=True)
class StoreConfig:
    """One learning store: where its notes live and how curation may touch it."""

    name: str
    folder: str
    scope: str
    mode: str
    template: str | None = None
    instructions: str | None = None
    custom: bool = False


@dataclass(frozen=True)
class Config:
    """Everything a command needs to know about the vault's settings."""

    root: Path
    user: str | None = None
    scope: str | None = None
    redact: bool = True
    agent: Identity = field(
        default_factory=lambda: Identity("memctl agent", "agent@memctl.invalid")
    )
    human: Identity | None = None
    curator: str = "builtin"
    model: str | None = None
    max_retries: int = 2
    recall_budget: int = 1500
    recall_standing: float = 0.25
    stores: dict[str, StoreConfig] = field(default_factory=dict)
    data: dict[str, Any] = field(default_factory=dict)
    # Where memctl may keep rebuildable things outside the vault (a search index for a
    # vault it cannot write): MEMCTL_CACHE_DIR, else $XDG_CACHE_HOME/memctl, else
    # ~/.cache/memctl; None when the environment names none (the temp dir is used then).
    cache_dir: Path | None = None
    # the user's home ($HOME), so paths under it can be written as `~/...` in shared files
    home: Path | None = None


def _table(data: dict[str, Any], key: str, path: Path) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise MemctlError(f"[{key}] must be a table", path)
    return value


def _share(value: Any, key: str, path: Path) -> float:
    """A fraction of something, 0 to 1; anything else is a config error naming the file."""
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1:
        raise MemctlError(f"{key} must be a number from 0 to 1, got {value!r}", path, exit_code=2)
    return float(value)


# The config as read and checked, by its text: a resident process (memctl serve) opens the
# vault for every prompt, and parsing TOML was a third of opening it. Each caller gets its
# own copy (marshal's), so no caller's change reaches another's.
_READ: dict[tuple[str, str], bytes] = {}


def _read_toml(text: str, path: Path) -> dict[str, Any]:
    """`text` parsed as TOML and checked against the schema; errors name the file and line."""
    import marshal

    key = (text, str(path))
    got = _READ.get(key)
    if got is not None:
        return marshal.loads(got)  # type: ignore[no-any-return]
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        line = None
        msg = str(exc)
        if "(at line " in msg:
            line = int(msg.split("(at line ")[1].split(",")[0])
        raise MemctlError(f"invalid config: {msg}", path, line, exit_code=2) from None
    from memctl.core.configschema import validate

    validate(data, path, text)
    try:
        kept = marshal.dumps(data)
    except ValueError:
        return data  # a TOML date or time: read again each time
    if len(_READ) >= 8:
        _READ.clear()
    _READ[key] = kept
    return data


def load_config(root: Path, env: dict[str, str] | None = None, **flags: Any) -> Config:
    """Read `.memctl/config.toml`, then apply MEMCTL_* env and flags on top."""
    env = env or {}
    path = root / CONFIG_REL
    data: dict[str, Any] = {}
    text: str | None = None
    if path.exists():
        text = path.read_text(encoding="utf-8")
        data = _read_toml(text, path)
    # protected settings a pull (or any git operation) changed wait for the user; a local
    # override pins any
    from memctl.core.configguard import screen
    from memctl.core.localstate import effective, local_override, read_local

    screen(root, text)
    local = local_override(root)
    if local is not None:
        from memctl.core.configschema import validate

        # it wins over the shared config: a typo there is a pin the user believes they have
        local_text, tables = read_local(local)
        validate(tables, local, local_text)

    data = effective(root, data, local)
    vault = _table(data, "vault", path)
    ingest = _table(data, "ingest", path)
    gitc = _table(data, "git", path)
    curate = _table(data, "curate", path)
    recall = _table(data, "recall", path)
    stores_data = _table(data, "stores", path)

    stores: dict[str, StoreConfig] = {}
    for name, spec in BUILTIN_STORES.items():
        over = stores_data.get(name, {})
        stores[name] = StoreConfig(
            name=name,
            folder=over.get("folder", spec["folder"]),
            scope=over.get("scope", spec["scope"]),
            mode=over.get("mode", spec["mode"]),
            template=over.get("template"),
            instructions=over.get("instructions"),
        )
    for name, over in stores_data.items():
        if name in stores:
            continue
        if not isinstance(over, dict) or "folder" not in over:
            raise MemctlError(f"custom store [stores.{name}] needs a 'folder'", path, exit_code=2)
        stores[name] = StoreConfig(
            name=name,
            folder=str(over["folder"]),
            scope=str(over.get("scope", "team")),
            mode=str(over.get("mode", "propose")),
            template=over.get("template"),
            instructions=over.get("instructions"),
            custom=True,
        )
    for s in stores.values():
        if s.mode not in MODES:
            raise MemctlError(
                f"store '{s.name}': mode must be one of {', '.join(MODES)}", path, exit_code=2
            )
        if s.name == "instructions" and s.mode == "background":
            # Evolving instructions steer the agent; they are never applied without review.
            raise MemctlError(
                "store 'instructions' cannot run in background mode", path, exit_code=2
            )

    human = None
    if gitc.get("human_name") or gitc.get("human_email"):
        human = Identity(
            str(gitc.get("human_name", "memctl user")),
            str(gitc.get("human_email", "user@memctl.invalid")),
        )
    redact = bool(ingest.get("redact", True))
    if env.get("MEMCTL_REDACT") is not None:
        redact = env["MEMCTL_REDACT"].lower() not in ("0", "false", "no", "off")
    if flags.get("redact") is not None:
        redact = bool(flags["redact"])
    return Config(
        root=root,
        user=flags.get("user") or env.get("MEMCTL_USER") or vault.get("user"),
        scope=flags.get("scope") or vault.get("scope"),
        redact=redact,
        agent=Identity(
            str(gitc.get("agent_name", "memctl agent")),
            str(gitc.get("agent_email", "agent@memctl.invalid")),
        ),
        human=human,
        curator=str(
            flags.get("curator") or env.get("MEMCTL_CURATOR") or curate.get("curator", "builtin")
        ),
        model=flags.get("model") or env.get("MEMCTL_MODEL") or curate.get("model"),
        max_retries=int(curate.get("max_retries", 2)),
        recall_budget=int(recall.get("budget", 1500)),
        recall_standing=_share(recall.get("standing", 0.25), "[recall] standing", path),
        stores=stores,
        data=data,
        cache_dir=_cache_dir(env),
        home=Path(env["HOME"]) if env.get("HOME") else None,
    )


def _cache_dir(env: dict[str, str]) -> Path | None:
    if env.get("MEMCTL_CACHE_DIR"):
        return Path(env["MEMCTL_CACHE_DIR"])
    if env.get("XDG_CACHE_HOME"):
        return Path(env["XDG_CACHE_HOME"]) / "memctl"
    if env.get("HOME"):
        return Path(env["HOME"]) / ".cache" / "memctl"
    return None
