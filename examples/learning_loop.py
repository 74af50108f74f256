"""A chat loop with long-term memory: recall before each model call, process after it.

    MEMCTL_EXAMPLE_MODEL=openai/gpt-4o-mini python examples/learning_loop.py ~/memory \\
        --user dana --prompt "I prefer Terraform over Pulumi." --prompt "Which IaC tool for this?"

Prompts come from --prompt (repeatable) or, without it, one per line on stdin. The model is
any litellm model string (--model, else $MEMCTL_EXAMPLE_MODEL, else openai/gpt-4o-mini); its
API key comes from the environment, as litellm expects. The vault is created if missing.
Each turn: the recalled memory (cited, within the token budget) goes into the system prompt;
after the reply the whole conversation goes to `process`, which ingests it verbatim and
curates in the background, so later turns (and later runs) can use what was learned.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterable
from pathlib import Path

from memctl import LearningMachine
from memctl.vault import Vault

SYSTEM = "You are a helpful engineering assistant. Be brief."


def prompts_from(args: argparse.Namespace) -> Iterable[str]:
    if args.prompt:
        return args.prompt
    return (line.strip() for line in sys.stdin if line.strip())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("vault", help="vault folder (created if missing)")
    p.add_argument("--user", default=None, help="whose memory (default: the vault's user)")
    p.add_argument("--model", default=os.environ.get("MEMCTL_EXAMPLE_MODEL", "openai/gpt-4o-mini"))
    p.add_argument("--prompt", action="append", help="a user turn; repeat for more")
    p.add_argument("--budget", type=int, default=None, help="recall budget in tokens")
    args = p.parse_args(argv)

    import litellm  # the only model client here: any provider litellm knows

    root = Path(args.vault).expanduser()
    if not (root / ".memctl").is_dir():
        Vault.init(root)
    with LearningMachine(root, user=args.user, budget=args.budget) as lm:
        messages: list[dict[str, str]] = []
        start = lm.context().text  # once per session: profile, decisions, open threads
        for prompt in prompts_from(args):
            memory = lm.recall(prompt).text  # before each model call
            system = "\n\n".join(part for part in (SYSTEM, start, memory) if part)
            messages.append({"role": "user", "content": prompt})
            reply = litellm.completion(
                model=args.model, messages=[{"role": "system", "content": system}, *messages]
            )
            text = reply.choices[0].message.content or ""
            messages.append({"role": "assistant", "content": text})
            print(f"> {prompt}\n{text}\n", flush=True)
            lm.process(messages)  # after: ingest now, curate in the background
        # leaving the block waits for curation, so the next run starts with what was learned
    if lm.errors:
        print(f"curation failed: {lm.errors[-1]}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
