"""The extension points, declared in one module, each documented, each taking a third
party's plugin registered in-process exactly as the built-ins are registered."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

from memctl.curate import Batch, Extraction, Proposal, Quote
from memctl.curate.extensions import CURATORS, EXTENSION_POINTS, STORES
from memctl.vault import Vault

ROOT = Path(__file__).resolve().parent.parent


class _Decider:
    """A third party's curator: every "We decided ..." a person says is a decision."""

    name = "decider"

    def __init__(self, vault: object, model: str | None = None) -> None:
        self.model = model

    def extract(self, batch: Batch) -> Extraction:
        out = []
        for n in range(batch.start, len(batch.messages) + 1):
            said = batch.messages[n - 1].content
            if batch.messages[n - 1].role == "user" and said.startswith("We decided "):
                out.append(Proposal(store="decisions", note="Decisions", section="Decisions",
                                    text=said, citations=(Quote(n, said),)))
        return Extraction(out)


class _Runbooks:
    """A third party's store with code: every "To deploy, ..." is a runbook step."""

    def process(self, batch: Batch) -> list[dict]:
        return [
            {"note": "Deploys", "section": "Steps", "text": m.content,
             "citations": [{"turn": n, "quote": m.content}]}
            for n, m in enumerate(batch.messages, 1)
            if n >= batch.start and m.role == "user" and m.content.startswith("To deploy,")
        ]  # fmt: skip


def _vault(tmp_path: Path) -> Vault:
    vault, _ = Vault.init(tmp_path / "v", env={})
    lines = [
        {"role": "user", "content": "We decided to move billing to Postgres this quarter."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "To deploy, run make release from the main branch."},
    ]
    data = "".join(json.dumps(x) + "\n" for x in lines).encode()
    vault.ingest(["-"], fmt="jsonl", user="dana", scope="team", session="s1",
                 stdin=io.BytesIO(data))
    return vault


def _claims(vault: Vault, folder: str) -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in (vault.root / folder).glob("*.md")
                     if p.name != "INDEX.md")


def test_the_built_in_curators_are_registered_as_a_third_partys_are() -> None:
    from memctl.curate.builtin import BuiltinCurator
    from memctl.curate.llm import LLMCurator

    assert CURATORS.load("builtin") is BuiltinCurator
    assert CURATORS.load("llm") is LLMCurator
    assert {"builtin", "llm"} <= set(CURATORS.names())


def test_a_curator_registered_in_process_curates(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    CURATORS.register("decider", _Decider)
    res = vault.curate(curator="decider")
    assert res.curator == "decider" and res.commit
    assert "We decided to move billing to Postgres this quarter. [^" in _claims(vault, "decisions")


def test_a_store_registered_in_process_proposes_into_its_own_store(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    STORES.register("runbooks-code", _Runbooks)
    with (vault.root / ".memctl" / "config.toml").open("a", encoding="utf-8") as fh:
        fh.write('\n[stores.runbooks]\nfolder = "runbooks"\nplugin = "runbooks-code"\n')
    vault = Vault.open(vault.root, env={})
    res = vault.curate(store="runbooks")
    assert res.commit
    assert "To deploy, run make release from the main branch. [^" in _claims(vault, "runbooks")


def test_every_extension_point_has_its_docs_section() -> None:
    doc = (ROOT / "docs" / "extensions.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^## (\S+)$", doc, flags=re.M))
    for point in EXTENSION_POINTS:
        page, _, anchor = point.doc.partition("#")
        assert page == "docs/extensions.md" and anchor in headings, point
        assert point.group in doc, point
