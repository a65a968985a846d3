"""yoagent-core installs on its own and runs an agent, with no other yoagent package.

The package goes into a fresh virtual environment (no system site-packages) with
``uv pip install`` when uv is on PATH, else pip (see install_helpers for when it skips).
"""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from pathlib import Path

from install_helpers import install as install_or_skip
from install_helpers import run

CORE = Path(__file__).resolve().parents[1] / "packages" / "yoagent-core"
MARKER = "yoagent-core standalone: ok"

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


def test_core_installs_alone_and_runs_an_agent_on_mock_provider(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    python = venv / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    uv = shutil.which("uv")
    if uv is not None:
        make = [sys.executable, "-m", "venv", "--without-pip", str(venv)]
        install = [uv, "pip", "install", "--python", str(python), str(CORE)]
    else:
        make = [sys.executable, "-m", "venv", str(venv)]
        install = [str(python), "-m", "pip", "install", "--disable-pip-version-check", str(CORE)]
    made = run(make, timeout=60, cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    install_or_skip(install, what="packages/yoagent-core", cwd=tmp_path)

    ran = run([str(python), "-I", "-c", SCRIPT], timeout=60, cwd=tmp_path)

    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert MARKER in ran.stdout
    assert str(venv) in ran.stdout  # imported from the venv, not from the checkout
