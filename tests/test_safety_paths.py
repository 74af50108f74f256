"""One confinement rule for every path memctl reads, writes, indexes or serves.

Found in review: a symlink inside the vault pointing outside was indexed and then served
by `search`, `recall`, the UserPromptSubmit hook and MCP `search`/`list`, and
`memctl show raw/../../x` and `memctl export raw/../../x` read files outside the vault.
Each command and MCP tool is attacked here with the same list of spellings: `..`,
absolute paths, NUL, hidden folders, case and Unicode lookalikes, and symlinks that leave
the vault (or point into `.git`).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_recall import NOTES, SESSIONS, build_vault
from util import memctl

from memctl.core.provenance import RawTurns
from memctl.core.store import Transaction, inside
from memctl.errors import InputError, MemctlError
from memctl.faces.mcp import Tools
from memctl.vault import Vault

MARK = "zebracrossing"  # only in files outside the vault (or in .git)

OUTSIDE_NOTE = f"""---
title: Zebra crossing plan
store: knowledge
scope: team
---
# Zebra crossing plan

## Facts

- The {MARK} launch code is 0000.
"""

# Every spelling that must be refused, for every command and tool that takes a path.
REFS = [
    "../outside/session.md",
    "raw/../../outside/session.md",
    "knowledge/../../outside/note.md",
    "/etc/passwd",
    "//etc/passwd",
    "raw/2026/link.md",
    "knowledge/link.md",
    "knowledge/gitconfig.md",
    "knowledge/linkdir/note.md",
    ".git/config",
    ".GIT/config",
    ".memctl/config.toml",
    "raw/x.md\x00.md",
    "raw\\..\\..\\outside\\session.md",
    "RAW/../../outside/session.md",
    "ｒａｗ/．．/．．/outside/session.md",
    "raw/\u2024\u2024/\u2024\u2024/outside/session.md",
    "raw/\u200b../../outside/session.md",
    "~/outside/session.md",
    # case lookalikes of folders the vault has: the real folder on macOS and Windows
    "Knowledge/link.md",
    "KNOWLEDGE/acme.md",
    "knowledge./acme.md",
    "knowledge/index.md",
]


@pytest.fixture(scope="module")
def attacked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Vault, dict, Path]:
    """A vault with symlinks out of it (and into .git), indexed as a watcher would."""
    base = tmp_path_factory.mktemp("paths")
    vault, paths = build_vault(base / "vault", SESSIONS, NOTES)
    outside = base / "outside"
    outside.mkdir()
    (outside / "note.md").write_text(OUTSIDE_NOTE)
    session = (vault.root / paths["s-egress"]).read_text()
    session = session.replace("egress", MARK).replace("Morning!", f"Morning {MARK}!")
    (outside / "session.md").write_text(session)
    raw_dir = (vault.root / paths["s-egress"]).parent
    (raw_dir / "link.md").symlink_to(outside / "session.md")
    (vault.root / "raw" / "2026").mkdir(exist_ok=True)
    if not (vault.root / "raw" / "2026" / "link.md").exists():
        (vault.root / "raw" / "2026" / "link.md").symlink_to(outside / "session.md")
    (vault.root / "knowledge" / "link.md").symlink_to(outside / "note.md")
    (vault.root / "knowledge" / "linkdir").symlink_to(outside, target_is_directory=True)
    git_config = vault.root / ".git" / "config"
    git_config.write_text(git_config.read_text() + f"# {MARK}\n")
    (vault.root / "knowledge" / "gitconfig.md").symlink_to(git_config)
    vault.reindex()
    return vault, paths, outside


@pytest.fixture(scope="module")
def plain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sessions and notes of test_recall, built once; a test that changes it copies it."""
    vault, _ = build_vault(tmp_path_factory.mktemp("plain") / "vault", SESSIONS, NOTES)
    return vault.root


def _clean(text: str, *asked: str) -> None:
    """No byte of an outside file in `text`; the caller's own words (`asked`), which
    outputs echo back ("no matches for ...", a recall block's title), do not count."""
    for q in asked:
        text = text.replace(q, "")
    assert MARK not in text, text[:2000]


def test_the_confinement_function_refuses_every_spelling(
    attacked: tuple[Vault, dict, Path],
) -> None:
    vault, _, _ = attacked
    for ref in REFS:
        with pytest.raises(MemctlError, match="escapes the vault"):
            inside(vault.root, ref)
    # and what it accepts stays what it was
    assert inside(vault.root, "knowledge/acme.md") == vault.root.resolve() / "knowledge/acme.md"
    assert inside(vault.root, "./raw/INDEX.md") == vault.root.resolve() / "raw/INDEX.md"


def test_a_write_through_any_spelling_is_refused(attacked: tuple[Vault, dict, Path]) -> None:
    vault, _, outside = attacked
    before = sorted(p.name for p in outside.iterdir())
    tx = Transaction(vault.root)
    for ref in REFS:
        if ref.startswith((".git/", ".memctl/")):
            continue  # memctl's own state: the writer may touch .memctl, never through links
        with pytest.raises(MemctlError, match="escapes the vault"):
            tx.write(ref, "x")
    assert sorted(p.name for p in outside.iterdir()) == before
    assert (outside / "note.md").read_text() == OUTSIDE_NOTE


@pytest.mark.parametrize("command", ["show", "export"])
@pytest.mark.parametrize("ref", REFS)
def test_show_and_export_refuse(attacked: tuple[Vault, dict, Path], command: str, ref: str) -> None:
    vault, _, _ = attacked
    if "\x00" in ref:  # no argv can hold a NUL: the library call is the way in
        with pytest.raises(MemctlError):
            vault.show(ref) if command == "show" else list(vault.export(ref))
        return
    r = memctl("--vault", vault.root, command, ref)
    assert r.code != 0, r.out[:500]
    _clean(r.out + r.err, ref)
    assert "Traceback" not in r.err
    assert len(r.err.strip().splitlines()) == 1, r.err


def test_search_recall_and_the_hook_never_serve_a_file_from_outside(
    attacked: tuple[Vault, dict, Path],
) -> None:
    vault, _, _ = attacked
    for args in (
        ("search", MARK),
        ("search", "launch code"),
        ("recall", f"{MARK} launch code", "--user", "dana"),
        ("recall", f"Morning {MARK}", "--user", "dana"),
        ("context", "--user", "dana"),
        ("reindex",),
        ("verify",),
        ("status",),
    ):
        r = memctl("--vault", vault.root, *args)
        _clean(r.out + r.err, *args[1:2])
        assert "Traceback" not in r.err, (args, r.err)
        if args[0] in ("search", "recall", "context"):
            assert r.code == 0, (args, r.err)  # it ran, and served nothing from outside
    r = memctl("--vault", vault.root, "search", MARK, "--json")
    assert r.code == 0 and r.json()["hits"] == []
    hook = json.dumps(
        {
            "session_id": "s1",
            "transcript_path": "/nonexistent",
            "cwd": "/tmp",
            "hook_event_name": "UserPromptSubmit",
            "prompt": f"what is the {MARK} launch code?",
        }
    )
    r = memctl("--vault", vault.root, "hook", "user-prompt-submit", "--as", "dana", input=hook)
    assert r.code == 0
    _clean(r.out + r.err, f"what is the {MARK} launch code?")


def test_the_index_holds_no_file_from_outside(attacked: tuple[Vault, dict, Path]) -> None:
    vault, _, _ = attacked
    res = vault.search(MARK, limit=50)
    assert [h.ref for h in res.hits] == []
    res = vault.search("", kind="note", limit=500)
    refs = [h.ref for h in res.hits]
    assert refs and not any(re.search(r"link|gitconfig", r) for r in refs), refs


def test_mcp_tools_refuse_every_spelling(attacked: tuple[Vault, dict, Path]) -> None:
    vault, _, _ = attacked
    tools = Tools(vault, "dana")
    for ref in REFS:
        with pytest.raises(InputError):
            tools.read(ref)
        with pytest.raises(InputError):
            tools.remember("Something worth keeping here.", source=ref, quote="Morning zebra")
    assert tools.search(MARK)["hits"] == []
    _clean(json.dumps(tools.search("launch code")["hits"]))
    _clean(tools.recall(f"{MARK} launch code"), f"{MARK} launch code")
    _clean(tools.context())
    for store in vault.config.stores:
        listed = tools.list(store, limit=200)
        _clean(json.dumps(listed))
        assert not any("link" in n["path"] for n in listed["notes"])
    _clean(tools.read("knowledge/INDEX.md")["text"])


def test_a_citation_that_leaves_the_vault_is_not_followed(
    attacked: tuple[Vault, dict, Path],
) -> None:
    vault, _, _ = attacked
    turns = RawTurns(vault.root)
    for ref in REFS:
        with pytest.raises(MemctlError):
            turns.turn(ref.split("#")[0] + "#t1")


def test_session_lookup_refuses_a_path_out(attacked: tuple[Vault, dict, Path]) -> None:
    vault, _, _ = attacked
    for ref in REFS:
        with pytest.raises(MemctlError):
            vault.resolve_session(ref)
    with pytest.raises(MemctlError):
        list(vault.export("raw/../../outside/session.md"))


def test_copies_of_the_vault_keep_no_link(
    attacked: tuple[Vault, dict, Path], tmp_path: Path
) -> None:
    """The symlinks were never committed either: git holds only what memctl wrote."""
    vault, _, _ = attacked
    clone = tmp_path / "clone"
    shutil.copytree(vault.root / ".git", clone / ".git")
    files = subprocess.run(
        ["git", "-C", str(clone), "ls-files"], capture_output=True, text=True, check=True
    ).stdout
    assert "link" not in files and "gitconfig" not in files


# ---------------------------------------------------------------------------------------
# Case and Unicode lookalikes of the folders a vault has
# ---------------------------------------------------------------------------------------

LOOKALIKES = [
    "Knowledge/acme.md",
    "KNOWLEDGE/acme.md",
    "kNoWlEdGe/new-note.md",
    "knowledge./acme.md",
    "knowledge /acme.md",
    "Ｋｎｏｗｌｅｄｇｅ/acme.md",
    "Profile/dana.md",
    "RAW/2026/x.md",
    "Raw./x.md",
    "raw /x.md",
    "knowledge/index.md",
    "knowledge/Index.MD",
    "raw/INDEX.md.",
    "index.md",
    "Cafe\u0301-notes/x.md",  # NFD spelling of the custom store folder "Café-notes"
    "CAFÉ-NOTES/x.md",
]


@pytest.fixture()
def lookalike_vault(tmp_path: Path, plain: Path) -> Vault:
    shutil.copytree(plain, tmp_path / "vault", symlinks=True)
    vault = Vault.open(tmp_path / "vault", env={})
    (vault.root / "Café-notes").mkdir()  # a custom store's folder, spelled in NFC
    (vault.root / "Café-notes" / "x.md").write_text("# x\n")
    return vault


def test_a_lookalike_of_a_vault_folder_is_refused_on_every_os(lookalike_vault: Vault) -> None:
    """Decided by the names, not by the filesystem: on Linux `Knowledge/` is a new folder,
    on macOS and Windows it is `knowledge/`; refused on both, never created."""
    vault = lookalike_vault
    before = sorted(p.name for p in vault.root.iterdir())
    tx = Transaction(vault.root)
    for ref in LOOKALIKES:
        with pytest.raises(MemctlError, match=r"escapes the vault.*lookalike"):
            inside(vault.root, ref)
        with pytest.raises(MemctlError, match=r"escapes the vault.*lookalike"):
            tx.write(ref, "# x\n")
    tx.rollback()
    assert sorted(p.name for p in vault.root.iterdir()) == before
    # the exact spellings still work
    for ref in ("knowledge/acme.md", "raw/INDEX.md", "INDEX.md", "Café-notes/x.md"):
        assert inside(vault.root, ref) == vault.root.resolve() / ref


def test_a_folder_of_that_exact_spelling_is_its_own_folder(lookalike_vault: Vault) -> None:
    """Only a case-sensitive filesystem can hold both; there `Notes/` is not a lookalike of
    `notes/` since it exists under its own name (but `RAW/` never is raw/)."""
    vault = lookalike_vault
    (vault.root / "notes").mkdir()
    (vault.root / "Notes").mkdir()
    assert inside(vault.root, "Notes/a.md") == vault.root.resolve() / "Notes/a.md"
    (vault.root / "RAW").mkdir()
    with pytest.raises(MemctlError, match="lookalike of 'raw'"):
        inside(vault.root, "RAW/a.md")


@pytest.mark.parametrize("command", ["show", "export"])
def test_show_and_export_refuse_a_lookalike_in_one_line(
    lookalike_vault: Vault, command: str
) -> None:
    r = memctl("--vault", lookalike_vault.root, command, "KNOWLEDGE/acme.md")
    assert r.code != 0
    assert "lookalike of 'knowledge'" in r.err and len(r.err.strip().splitlines()) == 1, r.err


def test_mcp_refuses_a_lookalike(lookalike_vault: Vault) -> None:
    tools = Tools(lookalike_vault, "dana")
    for ref in ("Knowledge/acme.md", "knowledge/index.md", "RAW/2026/x.md"):
        with pytest.raises(InputError, match="lookalike"):
            tools.read(ref)


def test_a_note_titled_index_does_not_become_index_md(lookalike_vault: Vault) -> None:
    """knowledge/index.md would be knowledge/INDEX.md on macOS and Windows."""
    tools = Tools(lookalike_vault, "dana")
    tools.remember("Index cards are kept in the blue box.", note="Index", own=True)
    names = [p.name for p in (lookalike_vault.root / "knowledge").iterdir()]
    assert "index.md" not in names and "INDEX.md" in names
    assert any(n.startswith("index-") for n in names), names


@pytest.fixture()
def case_insensitive_fs(tmp_path: Path) -> Iterator[Path]:
    """A real case-insensitive filesystem: exFAT (what a USB stick or an SD card has),
    through FUSE on a loop device, so the kernel itself opens `KNOWLEDGE/` as `knowledge/`.
    Needs root, a free loop device and Debian's exfatprogs and exfat-fuse."""
    tools = [shutil.which(t) for t in ("losetup", "mkfs.exfat", "mount.exfat-fuse")]
    if not all(tools):
        pytest.skip("no exFAT tools here (apt-get install exfatprogs exfat-fuse)")
    image, mnt = tmp_path / "exfat.img", tmp_path / "mnt"
    with image.open("wb") as fh:
        fh.truncate(64 << 20)
    mnt.mkdir()
    subprocess.run(["mkfs.exfat", str(image)], capture_output=True, check=True)
    loop = subprocess.run(["losetup", "-f", "--show", str(image)], capture_output=True, text=True)
    if loop.returncode != 0:
        pytest.skip(f"no loop device here: {loop.stderr.strip()}")
    dev = loop.stdout.strip()
    try:
        r = subprocess.run(["mount.exfat-fuse", dev, str(mnt)], capture_output=True, text=True)
        if r.returncode != 0:
            pytest.skip(f"cannot mount exFAT here: {r.stderr.strip()}")
        try:
            yield mnt
        finally:
            subprocess.run(["umount", str(mnt)], check=False)
    finally:
        subprocess.run(["losetup", "-d", dev], check=False)


def test_lookalikes_are_refused_on_a_real_case_insensitive_filesystem(
    case_insensitive_fs: Path, tmp_path: Path
) -> None:
    v = case_insensitive_fs / "vault"
    assert memctl("init", v).code == 0
    src = tmp_path / "s.jsonl"
    src.write_text(
        json.dumps({"role": "user", "content": "We decided to use Postgres for billing."})
        + "\n"
    )
    assert memctl("--vault", v, "ingest", src, "--user", "dana").code == 0
    assert (v / "KNOWLEDGE" / "INDEX.MD").read_text() == (v / "knowledge" / "INDEX.md").read_text()
    for ref in ("KNOWLEDGE/INDEX.md", "Raw/INDEX.md", "knowledge/index.md"):
        r = memctl("--vault", v, "show", ref)
        assert r.code != 0 and "lookalike" in r.err, (ref, r.out[:200], r.err)
    index = (v / "knowledge" / "INDEX.md").read_text()
    session = next((v / "raw").rglob("*-*.md"))
    for ref in ("knowledge/index.md", f"RAW/{session.relative_to(v / 'raw').as_posix()}"):
        tx = Transaction(v)
        with pytest.raises(MemctlError, match="lookalike"):
            tx.write(ref, "# overwritten\n")
        tx.rollback()
    assert (v / "knowledge" / "INDEX.md").read_text() == index
    assert "overwritten" not in session.read_text()


# ---------------------------------------------------------------------------------------
# diff, review and curate: revisions, proposal ids, sessions and stores
# ---------------------------------------------------------------------------------------


def _one_line_refusal(r: object, *asked: str) -> None:
    assert r.code != 0, r.out[:500]  # type: ignore[attr-defined]
    _clean(r.out + r.err, *asked)  # type: ignore[attr-defined]
    assert "Traceback" not in r.err, r.err  # type: ignore[attr-defined]
    assert len(r.err.strip().splitlines()) == 1, r.err  # type: ignore[attr-defined]


def _git_option_spellings(outside: Path) -> list[str]:
    """A revision that git would read as an option: `--output=FILE` makes `git rev-list`
    create (or truncate) FILE, anywhere the user may write."""
    return [
        f"--output={outside}/evil..HEAD",
        f"--output={outside}/../outside/evil2",
        f"HEAD..--output={outside}/evil3",
        "-n1..HEAD",
        "--all",
    ]


@pytest.mark.parametrize("ref", REFS)
def test_diff_refuses_every_spelling(attacked: tuple[Vault, dict, Path], ref: str) -> None:
    vault, _, _ = attacked
    if "\x00" in ref:
        with pytest.raises(MemctlError):
            vault.diff(rev_range=ref)
        return
    for rev in (ref, f"{ref}..HEAD", f"HEAD~1..{ref}"):
        _one_line_refusal(memctl("--vault", vault.root, "diff", "--", rev), rev)


def test_diff_never_passes_a_revision_to_git_as_an_option(
    attacked: tuple[Vault, dict, Path],
) -> None:
    vault, _, outside = attacked
    before = sorted(p.name for p in outside.iterdir())
    for rev in _git_option_spellings(outside):
        r = memctl("--vault", vault.root, "diff", "--json", "--", rev)
        _one_line_refusal(r, rev)
        assert "bad revision" in r.err, r.err
    assert sorted(p.name for p in outside.iterdir()) == before
    # a real range still works
    r = memctl("--vault", vault.root, "diff", "HEAD~1..HEAD", "--json")
    assert r.code == 0, r.err


@pytest.mark.parametrize("ref", REFS)
def test_curate_refuses_every_spelling(attacked: tuple[Vault, dict, Path], ref: str) -> None:
    vault, _, _ = attacked
    head = vault.history.git().rev_parse("HEAD")
    if "\x00" in ref:
        with pytest.raises(MemctlError):
            vault.curate(session=ref, dry_run=True)
        return
    for args in (("--session", ref), ("--session", ref, "--dry-run")):
        _one_line_refusal(memctl("--vault", vault.root, "curate", *args), ref)
    with pytest.raises(InputError, match="no store"):
        vault.curate(store=[ref], dry_run=True)
    assert vault.history.git().rev_parse("HEAD") == head


def test_review_refuses_every_spelling_as_an_id(attacked: tuple[Vault, dict, Path]) -> None:
    vault, _, _ = attacked
    for ref in REFS:
        for opt in ("accept", "reject"):
            with pytest.raises(InputError, match="no proposal"):
                vault.review(**{opt: [ref]})
    _one_line_refusal(memctl("--vault", vault.root, "review", "--accept", REFS[1]), REFS[1])


def _files(root: Path) -> dict[Path, bytes]:
    return {
        p: p.read_bytes()
        for p in root.rglob("*")
        if p.is_file() and not p.is_symlink() and "/.git/" not in p.as_posix()
    }


def _proposal(target: str) -> str:
    return (
        "---\nid: knowledge/evil\nschema: 1\nstore: knowledge\ntitle: Evil\nscope: team\n"
        f"status: proposed\nproposal_of: {json.dumps(target)}\nbase: new\n"
        "created: 2026-11-01\nupdated: 2026-11-01\n---\n\n# Evil\n\n## Facts\n\n"
        "- Overwritten by a proposal.\n"
    )


@pytest.mark.parametrize(
    "target",
    [r for r in REFS if "\x00" not in r]
    + ["raw/INDEX.md", "INDEX.md", "knowledge/INDEX.md", ".memctl/config.toml", "profile/dana.md"],
)
def test_a_proposal_naming_a_target_it_may_not_become_is_refused(
    tmp_path: Path, target: str, plain: Path
) -> None:
    """`proposal_of` in a proposal's frontmatter names the note accepting writes; a hand
    edit, a merge or another writer can put anything there. Listing read it (so a diff
    showed files outside the vault) and accepting wrote it."""
    shutil.copytree(plain, tmp_path / "vault", symlinks=True)
    vault = Vault.open(tmp_path / "vault", env={})
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "note.md").write_text(OUTSIDE_NOTE)
    (outside / "session.md").write_text(OUTSIDE_NOTE)
    (vault.root / "knowledge" / "link.md").symlink_to(outside / "note.md")
    (vault.root / "knowledge" / "linkdir").symlink_to(outside, target_is_directory=True)
    (vault.root / "knowledge" / "gitconfig.md").symlink_to(vault.root / ".git" / "config")
    (vault.root / "knowledge" / "evil.proposed.md").write_text(_proposal(target))
    head = vault.history.git().rev_parse("HEAD")
    before = _files(vault.root)
    for args in (("review", "--json"), ("review",), ("review", "--all")):
        r = memctl("--vault", vault.root, *args)
        _one_line_refusal(r, target)
        assert "knowledge/evil.proposed.md" in r.err and "proposal_of" in r.err, r.err
    assert (outside / "note.md").read_text() == OUTSIDE_NOTE
    assert vault.history.git().rev_parse("HEAD") == head
    after = _files(vault.root)
    changed = [str(p) for p in set(before) | set(after) if before.get(p) != after.get(p)]
    assert not [c for c in changed if "/.memctl/" not in c], changed


def test_a_pipe_named_like_a_session_or_a_note_hangs_no_command(tmp_path: Path) -> None:
    """A named pipe where a session or a note should be (made by hand, or by a tool gone
    wrong; git cannot carry one): opening it to read waits for a writer that never comes.
    Every command passes it over as no file; `doctor` says the cited session is gone."""
    import os

    from util import ROOT, git, ok

    v = tmp_path / "v"
    shutil.copytree(ROOT / "sample-vault", v)
    git(v, "init", "-q")
    git(v, "add", "-A")
    git(v, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "sample")
    session = sorted((v / "raw").rglob("*.md"))[0]
    note = sorted(p for p in (v / "knowledge").glob("*.md") if p.name != "INDEX.md")[0]
    for p in (session, note):
        p.unlink()
        os.mkfifo(p)
    off = {"MEMCTL_SERVE": "0"}
    for args in (["search", "cost"], ["recall", "cost", "--user", "dana"], ["status"],
                 ["context", "--user", "dana"], ["reindex"], ["verify"]):
        r = memctl("--vault", v, *args, env=off, timeout=60)
        assert r.code in (0, 1), (args, r.err)
    r = memctl("--vault", v, "doctor", env=off, timeout=60)
    assert r.code == 1
    assert f"cited session {session.relative_to(v).as_posix()} does not exist" in r.out
    ok("--vault", v, "search", "cost", env=off)
