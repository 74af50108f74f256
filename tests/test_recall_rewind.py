"""A rewound session ("later beats earlier"): Claude Code lets a person go back to an
earlier turn and say something else; the log keeps both branches. What was said on the branch
they left stays in raw verbatim and can still be recalled, but labelled as rewound and ranked
below the branch they went on with. Before, recall mixed both branches as equally current.
"""

from __future__ import annotations

from pathlib import Path

from test_recall_answers import Log, _recall, _turn_ids, _vault

from memctl.core.branches import rewound
from memctl.core.model import Message


def _rewound_log() -> tuple[Log, str, str]:
    log = Log()
    log.user("Read the note on the dev-docs versus work folders convention.")
    opened = log.said("The convention splits dev-docs for reference from work for tasks.")
    left = log.user("I very much like the dev-docs and work folders convention, it worked for me.")
    log.said("Glad the dev-docs and work folders convention worked: here are its strengths.")
    log.user("Give five bullet points.")
    log.said("Five strengths of the convention, in bullets.")
    # the person rewinds to the assistant's first answer and says the opposite
    kept = log.user("I don't like the dev-docs and work folders convention, I struggled with it.")
    log.lines[-1]["parentUuid"] = opened
    log.said("Understood: the dev-docs and work folders convention has real weaknesses.")
    return log, left, kept


def test_the_branch_the_user_left_is_labelled_and_ranked_below_the_one_kept(
    tmp_path: Path,
) -> None:
    log, left, kept = _rewound_log()
    v = _vault(tmp_path, log)
    mems, ids = _recall(v, "What does the user think of the dev-docs and work folders convention?")
    got = _turn_ids(mems, ids)
    assert kept in got and left in got, " ".join(g[-2:] for g in got)  # both still recalled
    assert got.index(kept) < got.index(left), got
    by_id = {ids[m["ref"]]: m for m in mems if m["kind"] == "turn"}
    assert by_id[left]["basis"] == "rewound"
    assert by_id[kept]["basis"] == "said"
    md = _recall_md(v, "What does the user think of the dev-docs and work folders convention?")
    line = next(x for x in md.splitlines() if "I very much like" in x)
    assert "rewound" in line, md


def _recall_md(v: Path, q: str) -> str:
    from util import ok

    return ok("--vault", v, "recall", "--user", "dev", "--", q).out


def _m(role: str, text: str, parent: str | None, **meta: object) -> Message:
    return Message(role, text, None, None, None, {"parentUuid": parent, **meta})


def test_only_a_second_human_prompt_under_one_parent_marks_a_rewind() -> None:
    # slash commands and `!` commands share a parent in real logs without any rewind
    plain = [
        _m("user", "<command-name>/clear</command-name>", "p0"),
        _m("user", "<bash-input>uv run pytest</bash-input>", "p0"),
        _m("assistant", "ok", "p1"),
    ]
    assert rewound(plain) == {}
    side = [_m("user", "look at a", "p0"), _m("user", "look at b", "p0", isSidechain=True)]
    assert rewound(side) == {}
    msgs = [
        _m("user", "start", None),
        _m("assistant", "a1", "u1"),
        _m("user", "first try", "a1"),
        _m("assistant", "answer to the first", "u2"),
        _m("user", "second try", "a1"),
        _m("assistant", "answer to the second", "u3"),
        _m("user", "third try", "a1"),
    ]
    assert rewound(msgs) == {2: 5, 3: 5, 4: 7, 5: 7}


def test_a_claim_read_from_the_branch_the_user_left_says_so(tmp_path: Path) -> None:
    # The curator learned "Dev very much likes this idea" and "Dev doesn't like this idea"
    # from one rewound session as two equal, current lines of the same note.
    from util import ok

    log = Log()
    log.user("Read the idea file in this folder and tell me what it proposes.")
    opened = log.said("It proposes keeping reference docs in dev-docs and tasks in work.")
    log.user("I very much like this idea, and I used it already with some success in clmail.")
    log.said("Good to hear it worked in clmail.")
    log.user("I actually don't like this idea much, and I somewhat struggled with it in clmail.")
    log.lines[-1]["parentUuid"] = opened
    log.said("Understood, it did not fit clmail.")
    v = _vault(tmp_path, log)
    ok("--vault", v, "curate")
    lines = [ln for f in v.rglob("*.md") if "raw" not in f.parts and f.name != "INDEX.md"
             for ln in f.read_text().splitlines() if "clmail" in ln and ln.startswith("- ")]
    left = [ln for ln in lines if "very much like" in ln]
    kept = [ln for ln in lines if "don't like" in ln or "doesn't like" in ln]
    assert left and kept, lines
    assert all("(on a rewound branch)" in ln for ln in left), left
    assert not any("rewound" in ln for ln in kept), kept
    ok("--vault", v, "verify")
