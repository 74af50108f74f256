"""Hand edits reach the next recall and search, however the editor saves the file.

The every-command freshness check stats folders (a create, delete or rename changes the
folder's mtime, and so does every save by temp file + rename, which memctl, git and most
editors do) and each note file (editors such as VS Code and Obsidian write in place,
which changes only the file). These tests make each kind of change through real files and
ask through a Vault kept open across the edits (the MCP server, the learning loop) and
through a fresh `memctl` process (the hook, the CLI).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from searchutil import make_vault, proc, turn_ref

from memctl.index import freshness, fsnotify, schema, writer
from memctl.vault import Vault

NOTE = "knowledge/egress-levers.md"
OLD = "Gateway endpoints remove NAT processing charges"


def _recall_live() -> Callable[[Path, str], str]:
    """Recall through one Vault that stays open across the edits."""
    opened: dict[Path, Vault] = {}

    def run(v: Path, query: str) -> str:
        vault = opened.setdefault(v, Vault.open(v))
        return vault.recall(query, user="dana", budget=4000).text

    return run


def _recall_proc(v: Path, query: str) -> str:
    r = proc("--vault", v, "recall", query, "--user", "dana", "--budget", "4000")
    assert r.code == 0, r.err
    return r.out


RUNNERS = {"open-vault": _recall_live, "fresh-process": lambda: _recall_proc}


@pytest.fixture(params=sorted(RUNNERS))
def recall(request: pytest.FixtureRequest) -> Callable[[Path, str], str]:
    return RUNNERS[request.param]()


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    v = make_vault(tmp_path)
    ref = turn_ref(v, "dana-egress", 2)
    (v / NOTE).write_text(
        "---\nid: knowledge/egress-levers\nschema: 1\nstore: knowledge\n"
        "title: Egress cost levers\nscope: team\nstatus: active\ncreated: 2026-11-01\n"
        "updated: 2026-11-01\n---\n\n# Egress cost levers\n\n## Facts\n\n"
        f"- {OLD}. [^a1]\n\n"
        f'[^a1]: {ref} "Start with S3 gateway endpoints"\n',
        encoding="utf-8",
    )
    return v


def _mtime(p: Path) -> int:
    return p.stat().st_mtime_ns


def test_an_in_place_edit_is_seen(vault: Path, recall: Callable[[Path, str], str]) -> None:
    assert OLD in recall(vault, "gateway endpoints NAT charges")
    p = vault / NOTE
    folder, inode = _mtime(p.parent), p.stat().st_ino
    data = p.read_bytes().replace(b"Gateway endpoints remove", b"Quokka tunnels remove")
    with p.open("r+b") as fh:  # as VS Code saves: same file, new bytes, no rename
        fh.write(data)
        fh.truncate()
    assert p.stat().st_ino == inode and _mtime(p.parent) == folder  # only the file moved
    text = recall(vault, "quokka tunnels NAT charges")
    assert "Quokka tunnels remove NAT processing charges" in text
    assert OLD not in recall(vault, "gateway endpoints NAT charges")


def test_a_same_size_in_place_edit_a_second_later_is_seen(
    vault: Path, recall: Callable[[Path, str], str]
) -> None:
    assert OLD in recall(vault, "gateway endpoints NAT charges")
    p = vault / NOTE
    st = p.stat()
    data = p.read_bytes().replace(b"Gateway endpoints", b"Pangolin gateways")
    assert len(data) == st.st_size  # a size check alone would not see it
    with p.open("r+b") as fh:
        fh.write(data)
    os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    assert "Pangolin gateways remove NAT processing charges" in recall(vault, "pangolin gateways")


def test_an_edit_saved_by_rename_is_seen(vault: Path, recall: Callable[[Path, str], str]) -> None:
    assert OLD in recall(vault, "gateway endpoints NAT charges")
    p = vault / NOTE
    tmp = p.with_name(".egress-levers.md.swp")
    tmp.write_bytes(p.read_bytes().replace(b"Gateway endpoints", b"Wombat gateways"))
    tmp.replace(p)  # as vim and memctl save: a new file renamed over the old one
    assert "Wombat gateways remove NAT processing charges" in recall(vault, "wombat gateways")
    assert OLD not in recall(vault, "gateway endpoints NAT charges")


def test_a_deleted_note_is_gone(vault: Path, recall: Callable[[Path, str], str]) -> None:
    assert OLD in recall(vault, "gateway endpoints NAT charges")
    (vault / NOTE).unlink()
    assert OLD not in recall(vault, "gateway endpoints NAT charges")


def _copy_note(vault: Path, rel: str, old: str, new: str) -> None:
    src = (vault / NOTE).read_text(encoding="utf-8")
    dest = vault / rel
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(
        src.replace("id: knowledge/egress-levers", f"id: knowledge/{dest.stem}").replace(old, new),
        encoding="utf-8",
    )


def test_new_notes_in_old_and_new_folders_are_seen(
    vault: Path, recall: Callable[[Path, str], str]
) -> None:
    assert "Capybara" not in recall(vault, "capybara relays")
    _copy_note(vault, "knowledge/capybara.md", "Gateway endpoints", "Capybara relays")
    assert "Capybara relays remove NAT processing charges" in recall(vault, "capybara relays")
    _copy_note(vault, "knowledge/deep/down/okapi.md", "Gateway endpoints", "Okapi bridges")
    assert "Okapi bridges remove NAT processing charges" in recall(vault, "okapi bridges")


def test_a_removed_folder_takes_its_notes_with_it(
    vault: Path, recall: Callable[[Path, str], str]
) -> None:
    _copy_note(vault, "knowledge/deep/okapi.md", "Gateway endpoints", "Okapi bridges")
    assert "Okapi bridges" in recall(vault, "okapi bridges")
    (vault / "knowledge/deep/okapi.md").unlink()
    (vault / "knowledge/deep").rmdir()
    assert "Okapi bridges" not in recall(vault, "okapi bridges")


def test_a_new_file_in_the_same_clock_tick_as_the_check_is_seen(vault: Path) -> None:
    """A folder's mtime has the filesystem clock's granularity (a few ms): a file created in
    the same tick as the last check leaves it unchanged, so a folder seen that close to its
    last change is checked in full next time (as git does for racy files)."""
    v = Vault.open(vault)
    folder = vault / "knowledge"
    writer.sync(v)
    os.utime(folder)  # the folder changed just now: the check below sees a racy folder
    writer.sync(v)
    before = _mtime(folder)
    _copy_note(vault, "knowledge/capybara.md", "Gateway endpoints", "Capybara relays")
    os.utime(folder, ns=(before, before))  # as if it fell in the same clock tick
    hits = v.search("capybara relays", kind="note").hits
    assert [h.ref for h in hits] == ["knowledge/capybara.md"]


def test_a_settled_vault_is_checked_by_folders_and_notes_only(vault: Path) -> None:
    """Once nothing is racy, the check answers "unchanged" from one stat per folder and
    per note, without listing a folder or statting a raw session."""
    v = Vault.open(vault)
    writer.sync(v)
    time.sleep(schema.RACY_NS / 1e9 + 0.05)
    writer.sync(v)  # the folders are no longer racy: the quick check settles it from here
    gen = freshness.current_generation(vault)[0]
    assert gen is not None and freshness.files_unchanged(gen, vault)
    stats = json.loads((gen.dir / schema.STATS).read_text(encoding="utf-8"))
    assert "raw" in stats["dirs"] and NOTE in stats["files"]
    assert not any(f.startswith("raw/") for f in stats["files"])


def test_a_raw_turn_edited_in_place_shows_its_current_text(vault: Path) -> None:
    """Raw sessions are immutable and memctl replaces them by rename, so the check leaves
    their files to the folder mtimes; a session changed in place anyway (a tamper `memctl
    verify` reports) is still shown as it is now, and re-indexed once a search meets it."""
    ref = turn_ref(vault, "marco-exporter", 1)
    p = vault / ref.split("#")[0]
    v = Vault.open(vault)
    assert ref in [h.ref for h in v.search("crashloop exporter").hits]
    time.sleep(schema.RACY_NS / 1e9 + 0.05)
    writer.sync(v)
    data = p.read_bytes().replace(b"in a crashloop again", b"in a bootloop again!")
    with p.open("r+b") as fh:
        fh.write(data)
        fh.truncate()
    hit = next(h for h in v.search("crashloop exporter").hits if h.ref == ref)
    assert "in a bootloop again!" in hit.text
    assert ref in [h.ref for h in v.search("bootloop").hits]  # indexed after it was met
    assert ref not in [h.ref for h in v.search("crashloop").hits]


# ---- a vault checked again and again by one process is watched (memctl/index/fsnotify.py) -------

watched_here = pytest.mark.skipif(
    not fsnotify.available(str(Path(__file__).parent)), reason="needs inotify on a local disk"
)


def _vouched(v: Vault) -> bool:
    gen = freshness.current_generation(v.root)[0]
    assert gen is not None
    got = freshness._WATCH.get(str(gen.dir / schema.STATS))
    return got is not None and got[1] is not None


def _never_vouched_yet_sees(vault: Path, edited: Path) -> None:
    """Checked past the point a watch would vouch, the vault stays on the stats, and an
    in-place edit of `edited` still reaches search."""
    v = Vault.open(vault)
    writer.sync(v)
    time.sleep(schema.RACY_NS / 1e9 + 0.05)
    for _ in range(freshness.WATCH_AFTER + 2):
        writer.sync(v)
    assert not _vouched(v)
    _in_place(edited, b"Gateway endpoints remove", b"Quokka tunnels remove")
    assert any("Quokka tunnels" in t for t in _note_hits(v, "quokka tunnels"))


def _watched(vault: Path) -> Vault:
    """A settled vault, checked until its watch vouches for it."""
    v = Vault.open(vault)
    writer.sync(v)
    time.sleep(schema.RACY_NS / 1e9 + 0.05)
    for _ in range(freshness.WATCH_AFTER + 1):
        writer.sync(v)
    assert _vouched(v)
    return v


def _in_place(p: Path, old: bytes, new: bytes) -> None:
    data = p.read_bytes().replace(old, new)
    with p.open("r+b") as fh:  # same file, new bytes: the folder's mtime does not move
        fh.write(data)
        fh.truncate()


def _note_hits(v: Vault, query: str) -> list[str]:
    return [h.text for h in v.search(query, kind="note").hits]


@watched_here
def test_a_watched_vault_is_checked_without_a_stat(
    vault: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    v = _watched(vault)
    gen = freshness.current_generation(vault)[0]
    assert gen is not None

    statted: list[str] = []
    real_stat, real_lstat = os.stat, os.lstat

    def stat(path: object, **kw: bool) -> os.stat_result:
        statted.append(str(path))
        return real_stat(path, **kw)  # type: ignore[arg-type]

    def lstat(path: object) -> os.stat_result:
        statted.append(str(path))
        return real_lstat(path)  # type: ignore[arg-type]

    with monkeypatch.context() as m:
        m.setattr(freshness.os, "stat", stat)
        m.setattr(freshness.os, "lstat", lstat)
        assert freshness.files_unchanged(gen, vault)
    # only stat.json itself (is the index's own record unchanged?), no folder, no note
    assert statted and all(p.endswith(schema.STATS) for p in statted), statted
    _in_place(vault / NOTE, b"Gateway endpoints remove", b"Quokka tunnels remove")
    assert not freshness.files_unchanged(gen, vault)  # the event sends it back to the stats
    assert any("Quokka tunnels" in t for t in _note_hits(v, "quokka tunnels"))


@watched_here
def test_every_kind_of_change_reaches_a_watched_vault(vault: Path) -> None:
    v = _watched(vault)
    p = vault / NOTE
    _in_place(p, b"Gateway endpoints remove", b"Quokka tunnels remove")
    assert any("Quokka tunnels" in t for t in _note_hits(v, "quokka tunnels"))

    v = _watched(vault)
    tmp = p.with_name(".egress-levers.md.swp")
    tmp.write_bytes(p.read_bytes().replace(b"Quokka tunnels", b"Wombat gateways"))
    tmp.replace(p)
    assert any("Wombat gateways" in t for t in _note_hits(v, "wombat gateways"))

    v = _watched(vault)
    _copy_note(vault, "knowledge/deep/down/okapi.md", "Wombat gateways", "Okapi bridges")
    assert any("Okapi bridges" in t for t in _note_hits(v, "okapi bridges"))

    # the new folders are watched once the vault is vouched for again
    v = _watched(vault)
    _in_place(vault / "knowledge/deep/down/okapi.md", b"Okapi bridges", b"Tapir ferries")
    assert any("Tapir ferries" in t for t in _note_hits(v, "tapir ferries"))

    v = _watched(vault)
    (vault / "knowledge/deep/down/okapi.md").unlink()
    assert not any("Tapir ferries" in t for t in _note_hits(v, "tapir ferries"))

    v = _watched(vault)
    p.unlink()
    assert not any("Wombat gateways" in t for t in _note_hits(v, "wombat gateways"))


@watched_here
def test_a_new_session_reaches_a_watched_vault(vault: Path) -> None:
    src = vault / turn_ref(vault, "marco-exporter", 1).split("#")[0]
    v = _watched(vault)
    text = src.read_text(encoding="utf-8")
    assert "crashloop" in text
    copy = src.with_name("zz-" + src.name)
    copy.write_text(text.replace("crashloop", "hypnotoad"), encoding="utf-8")  # as a git pull
    refs = [h.ref for h in v.search("hypnotoad").hits]
    assert any(r.startswith(copy.relative_to(vault).as_posix() + "#") for r in refs), refs


@watched_here
@pytest.mark.parametrize("link", ["symlink", "hard link"])
def test_a_linked_note_is_never_vouched_for(vault: Path, tmp_path: Path, link: str) -> None:
    """An edit through a link's target, or another hard link, raises its event where that
    name lives, which may not be a watched folder: such a vault stays on the stats."""
    p = vault / NOTE
    if link == "symlink":
        target = vault / "knowledge" / "real.md"
        p.rename(target)
        p.symlink_to(target.name)
    else:
        target = tmp_path / "elsewhere.md"
        os.link(p, target)
    _never_vouched_yet_sees(vault, target)


@watched_here
def test_a_forked_child_never_reads_its_parents_watch(tmp_path: Path) -> None:
    w = fsnotify.Watch()
    assert w.add([str(tmp_path)]) and w.quiet()
    pid = os.fork()
    if pid == 0:  # the child: the inherited watch must not answer (nor drain the parent's)
        os._exit(0 if not w.quiet() else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    (tmp_path / "x").write_text("x")
    assert not w.quiet()
    w.close()


_CHECKS_IN_A_PROCESS = """
import sys
from memctl.index import freshness, schema, writer
from memctl.vault import Vault

def vouched():
    gen = freshness.current_generation(v.root)[0]
    got = freshness._WATCH.get(str(gen.dir / schema.STATS))
    return got is not None and got[1] is not None

how, root = sys.argv[1], sys.argv[2]
if how == "cli":
    from memctl.faces import cli
    try:
        cli.main(["--vault", root, "search", "egress"])
    except SystemExit:
        pass
    watches, checks = len(freshness._WATCH), sum(freshness._CHECKS.values())
    print("watches", watches, "checks", checks, file=sys.stderr)
    sys.exit(0)
v = Vault.open(root, one_shot=how == "one-shot")
seen = []
for _ in range(2):
    v.search("egress")
    seen.append(vouched())
print("watches", len(freshness._WATCH), "vouched", seen, file=sys.stderr)
"""


@watched_here
def test_a_program_holding_a_vault_watches_from_its_first_check(vault: Path) -> None:
    """A Vault a program holds (MCP server, learning loop, a library user) is watched from
    its first check, so its second prompt costs no stat walk; a one-shot command (the CLI,
    a hook: `one_shot`) never pays for a watch it would not reuse, unless it checks again."""
    settle = Vault.open(vault)
    writer.sync(settle)  # the note the fixture wrote is indexed
    time.sleep(schema.RACY_NS / 1e9 + 0.05)
    writer.sync(settle)  # and the index's stats of it are no longer too new to trust

    def run(how: str) -> str:
        r = subprocess.run([sys.executable, "-c", _CHECKS_IN_A_PROCESS, how, str(vault)],
                           capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
        assert r.returncode == 0, r.stderr
        return r.stderr.strip().splitlines()[-1]

    assert run("library") == "watches 1 vouched [True, True]"
    assert run("one-shot") == "watches 1 vouched [False, True]"
    assert run("cli") == "watches 0 checks 1"


def test_without_watches_the_stats_decide(vault: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fsnotify, "available", lambda root: False)
    _never_vouched_yet_sees(vault, vault / NOTE)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify is Linux's")
def test_libc_is_loaded_by_its_soname_without_a_subprocess(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """ctypes.util.find_library runs `ldconfig -p` (~4 ms on the first recall that
    watches); glibc's libc.so.6 is loaded straight away, and gives a working watch."""
    import subprocess

    def no_subprocess(*a: object, **k: object) -> None:
        raise AssertionError("a subprocess was started to find libc")

    monkeypatch.setattr(fsnotify, "_libc", None)
    monkeypatch.setattr(subprocess, "Popen", no_subprocess)
    lib = fsnotify._load_libc()
    assert lib, "no libc: inotify watches would silently never be used"
    w = fsnotify.Watch()
    assert w.add([str(Path(__file__).parent)]) and w.quiet()
    w.close()
