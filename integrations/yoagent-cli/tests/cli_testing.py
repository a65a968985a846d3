"""Helpers shared by the CLI tests: where the console script is, a clean environment, and
what a saved session holds."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from yoagent.cli.confirm import Answer
from yoagent.core import AgentMessage, Session, ToolCallRequest
from yoagent.core.provider import FALLBACK_KEY_VARIABLES
from yoagent.providers import models

YOAGENT = Path(sys.executable).parent / ("yoagent.exe" if os.name == "nt" else "yoagent")

RunCli = Callable[..., subprocess.CompletedProcess[str]]


def clean_environment(tmp_path: Path) -> dict[str, str]:
    """``os.environ`` without any API key or ``YOAGENT_PRICES``, with home and data folders
    under ``tmp_path``."""
    keys = {v for name in models.VENDORS for v in models.key_variables_for(name)}
    keys |= set(FALLBACK_KEY_VARIABLES)
    keys.add("YOAGENT_PRICES")
    # Nor the shared AWS files a Bedrock profile would be read from.
    env = {k: v for k, v in os.environ.items() if k not in keys and not k.startswith("AWS_")}
    home = tmp_path / "home"
    for name, sub in (
        ("XDG_DATA_HOME", "data"),
        ("XDG_CONFIG_HOME", "config"),
        ("XDG_CACHE_HOME", "cache"),
        ("XDG_STATE_HOME", "state"),
    ):
        folder = home / sub
        folder.mkdir(parents=True, exist_ok=True)
        env[name] = str(folder)
    env["HOME"] = str(home)
    env["NO_COLOR"] = "1"
    env["PYTHONIOENCODING"] = "utf-8"
    return env


class Asker:
    """Stands in for the person asked to confirm: gives ``answers`` in order and keeps
    each question's description in ``asked``."""

    def __init__(self, *answers: Answer) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    async def __call__(self, request: ToolCallRequest, description: str) -> Answer:
        self.asked.append(description)
        return self.answers.pop(0)


def saved_messages(path: Path) -> list[AgentMessage]:
    """The messages on the current branch of the session file at ``path``."""
    return Session.load(path).path_messages()
