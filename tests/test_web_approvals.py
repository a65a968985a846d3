"""``yoagent web`` in a real headless chromium, the terminal agent's own tools and rules
behind it and the scripted model server in front of the model: a held edit shows its diff,
deny leaves the file unchanged and allow applies it; a held command is shown exactly as
the terminal shows it (control characters as escapes)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from ui_model_server import ModelServer
from web_testing import Page

from yoagent.cli.safe_text import inert

pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def model_server() -> Iterator[ModelServer]:
    with ModelServer() as server:
        yield server


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "app.py").write_text("def greet():\n    return 'hello'\n")
    return folder


# Each test takes `url` before `web`: the page closes before the server stops.
@pytest.fixture
def url(project: Path, model_server: ModelServer, tmp_path: Path) -> Iterator[str]:
    env = {**os.environ, "HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "config")}
    command = [sys.executable, "-m", "yoagent.cli", "web", "--base-url", model_server.url]
    with subprocess.Popen(
        [*command, "--port", "0", "--pricing", "off"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as server:
        try:
            assert server.stdout is not None
            found = re.search(r"open (\S+)", server.stdout.readline())
            assert found is not None
            yield found.group(1)
        finally:
            server.terminate()
            server.wait(timeout=20)


def ask(page: object, text: str) -> None:
    # Enter does nothing until the run before has ended and its thread is read back.
    page.wait_for_function("() => !document.querySelector('#send').disabled")  # type: ignore[attr-defined]
    page.fill("#prompt", text)  # type: ignore[attr-defined]
    page.press("#prompt", "Enter")  # type: ignore[attr-defined]


EDIT = {"path": "app.py", "old_text": "'hello'", "new_text": "'hello, world'"}


def test_a_held_edit_shows_its_diff_deny_keeps_the_file_and_allow_applies_it(
    url: str, web: Page, project: Path
) -> None:
    before = (project / "app.py").read_text()
    page = web.open(url)
    ask(page, f"call edit_file {json.dumps(EDIT)}")
    approval = page.locator(".approval").first
    diff = approval.locator("pre.diff")
    diff.wait_for()
    assert "edit app.py (1 change)" in (approval.locator(".what").text_content() or "")
    assert diff.locator(".del").all_text_contents() == ["-    return 'hello'"]
    assert diff.locator(".add").all_text_contents() == ["+    return 'hello, world'"]
    web.shot("approval-diff")
    approval.get_by_placeholder("Why not? (the agent reads it)").fill("keep it short")
    approval.get_by_role("button", name="Deny").click()
    page.get_by_text("the user declined; they said: keep it short").last.wait_for()
    assert (project / "app.py").read_text() == before

    ask(page, f"call edit_file {json.dumps(EDIT)}")
    page.locator(".approval").get_by_role("button", name="Allow", exact=True).click()
    page.locator(".tool .status.done").last.wait_for()
    assert (project / "app.py").read_text() == "def greet():\n    return 'hello, world'\n"


def test_a_held_command_is_shown_exactly_as_the_terminal_shows_it(url: str, web: Page) -> None:
    command = "echo ok\x1b[2J\r\u202erm -rf ~\tdone"
    page = web.open(url)
    ask(page, f"call bash {json.dumps({'command': command})}")
    shown = page.locator(".approval pre.command")
    shown.wait_for()
    assert shown.text_content() == inert(command, strict=True)
    assert page.locator(".approval .warning").is_visible()
    assert "run: " in (page.locator(".approval .what").text_content() or "")
    page.locator(".approval").get_by_role("button", name="Deny").click()
    page.locator(".tool .status.denied").last.wait_for()
