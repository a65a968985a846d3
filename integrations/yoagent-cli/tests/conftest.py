"""Fixtures: a scripted server, a clean environment with temporary data folders, and a way
to run the real ``yoagent`` console script."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from cli_testing import YOAGENT, RunCli, clean_environment
from in_process_cli import InProcess
from loopback_answers import Serve, loopback_answers
from sse_server import ScriptedServer

from yoagent.pricing.testing import fresh_prices


@pytest.fixture(autouse=True)
def _default_prices() -> Iterator[None]:
    """Each test starts with nothing priced and leaves it so (the CLI's start-up and
    ``/cost`` touch yoagent-pricing's process-wide layers)."""
    with fresh_prices():
        yield


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as running:
        yield running


@pytest.fixture
def cli_env(tmp_path: Path) -> dict[str, str]:
    return clean_environment(tmp_path)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    return folder


@pytest.fixture
def sessions_dir(cli_env: dict[str, str]) -> Path:
    return Path(cli_env["XDG_DATA_HOME"]) / "yoagent" / "sessions"


@pytest.fixture
def run_cli(cli_env: dict[str, str], workdir: Path) -> RunCli:
    """Run ``yoagent *args`` in ``workdir`` with the clean environment."""

    def run(
        *args: str, input: str | None = None, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(YOAGENT), *args],
            cwd=workdir,
            env={**cli_env, **(env or {})},
            input=input if input is not None else "",
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=60,
            check=False,
        )

    return run


@pytest.fixture
def yoagent(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> InProcess:
    """``yoagent.run(*argv)``: the entry point in this process (see :mod:`in_process_cli`)."""
    return InProcess(tmp_path, monkeypatch, capsys)


@pytest.fixture
def serve() -> Iterator[Serve]:
    """``serve(answer)``: a loopback server answering each connection with ``answer``."""
    with loopback_answers() as start:
        yield start
