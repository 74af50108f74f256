"""The LearningMachine loop for Python agents, and the runnable example against a real
OpenAI-compatible server on 127.0.0.1 (litellm's own client path, no mocking)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from util import ROOT, git

from memctl.faces.learning import LearningMachine
from memctl.vault import Vault


def _vault(tmp_path: Path) -> Vault:
    vault, _ = Vault.init(tmp_path / "vault", env={})
    return vault


def test_process_ingests_the_conversation_and_curates(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    lm = LearningMachine(vault, user="dana", session="chat-1", background=False)
    messages = [
        {"role": "system", "content": "You are helpful. # Memory for dana: secret recall text"},
        {
            "role": "user",
            "content": "I'm a platform engineer at Acme. I prefer Terraform over Pulumi.",
        },
        {"role": "assistant", "content": "Noted."},
    ]
    res = lm.process(messages)
    assert res is not None and res.turns_added == 2  # the system prompt is never kept
    assert lm.last_curation is not None and lm.last_curation.added > 0
    _, kept, _ = vault.read_session("chat-1")
    assert [m.role for m in kept] == ["user", "assistant"]
    assert all("secret recall text" not in m.content for m in kept)
    assert kept[0].name == "dana" and kept[0].timestamp

    # the whole conversation again, plus one turn: only the new turn is appended
    messages += [{"role": "user", "content": "Which tool should I use for the VPC?"}]
    res = lm.process(messages)
    assert res is not None and res.turns_added == 1
    # only the new part also works
    res = lm.process([{"role": "assistant", "content": [{"type": "text", "text": "Terraform."}]}])
    assert res is not None and res.turns_added == 1
    assert lm.process([]) is None
    _, kept, _ = vault.read_session("chat-1")
    assert [m.content for m in kept][-1] == "Terraform."

    recalled = lm.recall("Terraform or Pulumi?")
    assert "Terraform over Pulumi" in recalled.text
    assert recalled.user == "dana"
    assert "Terraform over Pulumi" in lm.context().text
    other = LearningMachine(vault, user="marco").recall("Terraform or Pulumi?")
    assert "Terraform over Pulumi" not in other.text and other.memories == []


def test_background_curation_runs_once_more_when_asked_during_a_pass(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    with LearningMachine(vault, user="dana", session="chat-2") as lm:
        convo: list[dict[str, str]] = []
        for i, text in enumerate(
            ["I prefer small PRs for infra changes.", "I always write a runbook first."]
        ):
            convo += [
                {"role": "user", "content": text},
                {"role": "assistant", "content": f"ok {i}"},
            ]
            lm.process(convo)
    assert lm.errors == []
    assert "curate:" in git(vault.root, "log", "--format=%s")
    assert git(vault.root, "status", "--porcelain").strip() == ""
    text = lm.recall("small PRs runbook").text
    assert "small PRs" in text and "runbook" in text


def test_remember_through_the_machine(tmp_path: Path) -> None:
    vault = _vault(tmp_path)
    lm = LearningMachine(vault, user="dana", background=False)
    res = lm.remember("Dana's team deploys on Tuesdays.", own=True)
    assert res.basis == "agent" and res.commit
    m = next(m for m in lm.recall("deploys Tuesdays").memories if "Tuesdays" in m.text)
    assert m.basis == "agent"


def test_the_example_runs_a_memory_loop_against_a_real_server(tmp_path: Path, fake_llm) -> None:
    fake_llm.enqueue("Noted: Terraform it is.", "Use Terraform, as you prefer.")
    vault = tmp_path / "memory"
    proc = subprocess.run(
        [
            sys.executable,
            str(ROOT / "examples" / "learning_loop.py"),
            str(vault),
            "--user",
            "dana",
            "--model",
            "openai/gpt-4o-mini",
            "--prompt",
            "I prefer Terraform over Pulumi for our AWS networking.",
            "--prompt",
            "Should we use Terraform for the new VPC?",
        ],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        cwd=tmp_path,
        timeout=180,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Use Terraform, as you prefer." in proc.stdout
    requests = fake_llm.chat_requests
    assert len(requests) == 2
    second_system = requests[1].messages[0]["content"]
    # what was said in the first turn reached the model's prompt in the second, cited
    assert "Terraform over Pulumi" in second_system and "raw/" in second_system
    log = git(vault, "log", "--format=%s")
    assert "ingest:" in log and "curate:" in log


def test_remember_through_the_machine_can_replace_a_claim(tmp_path: Path) -> None:
    # LearningMachine.remember once lacked `replaces`, which every other face had
    vault = _vault(tmp_path)
    lm = LearningMachine(vault, user="dana", background=False)
    first = lm.remember("The team deploys on Thursdays.", own=True)
    res = lm.remember("The team deploys on Tuesdays.", own=True,
                      replaces="The team deploys on Thursdays.")
    assert res.action == "superseded" and res.path == first.path
    text = (vault.root / res.path).read_text(encoding="utf-8")
    head, _, history = text.partition("## History")
    assert "Tuesdays" in head and "Thursdays" not in head
    assert "Thursdays" in history
