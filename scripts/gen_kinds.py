"""Generate memctl/data/kinds.txt, the noun -> kinds table, from WordNet 3.0.

A list-shaped question names a kind ("What European countries has Maria been to?") while the
turn that answers names an instance ("Spain"): BM25 over the words cannot join them, WordNet's
hypernyms can. Each line is "word kind kind ...": a noun's hypernym words from its first
SENSES senses, DEPTH levels up, multi-word kinds split into their words ("european_country"
-> "european country"). Inflected forms from noun.exc ("children") carry their base's kinds.

Run once after changing the recipe (not at run time; memctl never reads WordNet itself):

    apt-get install -y wordnet-base      # Debian's WordNet 3.0 database, generation only
    python scripts/gen_kinds.py          # writes memctl/data/kinds.txt and its NOTICE

The output is deterministic (sorted lines, ASCII) so a regenerated table diffs cleanly.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

SENSES = 2  # first senses of a word: later ones are rare meanings ("shoes" -> situation)
DEPTH = 3  # hypernym levels: "spain" -> european country -> country -> administrative district
_WORD = re.compile(r"[a-z]+")
ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "memctl" / "data" / "kinds.txt"
NOTICE = ROOT / "memctl" / "data" / "WORDNET-LICENSE.txt"
COPYRIGHT = Path("/usr/share/doc/wordnet-base/copyright")
Synsets = dict[str, tuple[list[str], list[str]]]  # offset -> (words, noun hypernym offsets)


def read_wordnet(wn: Path) -> tuple[Synsets, dict[str, list[str]], dict[str, str]]:
    """Synsets (words, noun hypernym offsets), lemma -> synset offsets, irregular plurals."""
    synsets: Synsets = {}
    for line in (wn / "data.noun").read_text(encoding="latin-1").splitlines():
        if line.startswith("  "):
            continue  # the license header
        head = line.split(" | ")[0].split()
        off, wcnt = head[0], int(head[3], 16)
        words = [head[4 + 2 * i].lower() for i in range(wcnt)]
        i = 4 + 2 * wcnt
        pcnt = int(head[i])
        i += 1
        hyper = []
        for _ in range(pcnt):
            sym, poff, pos = head[i], head[i + 1], head[i + 2]
            i += 4
            if sym in ("@", "@i") and pos == "n":  # hypernym, instance hypernym ("spain")
                hyper.append(poff)
        synsets[off] = (words, hyper)
    senses: dict[str, list[str]] = {}
    for line in (wn / "index.noun").read_text(encoding="latin-1").splitlines():
        if line.startswith("  "):
            continue
        p = line.split()
        scnt, pcnt = int(p[2]), int(p[3])
        senses[p[0]] = p[4 + pcnt + 2 :][:scnt]
    irregular: dict[str, str] = {}
    for line in (wn / "noun.exc").read_text(encoding="latin-1").splitlines():
        parts = line.split()
        if len(parts) >= 2:
            irregular[parts[0]] = parts[1]
    return synsets, senses, irregular


def kinds_of(lemma: str, synsets: Synsets, senses: dict[str, list[str]]) -> list[str]:
    out: list[str] = []
    for off in senses[lemma][:SENSES]:
        frontier = [off]
        for _ in range(DEPTH):
            nxt = []
            for o in frontier:
                for h in synsets[o][1]:
                    out.extend(synsets[h][0])
                    nxt.append(h)
            frontier = nxt
    # split as the index's analyzer would: "european_country", "indo-european", "dr."
    words = (w for kind in out for w in _WORD.findall(kind))
    return [w for w in dict.fromkeys(words) if w != lemma]


def table(wn: Path) -> str:
    synsets, senses, irregular = read_wordnet(wn)
    rows: dict[str, list[str]] = {}
    for lemma in senses:
        if _WORD.fullmatch(lemma):
            rows[lemma] = kinds_of(lemma, synsets, senses)
    # an irregular form takes its base's kinds, even when it is a noun of its own ("aides")
    for form, base in irregular.items():
        if _WORD.fullmatch(form) and base in senses:
            rows[form] = [k for k in kinds_of(base, synsets, senses) if k != form]
    return "".join(" ".join([w, *rows[w]]) + "\n" for w in sorted(rows))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--wordnet", type=Path, default=Path("/usr/share/wordnet"))
    ap.add_argument("--copyright", type=Path, default=COPYRIGHT)
    args = ap.parse_args(argv)
    if not (args.wordnet / "data.noun").is_file():
        print(
            f"{args.wordnet}/data.noun: not found (apt-get install wordnet-base)",
            file=sys.stderr,
        )
        return 1
    text = table(args.wordnet)
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text(text, encoding="ascii", newline="\n")
    # WordNet's license asks for its notice on all copies, so it ships beside the table
    notice = args.copyright.read_text(encoding="utf-8").split("\nFiles: debian/*")[0]
    NOTICE.write_text(
        "memctl/data/kinds.txt is derived from WordNet 3.0 (Debian package wordnet-base,\n"
        f"by scripts/gen_kinds.py). Its license, from {args.copyright}:\n\n{notice.rstrip()}\n",
        encoding="utf-8",
        newline="\n",
    )
    print(f"{OUT.relative_to(ROOT)}: {text.count(chr(10))} words, {len(text)} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
