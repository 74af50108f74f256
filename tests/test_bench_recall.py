"""bench/recall.py's comparison of two runs: the arithmetic a ranking change is judged by."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from math import comb
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _bench():
    spec = importlib.util.spec_from_file_location("bench_recall", ROOT / "bench" / "recall.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_sign_test_is_the_two_sided_binomial_tail() -> None:
    st = _bench().sign_test
    assert st(0, 0) == 1.0
    assert st(3, 3) == 1.0
    # 10 better, 1 worse: 2 * P(X <= 1) for X ~ Bin(11, 1/2)
    assert abs(st(10, 1) - 2 * (comb(11, 0) + comb(11, 1)) / 2**11) < 1e-12
    assert st(10, 1) == st(1, 10)
    assert abs(st(8, 2) - 2 * sum(comb(10, i) for i in range(3)) / 2**10) < 1e-12
    assert st(20, 0) < 1e-5


def _row(conv: str, q: str, cat: str, r10: float) -> dict:
    return {"conversation": conv, "question": q, "category": cat, "evidence": ["D1:1"],
            "got": [], "r@10": r10}  # fmt: skip


def test_compare_counts_better_and_worse_per_group(capsys) -> None:
    old = [
        _row("conv-a", "q1", "multi-hop", 0.0),
        _row("conv-a", "q2", "single-hop", 1.0),
        _row("conv-b", "q3", "single-hop", 0.5),
        _row("conv-b", "q4", "temporal", 1.0),
    ]
    new = [
        _row("conv-a", "q1", "multi-hop", 1.0),
        _row("conv-a", "q2", "single-hop", 0.0),
        _row("conv-b", "q3", "single-hop", 1.0),
        _row("conv-b", "q4", "temporal", 1.0),
        _row("conv-b", "q5", "temporal", 1.0),
    ]
    _bench().compare(new, old)
    out = capsys.readouterr().out
    assert "(1 questions not in it)" in out
    lines = {ln.split(" | ")[0].strip("| "): ln for ln in out.splitlines() if ln.startswith("| ")}
    assert lines["multi-hop"] == "| multi-hop | 1 | 0 | 0 | +100.0 | 1.00 |"
    assert lines["single-hop"] == "| single-hop | 1 | 1 | 0 | -25.0 | 1.00 |"
    assert lines["temporal"] == "| temporal | 0 | 0 | 1 | +0.0 | 1.00 |"
    assert lines["conv-a"] == "| conv-a | 1 | 1 | 0 | +0.0 | 1.00 |"
    assert lines["conv-b"] == "| conv-b | 1 | 0 | 1 | +25.0 | 1.00 |"
    assert lines["overall"] == "| overall | 2 | 1 | 1 | +12.5 | 1.00 |"


def test_compare_reads_rows_written_before_they_named_their_conversation(capsys) -> None:
    old = [_row("conv-a", "q1", "multi-hop", 0.0), _row("conv-b", "q2", "temporal", 1.0)]
    for r in old:
        del r["conversation"]
    new = [_row("conv-a", "q1", "multi-hop", 1.0), _row("conv-b", "q2", "temporal", 0.5)]
    _bench().compare(new, old)
    out = capsys.readouterr().out
    assert "(0 questions not in it)" in out
    assert "| overall | 1 | 1 | 0 | +25.0 | 1.00 |" in out


def _tiny_locomo() -> list[dict]:
    turns1 = [
        {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a grey cat named Pixel last week."},
        {"speaker": "Ben", "dia_id": "D1:2", "text": "Lovely! I started pottery classes."},
    ]
    turns2 = [
        {"speaker": "Ana", "dia_id": "D2:1", "text": "Pixel knocked my violin off the shelf."},
        {"speaker": "Ben", "dia_id": "D2:2", "text": "My pottery bowl cracked in the kiln."},
    ]
    return [{
        "sample_id": "conv-t",
        "conversation": {"speaker_a": "Ana", "speaker_b": "Ben",
                         "session_1": turns1, "session_1_date_time": "1:56 pm on 8 May, 2023",
                         "session_2": turns2, "session_2_date_time": "2:00 pm on 9 May, 2023"},
        "qa": [
            {"question": "What is the name of Ana's cat?", "evidence": ["D1:1"], "category": 4},
            {"question": "What has Ben made in pottery?", "evidence": ["D1:2", "D2:2"],
             "category": 1},
            {"question": "Unanswerable?", "evidence": [], "category": 5},
        ],
    }]  # fmt: skip


def test_a_run_compared_with_itself_changes_nothing(tmp_path: Path) -> None:
    """End to end: real vault through the CLI, --json, then --compare against that file."""
    data = tmp_path / "locomo.json"
    data.write_text(json.dumps(_tiny_locomo()), encoding="utf-8")
    first = tmp_path / "first.json"
    base = [sys.executable, str(ROOT / "bench" / "recall.py"), "--data", str(data),
            "--workdir", str(tmp_path / "w"), "--only", "locomo"]  # fmt: skip
    r = subprocess.run([*base, "--no-curate", "--json", str(first)],
                       capture_output=True, text=True, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr
    rows = json.loads(first.read_text(encoding="utf-8"))
    assert [(x["conversation"], x["category"]) for x in rows] == [
        ("conv-t", "single-hop"), ("conv-t", "multi-hop")]  # fmt: skip
    assert rows[0]["got"][0] == "D1:1"
    r = subprocess.run([*base, "--reuse", "--in-process", "--compare", str(first)],
                       capture_output=True, text=True, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr
    assert "| overall | 0 | 0 | 2 | +0.0 | 1.00 |" in r.stdout
    assert "| conv-t | 0 | 0 | 2 | +0.0 | 1.00 |" in r.stdout


def test_a_bad_compare_file_stops_the_run_before_it_starts(tmp_path: Path) -> None:
    """One line and exit 2 at once, not a traceback after every question was asked."""
    work = tmp_path / "w"
    bad = tmp_path / "old.json"
    for text in (None, "{not json", "{}"):
        if text is not None:
            bad.write_text(text, encoding="utf-8")
        r = subprocess.run([sys.executable, str(ROOT / "bench" / "recall.py"),
                            "--workdir", str(work), "--compare", str(bad)],
                           capture_output=True, text=True, check=False)  # fmt: skip
        assert r.returncode == 2, r.stderr
        assert "--compare" in r.stderr and "Traceback" not in r.stderr
        assert not work.exists()  # nothing was built


def test_real_sessions_count_an_answer_in_recall_and_in_search(tmp_path: Path) -> None:
    """End to end on a tiny gold file: one Claude Code session, two questions, through the
    CLI; recall counts an evidence turn among its memories, search among its top six."""
    sys.path.insert(0, str(ROOT / "tests"))
    from test_recall_answers import SID, Log

    log = Log()
    log.user("Please add a CI workflow that runs the tests.")
    wrote = log.call("Write", file_path=".github/workflows/ci.yml", content="name: CI")
    log.result("File created successfully at: .github/workflows/ci.yml")
    told = log.said("The CI workflow lives in .github/workflows/ci.yml and runs pytest.")
    gold_dir = tmp_path / "cc"
    (gold_dir / "sessions" / "proj").mkdir(parents=True)
    log.write(gold_dir / "sessions" / "proj" / f"{SID}.jsonl")
    gold = {"sessions": [{"file": f"proj/{SID}.jsonl", "session_id": SID, "questions": [
        {"question": "Where is the CI workflow?", "answer": "ci.yml", "evidence": [wrote, told]},
        {"question": "Which database do we use?", "answer": "-", "evidence": ["nowhere"]},
    ]}]}  # fmt: skip
    (gold_dir / "gold.json").write_text(json.dumps(gold), encoding="utf-8")
    out = tmp_path / "rows.json"
    r = subprocess.run([sys.executable, str(ROOT / "bench" / "recall.py"), "--only", "real",
                        "--gold", str(gold_dir / "gold.json"), "--json", str(out)],
                       capture_output=True, text=True, check=False)  # fmt: skip
    assert r.returncode == 0, r.stderr
    rows = json.loads(out.with_suffix(".real.json").read_text(encoding="utf-8"))["new"]
    assert [(x["recall"], x["search@6"]) for x in rows] == [(True, True), (False, False)]
    assert f"| {SID[:8]} | 2 | 0.50 | 0.50 | yes |" in r.stdout
