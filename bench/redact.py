"""Redaction cost per turn: memctl.core.redact against detect-secrets on the same clean turns.

    python bench/redact.py

Ingest runs redaction on every turn, so its cost on clean text decides ingest throughput.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from memctl.core.redact import redact

_TURNS = [
    "Sure — here's how I'd restructure the ingest loop. First, read the JSONL file line by "
    "line, then for each message call normalize(msg) and append it to the session. The "
    "commit 3f2a9c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39 introduced the regression; see "
    "docs/ingest.md for the design notes and the test plan we agreed on last week.",
    "The key insight is that each token costs money, so we cap max_tokens at 4096 and pass "
    "the API key via the environment. See https://platform.openai.com/docs/api-reference "
    "for details; the password reset flow lives in auth/views.py and uses a signed token.",
    "```python\ndef load(path: Path) -> list[Message]:\n    with path.open() as fh:\n"
    "        return [Message(**json.loads(line)) for line in fh if line.strip()]\n```\n"
    "This keeps memory flat. If you want, I can also add a progress bar with rich and a "
    "--limit flag so you can test on a small slice first.",
    "Ich habe die Datei überprüft: die Funktion gibt None zurück, wenn der Pfad nicht "
    "existiert. Das ist so gewollt — der Aufrufer entscheidet, ob ein fehlender Pfad ein "
    "Fehler ist. Sollen wir das dokumentieren? Ich würde einen kurzen Absatz ergänzen.",
]


def best_us_per_call(
    fn: Callable[[str], object], args: list[str], rounds: int, repeats: int = 20
) -> float:
    """Best of several short runs: the minimum is the least disturbed by a busy machine."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(rounds):
            for a in args:
                fn(a)
        best = min(best, (time.perf_counter() - t0) / (rounds * len(args)))
    return best * 1e6


def main() -> None:
    turns = [t[:300].ljust(300) for t in _TURNS]
    assert all(redact(t) == (t, []) for t in turns)
    clean = best_us_per_call(redact, turns, rounds=250)
    secret_turn = turns[0][:200] + " password=hunter2secret AKIAQ7XK2M4PLR8TZW3N"
    dirty = best_us_per_call(redact, [secret_turn], rounds=100)
    print(f"memctl.core.redact   clean 300-char turn: {clean:8.2f} us ({1e6 / clean:,.0f} turns/s)")
    print(f"memctl.core.redact   turn with 2 secrets: {dirty:8.2f} us")
    corpus()
    try:
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import default_settings
    except ImportError:
        print("detect-secrets  not installed (pip install detect-secrets) - no comparison")
        return
    with default_settings():
        us = best_us_per_call(lambda t: list(scan_line(t)), [turns[0]], rounds=5, repeats=5)
    print(f"detect-secrets  scan_line, same turn: {us:8.0f} us  (ratio {us / clean:,.0f}x)")


def corpus() -> None:
    """Recall and false positives on the test corpus (tests/secret_corpus.py)."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from secret_corpus import KINDS, NON_SECRETS, SECRETS

    caught = sum(secret not in redact(line)[0] for _, secret, line in SECRETS)
    touched = sum(redact(line)[0] != line for line in NON_SECRETS)
    print(
        f"corpus          {caught}/{len(SECRETS)} secrets of {len(KINDS)} kinds redacted "
        f"({caught / len(SECRETS):.1%}), {touched}/{len(NON_SECRETS)} non-secrets touched"
    )


if __name__ == "__main__":
    main()
