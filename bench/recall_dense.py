"""Would an offline embedding signal lift `memctl search`'s turn recall? (an experiment)

    pip install wordllama==0.4.0.post1     # not a memctl dependency: only this script uses it
    python bench/recall.py --workdir DIR   # builds the three LoCoMo dev vaults once
    python bench/recall_dense.py --workdir DIR

Asks every question of bench/recall.py in-process (`Vault.search`, the same hits as the CLI)
and fuses the ranking with the cosine similarity of static token embeddings: WordLlama's
256-dim `l2_supercat` model, which its wheel ships (16 MB of float16 token vectors plus the
Llama-2 tokenizer). The files are read with safetensors and tokenizers directly: this
release's own `WordLlama.load()` looks for the bundled tokenizer in `tokenizer/` while the
wheel has it in `tokenizers/`, and so goes to the network; and `import wordllama` calls
`logging.basicConfig`. Nothing here touches the network.

A text's vector is the mean of its tokens' vectors, each weighted a / (a + p(token)) with
p the token's share of all tokens of the conversation's turns (smooth inverse frequency;
a plain mean is dominated by chit-chat tokens). A turn is embedded alone, or with its two
previous turns of the same session (its own tokens counted twice), like the BM25 window.
Rankings are fused by reciprocal rank: 1 / (k + rank in search) + w / (k + rank by cosine).
Prints R@10 per category and per conversation for each variant, and what the signal costs.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import recall as bench  # bench/recall.py, beside this file

WORD = re.compile(r"[\w'’]+")
POOL = 100  # search hits asked per question; fusion re-ranks within them


def load_model():
    """The token vectors (float32) and tokenizer that the wordllama wheel ships."""
    import numpy as np
    from safetensors import safe_open
    from tokenizers import Tokenizer

    spec = importlib.util.find_spec("wordllama")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("needs the wordllama package: pip install wordllama==0.4.0.post1")
    root = Path(next(iter(spec.submodule_search_locations)))
    with safe_open(str(root / "weights" / "l2_supercat_256.safetensors"), framework="np") as f:
        vectors = f.get_tensor("embedding.weight").astype(np.float32)
    tok = Tokenizer.from_file(str(root / "tokenizers" / "l2_supercat_tokenizer_config.json"))
    tok.no_padding()
    tok.no_truncation()
    return vectors, tok


def token_ids(tok, texts: list[str]) -> list[list[int]]:
    words = [" ".join(WORD.findall(t)) for t in texts]
    return [e.ids for e in tok.encode_batch(words, add_special_tokens=False)]


STORE = "float"  # --vectors: how a vector would be kept (float, int8, bits, or a dim count)


def embed(vectors, bags: list[list[int]], weight):
    import numpy as np

    out = np.zeros((len(bags), vectors.shape[1]), np.float32)
    for i, ids in enumerate(bags):
        if ids:
            w = weight[ids]
            out[i] = (vectors[ids] * w[:, None]).sum(0) / max(float(w.sum()), 1e-9)
    if STORE.isdigit():
        out = out[:, : int(STORE)]  # the model is trained to be cut (Matryoshka)
    elif STORE == "int8":
        scale = np.maximum(np.abs(out).max(axis=1, keepdims=True), 1e-9)
        out = np.round(out * 127 / scale)
    elif STORE == "bits":
        out = np.where(out > 0, 1.0, -1.0).astype(np.float32)  # cosine ~ 1 - 2 hamming / dims
    out /= np.maximum(np.linalg.norm(out, axis=1, keepdims=True), 1e-9)
    return out


def sif(vocab: int, bags: list[list[int]], a: float):
    import numpy as np

    counts = Counter(t for ids in bags for t in ids)
    total = max(1, sum(counts.values()))
    p = np.zeros(vocab, np.float64)
    for t, c in counts.items():
        p[t] = c / total
    return (a / (a + p)).astype(np.float32)


def windows(bags: list[list[int]], sessions: list[int]) -> list[list[int]]:
    out = []
    for j, ids in enumerate(bags):
        win = list(ids) * 2
        for back in (1, 2):
            if j - back >= 0 and sessions[j - back] == sessions[j]:
                win += bags[j - back]
        out.append(win)
    return out


def fuse(
    got: list[str],
    dense: dict[str, float],
    k: int,
    w: float,
    pool: int,
    join: int = 0,
    among_all: bool = False,
) -> list[str]:
    """Reciprocal-rank fusion of the search ranking's first `pool` with the dense ranking.

    The dense rank is taken among the candidates, or `among_all` turns (which needs every
    turn's vector, i.e. vectors made at index time); `join` adds the dense ranking's best.
    """
    got = got[:pool]
    order = sorted(dense, key=lambda i: -dense[i])
    cands = list(dict.fromkeys([*got, *order[:join]]))
    by_dense = order if among_all else sorted(cands, key=lambda i: -dense[i])
    dr = {i: r for r, i in enumerate(by_dense)}
    br = {i: r for r, i in enumerate(got)}
    score = {i: (1 / (k + br[i] + 1) if i in br else 0.0) + w / (k + dr[i] + 1) for i in cands}
    return sorted(cands, key=lambda i: -score[i])


def table(name: str, rows: list[tuple[dict, list[str]]]) -> None:
    per: dict[str, list[float]] = defaultdict(list)
    conv: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for q, got in rows:
        r = len(set(q["ev"]) & set(got[:10])) / len(q["ev"])
        per[q["cat"]].append(r)
        per["overall"].append(r)
        conv[q["conv"]]["overall"].append(r)
        if q["cat"] == "multi-hop":
            conv[q["conv"]]["multi-hop"].append(r)

    def m(xs: list[float]) -> str:
        return f"{100 * statistics.mean(xs):.1f}" if xs else "-"

    cats = [*bench.CATEGORIES.values(), "overall"]
    convs = " | ".join(f"{m(c['overall'])} / {m(c['multi-hop'])}" for _, c in sorted(conv.items()))
    print(f"| {name} | {' | '.join(m(per[c]) for c in cats)} | {convs} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", default=str(bench.DEFAULT_DATA))
    ap.add_argument("--workdir", required=True, help="vaults built by bench/recall.py --workdir")
    ap.add_argument("--a", type=float, default=1e-3, help="smooth inverse frequency constant")
    ap.add_argument("--vectors", default="float", help="float, int8, bits, or 128 / 64 dims")
    args = ap.parse_args()
    global STORE
    STORE = args.vectors
    import numpy as np

    from memctl.vault import Vault

    t0 = time.perf_counter()
    vectors, tok = load_model()
    load_s = time.perf_counter() - t0
    data = json.loads(Path(args.data).read_text(encoding="utf-8"))
    work = Path(args.workdir)
    qs: list[dict] = []
    dense: dict[str, dict[int, dict[str, float]]] = defaultdict(dict)
    embed_s = 0.0
    n_turns = 0
    for conv in data:
        name = conv["sample_id"]
        vault_dir = work / name
        if not (vault_dir / ".memctl").is_dir():
            bench.build_vault(conv, work, captions=True)
        c = conv["conversation"]
        ids, texts, sessions = [], [], []
        n = 1
        while f"session_{n}" in c:
            for t in c[f"session_{n}"]:
                text = t["text"]
                if t.get("blip_caption"):
                    text += f" [shares a photo: {t['blip_caption']}]"
                ids.append(t["dia_id"])
                texts.append(text)
                sessions.append(n)
            n += 1
        t1 = time.perf_counter()
        bags = token_ids(tok, texts)
        weight = sif(vectors.shape[0], bags, args.a)
        flat = np.ones(vectors.shape[0], np.float32)
        mats = {
            "turn": embed(vectors, bags, weight),
            "window": embed(vectors, windows(bags, sessions), weight),
            "turn, plain mean": embed(vectors, bags, flat),
        }
        embed_s += time.perf_counter() - t1
        n_turns += len(ids)
        vault = Vault.open(vault_dir)
        known = set(ids)
        for qa in conv["qa"]:
            if qa["category"] not in bench.CATEGORIES:
                continue
            ev = bench.evidence(qa["evidence"]) & known
            if not ev:
                continue
            res = vault.search(qa["question"], kind="turn", status="active", limit=POOL)
            q = {"conv": name, "cat": bench.CATEGORIES[qa["category"]], "ev": sorted(ev),
                 "got": [h.id or "" for h in res.hits], "i": len(qs)}  # fmt: skip
            qs.append(q)
            for kind, mat in mats.items():
                qv = embed(vectors, token_ids(tok, [qa["question"]]), flat if "plain" in kind
                           else weight)[0]  # fmt: skip
                dense[kind][q["i"]] = dict(zip(ids, (mat @ qv).tolist(), strict=True))

    def rank_of(kind: str) -> list[tuple[dict, list[str]]]:
        d = dense[kind]
        return [(q, sorted(d[q["i"]], key=lambda i: -d[q["i"]][i])) for q in qs]

    def fused(kind: str, k: int, w: float, pool: int, join: int = 0, among_all: bool = False):
        d = dense[kind]
        return [(q, fuse(q["got"], d[q["i"]], k, w, pool, join, among_all)) for q in qs]

    convs = sorted({q["conv"] for q in qs})
    print(f"LoCoMo dev, {len(qs)} questions, R@10 (in-process, same hits as the CLI)")
    print()
    head = " | ".join(f"{c} overall / multi-hop" for c in convs)
    print(f"| variant | {' | '.join([*bench.CATEGORIES.values(), 'overall'])} | {head} |")
    print(f"|---|{'---|' * (len(bench.CATEGORIES) + 1 + len(convs))}")
    table("search (today)", [(q, q["got"]) for q in qs])
    table("dense alone, turn, plain mean", rank_of("turn, plain mean"))
    table("dense alone, turn", rank_of("turn"))
    table("dense alone, window", rank_of("window"))
    plain = "turn, plain mean"
    table("top 20 re-ranked, turn, plain mean (k 60, w 0.1)", fused(plain, 60, 0.1, 20))
    table("top 20 re-ranked, turn (k 60, w 0.1)", fused("turn", 60, 0.1, 20))
    table("top 20 re-ranked, turn (k 60, w 0.2)", fused("turn", 60, 0.2, 20))
    table("top 20 re-ranked, window (k 30, w 0.2)", fused("window", 30, 0.2, 20))
    table("top 100 re-ranked, window (k 30, w 0.2)", fused("window", 30, 0.2, 100))
    table("top 20, turn, rank among all (k 60, w 0.1)", fused("turn", 60, 0.1, 20, 0, True))
    table("top 20, window, rank among all (k 30, w 0.2)", fused("window", 30, 0.2, 20, 0, True))
    table("window + dense top 10 join (k 30, w 0.2)", fused("window", 30, 0.2, 100, 10))
    table("window + dense top 10 join (k 60, w 0.1)", fused("window", 60, 0.1, 100, 10))
    table("same, rank among all (k 30, w 0.2)", fused("window", 30, 0.2, 100, 10, True))
    print()
    print(f"model load {1000 * load_s:.0f} ms (weights to float32 + tokenizer); "
          f"{n_turns} turns embedded three ways in {1000 * embed_s:.0f} ms "
          f"({1e6 * embed_s / n_turns / 3:.0f} us per turn and way)")  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
