"""Helpers for the web app's browser tests: Debian's chromium driven by Playwright through
its executable path (never ``playwright install``), one browser per test module (its
sync API keeps an event loop running while it is open, which the async tests of the
modules after it must not find) and a fresh context per test; every console error fails
the test; screenshots are kept as artifacts (in ``$YOAGENT_WEB_SCREENSHOTS``, else under
pytest's temporary folder)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-dev-shm-usage",
]
SCREENSHOTS_ENV = "YOAGENT_WEB_SCREENSHOTS"


def chromium_path() -> str:
    """Debian's chromium (``$CHROMIUM`` overrides it); skip when there is none."""
    for candidate in (os.environ.get("CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if candidate and Path(candidate).is_file():
            return candidate
    pytest.skip("no chromium here: apt-get install chromium (.ci/run does)")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """One headless chromium for the module (Playwright gives it a fresh profile)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    path = chromium_path()
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=path, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the screenshots of the views go."""
    chosen = os.environ.get(SCREENSHOTS_ENV)
    folder = Path(chosen) if chosen else tmp_path_factory.getbasetemp() / "web-screenshots"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class Page:
    """A page of a fresh browser context, with what its console said."""

    def __init__(self, page: Any, shots: Path) -> None:
        self.page = page
        self.shots = shots
        self.errors: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.errors.append(f"uncaught: {error}"))
        page.set_default_timeout(60_000)  # a hang guard: a loaded CI machine is slow

    def _console(self, message: Any) -> None:
        if message.type in ("error", "assert"):
            self.errors.append(f"console {message.type}: {message.text}")

    def open(self, url: str, view: str = "") -> Any:
        """Open the app at ``url`` (``#view``) and wait until it has started."""
        self.page.goto(url + (f"#{view}" if view else ""))
        self.page.wait_for_selector("body[data-ready=true]")
        return self.page

    def shot(self, name: str) -> Path:
        """Keep a screenshot of the whole page as ``<name>.png``."""
        target = self.shots / f"{name}.png"
        self.page.screenshot(path=str(target), full_page=True)
        return target


@pytest.fixture
def web(browser: Any, screenshots: Path, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A page in a fresh context; the test fails if the page logged any error.

    The server of a test that takes ``url`` is started first, so it stops only after the
    page is closed: a page still fetching (the run's last figures) from a server already
    stopped logs a refused connection that is not the test's."""
    if "url" in request.fixturenames:
        request.getfixturevalue("url")
    context = browser.new_context(viewport={"width": 1200, "height": 860})
    page = Page(context.new_page(), screenshots)
    try:
        yield page
    finally:
        context.close()
    assert page.errors == [], "the page logged errors:\n" + "\n".join(page.errors)
