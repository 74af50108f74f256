"""The interactive review asks again when a key means nothing, instead of skipping silently."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from util import new_vault, ok


def _on_a_terminal(args: list[str], typed: bytes) -> tuple[int, bytes]:
    import pty

    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm"}
    env.pop("MEMCTL_VAULT", None)
    proc = subprocess.Popen([sys.executable, "-m", "memctl", *args], stdin=slave, stdout=slave,
                            stderr=slave, env=env)
    os.close(slave)
    os.write(master, typed)
    out = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return proc.wait(timeout=120), out


def test_a_mistyped_key_is_asked_again(tmp_path: Path) -> None:
    v = new_vault(tmp_path)
    ok("--vault", v, "ingest", "-", "--format", "jsonl", "--user", "dana", input=(
        '{"role": "user", "content": "From now on, always run the database migrations '
        'inside a transaction."}\n'))
    ok("--vault", v, "curate")
    assert "1 claim" in ok("--vault", v, "review").out
    code, out = _on_a_terminal(["--vault", str(v), "review"], b"x\na\n")
    text = out.decode("utf-8", "replace")
    assert code == 0, text
    assert "unknown choice 'x': type a, r, s or q" in text
    assert "accepted instructions/dana" in text
    assert ok("--vault", v, "review").out.strip() == "no proposals pending"
