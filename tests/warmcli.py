"""`memctl ARGS` for shell examples: this process's own stdin, stdout and stderr handed to a
child of the test process's warm host (tests/clihost.py, socket in WARMCLI_HOST), its
exit code returned as ours, SIGINT and SIGTERM passed on to it. Without a host that
answers, it becomes `python -m memctl ARGS`.

    python tests/warmcli.py ARGS...
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys


def _framed(conn: socket.socket) -> dict[str, int]:
    def exactly(n: int) -> bytes:
        buf = b""
        while len(buf) < n:
            chunk = conn.recv(n - len(buf))
            if not chunk:
                raise ConnectionError("the host went away")
            buf += chunk
        return buf

    return json.loads(exactly(int.from_bytes(exactly(4), "big")))


def main(argv: list[str]) -> int:
    path = os.environ.pop("WARMCLI_HOST", "")
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        conn.connect(path)
    except OSError:
        os.execv(sys.executable, [sys.executable, "-m", "memctl", *argv])
    mask = os.umask(0o022)
    os.umask(mask)
    request = {
        "argv": argv,
        "env": dict(os.environ),
        "cwd": os.getcwd(),  # noqa: PTH109 (no pathlib: this runs on every example)
        "sigint_ignored": signal.getsignal(signal.SIGINT) == signal.SIG_IGN,
        "umask": mask,
    }
    raw = json.dumps(request).encode()
    socket.send_fds(conn, [len(raw).to_bytes(4, "big") + raw], [0, 1, 2])
    pid = _framed(conn)["pid"]
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda s, _f: os.kill(pid, s))
    code = _framed(conn)["code"]
    if code < 0:  # killed by a signal: so are we, as the shell expects
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
