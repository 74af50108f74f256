"""`memctl view` in a real headless browser: Debian's chromium, driven by Playwright.

The pages render, a claim's quote leads to its turn, accept and reject work from the
review page, and the browser asks for nothing but the viewer: every request to anywhere
else is intercepted, refused and counted, and the count must be zero.

Skipped, saying why, where chromium (/usr/bin/chromium, `apt-get install chromium`) or
Playwright for Python is absent; Playwright's own browser downloads are never used.
Screenshots of three pages go to the test's folder, and also to $VIEW_SHOTS_DIR if set.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from test_viewer import build_viewer_vault, raw_of
from util import ctrl_c_stops, git, ok

CHROMIUM = Path("/usr/bin/chromium")
ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
SHOTS = os.environ.get("VIEW_SHOTS_DIR")  # read at import: the test fixtures clear MEMCTL_*

try:
    from playwright.sync_api import sync_playwright
except ImportError:  # pragma: no cover - depends on the machine
    sync_playwright = None  # type: ignore[assignment]

# .ci/run installs chromium while the tests run and names the file it writes (apt's exit
# code) when the install is over: the browser test waits for it instead of skipping
INSTALLING = os.environ.get("CI_CHROMIUM_INSTALL_DONE")
pytestmark = [
    pytest.mark.skipif(
        not CHROMIUM.exists() and not INSTALLING,
        reason=f"no chromium at {CHROMIUM} (apt-get install chromium)",
    ),
    pytest.mark.skipif(sync_playwright is None, reason="playwright (pip) is not installed"),
]


@pytest.fixture
def chromium() -> Path:
    """Debian's chromium, once .ci/run's install of it (if one runs) is over."""
    if INSTALLING:  # (its binary may be unpacked before apt is done with what it needs)
        done = Path(INSTALLING)
        deadline = time.monotonic() + 900
        while not done.exists() and time.monotonic() < deadline:
            time.sleep(1)
        if not CHROMIUM.exists():
            said = done.read_text().strip() if done.exists() else "still running after 15 min"
            pytest.skip(f"no chromium at {CHROMIUM}: .ci/run's apt-get install ended: {said}")
    return CHROMIUM


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A curated vault and `memctl view --writable --no-open` serving it."""
    v = build_viewer_vault(tmp_path / "data")
    env = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "memctl", "--vault", str(v), "view", "--no-open", "--writable"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        preexec_fn=ctrl_c_stops,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        got = re.search(r"at (http://127\.0\.0\.1:\d+/) \(writable", line)
        assert got, line + (proc.stderr.read() if proc.poll() is not None and proc.stderr else "")
        yield v, got.group(1).rstrip("/")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)


def test_pages_render_review_works_and_nothing_leaves_the_machine(
    chromium: Path, served: tuple[Path, str], tmp_path: Path
) -> None:
    v, base = served
    outside: list[str] = []
    shots = tmp_path / "shots"
    shots.mkdir()

    def guard(route, request) -> None:
        host = urlsplit(request.url).hostname
        if request.url.startswith(("data:", "about:")) or host == "127.0.0.1":
            route.continue_()
        else:
            outside.append(request.url)
            route.abort()

    assert sync_playwright is not None
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(chromium), headless=True, args=ARGS)
        try:
            context = browser.new_context(viewport={"width": 1200, "height": 900})
            context.route("**/*", guard)
            page = context.new_page()

            # the timeline: every session, what it taught, the quote linked to its turn
            page.goto(base + "/")
            assert page.locator("section.session").count() == 3
            assert page.get_by_text("Acme is trying to cut its egress costs").first.is_visible()
            page.screenshot(path=str(shots / "timeline.png"), full_page=True)

            # click a quote's turn link: the session opens at that turn
            raw = raw_of(v, "please-run")
            page.locator(f'a[href^="/session/{raw}?t=2"]').first.click()
            page.wait_for_url(re.compile(r"#t2$"))
            turn = page.locator("article#t2")
            assert "[Bash] uv run pytest -q" in turn.inner_text()
            assert turn.evaluate("e => e.matches(':target')")
            page.screenshot(path=str(shots / "session.png"), full_page=True)

            # search, from the form in the header
            page.fill("input[name=q]", "egress costs")
            page.press("input[name=q]", "Enter")
            page.wait_for_url(re.compile(r"/search\?q=egress"))
            assert page.locator("div.hit mark").count() >= 1

            # review: accept one proposal, reject the other, each one commit
            page.goto(base + "/review")
            assert page.locator("section.proposal").count() == 2
            page.screenshot(path=str(shots / "review.png"), full_page=True)
            team = page.locator('section.proposal[id="p-instructions/team"]')
            team.get_by_role("button", name="Accept").click()
            page.wait_for_url(re.compile(r"/review\?done="))
            assert page.get_by_text("accepted instructions/team").is_visible()
            assert git(v, "log", "-1", "--format=%s") == "review: 1 accepted, 0 rejected\n"
            marco = page.locator('section.proposal[id="p-instructions/marco"]')
            marco.get_by_role("button", name="Reject").click()
            page.wait_for_url(re.compile(r"/review\?done="))
            assert page.get_by_text("rejected instructions/marco").is_visible()
            assert page.get_by_text("No proposals pending.").is_visible()
            assert git(v, "log", "-1", "--format=%s") == "review: 0 accepted, 1 rejected\n"

            # the other pages render too
            others = (
                ("/projects", "Project: shop"),
                ("/note/projects/shop.md", "uv run pytest -q"),
                (f"/diff?session={raw}", "Tests run with"),
            )
            for path, words in others:
                page.goto(base + path)
                assert words in page.locator("main").inner_text(), path
        finally:
            browser.close()

    assert outside == []
    assert ok("--vault", v, "review").out.strip() == "no proposals pending"
    assert git(v, "status", "--porcelain") == ""
    for name in ("timeline", "session", "review"):
        assert (shots / f"{name}.png").stat().st_size > 10_000
    if SHOTS:
        Path(SHOTS).mkdir(parents=True, exist_ok=True)
        for p in shots.iterdir():
            shutil.copy(p, Path(SHOTS) / p.name)
