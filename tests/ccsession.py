"""Claude Code session files written by tests: a person, an agent and its tools, in a few lines.

The curator's rules must hold on sessions nobody tuned them on, so the tests that pin them
write their own transcripts in Claude Code's JSONL shape (the one `~/.claude/projects/`
holds): user and assistant lines, tool_use parts, and tool results as user lines.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

REJECTED = (
    "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it "
    "was a file edit, the new_string was NOT written to the file). To tell you how to proceed, "
    "the user said:\n"
)


class Session:
    """Turns appended in order; `write()` renders the JSONL file."""

    def __init__(self, cwd: str = "/home/dana/src/shop", sid: str = "") -> None:
        self.cwd = cwd
        self.sid = sid or "6d1e2f30-4a5b-4c6d-8e7f-90a1b2c3d4e5"
        self.rows: list[dict[str, Any]] = []
        self._calls = 0

    def turn(self, role: str, content: object) -> Session:
        """One line of `role` with `content` as Claude Code writes it (text or parts)."""
        self._add(role, content)
        return self

    def _add(self, role: str, content: object) -> None:
        i = len(self.rows) + 1
        msg: dict[str, object] = {"role": role, "content": content}
        if role == "assistant":
            msg["model"] = "claude-opus-4-6"
        self.rows.append({
            "parentUuid": self.rows[-1]["uuid"] if self.rows else None, "isSidechain": False,
            "userType": "external", "cwd": self.cwd, "sessionId": self.sid, "version": "2.1.42",
            "gitBranch": "main", "type": role, "message": msg,
            "uuid": f"{self.sid[:8]}-0000-4000-8000-{i:012d}",
            "timestamp": f"2026-03-02T10:{i // 60:02d}:{i % 60:02d}.000Z",
        })  # fmt: skip

    def user(self, text: str) -> Session:
        self._add("user", text)
        return self

    def say(self, text: str) -> Session:
        self._add("assistant", [{"type": "text", "text": text}])
        return self

    def tool(
        self, name: str, inp: dict[str, Any], result: str, error: bool = False, text: str = ""
    ) -> Session:
        self._calls += 1
        tid = f"toolu_{self._calls:04d}"
        parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
        parts.append({"type": "tool_use", "id": tid, "name": name, "input": inp})
        self._add("assistant", parts)
        self._add("user", [{"type": "tool_result", "tool_use_id": tid, "content": result,
                            "is_error": error}])  # fmt: skip
        return self

    def bash(self, command: str, output: str = "", error: bool = False, text: str = "") -> Session:
        return self.tool("Bash", {"command": command}, output, error, text)

    def read(self, path: str, content: str = "x = 1", text: str = "") -> Session:
        return self.tool("Read", {"file_path": self._abs(path)}, content, text=text)

    def edit(self, path: str, old: str, new: str, text: str = "") -> Session:
        p = self._abs(path)
        return self.tool("Edit", {"file_path": p, "old_string": old, "new_string": new},
                         f"The file {p} has been updated.", text=text)  # fmt: skip

    def write(self, path: str, content: str, text: str = "") -> Session:
        p = self._abs(path)
        return self.tool("Write", {"file_path": p, "content": content},
                         f"File created successfully at: {p}", text=text)  # fmt: skip

    def refuse(self, command: str, reason: str) -> Session:
        return self.tool("Bash", {"command": command}, REJECTED + reason, error=True)

    def ask(self, question: str, answer: str) -> Session:
        inp = {"questions": [{"question": question, "options": []}]}
        result = (f'User has answered your questions: "{question}"="{answer}". You can now '
                  "continue with the user's answers in mind.")  # fmt: skip
        return self.tool("AskUserQuestion", inp, result)

    def _abs(self, path: str) -> str:
        return path if path.startswith("/") else f"{self.cwd}/{path}"

    def write_to(self, path: Path) -> Path:
        path.write_text("".join(json.dumps(r) + "\n" for r in self.rows), "utf-8")
        return path
