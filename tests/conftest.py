"""Shared fixtures: an isolated environment for every test, and the wire-level fake LLM.

The module-level block runs when pytest loads this conftest, before any test module is
collected, so it is in force before anything imports litellm (which fetches its cost map
at import time unless told not to).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest
from fakellm import FakeLLM, install_network_guard, network_guard

# No test may depend on, or wait for, the internet: litellm keeps its bundled cost map,
# beta-header and tokenizer catalogs (offline mode covers every fetch it makes on its own),
# and the proxy telemetry veto is set in case anything ever starts it.
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
os.environ["LITELLM_OFFLINE_MODE"] = "true"
os.environ["LITELLM_TELEMETRY_DISABLED"] = "true"
# Records and blocks any non-loopback connect or DNS lookup from here on.
install_network_guard()


def _compile_memctl() -> None:
    """Bytecode for memctl's own modules and the test modules, written once, then read.

    The suite starts `python -m memctl` a few thousand times. Where PYTHONDONTWRITEBYTECODE
    is set (some CI and agent shells set it), Python never caches memctl's bytecode, so
    every one of those runs compiled ~40 modules again: about a fifth of the suite's CPU.
    Reading bytecode is still allowed there; compileall writes it (into the git-ignored
    __pycache__/ folders, as any ordinary run of Python would), skipping what is current.
    """
    import compileall
    import contextlib
    from pathlib import Path

    package = Path(__file__).resolve().parent.parent / "memctl"
    with contextlib.suppress(OSError):  # a read-only checkout: the runs compile as before
        compileall.compile_dir(package, quiet=2)
    # the same for this process: pytest caches its rewritten test modules only when bytecode
    # may be written, so each xdist worker parsed and rewrote all ~100 of them again
    sys.dont_write_bytecode = False


_compile_memctl()

FAKE_API_KEY = "sk-fake-test"
_PROXY_VARS = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
_SCRUBBED = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL")


@pytest.fixture(autouse=True)
def _isolated_env(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[None]:
    """A developer's real keys, memctl config or home directory must never leak into a
    test: that would let a test pass only on one machine, or spend real money.

    Home dirs come from tmp_path_factory rather than tmp_path so a test that inspects its
    own tmp_path sees only what it put there.
    """
    for name in list(os.environ):
        if name.startswith("MEMCTL_") or name in _SCRUBBED:
            monkeypatch.delenv(name)
    # no resident `memctl serve` per test vault: a hook would start one that outlives the
    # test; tests/test_serve.py turns it on where the service itself is under test
    monkeypatch.setenv("MEMCTL_SERVE", "0")
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("home")))
    monkeypatch.setenv("MEMCTL_HOME", str(tmp_path_factory.mktemp("memctl_home")))
    seen = len(network_guard.attempts)
    yield
    leaked = network_guard.attempts[seen:]
    assert not leaked, f"test tried to reach the network (blocked): {leaked}"


@pytest.fixture(scope="session")
def _fake_llm_server() -> Iterator[FakeLLM]:
    """One server per session (per xdist worker): starting is cheap, but a shared port
    also keeps litellm's cached HTTP clients pointing at a live server."""
    with FakeLLM() as fake:
        yield fake


@pytest.fixture
def fake_llm(_fake_llm_server: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeLLM]:
    """The fake OpenAI-compatible server, emptied for this test, with litellm pointed at it.

    Queue replies, run the code under test, then assert on what went over the wire::

        def test_x(fake_llm):
            fake_llm.enqueue("hello")            # or {"json": {...}}, {"status": 500, ...}
            resp = litellm.completion(
                model="openai/gpt-4o-mini",      # any "openai/<name>" model works
                api_base=fake_llm.base_url,      # optional: OPENAI_BASE_URL is set too
                messages=[{"role": "user", "content": "hi"}],
            )
            assert fake_llm.last_request.messages[-1]["content"] == "hi"

    A call with nothing queued gets a 500 saying the queue is empty.
    """
    fake = _fake_llm_server
    fake.reset()
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_API_KEY)
    monkeypatch.setenv("OPENAI_API_BASE", fake.base_url)
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    # httpx honours proxy variables even for 127.0.0.1; a CI proxy must not swallow our calls.
    for name in _PROXY_VARS:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost,::1")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost,::1")
    yield fake
    fake.reset()


def _listed(name: str) -> list[str]:
    """The first word of each line of tests/NAME, comments and blank lines left out."""
    from pathlib import Path

    path = Path(__file__).resolve().parent / name
    lines = path.read_text(encoding="utf-8").splitlines() if path.is_file() else []
    return [line.split()[0] for line in lines if line.strip() and not line.startswith("#")]


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark what tests/slow.txt names (a module, or one test) `slow`, so that
    `pytest -m "not slow"` is the fast loop (CONTRIBUTING.md; scripts/slow_tests.py
    writes the list from a timed run)."""
    slow = set(_listed("slow.txt"))
    for item in items:
        if item.nodeid in slow or item.nodeid.split("::", 1)[0] in slow:
            item.add_marker(pytest.mark.slow)
    # the longest modules first (tests/heavy.txt, longest first): with scripts/test's
    # --no-loadscope-reorder, xdist hands modules out in this order, so no long module is
    # left to start last while the other worker has nothing to do
    rank = {module: k for k, module in enumerate(_listed("heavy.txt"))}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """No test may leave a resident `memctl serve` behind: one would linger its 15 idle
    minutes after the suite (a test that undid the suite's MEMCTL_SERVE=0 left three). Run
    once, by the process that started the run; the ones found are stopped, and the run
    fails saying so."""
    import contextlib
    import signal
    import time

    from util import serve_pids

    if hasattr(session.config, "workerinput"):
        return  # an xdist worker: the controller looks once all are done
    factory = getattr(session.config, "_tmp_path_factory", None)
    try:
        base = str(factory.getbasetemp()) if factory is not None else ""
    except (OSError, ValueError):
        base = ""
    if not base:
        return
    ends = time.monotonic() + 5.0  # one being stopped by its test's cleanup may still exit
    while (left := serve_pids(base, below=True)) and time.monotonic() < ends:
        time.sleep(0.1)
    if not left:
        return
    for pid in left:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)
    sys.stderr.write(f"\nconftest: {len(left)} memctl serve process(es) outlived their "
                     f"tests (pids {left}); stopped them\n")  # fmt: skip
    session.exitstatus = pytest.ExitCode.TESTS_FAILED
