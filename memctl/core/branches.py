"""Which turns of a session sit on a branch the user went back from.

Claude Code lets a person rewind: go back to an earlier turn and say something else. The log
keeps both branches, each line naming its parent (`parentUuid`), so the file reads as if the
person had said both. What was said on the branch they left (an opinion they took back, an
approach they abandoned) is still what was said, and stays in raw verbatim; but it is not
where the conversation went, and memory that serves it as current misleads. A second human
prompt under the same parent is the mark of a rewind: everything from the first prompt up to
the second was left behind.

The parent ids of the lines between two turns (progress, system and attachment lines) are
not kept in raw, so the chain itself cannot be walked; siblings are all that is needed.
"""

from __future__ import annotations

from memctl.core.model import Message
from memctl.core.raw import spoken


def rewound(messages: list[Message]) -> dict[int, int]:
    """{index of a message on a left branch: turn number (1-based) of the prompt that
    replaced the branch}; empty for a session that was never rewound."""
    first: dict[str, int] = {}  # parentUuid -> index of the first human prompt under it
    out: dict[int, int] = {}
    for j, m in enumerate(messages):
        parent = m.meta.get("parentUuid") if m.meta else None
        if m.role != "user" or not isinstance(parent, str) or m.meta.get("isSidechain"):
            continue
        if not spoken(m.content).strip():
            continue  # a slash command or harness line: the harness's, not a choice of path
        i = first.setdefault(parent, j)
        if i == j:
            continue
        for k in range(i, j):
            out.setdefault(k, j + 1)
        first[parent] = j  # a third try replaces the second, from the second on
    return out


REWOUND_MARK = "(on a rewound branch)"


def rewound_text(text: str) -> str:
    """A claim read from a branch the person went back from, saying so in its own line: a
    note is read without its session, and "likes the idea" from the branch they left is
    not what they said last."""
    body = text.rstrip()
    if body.endswith(REWOUND_MARK) or body.endswith(REWOUND_MARK + "."):
        return text
    if body.endswith("."):
        return f"{body[:-1]} {REWOUND_MARK}."
    return f"{body} {REWOUND_MARK}"
