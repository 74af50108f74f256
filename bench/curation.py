"""What the curator learns, scored against LoCoMo's annotated observations, through the CLI.

    python bench/curation.py [--data ../shared/data/locomo/locomo-dev.json] [--samples 50]
                             [--curator builtin | --model openai/gpt-4o-mini | --replay]
                             [--sessions ../shared/data/claude-code] [--only locomo|sessions]

Each conversation becomes a fresh vault: `memctl init`, `memctl ingest` of one transcript per
session as speaker_a's (`--user`, team scope), `memctl curate`. Every active claim line (not
History, not proposals) is read with the turns it cites. A claim *matches* an observation when
it cites the observation's evidence turn and their content words overlap with F1 >= 0.3
(lower-case, stopwords removed, a light suffix stemmer). precision = matched claims / claims;
coverage = speaker_a's observations matched by at least one claim / speaker_a's observations.

Beside it, in the same run, the every-sentence baseline: each sentence either speaker said,
copied as a claim citing its turn. Prints per conversation and per store, the curate speed in
turns/s, tokens and cost when a model is used, and a fixed sample of claims for a person to
judge. The data set is CC BY-NC 4.0: it is read from outside the package, never copied in.

Then, in the same run, real Claude Code sessions with a hand-written gold set (`--sessions`, see
its README): each gold session is ingested into a fresh vault (team scope) and curated. A claim
matches a gold fact when it cites one of the fact's evidence lines and the two texts' content
word *sets* overlap with F1 >= 0.3 (the README's rule); gold facts are matched one-to-one, best
F1 first, for coverage. precision = claims matching some gold fact / claims; noise = claims
citing a gold noise line or carrying harness markup. Beside it, the every-sentence baseline:
each sentence of each human and assistant text line, as a claim citing that line.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

HERE = Path(__file__).resolve().parent
# The data sit beside the checkout (../shared/data), or beside the folder of worktrees.
SHARED = next(
    (p / "shared" / "data" for p in HERE.parents if (p / "shared" / "data").is_dir()),
    HERE.parent.parent / "shared" / "data",
)
DEFAULT_DATA = SHARED / "locomo" / "locomo-dev.json"
DEFAULT_SESSIONS = SHARED / "claude-code"
MORE_GOLD = HERE / "gold" / "claude-code-more.json"
STORES = (
    "profile",
    "sessions",
    "entities",
    "knowledge",
    "decisions",
    "feedback",
    "instructions",
    "projects",
)
THRESHOLD = 0.3

STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves also really so very
    s t don't i'm it's that's""".split()
)


def memctl(*args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "memctl"]
    return subprocess.run([*cmd, *args], capture_output=True, text=True, check=False)


def session_date(text: str) -> str:
    """'1:56 pm on 8 May, 2023' -> '2023-05-08T13:56:00'."""
    return datetime.strptime(text.replace(" on ", " "), "%I:%M %p %d %B, %Y").isoformat()


def dia_ids(raw: str) -> set[str]:
    """Repair the few malformed ids ('D8:6; D9:17', 'D:11:26', 'D30:05')."""
    out = set()
    for part in re.split(r"[;,\s]+", raw):
        m = re.fullmatch(r"D:?(\d+):0*(\d+)", part.strip())
        if m:
            out.add(f"D{int(m.group(1))}:{int(m.group(2))}")
    return out


def stem(word: str) -> str:
    """A light suffix stemmer: enough that 'paints', 'painted' and 'painting' meet."""
    for suffix in ("ingly", "edly", "ings", "ing", "ies", "ied", "ed", "es", "ly", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            if suffix in ("ies", "ied"):
                word += "y"
            break
    if len(word) > 3 and word[-1] == word[-2] and word[-1] not in "aeiousl":
        word = word[:-1]  # "planned" -> "plann" -> "plan"
    return word


def content_words(text: str) -> list[str]:
    text = re.sub(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]", r"\1", text)  # [[path|Name]] -> Name
    words = re.findall(r"[a-z0-9][a-z0-9'’]*", text.lower().replace("’", "'"))
    return [stem(w.removesuffix("'s")) for w in words if w not in STOPWORDS and len(w) > 1]


def f1(a: list[str], b: list[str]) -> float:
    if not a or not b:
        return 0.0
    left = defaultdict(int)
    for w in a:
        left[w] += 1
    common = 0
    for w in b:
        if left[w] > 0:
            left[w] -= 1
            common += 1
    if not common:
        return 0.0
    p, r = common / len(a), common / len(b)
    return 2 * p * r / (p + r)


@dataclass
class Obs:
    speaker: str
    text: str
    turns: set[str]
    words: list[str] = field(default_factory=list)


@dataclass
class Learned:
    store: str
    note: str
    text: str
    turns: set[str]


@dataclass
class Score:
    claims: int = 0
    matched: int = 0
    by_store: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    covered: set[int] = field(default_factory=set)
    total: int = 0

    def add(self, other: Score) -> None:
        self.claims += other.claims
        self.matched += other.matched
        for k, (c, m) in other.by_store.items():
            self.by_store[k][0] += c
            self.by_store[k][1] += m
        self.total += other.total

    @property
    def precision(self) -> float:
        return self.matched / self.claims if self.claims else 0.0


def observations(conv: dict) -> list[Obs]:
    out = []
    for key in sorted(conv["observation"], key=lambda k: int(re.findall(r"\d+", k)[0])):
        for speaker, items in conv["observation"][key].items():
            for item in items:
                if len(item) < 2 or not isinstance(item[1], str):
                    continue
                obs = Obs(speaker, item[0], dia_ids(item[1]))
                obs.words = content_words(obs.text)
                if obs.turns:
                    out.append(obs)
    return out


def build_vault(conv: dict, root: Path) -> tuple[Path, int]:
    """A vault with every session ingested as speaker_a's; returns it and its turn count."""
    name = conv["sample_id"]
    src, vault = root / f"{name}-src", root / name
    src.mkdir(parents=True)
    c = conv["conversation"]
    n, turns = 1, 0
    while f"session_{n}" in c:
        when = session_date(c[f"session_{n}_date_time"])
        lines = []
        for t in c[f"session_{n}"]:
            rec = {"id": t["dia_id"], "role": "user", "name": t["speaker"], "content": t["text"]}
            rec["timestamp"] = when
            lines.append(json.dumps(rec, ensure_ascii=False))
            turns += 1
        (src / f"{name}-session-{n:02d}.jsonl").write_text("\n".join(lines) + "\n", "utf-8")
        n += 1
    user = c["speaker_a"].lower()
    steps = [
        ("init", str(vault)),
        ("--vault", str(vault), "ingest", str(src), "--user", user, "--scope", "team"),
    ]
    for args in steps:
        r = memctl(*args)
        if r.returncode != 0:
            raise SystemExit(f"memctl {' '.join(args)} failed: {r.stderr}")
    return vault, turns


def read_claims(vault: Path) -> list[Learned]:
    """Every active claim with the LoCoMo ids of the turns it cites (library read, no writes)."""
    from memctl.core.notes import parse_note
    from memctl.core.raw import parse_session

    ids: dict[str, str] = {}  # "raw/...md#t3" -> "D1:3"
    for f in sorted((vault / "raw").rglob("*.md")):
        if f.name == "INDEX.md":
            continue
        rel = f.relative_to(vault).as_posix()
        _, messages = parse_session(f.read_text("utf-8"), rel)
        for i, m in enumerate(messages, 1):
            # A Claude Code line that yields several messages suffixes its uuid ("<uuid>-1").
            mid = str(m.id or "")
            ids[f"{rel}#t{i}"] = re.sub(r"^([0-9a-f-]{36})-\d+$", r"\1", mid)
    out = []
    for store in STORES:
        folder = vault / store
        if not folder.is_dir():
            continue
        for f in sorted(folder.rglob("*.md")):
            rel = f.relative_to(vault).as_posix()
            if f.name == "INDEX.md" or "/proposals/" in f"/{rel}" or ".proposals" in rel:
                continue
            note = parse_note(f.read_text("utf-8"), rel)
            if note.status != "active":
                continue
            for _, claim in note.active_claims():
                cites = note.citations(claim)
                turns = {ids.get(c.ref or "", "") for c in cites} - {""}
                out.append(Learned(store, note.title, claim.text, turns))
    return out


def baseline(conv: dict) -> list[Learned]:
    """Every sentence of every turn, as a claim citing its turn."""
    c = conv["conversation"]
    out = []
    n = 1
    while f"session_{n}" in c:
        for t in c[f"session_{n}"]:
            for s in re.split(r"(?<=[.!?])\s+", t["text"].strip()):
                if s.strip():
                    out.append(Learned("every-sentence", t["speaker"], s, {t["dia_id"]}))
        n += 1
    return out


def score(claims: list[Learned], obs: list[Obs], speaker_a: str) -> Score:
    by_turn: dict[str, list[int]] = defaultdict(list)
    for i, o in enumerate(obs):
        for t in o.turns:
            by_turn[t].append(i)
    s = Score(total=sum(1 for o in obs if o.speaker == speaker_a))
    for c in claims:
        words = content_words(c.text)
        hit = False
        for t in c.turns:
            for i in by_turn.get(t, ()):
                if f1(words, obs[i].words) >= THRESHOLD:
                    hit = True
                    if obs[i].speaker == speaker_a:
                        s.covered.add(i)
        s.claims += 1
        s.matched += hit
        s.by_store[c.store][0] += 1
        s.by_store[c.store][1] += hit
    return s


def replay_answers(conv: dict) -> list[dict]:
    """One model answer per session: the session's annotated observations as cited claims.

    Stands in for a model in `--replay`: it measures what the llm pipeline costs in tokens and
    what verification and merging keep, never a model's judgement.
    """
    c, a = conv["conversation"], conv["conversation"]["speaker_a"]
    out, n = [], 1
    while f"session_{n}" in c:
        turns = c[f"session_{n}"]
        index = {t["dia_id"]: i for i, t in enumerate(turns, 1)}
        claims = []
        for speaker, items in conv["observation"].get(f"session_{n}_observation", {}).items():
            for item in items:
                if len(item) < 2 or not isinstance(item[1], str):
                    continue
                turn = index.get(item[1].split(";")[0].strip())
                if turn is None:
                    continue
                text = turns[turn - 1]["text"]
                quote = max(re.split(r"(?<=[.!?])\s+", text.strip()), key=len)
                mine = speaker == a
                claims.append({
                    "store": "profile" if mine else "entities",
                    "note": f"Profile: {a.lower()}" if mine else speaker,
                    "section": "Identity" if mine else "Facts",
                    "text": item[0],
                    "citations": [{"turn": turn, "quote": quote}],
                    **({} if mine else {"entity_type": "person"}),
                })  # fmt: skip
        out.append({"json": {"claims": claims}})
        n += 1
    return out


def replay_cost(requests: list, answers: list[dict], model: str) -> tuple[int, int, float | None]:
    """Tokens of what went over the wire (memctl's tokenizer) and litellm's offline price."""
    from memctl.core import tokens

    tin = sum(tokens.count(m["content"]) for r in requests for m in r.messages)
    tout = sum(tokens.count(json.dumps(a["json"])) for a in answers)
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    price = litellm.model_cost.get(model.split("/", 1)[-1]) or litellm.model_cost.get(model)
    if not price:
        return tin, tout, None
    return tin, tout, tin * price["input_cost_per_token"] + tout * price["output_cost_per_token"]


def curate(vault: Path, curator: str, model: str | None) -> tuple[float, dict]:
    args = ["--vault", str(vault), "curate", "--json"]
    if model:
        args += ["--model", model]
    elif curator != "builtin":
        args += ["--curator", curator]
    t0 = time.perf_counter()
    r = memctl(*args)
    took = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"memctl curate failed in {vault}: {r.stderr}")
    return took, json.loads(r.stdout)


# ---- real Claude Code sessions --------------------------------------------------------------

# Harness markup and notices a claim must never carry (the README's noise kinds).
MARKUP = re.compile(
    r"<(?:command-name|command-message|command-args|local-command-stdout|local-command-stderr|"
    r"bash-input|bash-stdout|bash-stderr|system-reminder|ide_opened_file|ide_selection|"
    r"user-prompt-submit-hook)>|^Caveat: The messages below|\[Request interrupted|"
    r"Todos have been modified successfully",
    re.I,
)
GOLD_STOP = STOPWORDS


def gold_words(text: str) -> set[str]:
    """The README's content words: lower-case, split on anything but [a-z0-9_], no stopwords."""
    text = re.sub(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]", r"\1", text)
    return {w for w in re.findall(r"[a-z0-9_]+", text.lower()) if w not in GOLD_STOP and len(w) > 1}


def set_f1(a: set[str], b: set[str]) -> float:
    common = len(a & b)
    if not common:
        return 0.0
    p, r = common / len(a), common / len(b)
    return 2 * p * r / (p + r)


@dataclass
class RealScore:
    claims: int = 0
    matched: int = 0
    noise: int = 0
    facts: int = 0
    covered: int = 0
    by_store: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))

    def add(self, o: RealScore) -> None:
        self.claims += o.claims
        self.matched += o.matched
        self.noise += o.noise
        self.facts += o.facts
        self.covered += o.covered
        for k, (c, m) in o.by_store.items():
            self.by_store[k][0] += c
            self.by_store[k][1] += m


def score_real(claims: list[Learned], gold: dict) -> tuple[RealScore, list[tuple[Learned, str]]]:
    """Precision, one-to-one coverage and noise of one session's claims against its gold."""
    facts = [(set(f["evidence"]), gold_words(f["text"])) for f in gold["facts"]]
    noise_ids = {n["uuid"] for n in gold["noise"]}
    s = RealScore(claims=len(claims), facts=len(facts))
    pairs: list[tuple[float, int, int]] = []
    verdicts: list[tuple[Learned, str]] = []
    for ci, c in enumerate(claims):
        words = gold_words(c.text)
        hit = False
        for fi, (ev, fw) in enumerate(facts):
            if c.turns & ev:
                score = set_f1(words, fw)
                if score >= THRESHOLD:
                    hit = True
                    pairs.append((score, ci, fi))
        noisy = bool(c.turns & noise_ids) or bool(MARKUP.search(c.text))
        s.matched += hit
        s.noise += noisy
        s.by_store[c.store][0] += 1
        s.by_store[c.store][1] += hit
        verdicts.append((c, "noise" if noisy else "match" if hit else "-"))
    used_c: set[int] = set()
    used_f: set[int] = set()
    for _, ci, fi in sorted(pairs, key=lambda x: -x[0]):
        if ci not in used_c and fi not in used_f:
            used_c.add(ci)
            used_f.add(fi)
    s.covered = len(used_f)
    return s, verdicts


def session_lines(path: Path) -> list[dict]:
    out = []
    for line in path.read_text("utf-8").splitlines():
        if line.strip():
            out.append(json.loads(line))
    return out


def real_baseline(path: Path) -> list[Learned]:
    """Every sentence of every human and assistant text part, as a claim citing its line."""
    out = []
    for o in session_lines(path):
        if o.get("type") not in ("user", "assistant") or o.get("isMeta"):
            continue
        content = (o.get("message") or {}).get("content")
        if isinstance(content, str):
            parts = [content]
        else:
            parts = [p.get("text", "") for p in content or [] if isinstance(p, dict)
                     and p.get("type") == "text"]  # fmt: skip
        for text in parts:
            for sent in re.split(r"(?<=[.!?])\s+|\n+", text.strip()):
                if sent.strip():
                    out.append(Learned("every-sentence", "", sent, {o.get("uuid", "")}))
    return out


def run_sessions(args: argparse.Namespace, work: Path) -> None:
    root = Path(args.sessions)
    gold = json.loads((root / "gold.json").read_text("utf-8"))
    if args.more_gold and Path(args.more_gold).is_file():
        # our own annotations of the sessions gold.json leaves out (bench/gold/)
        more = json.loads(Path(args.more_gold).read_text("utf-8"))["sessions"]
        have = {g["file"] for g in gold["sessions"]}
        gold["sessions"] += [g for g in more if g["file"] not in have and g["facts"]]
    total, base = RealScore(), RealScore()
    seconds = engine = 0.0
    turns_all = 0
    samples: list[tuple[str, Learned, str]] = []
    print(f"{'real session':<14} {'turns':>6} {'claims':>7} {'prec':>6} {'cover':>6} "
          f"{'noise':>6}   {'baseline claims':>15} {'prec':>6} {'cover':>6} "
          f"{'noise':>6}")  # fmt: skip
    for g in gold["sessions"]:
        src = root / "sessions" / g["file"]
        stem = Path(g["file"]).stem
        name = stem[:14] if stem.startswith("agent-") else g["session_id"][:8]
        vault = work / f"cc-{name}"
        for step in (("init", str(vault)),
                     ("--vault", str(vault), "ingest", str(src), "--scope", "team")):  # fmt: skip
            r = memctl(*step)
            if r.returncode != 0:
                raise SystemExit(f"memctl {' '.join(step)} failed: {r.stderr}")
        took, result = curate(vault, args.curator, args.model)
        seconds += took
        engine += float(result.get("seconds") or 0.0)
        turns = int(result.get("turns_read") or 0)
        turns_all += turns
        claims = read_claims(vault)
        s, verdicts = score_real(claims, g)
        b, _ = score_real(real_baseline(src), g)
        total.add(s)
        base.add(b)
        for c, v in verdicts:
            samples.append((name, c, v))
        prec = s.matched / s.claims if s.claims else 0.0
        bprec = b.matched / b.claims if b.claims else 0.0
        print(f"{name:<14} {turns:>6} {s.claims:>7} {prec:>6.2f} {s.covered / s.facts:>6.2f} "
              f"{s.noise:>6}   {b.claims:>15} {bprec:>6.2f} {b.covered / b.facts:>6.2f} "
              f"{b.noise:>6}")  # fmt: skip
    prec = total.matched / total.claims if total.claims else 0.0
    bprec = base.matched / base.claims if base.claims else 0.0
    print(f"{'all':<14} {turns_all:>6} {total.claims:>7} {prec:>6.3f} "
          f"{total.covered / max(total.facts, 1):>6.3f} {total.noise:>6}   {base.claims:>15} "
          f"{bprec:>6.3f} {base.covered / max(base.facts, 1):>6.3f} {base.noise:>6}")  # fmt: skip
    print(f"  ({total.covered}/{total.facts} gold facts covered, {total.matched}/{total.claims} "
          "claims match a gold fact)")  # fmt: skip
    print()
    print(f"{'store':<14} {'claims':>7} {'matched':>8} {'precision':>10}")
    for store, (n, m) in sorted(total.by_store.items()):
        print(f"{store:<14} {n:>7} {m:>8} {m / n if n else 0:>10.2f}")
    print()
    rate = turns_all / seconds if seconds else 0.0
    print(f"curate (real sessions): {turns_all} turns in {seconds:.2f} s = {rate:,.0f} turns/s "
          "(CLI wall time)")  # fmt: skip
    if engine:
        print(f"curate engine (as reported by memctl curate --json): {engine:.2f} s = "
              f"{turns_all / engine:,.0f} turns/s")  # fmt: skip
    # Per-session vaults measure mostly process start and regex compilation (~70 turns each);
    # the rate a user sees curating a day of sessions is one curate over all of them.
    one = work / "cc-all"
    steps = [("init", str(one)), ("--vault", str(one), "ingest", str(root / "sessions"))]
    for step in steps:
        r = memctl(*step, *(("--scope", "team") if "ingest" in step else ()))
        if r.returncode != 0:
            raise SystemExit(f"memctl {' '.join(step)} failed: {r.stderr}")
    took, result = curate(one, args.curator, args.model)
    n, eng = int(result.get("turns_read") or 0), float(result.get("seconds") or 0.0)
    rate = n / eng if eng else 0.0
    print(f"curate (all {n} turns of sessions/ in one vault): CLI {took:.2f} s = "
          f"{n / took:,.0f} turns/s; engine {eng:.2f} s = {rate:,.0f} turns/s")  # fmt: skip
    print()
    rng = random.Random(7)
    pick = rng.sample(samples, min(args.real_samples, len(samples)))
    print(f"{len(pick)} sample real-session claims (match: cites a gold fact's evidence, "
          "F1 >= 0.3):")  # fmt: skip
    for name, c, v in pick:
        print(f"  [{v:^5}] {name} {c.store:<10} {c.text}")
    if args.json:
        rows = [{"session": n, "store": c.store, "note": c.note, "claim": c.text,
                 "turns": sorted(c.turns), "verdict": v} for n, c, v in samples]  # fmt: skip
        Path(args.json).with_suffix(".sessions.json").write_text(
            json.dumps(rows, indent=1, ensure_ascii=False), "utf-8"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(DEFAULT_DATA))
    ap.add_argument("--curator", default="builtin")
    ap.add_argument("--model", help="a litellm model string: run the llm curator with it")
    ap.add_argument("--samples", type=int, default=50, help="claims printed for a person to judge")
    replay_help = ("llm curator against a local fake model that answers with the annotated "
                   "observations (cost and pipeline check, no network)")  # fmt: skip
    ap.add_argument("--replay", action="store_true", help=replay_help)
    ap.add_argument("--workdir", help="keep the vaults here (default: a temp dir)")
    ap.add_argument("--json", help="also write every claim with its verdict to this file")
    ap.add_argument("--sessions", default=str(DEFAULT_SESSIONS), help="real Claude Code set")
    more_help = "more gold for the sessions gold.json leaves out ('' for gold.json alone)"
    ap.add_argument("--more-gold", default=str(MORE_GOLD), help=more_help)
    ap.add_argument("--real-samples", type=int, default=30, help="real-session claims printed")
    ap.add_argument("--only", choices=("locomo", "sessions"), help="run one of the two sets")
    args = ap.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="memctl-curation-"))
    if args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True, exist_ok=True)
    os.environ.pop("MEMCTL_VAULT", None)
    fake = None
    if args.replay:
        sys.path.insert(0, str(HERE.parent / "tests"))
        from fakellm import FakeLLM

        fake = FakeLLM().start()
        args.model = args.model or "openai/gpt-4o-mini"
        os.environ.update({"OPENAI_API_KEY": "sk-replay", "OPENAI_BASE_URL": fake.base_url,
                           "OPENAI_API_BASE": fake.base_url, "NO_PROXY": "127.0.0.1"})  # fmt: skip
    if args.only != "sessions":
        run_locomo(args, work, fake)
    if args.only != "locomo" and not args.replay:
        print()
        run_sessions(args, work)


def run_locomo(args: argparse.Namespace, work: Path, fake: object) -> None:
    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    replayed: list[dict] = []
    wire: list = []

    total, base_total = Score(), Score()
    seconds = turns_all = engine = 0.0
    covered = base_covered = 0
    tokens_in = tokens_out = 0
    cost: float | None = 0.0
    samples: list[tuple[str, Learned, bool]] = []
    rows = []
    print(f"{'conversation':<14} {'turns':>6} {'claims':>7} {'prec':>6} {'cover':>6}   "
          f"{'baseline claims':>15} {'prec':>6} {'cover':>6}")  # fmt: skip
    for conv in data:
        name, speaker_a = conv["sample_id"], conv["conversation"]["speaker_a"]
        obs = observations(conv)
        vault, turns = build_vault(conv, work)
        if fake is not None:
            answers = replay_answers(conv)
            fake.reset()
            fake.enqueue(*answers)
            replayed += answers
        took, result = curate(vault, args.curator, args.model)
        if fake is not None:
            wire += list(fake.chat_requests)
        seconds += took
        engine += float(result.get("seconds") or 0.0)
        turns_all += turns
        tokens_in += int(result.get("tokens_in") or 0)
        tokens_out += int(result.get("tokens_out") or 0)
        if result.get("cost") is None:
            cost = None
        elif cost is not None:
            cost += float(result["cost"])
        claims = read_claims(vault)
        s = score(claims, obs, speaker_a)
        b = score(baseline(conv), obs, speaker_a)
        total.add(s)
        base_total.add(b)
        cov, bcov = len(s.covered) / max(s.total, 1), len(b.covered) / max(b.total, 1)
        covered += len(s.covered)
        base_covered += len(b.covered)
        print(f"{name:<14} {turns:>6} {s.claims:>7} {s.precision:>6.2f} {cov:>6.2f}   "
              f"{b.claims:>15} {b.precision:>6.2f} {bcov:>6.2f}")  # fmt: skip
        by_turn = defaultdict(list)
        for i, o in enumerate(obs):
            for t in o.turns:
                by_turn[t].append(i)
        for c in claims:
            words = content_words(c.text)
            ok = any(
                f1(words, obs[i].words) >= THRESHOLD for t in c.turns for i in by_turn.get(t, ())
            )
            samples.append((name, c, ok))
            rows.append({"conversation": name, "store": c.store, "note": c.note,
                         "claim": c.text, "turns": sorted(c.turns), "match": ok})  # fmt: skip
    cov = covered / max(total.total, 1)
    bcov = base_covered / max(base_total.total, 1)
    print(f"{'all':<14} {int(turns_all):>6} {total.claims:>7} {total.precision:>6.3f} {cov:>6.3f}"
          f"   {base_total.claims:>15} {base_total.precision:>6.3f} {bcov:>6.3f}")  # fmt: skip
    print()
    print(f"{'store':<14} {'claims':>7} {'matched':>8} {'precision':>10}")
    for store, (n, m) in sorted(total.by_store.items()):
        print(f"{store:<14} {n:>7} {m:>8} {m / n if n else 0:>10.2f}")
    n, m = base_total.by_store["every-sentence"]
    print(f"{'(baseline)':<14} {n:>7} {m:>8} {m / n if n else 0:>10.2f}")
    print()
    rate = turns_all / seconds if seconds else 0.0
    print(f"curate: {int(turns_all)} turns in {seconds:.2f} s = {rate:,.0f} turns/s "
          "(CLI wall time: process start, imports, commit and index update included)")  # fmt: skip
    if engine:
        print(f"curate engine (as reported by memctl curate --json): {engine:.2f} s = "
              f"{turns_all / engine:,.0f} turns/s")  # fmt: skip
    if fake is not None:
        tokens_in, tokens_out, cost = replay_cost(wire, replayed, args.model)
        fake.stop()
        print(f"replay: {len(wire)} requests; tokens counted with memctl's tokenizer, "
              "price from litellm's offline cost map")  # fmt: skip
    if args.model:
        per_k = 1000 / turns_all if turns_all else 0
        money = "unknown (model not in litellm's cost map)" if cost is None else f"${cost:.4f}"
        print(f"tokens: {tokens_in} in + {tokens_out} out; per 1k turns "
              f"{tokens_in * per_k:,.0f} + {tokens_out * per_k:,.0f}; cost {money}")  # fmt: skip
    print()
    rng = random.Random(7)
    pick = rng.sample(samples, min(args.samples, len(samples)))
    print(f"{len(pick)} sample claims (match: cites an observation's evidence turn, F1 >= 0.3):")
    for name, c, ok in pick:
        print(f"  [{'match' if ok else '  -  '}] {name} {c.store:<10} {c.text}")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1, ensure_ascii=False), "utf-8")


if __name__ == "__main__":
    main()
