"""Search speed, side by side: memctl (in-process and CLI) vs ripgrep vs SQLite FTS5 BM25.

    python bench/search.py --sizes 10k,100k          # routine
    python bench/search.py --sizes 1m --queries 100  # once; takes a while

For each size it generates synthetic conversations (Zipf vocabulary, named speakers and an
assistant, sessions of varying length over three years), then measures in one run:
ingest throughput through `memctl ingest` (files + index + one git commit), `memctl reindex`
time, index size against the raw text, search latency in-process and through the CLI, and
the same queries with `rg -i` over raw/ and with SQLite FTS5 ranked by bm25(). Prints one
table per size with the ratios the targets are stated in. Installs ripgrep with apt-get if
it is missing (a benchmark dependency, not memctl's).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

SEED = 20260901
VOCAB = 40_000
ZIPF_S = 1.07
NAMES = [
    "Dana", "Marco", "Priya", "Alex", "Sam", "Jordan", "Taylor", "Morgan", "Riley", "Casey",
    "Jamie", "Avery", "Quinn", "Rowan", "Sasha", "Noor", "Kenji", "Lena", "Omar", "Ines",
    "Tomas", "Aiko", "Femi", "Lucia", "Mateo", "Yara", "Idris", "Hana", "Oskar", "Zara",
]  # fmt: skip
SYLLABLES = [c + v for c in "bcdfghjklmnprstvwz" for v in ("a", "e", "i", "o", "u", "ai", "ou")]


def parse_size(text: str) -> int:
    text = text.strip().lower()
    mult = {"k": 1_000, "m": 1_000_000}.get(text[-1], 1)
    return int(float(text.rstrip("km")) * mult)


def vocabulary(rng: random.Random) -> list[str]:
    words: dict[str, None] = {}
    while len(words) < VOCAB:
        n = rng.choice((1, 2, 2, 3, 3, 4))
        words.setdefault("".join(rng.choice(SYLLABLES) for _ in range(n)), None)
    return list(words)


def generate(folder: Path, turns: int, rng: random.Random) -> tuple[list[str], int]:
    """Write one memctl-JSONL file per session; returns the vocabulary and text bytes."""
    vocab = vocabulary(rng)
    cum: list[float] = []
    acc = 0.0
    for r in range(1, VOCAB + 1):
        acc += 1.0 / r**ZIPF_S
        cum.append(acc)
    folder.mkdir(parents=True, exist_ok=True)
    start0 = datetime(2023, 1, 1, tzinfo=UTC)
    made = 0
    text_bytes = 0
    s = 0
    while made < turns:
        n = min(turns - made, max(4, int(rng.lognormvariate(4.3, 0.6))))  # median ~75 turns
        name = rng.choice(NAMES)
        when = start0 + timedelta(seconds=rng.randrange(3 * 365 * 86400))
        sid = f"s{s:07d}"
        lines = []
        for i in range(n):
            length = max(3, min(400, int(rng.lognormvariate(3.1, 0.7))))  # median ~22 words
            words = rng.choices(vocab, cum_weights=cum, k=length)
            words[0] = words[0].capitalize()
            content = " ".join(words) + "."
            text_bytes += len(content.encode())
            when += timedelta(seconds=rng.randrange(15, 400))
            rec = {"id": f"{sid}-m{i + 1}", "session": sid, "content": content}
            if i % 2 == 0:
                rec.update(role="user", name=name)
            else:
                rec.update(role="assistant")
            rec["timestamp"] = when.strftime("%Y-%m-%dT%H:%M:%SZ")
            lines.append(json.dumps(rec))
        (folder / f"{sid}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
        made += n
        s += 1
    return vocab, text_bytes


def make_queries(vocab: list[str], count: int, rng: random.Random) -> list[list[str]]:
    """Two or three content words of middling frequency, like what people search for."""
    out = []
    for _ in range(count):
        k = rng.choice((1, 2, 2, 3))
        out.append([vocab[min(len(vocab) - 1, int(rng.paretovariate(0.7) * 40))] for _ in range(k)])
    return out


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    if not values:
        return float("nan")
    k = min(len(values) - 1, max(0, round(p / 100 * (len(values) - 1))))
    return values[k]


def ensure_rg() -> str:
    rg = shutil.which("rg")
    if rg:
        return rg
    print("installing ripgrep (apt-get) for the comparison ...", file=sys.stderr)
    subprocess.run(["apt-get", "install", "-y", "-qq", "ripgrep"], check=False,
                   stdout=subprocess.DEVNULL)  # fmt: skip
    rg = shutil.which("rg")
    if not rg:
        subprocess.run(["apt-get", "update", "-qq"], check=False, stdout=subprocess.DEVNULL)
        subprocess.run(["apt-get", "install", "-y", "-qq", "ripgrep"], check=True,
                       stdout=subprocess.DEVNULL)  # fmt: skip
        rg = shutil.which("rg")
    if not rg:
        raise SystemExit("ripgrep is needed for the comparison and could not be installed")
    return rg


def tree_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def memctl(
    *args: str, vault: Path | None = None, check: bool = True
) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "memctl"] if os.environ.get("BENCH_PYTHON_M") else ["memctl"]
    if vault is not None:
        cmd += ["--vault", str(vault)]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, check=check)


def wait_for_git_gc(vault: Path, limit: float = 900.0) -> float:
    """Let git's background `gc --auto` finish before timing anything else.

    A commit that leaves more than 6,700 loose objects (a 1M-turn ingest writes ~11k files)
    makes git pack them in a detached process that takes both cores for a minute; measured
    beside it, every search latency and the next ingest would be inflated.
    """
    t0 = time.perf_counter()
    pid = vault / ".git" / "gc.pid"
    time.sleep(0.2)  # git daemonizes the gc just after the commit returns
    while pid.exists() and time.perf_counter() - t0 < limit:
        time.sleep(0.5)
    waited = time.perf_counter() - t0
    if waited > 1:
        print(f"waited {waited:.0f}s for git's background gc", file=sys.stderr)
    return waited


def fts5_build(src: Path, db: Path) -> tuple[float, int]:
    if db.exists():
        db.unlink()
    con = sqlite3.connect(db)
    con.execute("PRAGMA journal_mode=OFF")
    con.execute("PRAGMA synchronous=OFF")
    con.execute(
        "CREATE VIRTUAL TABLE turns USING fts5(speaker, text, ref UNINDEXED, "
        "tokenize='porter unicode61')"
    )
    t0 = time.perf_counter()
    rows = []
    for f in sorted(src.glob("*.jsonl")):
        for n, line in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            rec = json.loads(line)
            rows.append((rec.get("name") or rec["role"], rec["content"], f"{f.stem}#t{n}"))
        if len(rows) > 50_000:
            con.executemany("INSERT INTO turns VALUES (?,?,?)", rows)
            rows = []
    con.executemany("INSERT INTO turns VALUES (?,?,?)", rows)
    con.commit()
    build = time.perf_counter() - t0
    con.close()
    return build, db.stat().st_size


def fts5_queries(db: Path, queries: list[list[str]]) -> list[float]:
    con = sqlite3.connect(db)
    sql = "SELECT ref, bm25(turns) FROM turns WHERE turns MATCH ? ORDER BY bm25(turns) LIMIT 10"
    times = []
    for q in queries[:3]:
        con.execute(sql, (" OR ".join(f'"{w}"' for w in q),)).fetchall()  # warm the cache
    for q in queries:
        t0 = time.perf_counter()
        con.execute(sql, (" OR ".join(f'"{w}"' for w in q),)).fetchall()
        times.append(time.perf_counter() - t0)
    con.close()
    return times


def run_size(size: int, work: Path, nq: int, ncli: int, rg: str) -> dict[str, float]:
    rng = random.Random(SEED + size)
    src = work / f"src-{size}"
    vault = work / f"vault-{size}"
    shutil.rmtree(src, ignore_errors=True)
    shutil.rmtree(vault, ignore_errors=True)
    t0 = time.perf_counter()
    vocab, text_bytes = generate(src, size, rng)
    print(
        f"[{size:,}] generated {size:,} turns in {time.perf_counter() - t0:.1f}s", file=sys.stderr
    )
    queries = make_queries(vocab, nq, rng)
    r: dict[str, float] = {"turns": size, "text_mb": text_bytes / 1e6}

    memctl("init", str(vault))
    t0 = time.perf_counter()
    memctl("ingest", str(src), "--user", "bench", "--scope", "team", vault=vault)
    r["ingest_s"] = time.perf_counter() - t0
    r["ingest_tps"] = size / r["ingest_s"]
    print(f"[{size:,}] ingest {r['ingest_s']:.1f}s", file=sys.stderr)
    r["gc_wait_s"] = wait_for_git_gc(vault)

    res = json.loads(memctl("reindex", "--json", vault=vault).stdout)
    r["reindex_s"] = res["seconds"]
    r["index_mb"] = res["index_bytes"] / 1e6
    r["raw_mb"] = tree_bytes(vault / "raw") / 1e6

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from memctl import Vault

    v = Vault.open(vault)
    for q in queries[:5]:
        v.search(" ".join(q))
    lat, lat_sync = [], []
    for q in queries:
        t0 = time.perf_counter()
        v.search(" ".join(q), sync=False)
        lat.append(time.perf_counter() - t0)
    for q in queries[:ncli]:
        t0 = time.perf_counter()
        v.search(" ".join(q))
        lat_sync.append(time.perf_counter() - t0)
    r["mem_p50"], r["mem_p95"] = pct(lat, 50), pct(lat, 95)
    r["memsync_p50"] = pct(lat_sync, 50)

    fts = work / f"fts-{size}.db"
    r["fts_build_s"], fts_bytes = fts5_build(src, fts)
    r["fts_mb"] = fts_bytes / 1e6
    ft = fts5_queries(fts, queries)
    r["fts_p50"], r["fts_p95"] = pct(ft, 50), pct(ft, 95)

    cli, rgt = [], []
    memctl("search", "warm", "up", vault=vault)
    for q in queries[:ncli]:
        t0 = time.perf_counter()
        memctl("search", *q, vault=vault)
        cli.append(time.perf_counter() - t0)
        args = [rg, "-i", "--no-heading", "-n"]
        for w in q:
            args += ["-e", w]
        t0 = time.perf_counter()
        subprocess.run([*args, str(vault / "raw")], capture_output=True, check=False)
        rgt.append(time.perf_counter() - t0)
    r["cli_p50"], r["cli_p95"] = pct(cli, 50), pct(cli, 95)
    r["rg_p50"], r["rg_p95"] = pct(rgt, 50), pct(rgt, 95)
    return r


def report(r: dict[str, float]) -> str:
    ms = 1000.0
    rows = [
        ("ingest (files + index + commit)", f"{r['ingest_tps']:,.0f} turns/s",
         f"{r['ingest_s']:.1f} s", f"{r['ingest_tps'] / 20000:.2f}x of 20k/s target"),
        ("index build (memctl reindex)", f"{r['reindex_s']:.2f} s",
         f"FTS5 build {r['fts_build_s']:.2f} s",
         f"{r['reindex_s'] / r['fts_build_s']:.1f}x FTS5's time"),
        ("index size", f"{r['index_mb']:.1f} MB", f"raw/ {r['raw_mb']:.1f} MB, text "
         f"{r['text_mb']:.1f} MB", f"{r['index_mb'] / r['raw_mb']:.2f}x raw/, "
         f"{r['index_mb'] / r['text_mb']:.2f}x text (FTS5 {r['fts_mb']:.1f} MB)"),
        ("search in-process p50 / p95", f"{r['mem_p50'] * ms:.2f} / {r['mem_p95'] * ms:.2f} ms",
         f"FTS5 {r['fts_p50'] * ms:.2f} / {r['fts_p95'] * ms:.2f} ms",
         f"{r['fts_p50'] / r['mem_p50']:.1f}x faster than FTS5 (p50)"),
        ("  with the freshness check", f"{r['memsync_p50'] * ms:.2f} ms p50", "", ""),
        ("search CLI end to end p50 / p95", f"{r['cli_p50'] * ms:.0f} / {r['cli_p95'] * ms:.0f} ms",
         f"rg -i {r['rg_p50'] * ms:.0f} / {r['rg_p95'] * ms:.0f} ms",
         f"{r['cli_p50'] / r['rg_p50']:.2f}x of ripgrep (p50)"),
    ]  # fmt: skip
    w = [max(len(row[i]) for row in rows) for i in range(4)]
    out = [f"## {int(r['turns']):,} turns"]
    for row in rows:
        out.append("  ".join(c.ljust(w[i]) for i, c in enumerate(row)).rstrip())
    return "\n".join(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="10k,100k")
    ap.add_argument("--queries", type=int, default=200, help="in-process and FTS5 queries")
    ap.add_argument("--cli-queries", type=int, default=30, help="CLI and ripgrep runs")
    ap.add_argument("--workdir", help="keep generated data here (default: a temp dir)")
    ap.add_argument("--json", help="also write the raw numbers to this file")
    args = ap.parse_args()
    rg = ensure_rg()
    work = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="memctl-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    results = []
    try:
        for size in (parse_size(s) for s in args.sizes.split(",")):
            r = run_size(size, work, args.queries, args.cli_queries, rg)
            results.append(r)
            print(report(r), flush=True)
            print(flush=True)
    finally:
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
