"""Store templates and the generated INDEX.md files that let an agent find its way in two reads."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from memctl.core.config import Config, StoreConfig

STORE_GISTS = {
    "profile": "who each user is and how they build, test, debug and decide (one note per user)",
    "sessions": "one note per session: goal, progress, summary, open threads",
    "entities": "people, organisations, projects, systems; same-name entities stay separate",
    "knowledge": "insights, patterns and practices the team learned",
    "decisions": "what was decided, why, the alternatives, when and by whom",
    "feedback": "what worked and what did not",
    "instructions": "evolving instructions for the agent (always reviewed before use)",
    "projects": "one note per code base: layout, stack, how to build, test and run it, gotchas",
}

RECENT_SESSIONS = 15


def template_dir() -> Path:
    """Templates ship inside the wheel; in a checkout they are the top-level templates/ folder."""
    package = Path(__file__).resolve().parent.parent
    packaged = package / "_templates"
    return packaged if packaged.is_dir() else package.parent / "templates"


def store_template(root: Path, store: StoreConfig) -> str:
    """The template text for a store: a vault-local override wins over the shipped one.

    A template file a pull changed is read as it was until the user accepts the change
    (`memctl sync --accept-config`, docs/sync.md): it is the store's extraction prompt.
    """
    candidates = []
    if store.template:
        from memctl.core.localstate import held_templates

        held = held_templates(root)
        if store.template in held:
            text = held[store.template]
            if text is not None:
                return text
        else:
            from memctl.core.store import inside
            from memctl.errors import PathEscapeError

            # never a file outside the vault, whatever the config or a link says
            with contextlib.suppress(PathEscapeError):
                path = inside(root, store.template, hidden=True)
                if path.is_file():
                    from memctl.core.configguard import screen_template

                    # changed by a plain git pull: what the user had, until they accept
                    text = screen_template(root, store.template, path.read_text("utf-8"))
                    if text is not None:
                        return text
    candidates += [
        root / ".memctl" / "templates" / f"{store.name}.md",
        template_dir() / f"{store.name}.md",
    ]
    for c in candidates:
        if c.is_file():
            return c.read_text(encoding="utf-8")
    return ""


def _session_line(s: dict[str, Any], rel_to: str) -> str:
    started = str(s.get("started") or "")[:10] or "undated"
    path = s["path"][len(rel_to) :] if rel_to and s["path"].startswith(rel_to) else s["path"]
    title = str(s.get("title") or s.get("session")).replace("[", "(").replace("]", ")")
    return f"- {started} · {s.get('user', '?')} · [{title}]({path}) · {s.get('turns', 0)} turns"


def root_index(config: Config, counts: dict[str, int], sessions: list[dict[str, Any]]) -> str:
    """The vault's front page: what each store holds and where the latest sessions are."""
    lines = [
        "# Memory vault",
        "",
        "Long-term memory kept by memctl. Raw transcripts in `raw/` are verbatim and never edited;",
        "notes in the store folders are derived from them, and every derived claim cites the turn",
        "it came from (`raw/...md#tN`) with a verbatim quote. Edit any note to fix a memory.",
        "",
        "## Stores",
        "",
    ]
    for name, store in config.stores.items():
        gist = STORE_GISTS.get(name) or store.instructions or "custom store"
        n = counts.get(name, 0)
        lines.append(f"- [{name}/]({store.folder}/INDEX.md) · {n} note{'s' * (n != 1)} · {gist}")
    lines += ["", "## Recent sessions", ""]
    if sessions:
        lines += [_session_line(s, "") for s in sessions[:RECENT_SESSIONS]]
        if len(sessions) > RECENT_SESSIONS:
            lines.append(
                f"- … {len(sessions) - RECENT_SESSIONS} more in [raw/INDEX.md](raw/INDEX.md)"
            )
    else:
        lines.append("- none yet: `memctl ingest TRANSCRIPT`")
    return "\n".join(lines) + "\n"


def raw_index(sessions: list[dict[str, Any]]) -> str:
    """Every raw session, newest first: the map of the lossless layer."""
    lines = ["# Raw sessions", "", "Verbatim transcripts, one file per session, newest first.", ""]
    lines += [_session_line(s, "raw/") for s in sessions] or ["- none yet"]
    return "\n".join(lines) + "\n"


def store_index(store: StoreConfig, notes: list[dict[str, Any]]) -> str:
    """One line per note (title and gist), newest first."""
    gist = STORE_GISTS.get(store.name) or store.instructions or "custom store"
    lines = [f"# {store.name}", "", f"{gist[0].upper()}{gist[1:]}.", ""]
    if not notes:
        lines.append("- no notes yet")
    for n in notes:
        lines.append(
            f"- [{n['title']}]({n['file']}) · {n.get('updated', '')} · {n.get('gist', '')}".rstrip(
                " ·"
            )
        )
    return "\n".join(lines) + "\n"
