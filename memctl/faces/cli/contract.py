"""The `--json` contract: one envelope, and a JSON Schema for each command's payload.

Agents parse these answers, so the shapes are written down once, here; `docs/json.md` is
generated from this module (scripts/gen_json_docs.py) and tests/test_json_contract.py runs
every command with `--json` and checks its answer against the schema below. A key added to a
payload without a line here fails that test, so the contract cannot drift from the code.
"""

from __future__ import annotations

from typing import Any

from memctl.results import RESULT_VERSION

S: dict[str, Any] = {"type": "string"}
INT: dict[str, Any] = {"type": "integer"}
N: dict[str, Any] = {"type": "number"}
B: dict[str, Any] = {"type": "boolean"}
OPT_S: dict[str, Any] = {"type": ["string", "null"]}
STRS: dict[str, Any] = {"type": "array", "items": S}


def obj(props: dict[str, Any], optional: tuple[str, ...] = (), closed: bool = True) -> dict:
    """An object with these keys (all required but `optional`); closed: no others."""
    out: dict[str, Any] = {
        "type": "object",
        "properties": props,
        "required": [k for k in props if k not in optional],
    }
    if closed:
        out["additionalProperties"] = False
    return out


def arr(items: dict[str, Any]) -> dict[str, Any]:
    return {"type": "array", "items": items}


def dict_of(values: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "additionalProperties": values}


_MEMORY = obj(
    {
        "kind": S,
        "text": S,
        "basis": S,
        "ref": S,
        "date": OPT_S,
        "score": N,
        "citations": arr(
            obj({"ref": S, "date": OPT_S, "speaker": OPT_S, "quote": S}, closed=False)
        ),
        "title": OPT_S,
        "store": OPT_S,
        "scope": OPT_S,
        "section": OPT_S,
        "tokens": INT,
    },
    optional=("date", "title", "store", "scope", "section", "citations", "tokens", "score"),
    closed=False,
)
_RECALL = obj(
    {
        "version": INT,
        "kind": S,
        "query": OPT_S,
        "user": S,
        "budget": INT,
        "tokens": INT,
        "tokenizer": S,
        "disabled": B,
        "format": S,
        "memories": arr(_MEMORY),
        "text": S,
        "explain": arr({"type": "object"}),
        "seconds": N,
        "notices": STRS,
    },
    optional=("explain", "seconds", "notices"),
)
_HOOK_FIELDS: dict[str, Any] = {
    "action": S,
    "path": S,
    "changed": B,
    "dry_run": B,
    "added": STRS,
    "updated": STRS,
    "removed": STRS,
    "commands": dict_of(S),
    "diff": S,
    "notes": STRS,
}
# `mcp`: the same, for the file where memctl's MCP server was registered (or removed)
_HOOKS = obj({**_HOOK_FIELDS, "mcp": obj(_HOOK_FIELDS)}, optional=("mcp",))
_CHANGE = obj(
    {
        "action": S,
        "section": OPT_S,
        "text": S,
        "plain": S,
        "sources": arr(obj({"ref": S, "quote": S}, closed=False)),
        "author": S,
        "human": B,
        "commit": S,
        "date": S,
        "detail": OPT_S,
        "before": OPT_S,
        "basis": {"enum": ["source", "agent", "human"]},
    },
    optional=("detail", "before", "section"),
    closed=False,
)

_UNDO = obj(
    {"undone": OPT_S, "subject": S, "files": STRS, "claims_removed": STRS, "commit": OPT_S,
     "claims_restored": STRS}
)

# command -> (what it answers, the payload schema); the envelope is added by `schema()`.
_FILE_PROBLEM = obj(
    {"path": S, "line": {"type": ["integer", "null"]}, "message": S, "exit_code": INT}
)

COMMANDS: dict[str, tuple[str, dict[str, Any]]] = {
    "init": (
        "The vault made or adopted, its first commit, the files left alone (not notes), the "
        "tool and dependency folders not walked (with why) and the secrets files git-ignored.",
        obj(
            {"root": S, "created": B, "adopted": STRS, "commit": OPT_S, "left_alone": STRS,
             "joined": OPT_S, "config_waiting": STRS,
             "skipped": dict_of(S), "ignored": STRS}
        ),
    ),
    "ingest": (
        "Per transcript: what it did to the vault; totals; the commit (null: nothing new).",
        obj(
            {
                "files_read": INT,
                "sessions_changed": INT,
                "turns_added": INT,
                "redactions": INT,
                "commit": OPT_S,
                "sessions": arr(
                    obj(
                        {
                            "session": S,
                            "path": S,
                            "action": {"enum": ["created", "appended", "unchanged"]},
                            "turns_added": INT,
                            "turns_total": INT,
                            "redactions": INT,
                            "source": S,
                            "user": S,
                            "user_from": {"enum": ["flag", "transcript", "login"]},
                        }
                    )
                ),
                # files of a folder that failed (exit 2) or are not transcripts (skipped)
                "failed": arr(_FILE_PROBLEM),
                "skipped": arr(_FILE_PROBLEM),
            }
        ),
    ),
    "log": (
        "Memory commits, newest first, with memctl's trailers.",
        obj(
            {
                "commits": arr(
                    obj(
                        {
                            "sha": S,
                            "author": S,
                            "email": S,
                            "date": S,
                            "subject": S,
                            "body": S,
                            "trailers": dict_of(S),
                        }
                    )
                )
            }
        ),
    ),
    "remember": (
        "The claim as kept: what was done (added, reinforced, superseded, noop, proposed), "
        "the note, stated or agent, and the verified citations.",
        obj(
            {
                "action": S,
                "path": S,
                "text": S,
                "basis": {"enum": ["stated", "agent"]},
                "citations": arr(obj({"ref": S, "quote": S})),
                "commit": OPT_S,
                "notice": OPT_S,
            }
        ),
    ),
    "show": (
        "A note, INDEX file, session or turn; `ref` is its canonical reference.",
        obj(
            {
                "kind": {"enum": ["note", "index", "session", "turn"]},
                "ref": S,
                "text": S,
                "meta": {"type": "object"},
            }
        ),
    ),
    "status": (
        "Counts per store and user, what git has not recorded, HEAD, and failed hook runs.",
        obj(
            {
                "root": S,
                "stores": dict_of(INT),
                "users": dict_of(obj({"sessions": INT, "turns": INT})),
                "sessions": INT,
                "turns": INT,
                "uncommitted": STRS,
                "head": OPT_S,
                "hook_failures": STRS,
            }
        ),
    ),
    "search": (
        "Ranked hits; turn hits carry session and speaker, note hits store and status.",
        obj(
            {
                "query": S,
                "hits": arr(
                    obj(
                        {"ref": S, "kind": {"enum": ["turn", "note"]}, "score": N, "snippet": S},
                        closed=False,
                    )
                ),
            }
        ),
    ),
    "reindex": (
        "What the rebuilt index holds, and files that could not be indexed.",
        obj(
            {
                "files": INT,
                "turns": INT,
                "notes": INT,
                "skipped": STRS,
                "seconds": N,
                "index_bytes": INT,
            }
        ),
    ),
    "watch": (
        "One line per event: `ready` once watching, then `change` for each batch, and "
        "`stopped` when a signal or Ctrl-C ended it (after the step in hand).",
        obj(
            {
                "event": {"enum": ["ready", "change", "stopped"]},
                "watching": STRS,
                "reindexed": STRS,
                "ingested": STRS,
                "turns_added": INT,
                "error": OPT_S,
            },
            optional=("watching", "reindexed", "ingested", "turns_added", "error"),
            closed=False,
        ),
    ),
    "curate": (
        "What the curator read and changed, claim counts, the diff and the commit.",
        obj(
            {
                "curator": S,
                "model": OPT_S,
                "dry_run": B,
                "stores": STRS,
                "sessions": INT,
                "turns_read": INT,
                "added": INT,
                "reinforced": INT,
                "updated": INT,
                "superseded": INT,
                "retracted": INT,
                "resolved": INT,
                "proposed": INT,
                "noop": INT,
                "rejected": arr({"type": "object"}),
                "claims_rejected": INT,
                "notes": STRS,
                "commit": OPT_S,
                "diff": S,
                "calls": INT,
                "tokens_in": INT,
                "tokens_out": INT,
                "cost": {"type": ["number", "null"]},
                "seconds": N,
                "per_session": arr(
                    obj(
                        {
                            "session": S,
                            "calls": INT,
                            "tokens_in": INT,
                            "tokens_out": INT,
                            "cost": {"type": ["number", "null"]},
                        }
                    )
                ),
                "counts": dict_of(INT),
            },
            closed=False,
        ),
    ),
    "review": (
        "Pending proposals, and what this call accepted or rejected.",
        obj(
            {
                "pending": arr({"type": "object"}),
                "accepted": STRS,
                "rejected": STRS,
                "commit": OPT_S,
            }
        ),
    ),
    "diff": (
        "Claim-level changes per store and note, with sources, authors and provenance.",
        obj(
            {
                "range": S,
                "commits": INT,
                "counts": dict_of(INT),
                "stores": dict_of(arr(obj({"path": S, "title": S, "changes": arr(_CHANGE)}))),
            }
        ),
    ),
    "verify": (
        "Citation check: counts per kind of line, and each problem with file and line.",
        obj(
            {
                "ok": B,
                "notes": INT,
                "claims": INT,
                "citations": INT,
                "human_lines": INT,
                "agent_lines": INT,
                "inferred": INT,
                "observed": INT,
                "raw_sessions": INT,
                "problems": arr(
                    obj(
                        {"path": S, "line": {"type": ["integer", "null"]}, "message": S},
                        closed=False,
                    )
                ),
            },
        ),
    ),
    "doctor": (
        "Each invariant checked, its problems, and what --repair fixed.",
        obj(
            {
                "ok": B,
                "repair": B,
                "checks": arr(
                    obj({"name": S, "ok": B, "problems": STRS, "repaired": OPT_S}, closed=False)
                ),
            }
        ),
    ),
    "forget": (
        "The cascade: what a forget removed (or would, with --dry-run), and its commit.",
        obj(
            {
                "ref": S,
                "kind": S,
                "dry_run": B,
                "sessions_deleted": STRS,
                "turns_forgotten": STRS,
                "sessions_renamed": dict_of(S),
                "claims_removed": arr(obj({"note": S, "text": S})),
                "citations_removed": arr(obj({"note": S, "text": S, "ref": S})),
                "notes_deleted": STRS,
                "notes_changed": STRS,
                "index_files": STRS,
                "commit": OPT_S,
                "purged": B,
                "purge_notes": STRS,
            }
        ),
    ),
    "undo": (
        "The memctl commit undone, the files and claims it took back, the new commit.",
        _UNDO,
    ),
    "rollback": ("The note restored, the claims it took out, the new commit.", _UNDO),
    "gc": (
        "What retention expires (sessions, notes), what pinning kept, the forget cascade.",
        obj(
            {
                "dry_run": B,
                "expired_sessions": STRS,
                "expired_notes": STRS,
                "kept_pinned": STRS,
                "cascade": {"type": "object"},
                "commit": OPT_S,
            }
        ),
    ),
    "sync": (
        "Commits pulled, replayed and pushed; conflicts proposed for review; the new head.",
        obj(
            {
                "remote": S,
                "branch": S,
                "pulled": INT,
                "replayed": INT,
                "pushed": INT,
                "proposals": STRS,
                "sessions_kept_apart": STRS,
                "index_files": STRS,
                "reindexed": INT,
                "commit": OPT_S,
                "head": S,
                "reported": STRS,
                "config_waiting": STRS,
                "config_accepted": STRS,
            }
        ),
    ),
    "blame": (
        "Each claim line of a note with the commit and run that last wrote it.",
        obj(
            {
                "note": S,
                "lines": arr(
                    obj(
                        {
                            "line": INT,
                            "text": S,
                            "commit": S,
                            "date": S,
                            "author": S,
                            "command": S,
                            "curator": S,
                            "model": S,
                            "human": B,
                        }
                    )
                ),
            }
        ),
    ),
    "drift": (
        "Claims drifting from their quotes, claims that lost sources, notes rewritten often.",
        obj(
            {
                "notes": INT,
                "items": arr(obj({"note": S, "kind": S, "detail": S, "claim": S})),
            }
        ),
    ),
    "recall": ("Cited memories for a query, packed into a token budget.", _RECALL),
    "context": ("The start-of-session block, packed into a token budget.", _RECALL),
    "hooks install": ("The settings file changed (or that would be), and how.", _HOOKS),
    "hooks uninstall": ("The settings file changed (or that would be), and how.", _HOOKS),
}


def schema(command: str) -> dict[str, Any]:
    """The whole answer's schema: envelope keys first, then the command's payload."""
    _, payload = COMMANDS[command]
    props = {
        "memctl_result_version": {"const": RESULT_VERSION},
        "command": {"const": command},
        **payload["properties"],
    }
    out = {**payload, "properties": props}
    out["required"] = ["memctl_result_version", "command", *payload["required"]]
    out["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    out["title"] = f"memctl {command} --json"
    return out
