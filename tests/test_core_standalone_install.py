"""yoagent-core installs on its own and runs an agent, with no other yoagent package.

The package goes into a fresh virtual environment (no system site-packages) with
``uv pip install`` when uv is on PATH, else pip. Its third-party dependencies come from
uv's cache or PyPI; when neither can supply them (no network, cold cache) the test skips
and shows why. Any other install failure, such as our package failing to build, fails it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

CORE = Path(__file__).resolve().parents[1] / "packages" / "yoagent-core"
MARKER = "yoagent-core standalone: ok"

# What uv and pip say when the index cannot be reached; nothing our own build prints.
NETWORK_SYMPTOMS = (
    "failed to fetch",
    "error sending request",
    "dns error",
    "temporary failure in name resolution",
    "name or service not known",
    "network is unreachable",
    "connection refused",
    "connection reset",
    "could not connect",
    "max retries exceeded",
    "connecterror",
    "timed out",
    "no matching distribution found",
    "not found in the cache",  # uv --offline with a cold cache
)

SCRIPT = textwrap.dedent(
    f"""
    import asyncio
    import importlib.metadata

    import yoagent.core
    from yoagent.core import (
        Agent, AssistantMessage, MockProvider, ModelConfig, StopReason, TextContent,
        ToolCall, ToolResultMessage, tool,
    )

    try:
        import yoagent.providers  # noqa: F401
    except ModuleNotFoundError:
        pass
    else:
        raise SystemExit("yoagent.providers is importable: the venv is not standalone")
    ours = sorted(
        d.metadata["Name"] for d in importlib.metadata.distributions()
        if d.metadata["Name"].startswith("yoagent")
    )
    assert ours == ["yoagent-core"], ours

    @tool
    async def add(a: int, b: int) -> str:
        '''Add two integers.'''
        return str(a + b)

    provider = MockProvider([
        AssistantMessage(
            content=[ToolCall(id="call_1", name="add", arguments={{"a": 2, "b": 3}})],
            stop_reason=StopReason.TOOL_USE,
        ),
        AssistantMessage(content=[TextContent(text="2 + 3 = 5")]),
    ])
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[add])
    new = asyncio.run(agent.prompt("what is 2 + 3?"))
    results = [m for m in new if isinstance(m, ToolResultMessage)]
    assert [r.text for r in results] == ["5"] and not results[0].is_error, results
    assert new[-1].text == "2 + 3 = 5", new[-1]
    print({MARKER!r}, yoagent.core.__file__)
    """
)


def _run(command: list[str], *, timeout: float, cwd: Path) -> subprocess.CompletedProcess[str]:
    # Not the workspace's environment: no VIRTUAL_ENV, no PYTHONPATH leaking the repo in.
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH"}}
    return subprocess.run(
        command, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )


def _install(venv: Path, python: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    uv = shutil.which("uv")
    if uv is not None:
        make = [sys.executable, "-m", "venv", "--without-pip", str(venv)]
        install = [uv, "pip", "install", "--python", str(python), str(CORE)]
    else:
        make = [sys.executable, "-m", "venv", str(venv)]
        install = [str(python), "-m", "pip", "install", "--disable-pip-version-check", str(CORE)]
    made = _run(make, timeout=60, cwd=cwd)
    assert made.returncode == 0, made.stderr
    return _run(install, timeout=150, cwd=cwd)


def test_core_installs_alone_and_runs_an_agent_on_mock_provider(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    try:
        installed = _install(venv, python, tmp_path)
    except subprocess.TimeoutExpired as timeout:
        pytest.skip(f"installing yoagent-core's dependencies timed out: {timeout}")
    output = installed.stdout + installed.stderr
    if installed.returncode != 0:
        tail = "\n".join(output.strip().splitlines()[-15:])
        if any(symptom in output.lower() for symptom in NETWORK_SYMPTOMS):
            pytest.skip(f"no package index or cache to install dependencies from:\n{tail}")
        pytest.fail(f"installing packages/yoagent-core failed:\n{tail}")

    ran = _run([str(python), "-I", "-c", SCRIPT], timeout=60, cwd=tmp_path)

    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert MARKER in ran.stdout
    assert str(venv) in ran.stdout  # imported from the venv, not from the checkout
