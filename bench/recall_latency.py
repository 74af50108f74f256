"""Recall latency, end to end through the CLI and the Claude Code hook, on two vaults.

    python bench/recall_latency.py                    # sample vault + 100k-turn vault
    python bench/recall_latency.py --turns 20k        # a quicker large vault
    python bench/recall_latency.py --only sample

1. The sample vault: the ten sample sessions ingested in order as their users, then
   `memctl curate` (builtin curator), exactly as tests/test_scenario_seed.py builds it.
2. A large vault: the same, plus synthetic conversations from bench/search.py (Zipf
   vocabulary, named speakers, sessions over three years) split across team and two
   private scopes, plus synthetic notes (knowledge, entities, decisions; team and private)
   whose claims cite synthetic turns with verbatim quotes, so recall reads, scopes and
   follows citations at scale.

For each vault: `memctl recall QUERY --user U` as a fresh process (what an agent or a
person pays), `memctl hook user-prompt-submit` with Claude Code's JSON on stdin (what every
prompt pays), and `Vault.recall` in-process (the engine alone), each as p50 / p95 over the
queries, plus `memctl --version` for the interpreter's floor. Numbers go to stdout as a
markdown table.

Child processes run with their bytecode cached (PYTHONPYCACHEPREFIX in the work folder, so
neither tree gets __pycache__ folders), as a pip install leaves memctl; with
PYTHONDONTWRITEBYTECODE set (as on this VM) every run would compile memctl's ~20k lines of
source again, ~45 ms that no installed copy pays. `--no-bytecode` measures that instead.

`--against REV` also measures the code at git revision REV in the same run, on its own
copy of each vault (an older index schema rebuilds its own index): REV is checked out in a
temporary worktree and run with `python -m memctl` from there, and this tree's code the
same way, the two alternating round by round, so the before/after ratio is fair on a VM
whose speed drifts.

Each vault is measured twice in the same run: first with no service (MEMCTL_SERVE=0: every
command does its work in its own process), then with `memctl serve` running for the vault
(started here, stopped after), where the hook and the CLI read commands are answered by the
resident process. The second table puts the two side by side: hook p50 against
`memctl --version`'s, `memctl search` against `rg -i` over raw/ with the same words (as
bench/search.py runs it), and how many answers through the service were byte for byte the
in-process ones.

The in-process run comes after the CLI and hook runs of the same queries, so the feedback
counts recall keeps per session (memctl.recall.termcache) and the notes it parsed
(memctl.recall.notecache) are there from them, as they are for a question about sessions
any earlier prompt was answered from. `--cold-terms` empties both folders before each
in-process run: the first question ever asked of those sessions and notes.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "tests" / "data" / "sample-transcripts"
sys.path.insert(0, str(ROOT))

SAMPLE_QUERIES = [
    ("marco", "Datadog or Grafana?"),
    ("newhire", "What should I know about the cloud migration?"),
    ("dana", "How do I cut NAT gateway costs?"),
    ("marco", "Why is the cost exporter crashlooping?"),
    ("priya", "How should I quote for the offsite?"),
    ("dana", "What is still open on the CDN?"),
    ("marco", "What did we decide about alerting on the egress bill?"),
    ("priya", "polars or pandas for the bakery forecast?"),
]


def _bench_search() -> object:
    spec = importlib.util.spec_from_file_location("bench_search", ROOT / "bench" / "search.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


CHILD_ENV: dict[str, str] = dict(os.environ)  # main() sets where bytecode is cached


def memctl(
    *args: str, vault: Path | None = None, stdin: str | None = None, code: Path | None = None,
    served: bool = False,
) -> tuple[float, str]:
    """Run memctl as a fresh process: the console script, or `python -m memctl` from `code`;
    `served`: let the vault's service answer (else MEMCTL_SERVE=0, all in this process)."""
    env = {**CHILD_ENV, "MEMCTL_SERVE": "1"} if served else CHILD_ENV
    exe = shutil.which("memctl", path=str(Path(sys.executable).parent))
    cmd = [exe] if exe and code is None else [sys.executable, "-m", "memctl"]
    if code is not None:
        env = {**env, "PYTHONPATH": str(code)}
    cmd += (["--vault", str(vault)] if vault else []) + list(args)
    t0 = time.perf_counter()
    # from inside `code` (python -m puts the working folder first on sys.path)
    p = subprocess.run(cmd, input=stdin, capture_output=True, text=True, check=False, env=env,
                       cwd=code)  # fmt: skip
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed: {p.stderr}")
    return dt, p.stdout


def pct(values: list[float], p: float) -> float:
    v = sorted(values)
    return v[min(len(v) - 1, max(0, round(p / 100 * (len(v) - 1))))] if v else float("nan")


def build_sample(vault: Path) -> None:
    memctl("init", str(vault))
    for row in (SRC / "sessions.tsv").read_text().splitlines()[1:]:
        path, user, scope = row.split("\t")
        memctl("ingest", str(SRC / path), "--user", user, "--scope", scope, vault=vault)
    memctl("curate", vault=vault)


def add_synthetic(vault: Path, turns: int, notes: int, work: Path) -> list[tuple[str, str]]:
    """Synthetic sessions in three scopes and notes citing them; returns extra queries."""
    bs = _bench_search()
    rng = random.Random(20261130 + turns)
    src = work / "synthetic"
    t0 = time.perf_counter()
    vocab, _ = bs.generate(src, turns, rng)  # type: ignore[attr-defined]
    files = sorted(src.glob("*.jsonl"))
    groups = {"team": files[0::3], "user:dana": files[1::3], "user:marco": files[2::3]}
    for scope, members in groups.items():
        folder = work / f"synthetic-{scope.replace(':', '-')}"
        folder.mkdir()
        for f in members:
            f.rename(folder / f.name)
        user = scope.split(":")[1] if scope.startswith("user:") else "bench"
        memctl("ingest", str(folder), "--user", user, "--scope", scope, vault=vault)
    print(f"  ingested {turns:,} synthetic turns in {time.perf_counter() - t0:.1f}s",
          file=sys.stderr)  # fmt: skip

    t0 = time.perf_counter()
    _write_notes(vault, notes, vocab, rng)
    print(f"  wrote {notes:,} synthetic notes in {time.perf_counter() - t0:.1f}s", file=sys.stderr)
    queries = bs.make_queries(vocab, 8, rng)  # type: ignore[attr-defined]
    users = ["marco", "dana", "newhire", "priya"]
    return [(users[i % 4], " ".join(q)) for i, q in enumerate(queries)]


def _write_notes(vault_path: Path, n: int, vocab: list[str], rng: random.Random) -> None:
    from memctl.core.notes import Claim, new_note, render_note
    from memctl.core.raw import parse_session
    from memctl.core.store import Transaction, read_text
    from memctl.vault import Vault

    vault = Vault.open(vault_path)
    sessions = [s for s in vault.sessions() if "/s" in s["path"] or True]
    sessions = rng.sample(sessions, min(len(sessions), 400))
    turns: list[tuple[str, str, str]] = []  # (ref, scope, content)
    for s in sessions:
        header, messages = parse_session(read_text(vault.root / s["path"]), s["path"])
        for k, m in enumerate(messages, 1):
            if m.role == "user":
                turns.append((f"{s['path']}#t{k}", header.scope, m.content))
    with vault.lock:
        tx = Transaction(vault.root)
        for i in range(n):
            store = rng.choice(["knowledge", "entities", "decisions"])
            scope = rng.choice(["team", "team", "team", "user:dana", "user:marco"])
            title = " ".join(rng.choice(vocab[:3000]) for _ in range(2)).title()
            path = f"{store}/synthetic-{i:05d}.md"
            note = new_note(path, store, title, scope, "2026-11-01")
            pool = [t for t in turns if t[1] in ("team", scope)]
            for _ in range(rng.randint(3, 8)):
                ref, _, content = rng.choice(pool)
                words = content.split()
                quote = " ".join(words[: min(len(words), 8)])
                label = note.cite(ref, quote)
                note.ensure_section(rng.choice(["Facts", "Goals", "Decision"])).items.append(
                    Claim(quote.rstrip(".") + ".", (label,))
                )
            tx.write(path, render_note(note))
        vault.refresh_indexes(tx)
        vault.history.commit(
            tx.touched, f"bench: {n} synthetic notes", {}, author=vault.config.agent
        )
        vault.after_write(tx.touched)


_INPROC = """
import json, sys, time
from memctl.vault import Vault
queries, rounds = json.loads(sys.argv[2]), int(sys.argv[3])
v = Vault.open(sys.argv[1])
v.recall("warm up", user="marco")
out = []
for _ in range(rounds):
    for user, q in queries:
        t0 = time.perf_counter()
        v.recall(q, user=user)
        out.append(time.perf_counter() - t0)
print(json.dumps(out))
"""


COLD_TERMS = False  # --cold-terms


def measure(
    vault: Path, queries: list[tuple[str, str]], rounds: int, code: Path | None = None
) -> dict[str, float]:
    """One round set for one code tree (None: this one, as installed)."""
    from memctl.vault import Vault

    run = {"vault": vault, "code": code}
    memctl("recall", "warm up", "--user", "marco", **run)  # index in step, page cache
    cli, hook, floor = [], [], []
    for _ in range(rounds):
        for user, q in queries:
            cli.append(memctl("recall", q, "--user", user, **run)[0])
            payload = json.dumps({"session_id": "bench", "transcript_path": "/dev/null",
                                  "cwd": str(vault), "hook_event_name": "UserPromptSubmit",
                                  "prompt": q})  # fmt: skip
            dt, out = memctl("hook", "user-prompt-submit", "--as", user, stdin=payload, **run)
            assert out.strip() == "" or "hookSpecificOutput" in out
            hook.append(dt)
        floor.append(memctl("--version", code=code)[0])
    # in-process: a fresh interpreter on the same code, so either tree can be timed
    if COLD_TERMS:
        # as if no process had asked about these sessions before (the CLI runs above just
        # did): feedback counts every session it meets (memctl.recall.termcache), and
        # ranking parses every note it meets (memctl.recall.notecache)
        shutil.rmtree(vault / ".memctl" / "cache" / "terms", ignore_errors=True)
        shutil.rmtree(vault / ".memctl" / "cache" / "notes", ignore_errors=True)
    env = {**CHILD_ENV, "PYTHONPATH": str(code or ROOT)}
    p = subprocess.run(
        [sys.executable, "-c", _INPROC, str(vault), json.dumps(queries), str(rounds)],
        capture_output=True, text=True, check=True, env=env, cwd=code or ROOT,
    )  # fmt: skip
    inproc = json.loads(p.stdout.strip().splitlines()[-1])
    v = Vault.open(vault)
    turns = sum(int(s.get("turns") or 0) for s in v.sessions())
    notes = sum(len(v.notes(s)) for s in v.config.stores)
    return {
        "turns": turns,
        "notes": notes,
        "cli": cli,
        "hook": hook,
        "inproc": inproc,
        "floor": floor,
    }


def _hook_payload(vault: Path, q: str) -> str:
    return json.dumps({"session_id": "bench", "transcript_path": "/dev/null", "cwd": str(vault),
                       "hook_event_name": "UserPromptSubmit", "prompt": q})  # fmt: skip


def _rg(vault: Path, q: str) -> float:
    args = [RG, "-i", "--no-heading", "-n"]
    for w in q.replace("?", " ").split():
        args += ["-e", w]
    t0 = time.perf_counter()
    subprocess.run([*args, str(vault / "raw")], capture_output=True, check=False)
    return time.perf_counter() - t0


def with_service(vault: Path, queries: list[tuple[str, str]], rounds: int) -> dict[str, Any]:
    """The same hooks and read commands without and then with `memctl serve`, alternating
    query by query so the VM's drift falls on both alike; answers compared byte for byte."""
    from memctl.faces.serve import wire

    proc = subprocess.Popen([sys.executable, "-m", "memctl", "--vault", str(vault), "serve",
                             "--idle", "600"], env={**CHILD_ENV, "MEMCTL_SERVE": "1"},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        for _ in range(200):
            if wire.call(str(vault), {"op": "ping"}, 1.0)[0] is not None:
                break
            time.sleep(0.05)
        else:
            raise SystemExit("memctl serve did not start")
        out: dict[str, Any] = {k: [] for k in ("hook_off", "hook_on", "recall_off", "recall_on",
                                               "search_off", "search_on", "rg", "floor")}
        same = total = 0
        memctl("search", "warm", "up", vault=vault, served=True)
        memctl("recall", "warm up", "--user", "marco", vault=vault, served=True)
        for _ in range(rounds):
            for user, q in queries:
                payload = _hook_payload(vault, q)
                args = ("hook", "user-prompt-submit", "--as", user)
                t_off, a_off = memctl(*args, stdin=payload, vault=vault)
                t_on, a_on = memctl(*args, stdin=payload, vault=vault, served=True)
                out["hook_off"].append(t_off)
                out["hook_on"].append(t_on)
                r_off, b_off = memctl("recall", q, "--user", user, vault=vault)
                r_on, b_on = memctl("recall", q, "--user", user, vault=vault, served=True)
                out["recall_off"].append(r_off)
                out["recall_on"].append(r_on)
                s_off, c_off = memctl("search", q, vault=vault)
                s_on, c_on = memctl("search", q, vault=vault, served=True)
                out["search_off"].append(s_off)
                out["search_on"].append(s_on)
                out["rg"].append(_rg(vault, q))
                out["floor"].append(memctl("--version")[0])
                same += (a_off == a_on) + (b_off == b_on) + (c_off == c_on)
                total += 3
        served = wire.call(str(vault), {"op": "ping"}, 1.0)[0]
        out["served"] = served["served"] if served else 0
        out["same"], out["total"] = same, total
        return out
    finally:
        proc.terminate()
        proc.wait(30)


RG = "rg"


def service_row(name: str, r: dict[str, Any]) -> str:
    p = {k: pct(v, 50) * 1000.0 for k, v in r.items() if isinstance(v, list)}
    return (
        f"| {name} | {p['floor']:.0f} | {p['hook_off']:.0f} | {p['hook_on']:.0f} | "
        f"{p['hook_on'] / p['floor']:.2f}x | {p['recall_off']:.0f} | {p['recall_on']:.0f} | "
        f"{p['search_off']:.0f} | {p['search_on']:.0f} | {p['rg']:.0f} | "
        f"{p['search_on'] / p['rg']:.2f}x | {r['same']}/{r['total']} |"
    )


def summary(parts: list[dict[str, Any]]) -> dict[str, float]:
    """p50 / p95 over all rounds of one code tree on one vault."""
    pool: dict[str, list[float]] = {k: [] for k in ("cli", "hook", "inproc", "floor")}
    for part in parts:
        for k in pool:
            pool[k].extend(part[k])
    out: dict[str, float] = {"turns": parts[0]["turns"], "notes": parts[0]["notes"]}
    for k, vals in pool.items():
        out[f"{k}_p50"], out[f"{k}_p95"] = pct(vals, 50), pct(vals, 95)
    out["n"] = len(pool["cli"])
    return out


def compare(
    vault: Path, queries: list[tuple[str, str]], rounds: int, base: Path | None
) -> list[tuple[str, dict[str, float]]]:
    """This tree, and the baseline tree on its own copy of the vault, alternating rounds."""
    # with a baseline, both trees run as `python -m memctl` from their own source
    trees: list[tuple[str, Path | None, Path]] = [("after", ROOT if base else None, vault)]
    if base is not None:
        copy = vault.with_name(vault.name + "-base")
        shutil.rmtree(copy, ignore_errors=True)
        shutil.copytree(vault, copy, ignore=shutil.ignore_patterns("index", "cache"))
        trees.insert(0, ("before", base, copy))
    parts: dict[str, list[dict[str, Any]]] = {name: [] for name, _, _ in trees}
    for _ in range(rounds):
        for name, code, v in trees:
            parts[name].append(measure(v, queries, 1, code))
    return [(name, summary(parts[name])) for name, _, _ in trees]


def row(name: str, r: dict[str, float]) -> str:
    ms = 1000.0
    return (
        f"| {name} | {int(r['turns']):,} | {int(r['notes']):,} | {r['cli_p50'] * ms:.0f} / "
        f"{r['cli_p95'] * ms:.0f} | {r['hook_p50'] * ms:.0f} / {r['hook_p95'] * ms:.0f} | "
        f"{r['inproc_p50'] * ms:.1f} / {r['inproc_p95'] * ms:.1f} | {r['floor_p50'] * ms:.0f} |"
    )


def checkout(rev: str, work: Path) -> Path:
    """REV's tree in a temporary detached worktree (removed at the end)."""
    dest = work / f"code-{rev.replace('/', '-')}"
    if dest.exists():
        subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(dest)],
                       capture_output=True, check=False)  # fmt: skip
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", str(dest), rev],
                   capture_output=True, check=True)  # fmt: skip
    return dest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", default="100k", help="synthetic turns in the large vault")
    ap.add_argument("--notes", type=int, default=2000, help="synthetic notes in the large vault")
    ap.add_argument("--rounds", type=int, default=3, help="passes over the queries")
    ap.add_argument("--only", choices=["sample", "large"], default=None)
    ap.add_argument("--keep", type=Path, default=None, help="build the vaults here and keep them")
    ap.add_argument("--reuse", action="store_true", help="with --keep: reuse vaults built before")
    ap.add_argument("--against", metavar="REV", help="also time git revision REV, same run")
    ap.add_argument(
        "--cold-terms",
        action="store_true",
        help="empty the vault's kept feedback counts and notes before each in-process run",
    )
    ap.add_argument(
        "--no-bytecode", action="store_true", help="compile memctl's source on every run"
    )
    ap.add_argument("--no-service", action="store_true", help="skip the runs with memctl serve")
    args = ap.parse_args()
    global COLD_TERMS
    COLD_TERMS = args.cold_terms
    turns = int(
        float(args.turns.lower().rstrip("km")) * {"k": 1e3, "m": 1e6}.get(args.turns[-1].lower(), 1)
    )

    work = (args.keep or Path(tempfile.mkdtemp(prefix="memctl-recall-bench-"))).resolve()
    work.mkdir(parents=True, exist_ok=True)
    os.environ.pop("MEMCTL_VAULT", None)
    CHILD_ENV.pop("MEMCTL_VAULT", None)
    CHILD_ENV["MEMCTL_SERVE"] = "0"  # the first table: every command in its own process
    global RG
    if not args.no_service:
        RG = _bench_search().ensure_rg()  # type: ignore[attr-defined]
    if args.no_bytecode:
        CHILD_ENV["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        CHILD_ENV.pop("PYTHONDONTWRITEBYTECODE", None)
        CHILD_ENV["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    base = checkout(args.against, work) if args.against else None
    rows: list[str] = []
    served_rows: list[str] = []
    try:
        if args.only in (None, "sample"):
            v = work / "sample"
            if not (args.reuse and v.is_dir()):
                print("building the sample vault ...", file=sys.stderr)
                shutil.rmtree(v, ignore_errors=True)
                build_sample(v)
            for name, r in compare(v, SAMPLE_QUERIES, args.rounds, base):
                rows.append(row(f"sample vault, {name}" if base else "sample vault", r))
            if not args.no_service:
                served_rows.append(
                    service_row("sample vault", with_service(v, SAMPLE_QUERIES, args.rounds))
                )
        if args.only in (None, "large"):
            v = work / "large"
            saved = work / "large-queries.json"
            if args.reuse and v.is_dir() and saved.is_file():
                extra = [tuple(q) for q in json.loads(saved.read_text())]
            else:
                print(f"building the {args.turns}-turn vault ...", file=sys.stderr)
                shutil.rmtree(v, ignore_errors=True)
                for p in work.glob("synthetic*"):
                    shutil.rmtree(p)
                build_sample(v)
                extra = add_synthetic(v, turns, args.notes, work)
                saved.write_text(json.dumps(extra))
            queries = SAMPLE_QUERIES + extra  # type: ignore[operator]
            label = f"{args.turns} synthetic + sample"
            for name, r in compare(v, queries, args.rounds, base):
                rows.append(row(f"{label}, {name}" if base else label, r))
            if not args.no_service:
                served_rows.append(service_row(label, with_service(v, queries, args.rounds)))
    finally:
        if base is not None:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(base)],
                           capture_output=True, check=False)  # fmt: skip
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    if base is not None:
        print(f"before = {args.against}, after = this tree; rounds alternate between the two")
    print("bytecode:", "compiled on every run" if args.no_bytecode else "cached, as installed")
    if args.cold_terms:
        print("kept feedback counts and notes: emptied before each in-process run")
    print(
        "| vault | turns | notes | `memctl recall` p50 / p95 ms | `memctl hook user-prompt-submit`"
        " p50 / p95 ms | in-process p50 / p95 ms | `memctl --version` p50 ms |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(r)
    if served_rows:
        print()
        print("Without and with `memctl serve` (p50 ms, same run, alternating query by query):")
        print(
            "| vault | `--version` | hook, no service | hook, served | served / `--version` |"
            " `recall`, no service | `recall`, served | `search`, no service | `search`, served"
            " | `rg -i` | served `search` / `rg` | same answers |"
        )
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in served_rows:
            print(r)


if __name__ == "__main__":
    main()
