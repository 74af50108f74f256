"""Does what recall and search return answer the question? Real sessions and LoCoMo, CLI only.

    python bench/recall.py [--data ../shared/data/locomo/locomo-dev.json] [--jobs 2]
    python bench/recall.py --only real --against 3f53ba5   # real sessions, old code same run
    python bench/recall.py --only real --one-vault   # per-vault and one vault for all

Real sessions (`--gold`, ../shared/data/claude-code/gold.json): each annotated Claude Code
session becomes its own vault (`memctl init`, `memctl ingest` of the session file, `memctl
curate` with the builtin curator). Each question is asked twice: `memctl recall --json`
answers it when one of its memories holds an evidence turn (as a turn, or as a claim's
citation), `memctl search --json -n 6` when one of its six hits is an evidence turn. Both
are printed per session, in the same run. `--against REV` builds the same vaults with the
code at git revision REV (checked out in a temporary worktree) and asks them the same
questions in the same run: per question, better / worse / same for recall and search.
`--one-vault` takes gold.json and `--more` (bench/gold/claude-code-more.json) together and
asks each question twice: of its session's own vault, and of one vault that holds every
annotated session (as a user keeps one vault for all their code bases), asked in the
session's working directory (`recall --in`, as the prompt hook passes it).

Each conversation becomes one vault: `memctl init`, then `memctl ingest` of one memctl-JSONL
transcript per session (id = dia_id, name = the speaker, timestamp = the session date),
then `memctl curate` with the builtin curator, so claim lines can act as keys to the turns
they cite (`--no-curate` leaves the vaults raw).
Every question of categories 1-4 is asked with `memctl search --json`; a question's recall@k
is the share of its evidence turns among the top k turns. Prints R@1/5/10/20 per category
and overall, R@10 per conversation (a change should help on each, not on one), and the
time per query. The data set is CC BY-NC 4.0: it is read from outside the package and
never copied into it.

For experiments: `--workdir DIR --reuse` builds the vaults once and asks again on the next
run (a schema change rebuilds each index on the first question), and `--in-process` asks
through `Vault.search` with the same arguments as the CLI (same hits, a second instead of
a minute); the numbers to report are the CLI's. `--json NEW.json --compare OLD.json` tells,
per category and conversation, how many questions a change made better or worse at R@10
and how likely so lopsided a split is by chance (two-sided sign test): a point of R@10 is
a handful of questions here.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_DATA = HERE.parent.parent / "shared" / "data" / "locomo" / "locomo-dev.json"
DEFAULT_GOLD = HERE.parent.parent / "shared" / "data" / "claude-code" / "gold.json"
DEFAULT_MORE = HERE / "gold" / "claude-code-more.json"
SEARCH_K = 6  # search hits a person reads: what recall has to beat
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (1, 5, 10, 20)


def memctl(*args: str, code: Path | None = None) -> subprocess.CompletedProcess:
    """`python -m memctl ARGS`: this tree's memctl, or the one in `code` (a checkout)."""
    cmd = [sys.executable, "-m", "memctl"]
    # every command does its own work: a `memctl serve` started per vault would outlive the
    # run (one per vault until it idles out) and load the machine the next bench measures on
    env = {**os.environ, "MEMCTL_SERVE": "0"}
    if code is not None:
        env["PYTHONPATH"] = str(code)
    # from inside `code`: python -m puts the working folder first on sys.path
    return subprocess.run([*cmd, *args], capture_output=True, text=True, check=False,
                          env=env, cwd=code)  # fmt: skip


def checkout(rev: str, work: Path) -> Path:
    """REV's tree in a detached worktree under `work` (removed by `drop_checkout`)."""
    dest = work / f"code-{rev.replace('/', '-')}"
    r = subprocess.run(["git", "-C", str(HERE.parent), "worktree", "add", "--detach", str(dest),
                        rev], capture_output=True, text=True, check=False)  # fmt: skip
    if r.returncode != 0:
        raise SystemExit(f"--against {rev}: {r.stderr.strip()}")
    return dest


def drop_checkout(dest: Path) -> None:
    subprocess.run(["git", "-C", str(HERE.parent), "worktree", "remove", "--force", str(dest)],
                   capture_output=True, check=False)  # fmt: skip


# ---- real sessions ------------------------------------------------------------------------

_TURN = re.compile(r"^## t(\d+) · [^\n]*\n<!-- memctl:turn (\{.*?\}) -->$", re.MULTILINE)
_SUFFIX = re.compile(r"^(.{36})-\d+$")  # a second message from one log line: "<uuid>-1"


def turn_ids(vault: Path) -> dict[str, str]:
    """Every turn's ref (raw/...md#tN) -> the id of the log line it came from."""
    out: dict[str, str] = {}
    for f in (vault / "raw").rglob("*.md"):
        rel = f.relative_to(vault).as_posix()
        for m in _TURN.finditer(f.read_text(encoding="utf-8")):
            tid = json.loads(m.group(2)).get("id")
            if isinstance(tid, str):
                s = _SUFFIX.match(tid)
                out[f"{rel}#t{m.group(1)}"] = s.group(1) if s else tid
    return out


def build_real(session: dict, gold_dir: Path, root: Path, code: Path | None) -> Path:
    """One vault per annotated session: init, ingest the log, curate (builtin)."""
    vault = root / Path(session["file"]).stem
    src = gold_dir / "sessions" / session["file"]
    steps = [("init", str(vault)), ("--vault", str(vault), "ingest", str(src), "--user", "dev"),
             ("--vault", str(vault), "curate")]  # fmt: skip
    for args in steps:
        r = memctl(*args, code=code)
        if r.returncode != 0:
            raise SystemExit(f"memctl {' '.join(args)} failed: {r.stderr}")
    return vault


def build_one(sessions: list[tuple[dict, Path]], root: Path, code: Path | None) -> Path:
    """One vault for every annotated session, as a user keeps one for all their code bases:
    init, ingest each log, curate once (builtin)."""
    vault = root / "one-vault"
    steps = [("init", str(vault))]
    steps += [("--vault", str(vault), "ingest", str(d / "sessions" / s["file"]), "--user", "dev")
              for s, d in sessions]  # fmt: skip
    steps.append(("--vault", str(vault), "curate"))
    for args in steps:
        r = memctl(*args, code=code)
        if r.returncode != 0:
            raise SystemExit(f"memctl {' '.join(args)} failed: {r.stderr}")
    return vault


def session_cwd(path: Path) -> str | None:
    """The working directory a Claude Code log records: where its questions are asked."""
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            try:
                cwd = json.loads(line).get("cwd")
            except ValueError:
                continue
            if isinstance(cwd, str) and cwd:
                return cwd
    return None


def ask_real(
    vault: Path, question: str, code: Path | None, where: str | None = None
) -> tuple[list[str], list[str]]:
    """The refs recall's memories hold (turns and claim citations), and search's top turns;
    `where`: the directory the question is asked in (as the prompt hook passes it)."""
    inside = ("--in", where) if where else ()
    r = memctl("--vault", str(vault), "recall", "--json", "--user", "dev", *inside, "--",
               question, code=code)  # fmt: skip
    if r.returncode != 0:
        raise SystemExit(f"recall failed for {question!r}: {r.stderr}")
    refs: list[str] = []
    for m in json.loads(r.stdout)["memories"]:
        if m["kind"] == "turn":
            refs.append(m["ref"])
        refs += [c["ref"] for c in m.get("citations") or ()]
    s = memctl("--vault", str(vault), "search", "--json", "-n", str(SEARCH_K), "--", question,
               code=code)  # fmt: skip
    if s.returncode != 0:
        raise SystemExit(f"search failed for {question!r}: {s.stderr}")
    hits = [h["ref"] for h in json.loads(s.stdout)["hits"] if h["kind"] == "turn"]
    return list(dict.fromkeys(refs)), hits


def load_gold(paths: list[Path]) -> list[tuple[dict, Path]]:
    """(session, folder its file is under) of every annotated session with questions; a
    gold file outside the data folder (bench/gold/) names files of DEFAULT_GOLD's folder."""
    out: list[tuple[dict, Path]] = []
    for p in paths:
        gold = json.loads(p.read_text(encoding="utf-8"))
        folder = p.parent if (p.parent / "sessions").is_dir() else DEFAULT_GOLD.parent
        out += [(s, folder) for s in gold["sessions"] if s.get("questions")]
    return out


def run_real(gold_path: Path | list[Path], work: Path, code: Path | None, jobs: int,
             one: bool = False) -> list[dict]:  # fmt: skip
    """Per question: whether recall and search@6 hold an evidence turn; `one`: every session
    in one vault, each question asked in its session's working directory."""
    sessions = load_gold(gold_path if isinstance(gold_path, list) else [gold_path])
    jobs_: list[tuple[Path, dict[str, str], str, dict, str | None]] = []
    shared = build_one(sessions, work, code) if one else None
    shared_ids = turn_ids(shared) if shared is not None else {}
    for session, folder in sessions:
        vault = shared or build_real(session, folder, work, code)
        ids = shared_ids or turn_ids(vault)
        name = Path(session["file"]).stem[:8]
        where = session_cwd(folder / "sessions" / session["file"]) if one else None
        jobs_ += [(vault, ids, name, q, where) for q in session["questions"]]
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        answers = list(pool.map(lambda j: ask_real(j[0], j[3]["question"], code, j[4]), jobs_))
    rows = []
    for (_, ids, name, q, _), (recalled, searched) in zip(jobs_, answers, strict=True):
        ev = set(q["evidence"])
        rows.append({"session": name, "question": q["question"], "evidence": sorted(ev),
                     "recall": any(ids.get(ref) in ev for ref in recalled),
                     f"search@{SEARCH_K}": any(ids.get(ref) in ev for ref in searched),
                     "recalled": [ids.get(ref, ref) for ref in recalled]})  # fmt: skip
    return rows


def report_real(rows: list[dict], label: str) -> None:
    key = f"search@{SEARCH_K}"
    print(f"Real sessions ({label}): {len(rows)} questions; an answer = an evidence turn "
          f"among recall's memories (turn or claim citation) / search's top {SEARCH_K} turns")
    print()
    print(f"| session | n | recall answers | {key} | recall >= search |")
    print("|---|---|---|---|---|")
    by: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by[r["session"]].append(r)
    for name, rs in [*by.items(), ("overall", rows)]:
        rec = statistics.mean(r["recall"] for r in rs)
        srch = statistics.mean(r[key] for r in rs)
        ok = "yes" if rec >= srch else "**no**"
        print(f"| {name} | {len(rs)} | {rec:.2f} | {srch:.2f} | {ok} |")
    print()


def compare_real(rows: list[dict], old_rows: list[dict], rev: str) -> None:
    """Per question, recall and search against the same questions asked of REV's code."""
    old = {(r["session"], r["question"]): r for r in old_rows}
    print(f"Real sessions, per question against {rev} (same run):")
    print()
    print("| measure | session | better | worse | same | sign test p |")
    print("|---|---|---|---|---|---|")
    for key in ("recall", f"search@{SEARCH_K}"):
        groups: dict[str, list[int]] = defaultdict(list)
        for r in rows:
            o = old.get((r["session"], r["question"]))
            if o is None:
                continue
            d = int(r[key]) - int(o[key])
            groups[r["session"]].append(d)
            groups["overall"].append(d)
        for g, ds in sorted(groups.items(), key=lambda kv: kv[0] == "overall"):
            b, w = ds.count(1), ds.count(-1)
            print(f"| {key} | {g} | {b} | {w} | {len(ds) - b - w} | {sign_test(b, w):.2f} |")
    print()


def session_date(text: str) -> str:
    """'1:56 pm on 8 May, 2023' -> '2023-05-08T13:56:00'."""
    return datetime.strptime(text.replace(" on ", " "), "%I:%M %p %d %B, %Y").isoformat()


def evidence(ids: list[str]) -> set[str]:
    """Repair the few malformed ids ('D8:6; D9:17', 'D:11:26', 'D30:05')."""
    out = set()
    for raw in ids:
        for part in re.split(r"[;,\s]+", raw):
            m = re.fullmatch(r"D:?(\d+):0*(\d+)", part.strip())
            if m:
                out.add(f"D{int(m.group(1))}:{int(m.group(2))}")
    return out


def build_vault(
    conv: dict, root: Path, captions: bool, curate: bool = True
) -> tuple[Path, set[str]]:
    """One vault per conversation, one transcript file per session; returns the turn ids."""
    name = conv["sample_id"]
    src = root / f"{name}-src"
    vault = root / name
    src.mkdir(parents=True)
    c = conv["conversation"]
    ids: set[str] = set()
    n = 1
    while f"session_{n}" in c:
        when = session_date(c[f"session_{n}_date_time"])
        lines = []
        for t in c[f"session_{n}"]:
            text = t["text"]
            if captions and t.get("blip_caption"):
                text += f" [shares a photo: {t['blip_caption']}]"
            rec = {"id": t["dia_id"], "role": "user", "name": t["speaker"], "content": text}
            rec["timestamp"] = when
            lines.append(json.dumps(rec, ensure_ascii=False))
            ids.add(t["dia_id"])
        (src / f"{name}-session-{n:02d}.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
        n += 1
    steps = [("init", str(vault)), ("--vault", str(vault), "ingest", str(src), "--user", "locomo")]
    if curate:
        steps.append(("--vault", str(vault), "curate"))
    for args in steps:
        r = memctl(*args)
        if r.returncode != 0:
            raise SystemExit(f"memctl {' '.join(args)} failed: {r.stderr}")
    return vault, ids


def ask_in_process(vault: Path, question: str) -> tuple[list[str], float]:
    """What `memctl search --json --turns -n 20` answers, without starting a process."""
    from memctl.vault import Vault

    t0 = time.perf_counter()
    res = Vault.open(vault).search(question, kind="turn", status="active", limit=20)
    return [h.id or "" for h in res.hits], time.perf_counter() - t0


def conversation_ids(conv: dict) -> set[str]:
    c = conv["conversation"]
    ids: set[str] = set()
    n = 1
    while f"session_{n}" in c:
        ids |= {t["dia_id"] for t in c[f"session_{n}"]}
        n += 1
    return ids


def ask(vault: Path, question: str) -> tuple[list[str], float]:
    t0 = time.perf_counter()
    r = memctl("--vault", str(vault), "search", "--json", "--turns", "-n", "20", "--", question)
    took = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"search failed for {question!r}: {r.stderr}")
    return [h["id"] for h in json.loads(r.stdout)["hits"]], took


def sign_test(better: int, worse: int) -> float:
    """Two-sided p of a split at least this lopsided if each changed question were a coin."""
    n = better + worse
    if n == 0:
        return 1.0
    tail = sum(math.comb(n, i) for i in range(min(better, worse) + 1)) / 2**n
    return min(1.0, 2 * tail)


def compare(rows: list[dict], old_rows: list[dict]) -> None:
    """Per-question R@10 against an earlier run's --json: better / worse / same, by group."""

    # files written before rows named their conversation match on question and evidence
    def key(r: dict) -> tuple:
        return (r.get("conversation"), r["question"], tuple(r["evidence"]))

    old = {key(r): r["r@10"] for r in old_rows}
    loose = Counter((r["question"], tuple(r["evidence"])) for r in old_rows)
    groups: dict[str, list[float]] = defaultdict(list)
    missing = 0
    for r in rows:
        before = old.get(key(r))
        if before is None and loose[(r["question"], tuple(r["evidence"]))] == 1:
            before = old.get((None, r["question"], tuple(r["evidence"])))
        if before is None:
            missing += 1
            continue
        delta = r["r@10"] - before
        for g in (r["category"], r["conversation"], "overall"):
            groups[g].append(delta)
    print()
    print(f"R@10 per question against the earlier run ({missing} questions not in it):")
    print()
    print("| group | better | worse | same | mean change | sign test p |")
    print("|---|---|---|---|---|---|")
    order = [*CATEGORIES.values(), *sorted(g for g in groups if g.startswith("conv")), "overall"]
    for g in order:
        ds = groups.get(g)
        if not ds:
            continue
        b, w = sum(d > 0 for d in ds), sum(d < 0 for d in ds)
        print(f"| {g} | {b} | {w} | {len(ds) - b - w} | {100 * statistics.mean(ds):+.1f} | "
              f"{sign_test(b, w):.2f} |")  # fmt: skip


def real(args: argparse.Namespace, work: Path) -> None:
    """The real-session part: this tree, and REV's code in the same run when asked."""
    base = work / "real"
    shutil.rmtree(base, ignore_errors=True)
    (base / "new").mkdir(parents=True)
    t0 = time.perf_counter()
    if args.one_vault:
        gold = [Path(args.gold), Path(args.more)]
        rows = run_real(gold, base / "new", None, args.jobs)
        report_real(rows, f"a vault per session, {time.perf_counter() - t0:.0f} s")
        (base / "one").mkdir()
        t0 = time.perf_counter()
        one = run_real(gold, base / "one", None, args.jobs, one=True)
        report_real(one, f"one vault for all, {time.perf_counter() - t0:.0f} s")
        compare_real(one, rows, "a vault per session")
        if args.json:
            Path(args.json).with_suffix(".real.json").write_text(
                json.dumps({"per-vault": rows, "one-vault": one}, indent=1) + "\n", "utf-8")
        return
    rows = run_real(Path(args.gold), base / "new", None, args.jobs)
    report_real(rows, f"this tree, {time.perf_counter() - t0:.0f} s")
    out = {"new": rows}
    if args.against:
        code = checkout(args.against, base)
        try:
            (base / "old").mkdir()
            old = run_real(Path(args.gold), base / "old", code, args.jobs)
        finally:
            drop_checkout(code)
        report_real(old, args.against)
        compare_real(rows, old, args.against)
        out["old"] = old
    if args.json:
        Path(args.json).with_suffix(".real.json").write_text(json.dumps(out, indent=1) + "\n",
                                                             encoding="utf-8")  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--jobs", type=int, default=2, help="questions asked in parallel")
    ap.add_argument("--no-captions", action="store_true",
                    help="leave out the captions of shared photos")  # fmt: skip
    ap.add_argument("--no-curate", action="store_true",
                    help="search the raw turns only: no curated claim lines as keys")  # fmt: skip
    ap.add_argument("--workdir", help="keep the vaults here (default: a temp dir)")
    ap.add_argument("--reuse", action="store_true",
                    help="with --workdir: ask the vaults a previous run built there")  # fmt: skip
    ap.add_argument("--in-process", action="store_true",
                    help="ask through Vault.search, not the CLI (for experiments)")  # fmt: skip
    ap.add_argument("--json", help="also write per-question results to this file")
    ap.add_argument("--gold", default=str(DEFAULT_GOLD),
                    help="real sessions with gold questions (claude-code/gold.json)")  # fmt: skip
    ap.add_argument("--more", default=str(DEFAULT_MORE),
                    help="with --one-vault: more annotated sessions (gold.json's format)")
    ap.add_argument("--one-vault", action="store_true",
                    help="real sessions: also all in one vault, as a user keeps one for "
                    "every code base; each question asked in its session's folder")
    ap.add_argument("--only", choices=["real", "locomo"], help="run one part only")
    ap.add_argument("--against", metavar="REV",
                    help="real sessions: also ask git revision REV's code, same run")  # fmt: skip
    ap.add_argument("--compare", metavar="OLD.json",
                    help="per question, better or worse than an earlier run's --json")  # fmt: skip
    args = ap.parse_args()
    old_rows = None
    if args.compare:  # read it before an hour of asking, not after
        try:
            old_rows = json.loads(Path(args.compare).read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            ap.error(f"--compare {args.compare}: {e}")
        if not isinstance(old_rows, list):
            ap.error(f"--compare {args.compare}: not a list of per-question rows from --json")
    data = [] if args.only == "real" else json.loads(Path(args.data).read_text(encoding="utf-8"))
    if args.reuse and not args.workdir:
        raise SystemExit("--reuse needs --workdir")
    work = Path(args.workdir or tempfile.mkdtemp(prefix="memctl-locomo-"))
    if args.workdir and not args.reuse:
        shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    os.environ.pop("MEMCTL_VAULT", None)

    if args.only != "locomo":
        real(args, work)
    if args.only == "real":
        if not args.workdir:
            shutil.rmtree(work, ignore_errors=True)
        return
    jobs = []
    dropped = 0
    for conv in data:
        if args.reuse and (work / conv["sample_id"] / ".memctl").is_dir():
            vault, ids = work / conv["sample_id"], conversation_ids(conv)
        else:
            vault, ids = build_vault(
                conv, work, captions=not args.no_captions, curate=not args.no_curate
            )
        for qa in conv["qa"]:
            if qa["category"] not in CATEGORIES:
                continue
            ev = evidence(qa["evidence"]) & ids
            if not ev:
                dropped += 1
                continue
            jobs.append((vault, qa, ev))
    t0 = time.perf_counter()
    if args.in_process:
        answers = [ask_in_process(v, qa["question"]) for v, qa, _ in jobs]
    else:
        with ThreadPoolExecutor(max_workers=args.jobs) as pool:
            answers = list(pool.map(lambda j: ask(j[0], j[1]["question"]), jobs))
    wall = time.perf_counter() - t0

    scores: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    per_conv: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    rows = []
    for (vault, qa, ev), (got, took) in zip(jobs, answers, strict=True):
        cat = CATEGORIES[qa["category"]]
        hit10 = len(ev & set(got[:10])) / len(ev)
        per_conv[vault.name][cat].append(hit10)
        per_conv[vault.name]["overall"].append(hit10)
        rec = {"conversation": vault.name, "question": qa["question"], "category": cat,
               "evidence": sorted(ev), "got": got, "seconds": took}  # fmt: skip
        for k in KS:
            r = len(ev & set(got[:k])) / len(ev)
            scores[cat][k].append(r)
            scores["overall"][k].append(r)
            rec[f"r@{k}"] = r
        rows.append(rec)

    times = [t for _, t in answers]
    print(f"LoCoMo turn recall, {len(jobs)} questions (categories 1-4; {dropped} without "
          f"usable evidence dropped), captions {'off' if args.no_captions else 'on'}, "
          f"{'raw turns only' if args.no_curate else 'curated (builtin)'}")  # fmt: skip
    print()
    print("| category | n | R@1 | R@5 | R@10 | R@20 |")
    print("|---|---|---|---|---|---|")
    for cat in [*CATEGORIES.values(), "overall"]:
        s = scores[cat]
        if not s[1]:
            continue  # a data set without this category
        cells = " | ".join(f"{100 * statistics.mean(s[k]):.1f}" for k in KS)
        print(f"| {cat} | {len(s[1])} | {cells} |")
    print()
    print("R@10 per conversation:")
    print()
    print(f"| conversation | {' | '.join([*CATEGORIES.values(), 'overall'])} |")
    print(f"|---|{'---|' * (len(CATEGORIES) + 1)}")
    for name, cats in per_conv.items():
        cells = " | ".join(
            f"{100 * statistics.mean(cats[c]):.1f}" if cats[c] else "-"
            for c in [*CATEGORIES.values(), "overall"]
        )
        print(f"| {name} | {cells} |")
    print()
    how = "in-process (Vault.search)" if args.in_process else "through the CLI"
    print(f"time per query {how}: mean {1000 * statistics.mean(times):.0f} ms, "
          f"p50 {1000 * statistics.median(times):.0f} ms ({1 if args.in_process else args.jobs} "
          f"in parallel, "
          f"{wall:.0f} s wall)")  # fmt: skip
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    if old_rows is not None:
        compare(rows, old_rows)
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
