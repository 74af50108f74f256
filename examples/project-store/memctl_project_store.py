"""An example memctl learning store with code: project context (code, tests, environments)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

# Sentences that say where things are or how things are done in a project.
_RULES = (
    (
        "Where things live",
        re.compile(r"\b(?:code|source|module|config|service)\b.*\blives? in\b", re.I),
    ),
    ("How to test", re.compile(r"\b(?:tests?|test suite)\b.*\b(?:run|runs|ran) with\b", re.I)),
    (
        "Environments",
        re.compile(
            r"\buse (?:the )?(?:staging|prod|production|dev|test) "
            r"(?:env|environment|cluster|account)\b",
            re.I,
        ),
    ),
)
_SENTENCE = re.compile(r"[^.!?\n]+[.!?]?")


class ProjectContextStore:
    """Learns the structure and workflow of the projects a team talks about."""

    def process(self, batch: Any) -> Iterator[dict[str, Any]]:
        """Claims from the batch's new user turns, each quoting the sentence it came from."""
        for n in range(batch.start, len(batch.messages) + 1):
            message = batch.messages[n - 1]
            if message.role != "user":
                continue
            for m in _SENTENCE.finditer(message.content):
                sentence = m.group(0).strip()
                for section, rule in _RULES:
                    if rule.search(sentence):
                        yield {
                            "note": "Project context",
                            "section": section,
                            "text": sentence,
                            "citations": [{"turn": n, "quote": sentence}],
                        }
                        break

    def recall(self, vault: Any, query: str, **options: Any) -> list[str]:
        """Claim lines from this store's notes that share a word with the query."""
        words = {w.lower() for w in re.findall(r"\w{3,}", query)}
        folder = vault.config.stores[options.get("store", "project")].folder
        out = []
        for path in sorted((vault.root / folder).glob("*.md")):
            for line in path.read_text(encoding="utf-8").splitlines():
                if line.startswith("- ") and words & {
                    w.lower() for w in re.findall(r"\w{3,}", line)
                }:
                    out.append(line[2:])
        return out

    def build_context(self, data: list[str]) -> str:
        """The recalled lines, fenced so the agent knows where they came from."""
        body = "\n".join(f"- {line}" for line in data)
        return f"<project_context>\n{body}\n</project_context>"
