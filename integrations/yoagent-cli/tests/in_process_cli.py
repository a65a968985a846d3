"""``yoagent``'s entry point run in this process (``main.run``), so that mutation testing
reaches the code the console script runs: the environment of :func:`clean_environment` on
``os.environ``, a work folder as the current one, stdin given as text, stdout and stderr
read back through ``capsys``."""

from __future__ import annotations

import io
import logging
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

import pytest
from cli_testing import clean_environment
from sse_server import ScriptedServer

from yoagent.cli.main import run as run_main

MAIN = sys.modules["yoagent.cli.main"]
"""The module (``yoagent.cli.main`` the attribute is the console script's function)."""


class Terminal(io.StringIO):
    """A stream that says it is a terminal (stdin, stdout or stderr)."""

    def isatty(self) -> bool:
        return True


def aged(path: Path, days: float) -> None:
    """Make ``path`` look last changed ``days`` ago."""
    stamp = time.time() - days * 86400
    os.utime(path, (stamp, stamp))


@dataclass(frozen=True)
class Result:
    """What one ``main.run`` gave: its exit code and what it wrote."""

    code: int
    out: str
    err: str


class InProcess:
    """``run(*argv)``: ``yoagent *argv`` in ``work``, with ``env`` set on ``os.environ``."""

    def __init__(
        self, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
    ) -> None:
        self.env = clean_environment(tmp_path)
        for name in list(os.environ):
            if name not in self.env:
                monkeypatch.delenv(name)
        for name, value in self.env.items():
            monkeypatch.setenv(name, value)
        self.work = tmp_path / "work"
        self.work.mkdir(exist_ok=True)
        monkeypatch.chdir(self.work)
        # main.run shows the yoagent loggers' warnings on stderr; only while this test runs.
        library = logging.getLogger("yoagent")
        monkeypatch.setattr(library, "handlers", list(library.handlers))
        self._monkeypatch = monkeypatch
        self._capsys = capsys

    def user_config(self, body: str) -> Path:
        """Write the user's config file (``config.toml``) with ``body``; returns its path."""
        path = Path(self.env["XDG_CONFIG_HOME"]) / "yoagent" / "config.toml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
        return path

    def run(
        self,
        *argv: str,
        served: ScriptedServer | None = None,
        input: str = "",
        stdin: TextIO | None = None,
    ) -> Result:
        """``yoagent *argv``, with ``--base-url`` and ``--model`` for ``served`` (after
        ``web`` for ``yoagent web``); stdin reads ``input``, or is ``stdin`` when given."""
        base = [] if served is None else ["--base-url", served.url, "--model", "scripted-model"]
        command = list(argv[:1]) if argv[:1] == ("web",) else []
        self._monkeypatch.setattr("sys.stdin", io.StringIO(input) if stdin is None else stdin)
        self._capsys.readouterr()
        code = run_main([*command, *base, *argv[len(command) :]])
        captured = self._capsys.readouterr()
        return Result(code, captured.out, captured.err)
