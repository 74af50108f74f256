"""One confinement rule for every path memctl reads, writes, indexes or serves.

Found in issue 9: a symlink inside the vault pointing outside was indexed and then served
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
from pathlib import Path

import pytest
from test_recall import NOTES, SESSIONS, build_vault
from util import memctl

from memctl.errors import InputError, MemctlError
from memctl.mcp import Tools
from memctl.provenance import RawTurns
from memctl.store import Transaction, inside
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
        ("recall", f"{MARK} launch code", "--as", "dana"),
        ("recall", f"Morning {MARK}", "--as", "dana"),
        ("context", "--as", "dana"),
        ("reindex",),
        ("verify",),
        ("status",),
    ):
        r = memctl("--vault", vault.root, *args)
        _clean(r.out + r.err, *args[1:2])
        assert "Traceback" not in r.err, (args, r.err)
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
    import subprocess

    files = subprocess.run(
        ["git", "-C", str(clone), "ls-files"], capture_output=True, text=True, check=True
    ).stdout
    assert "link" not in files and "gitconfig" not in files
