"""Redaction cost per turn: memctl's redaction against a baseline revision, same run.

    python bench/redact.py                      # this tree only
    python bench/redact.py --baseline 3f53ba5   # and the redactor as it was at that commit

Ingest runs redaction on every turn, so its cost on clean text decides ingest throughput.
The baseline is the redactor as it was at a git revision, loaded beside today's so both
are timed in one run on the same machine state: on a shared VM only ratios taken within
one run mean anything.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

from memctl.core.redact import redact

ROOT = Path(__file__).resolve().parent.parent

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
# Turns added later (look-alike folding, split and wrapped keys, cookies): a
# Cyrillic turn, a shell turn with line continuations and a log with many short lines.
_MORE_TURNS = [
    "Я посмотрел конфигурацию: сервер читает ключ из переменной окружения, а пароль "
    "хранится в хранилище секретов. Cookie сессии помечен как HttpOnly, так что из "
    "JavaScript его не прочитать. Давай добавим тест на истечение сессии и обновим docs.",
    "docker run -d \\\n  --name api \\\n  -p 8080:80 \\\n  -e LOG_LEVEL=debug \\\n"
    "  -v /srv/data:/data \\\n  acme/api:2026.12.1\n\nThen check it with curl -sf "
    "http://localhost:8080/healthz and look at docker logs api for the startup line.",
    "2026-12-01T10:15:42Z INFO ingest: read 1204 turns\n2026-12-01T10:15:43Z INFO index: "
    "committed segment 7\n2026-12-01T10:15:43Z WARN gc: raw_max_age not set\n"
    "2026-12-01T10:15:44Z INFO curate: 12 claims, 3 notes\nset-cookie handling is fine.",
]


def best_us_per_call(
    fn: Callable[[str], object], args: list[str], rounds: int, repeats: int = 20
) -> float:
    """Best of several short runs of this process's CPU time: on a VM shared by other jobs
    wall time also counts the time the process waited for a core, and the minimum is the
    run least disturbed by the rest (caches, frequency)."""
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        for _ in range(rounds):
            for a in args:
                fn(a)
        best = min(best, (time.process_time() - t0) / (rounds * len(args)))
    return best * 1e6


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), *args], capture_output=True, text=True, check=True
    ).stdout


def load_baseline(rev: str) -> ModuleType:
    """The redactor as it was at ``rev``, imported under another name: memctl/redact.py in
    an old tree, the memctl/core/redact/ package (its own imports renamed) in a newer one."""
    tmp = Path(tempfile.mkdtemp())
    listed = _git("ls-tree", "--name-only", rev, "memctl/redact.py", "memctl/core/redact/")
    if "memctl/redact.py" in listed.split():
        path = tmp / "redact_baseline.py"
        path.write_text(_git("show", f"{rev}:memctl/redact.py"))
    else:
        pkg = tmp / "redact_baseline"
        pkg.mkdir()
        for name in listed.split():
            text = _git("show", f"{rev}:{name}").replace("memctl.core.redact", "redact_baseline")
            (pkg / Path(name).name).write_text(text)
        path = pkg / "__init__.py"
    spec = importlib.util.spec_from_file_location(
        "redact_baseline", path, submodule_search_locations=[str(path.parent)]
        if path.name == "__init__.py" else None
    )  # fmt: skip
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["redact_baseline"] = module
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", help="git revision whose memctl/redact.py to compare")
    parser.add_argument("--rounds", type=int, default=250)
    args = parser.parse_args()

    turns = [t[:300].ljust(300) for t in _TURNS + _MORE_TURNS]
    impls: list[tuple[str, Callable[[str], tuple[str, list[object]]]]] = [("today", redact)]
    if args.baseline:
        impls.insert(0, (f"baseline {args.baseline}", load_baseline(args.baseline).redact))
    for name, fn in impls:
        dirty = [t for t in turns if fn(t) != (t, [])]
        assert not dirty, f"{name} changes a clean turn: {dirty}"
    # Interleaved rounds, so that a slow spell of the VM hits both implementations.
    results: dict[str, dict[str, float]] = {name: {} for name, _ in impls}
    sets = {"4 turns (issue 9)": turns[:4], "7 turns (with issue 23's)": turns}
    for _ in range(3):
        for name, fn in impls:
            for label, ts in sets.items():
                us = best_us_per_call(fn, ts, rounds=args.rounds, repeats=7)
                results[name][label] = min(results[name].get(label, us), us)
    for label in sets:
        base = results[impls[0][0]][label]
        for name, _ in impls:
            us = results[name][label]
            ratio = f"  ({us / base:.2f}x baseline)" if len(impls) > 1 else ""
            print(f"{name:20s} clean 300-char turn, {label:26s}: {us:6.2f} us{ratio}")
    for name, fn in impls:
        per = "  ".join(f"{best_us_per_call(fn, [t], 200, 5):.1f}" for t in turns)
        print(f"{name:20s} per turn (us): {per}")
    secret_turn = turns[0][:200] + " password=hunter2secret AKIAQ7XK2M4PLR8TZW3N"
    for name, fn in impls:
        print(f"{name:20s} turn with 2 secrets: {best_us_per_call(fn, [secret_turn], 100):8.2f} us")
    for name, fn in impls:
        corpus(name, fn)
    for name, fn in impls:
        real_sessions(name, fn)


def corpus(name: str, fn: Callable[[str], tuple[str, list[object]]]) -> None:
    """Recall and false positives on the test corpus (tests/secret_corpus.py)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from secret_corpus import KINDS, NON_SECRETS, SECRETS, pieces

    caught_kinds: dict[str, bool] = {}
    caught = 0
    for kind, secret, line in SECRETS:
        out = fn(line)[0]
        ok = not any(p in out for p in pieces(secret))
        caught += ok
        caught_kinds[kind] = caught_kinds.get(kind, True) and ok
    touched = sum(fn(line)[0] != line for line in NON_SECRETS)
    print(
        f"{name:20s} corpus: {caught}/{len(SECRETS)} secrets redacted "
        f"({caught / len(SECRETS):.1%}), "
        f"{sum(caught_kinds.values())}/{len(KINDS)} kinds fully, "
        f"{touched}/{len(NON_SECRETS)} non-secrets touched"
    )


REAL = ROOT.parent / "shared" / "data" / "claude-code" / "sessions"


def _strings(obj: object) -> list[str]:
    if isinstance(obj, str):
        return [obj]
    if isinstance(obj, dict):
        return [s for v in obj.values() for s in _strings(v)]
    if isinstance(obj, list):
        return [s for v in obj for s in _strings(v)]
    return []


def real_sessions(name: str, fn: Callable[[str], tuple[str, list[object]]]) -> None:
    """False positives on real Claude Code sessions (none holds a secret): every string of
    every line is redacted and each finding is printed, so any count above 0 is a defect."""
    if not REAL.is_dir():
        print(f"{name:20s} real sessions: {REAL} not found, skipped")
        return
    strings = findings = 0
    for path in sorted(REAL.rglob("*.jsonl")):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            for text in _strings(json.loads(line)):
                strings += 1
                for f in fn(text)[1]:
                    findings += 1
                    at = getattr(f, "start", 0)
                    where = f"{path.relative_to(REAL)}:{n}: {getattr(f, 'kind', '?')}"
                    print(f"  {where}: {text[max(0, at - 40) : at + 40]!r}")
    print(f"{name:20s} real sessions: {strings} strings, {findings} false positives")


if __name__ == "__main__":
    main()
