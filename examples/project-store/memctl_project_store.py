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
