"""An agent on MockProvider fixes a small broken Python project with the built-in tools.

The model's side is scripted; everything else is real: the agent loop runs the
tools from ``yoagent.tools`` (sandboxed to a temporary folder), bash runs the
project's tests with this interpreter, and the file on disk is what gets checked.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

from yoagent.core import (
    Agent,
    AssistantMessage,
    MockProvider,
    ModelConfig,
    StopReason,
    TextContent,
    ToolCall,
    ToolResultMessage,
)
from yoagent.tools import default_tools

BROKEN = '''"""A tiny calculator."""


def add(a, b):
    return a - b


def mul(a, b):
    return a * b
'''

TESTS = """from calc import add, mul


def test_add():
    assert add(2, 3) == 5


def test_mul():
    assert mul(2, 3) == 6
"""


def _call(call_id: str, name: str, **arguments: Any) -> AssistantMessage:
    return AssistantMessage(
        content=[ToolCall(id=call_id, name=name, arguments=arguments)],
        stop_reason=StopReason.TOOL_USE,
    )


async def test_an_agent_finds_and_fixes_the_bug_and_the_tests_pass(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "calc.py").write_text(BROKEN)
    (project / "test_calc.py").write_text(TESTS)
    run_tests = f"{shlex.quote(sys.executable)} -m pytest -q -p no:cacheprovider test_calc.py"
    provider = MockProvider(
        [
            _call("c1", "list_files"),
            _call("c2", "bash", command=run_tests),
            _call("c3", "search", pattern=r"def add\("),
            _call("c4", "read_file", path="calc.py"),
            _call("c5", "edit_file", path="calc.py", old_text="a - b", new_text="a + b"),
            _call("c6", "bash", command=run_tests + " && echo ALL-GREEN"),
            AssistantMessage(
                content=[TextContent(text="Fixed add(): it subtracted. The tests pass.")],
                stop_reason=StopReason.STOP,
            ),
        ]
    )
    agent = Agent.from_provider(
        provider,
        ModelConfig.mock(),
        system_prompt="You fix bugs in the project in your working folder.",
        tools=default_tools([project]),
    )

    await agent.prompt("The tests fail. Fix it.")

    assert (project / "calc.py").read_text() == BROKEN.replace("a - b", "a + b")
    results = {m.tool_call_id: m for m in agent.messages if isinstance(m, ToolResultMessage)}
    assert sorted(results) == ["c1", "c2", "c3", "c4", "c5", "c6"]
    assert "calc.py" in results["c1"].text.splitlines()
    before = results["c2"]
    assert before.is_error  # the failing run is an error result carrying pytest's output
    assert "1 failed, 1 passed" in before.text
    assert "Exit code: 1" in before.text
    assert results["c3"].text == "calc.py:4:def add(a, b):"
    assert "     5\t    return a - b" in results["c4"].text
    assert not results["c5"].is_error
    after = results["c6"]
    assert not after.is_error, after.text
    assert "2 passed" in after.text
    assert "ALL-GREEN" in after.text
    final = agent.messages[-1]
    assert isinstance(final, AssistantMessage)
    assert final.stop_reason == StopReason.STOP
    assert provider.remaining == 0


async def test_the_agent_cannot_edit_outside_its_folder(tmp_path: Path) -> None:
    project = tmp_path / "project"
    project.mkdir()
    secret = tmp_path / "secret.txt"
    secret.write_text("keep me\n")
    provider = MockProvider(
        [
            _call("c1", "write_file", path="../secret.txt", content="overwritten"),
            AssistantMessage(content=[TextContent(text="I could not.")]),
        ]
    )
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=default_tools([project]))

    await agent.prompt("Overwrite ../secret.txt")

    assert secret.read_text() == "keep me\n"
    result = next(m for m in agent.messages if isinstance(m, ToolResultMessage))
    assert result.is_error
    assert result.text.startswith("write_file: ../secret.txt is outside the allowed paths (")
