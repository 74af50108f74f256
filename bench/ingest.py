"""Ingest throughput and memory: a 100k-turn memctl JSONL and a 200 MB ChatGPT export.

Runs the real CLI in a subprocess (what a user runs), prints turns/s and peak RSS, and the
same file read by a bare JSON parse as the floor to compare against.

    python bench/ingest.py [--turns 100000] [--export-mb 200]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = (
    "the egress cost gateway replication bucket cluster deploy terraform migration phase "
    "latency budget alert dashboard query index schema pipeline model forecast notebook "
    "berlin lisbon grafana datadog kubernetes node pod service network cache cdn region"
).split()


def sentence(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."


def make_jsonl(path: Path, turns: int, seed: int = 1) -> int:
    rng = random.Random(seed)
    with path.open("w", encoding="utf-8") as fh:
        for i in range(turns):
            user = i % 2 == 0
            msg = {
                "id": f"m{i}",
                "role": "user" if user else "assistant",
                "content": " ".join(
                    sentence(rng, rng.randint(6, 18)) for _ in range(rng.randint(1, 4))
                ),
                "name": "dana" if user else "assistant",
                "timestamp": f"2026-{1 + (i // 300000) % 12:02d}-01T10:00:{i % 60:02d}Z",
            }
            fh.write(json.dumps(msg) + "\n")
    return path.stat().st_size


def make_chatgpt(path: Path, megabytes: int, seed: int = 2) -> tuple[int, int]:
    """A ChatGPT conversations.json of about `megabytes`, written without holding it in memory."""
    rng = random.Random(seed)
    target = megabytes * 1024 * 1024
    convs = turns = 0
    with path.open("w", encoding="utf-8") as fh:
        fh.write("[")
        while fh.tell() < target:
            mapping: dict[str, dict] = {
                "root": {"id": "root", "message": None, "parent": None, "children": []}
            }
            parent = "root"
            for k in range(rng.randint(10, 60)):
                nid = f"c{convs}-n{k}"
                mapping[parent]["children"].append(nid)
                mapping[nid] = {
                    "id": nid,
                    "parent": parent,
                    "children": [],
                    "message": {
                        "id": nid,
                        "author": {"role": "user" if k % 2 == 0 else "assistant"},
                        "create_time": 1_700_000_000 + convs * 1000 + k,
                        "content": {
                            "content_type": "text",
                            "parts": [" ".join(sentence(rng, 12) for _ in range(4))],
                        },
                        "metadata": {},
                    },
                }
                parent = nid
                turns += 1
            conv = {
                "title": f"conversation {convs}",
                "create_time": 1_700_000_000 + convs,
                "update_time": 1_700_000_000 + convs,
                "mapping": mapping,
                "current_node": parent,
                "conversation_id": f"conv-{convs}",
            }
            fh.write(("," if convs else "") + json.dumps(conv))
            convs += 1
        fh.write("]")
    return convs, turns


def run(args: list[str], cwd: Path) -> tuple[float, float, str]:
    """Wall seconds and peak RSS (MiB) of one memctl subprocess (its own rusage, via wait4)."""
    out = tempfile.TemporaryFile()  # noqa: SIM115 - closed below; wait4 needs a raw Popen
    err = tempfile.TemporaryFile()  # noqa: SIM115
    t = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "memctl", *args], cwd=cwd, stdout=out, stderr=err
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t
    proc.returncode = os.waitstatus_to_exitcode(status)
    out.seek(0)
    err.seek(0)
    stdout, stderr = out.read().decode(), err.read().decode()
    out.close()
    err.close()
    if proc.returncode:
        raise SystemExit(f"memctl {' '.join(args)} failed: {stderr}")
    return wall, usage.ru_maxrss / 1024, stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--turns", type=int, default=100_000)
    ap.add_argument("--export-mb", type=int, default=200)
    a = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="memctl-bench-"))
    print(f"workdir {tmp}")

    jsonl = tmp / "big.jsonl"
    size = make_jsonl(jsonl, a.turns)
    t = time.perf_counter()
    with jsonl.open(encoding="utf-8") as fh:
        for line in fh:
            json.loads(line)
    floor = time.perf_counter() - t
    vault = tmp / "v1"
    run(["init", str(vault)], tmp)
    # one 100k-turn session is past a vault's default raw limit (16 MB): this vault takes it
    with (vault / ".memctl" / "config.toml").open("a", encoding="utf-8") as fh:
        fh.write('\n[limits]\nraw = "256MB"\n')
    wall, _, out = run(["--vault", str(vault), "ingest", str(jsonl), "--json"], tmp)
    res = json.loads(out)
    assert res["turns_added"] == a.turns
    print(f"\n100k-turn JSONL ({size / 1e6:.1f} MB, {a.turns} turns, one session)")
    print(
        f"  memctl ingest (CLI, files + index + one commit): {wall:.2f} s = "
        f"{a.turns / wall:,.0f} turns/s"
    )
    print(
        f"  baseline json.loads of every line:               {floor:.2f} s = "
        f"{a.turns / floor:,.0f} turns/s  (ratio {wall / floor:.1f}x)"
    )
    wall2, _, out2 = run(["--vault", str(vault), "ingest", str(jsonl), "--json"], tmp)
    print(
        f"  re-ingest (idempotent, no commit):               {wall2:.2f} s, "
        f"changed={json.loads(out2)['sessions_changed']}"
    )

    export = tmp / "conversations.json"
    convs, turns = make_chatgpt(export, a.export_mb)
    esize = export.stat().st_size
    vault2 = tmp / "v2"
    run(["init", str(vault2)], tmp)
    wall3, peak, out3 = run(["--vault", str(vault2), "ingest", str(export), "--json"], tmp)
    res3 = json.loads(out3)
    print(f"\nChatGPT export ({esize / 1e6:.0f} MB, {convs} conversations, {turns} turns)")
    print(
        f"  memctl ingest: {wall3:.1f} s = {res3['turns_added'] / wall3:,.0f} turns/s, "
        f"peak RSS {peak:.0f} MiB ({peak * 1024 * 1024 / esize:.2f}x the file)"
    )
    if os.environ.get("KEEP") is None:
        subprocess.run(["rm", "-rf", str(tmp)], check=False)


if __name__ == "__main__":
    main()
