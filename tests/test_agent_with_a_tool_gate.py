"""An agent with a tool gate runs real shell commands: it denies a destructive command the
user did not ask for and runs the one they did.

The model's side (MockProvider) and the decision model's (a scripted MockBackend that
reads the user's request and the command from the gate's state) are scripted; the agent
loop, the gate extension and yoagent-tools' ``BashTool`` in a temporary folder are real,
and the folder on disk is what gets checked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from yoagent.core import (
    Agent,
    AgentEnd,
    AgentEvent,
    AssistantMessage,
    MockProvider,
    ModelConfig,
    StopReason,
    TextContent,
    ToolCall,
    ToolResultMessage,
    Usage,
)
from yoagent.decision import (
    DecisionModel,
    Evaluation,
    MockBackend,
    NoulAnswer,
    Request,
    ToolGate,
    with_tool_gate,
)
from yoagent.tools import BashTool


def scripted_judge(request: Request) -> Evaluation:
    """Destructive when the command removes something; requested when the folder it names
    appears in what the user asked."""
    state: Any = request.state
    command: str = state["tool_call"]["arguments"]["command"]
    asked: str = state["user_request"]
    target = command.split()[-1]
    destructive = 0.93 if command.startswith("rm ") else 0.04
    requested = 0.96 if target in asked else 0.03
    return Evaluation(
        model="scripted-judge",
        answers={"destructive": NoulAnswer.of(destructive), "requested": NoulAnswer.of(requested)},
        usage=Usage(input=120, output=2),
    )


def bash_calls(*commands: str) -> AssistantMessage:
    return AssistantMessage(
        content=[
            ToolCall(id=f"c{i}", name="bash", arguments={"command": command})
            for i, command in enumerate(commands)
        ],
        stop_reason=StopReason.TOOL_USE,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for folder, name in (("photos", "cat.jpg"), ("build", "out.o")):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / name).write_text("data")
    return tmp_path


async def test_the_gate_denies_rm_of_what_was_not_asked_and_runs_rm_of_what_was(
    project: Path,
) -> None:
    judge = MockBackend(scripted_judge)
    provider = MockProvider(
        [
            bash_calls("ls", "rm -rf photos", "rm -rf build"),
            AssistantMessage(content=[TextContent(text="The build folder is gone.")]),
        ]
    )
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[BashTool(cwd=project)])
    with_tool_gate(agent, ToolGate(model=DecisionModel.from_backend(judge, "scripted-judge")))
    events: list[AgentEvent] = []
    await agent.prompt("please clean the build folder", on_event=events.append)

    assert (project / "photos" / "cat.jpg").exists()
    assert not (project / "build").exists()
    results = {m.tool_call_id: m for m in agent.messages if isinstance(m, ToolResultMessage)}
    assert not results["c0"].is_error and "photos" in results["c0"].text
    assert results["c1"].is_error
    assert results["c1"].text.startswith("Tool call denied: tool-gate: this call looks destructive")
    assert not results["c2"].is_error
    # The model read the denial on its next request.
    resent = [m for m in provider.requests[1].messages if isinstance(m, ToolResultMessage)]
    assert any(m.tool_call_id == "c1" and "tool-gate:" in m.text for m in resent)
    # One judgment per call, each against the user's words, spend in the run's stats.
    assert [r.state["user_request"] for r in judge.requests] == [  # type: ignore[index]
        "please clean the build folder"
    ] * 3
    end = next(e for e in events if isinstance(e, AgentEnd))
    assert end.stats.decision.requests == 3
    assert end.stats.decision.usage == Usage(input=360, output=6)


async def test_the_same_command_runs_when_the_user_asked_for_it(project: Path) -> None:
    judge = MockBackend(scripted_judge)
    provider = MockProvider(
        [
            bash_calls("rm -rf photos"),
            AssistantMessage(content=[TextContent(text="Your photos are deleted.")]),
        ]
    )
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[BashTool(cwd=project)])
    with_tool_gate(agent, ToolGate(model=DecisionModel.from_backend(judge, "scripted-judge")))
    await agent.prompt("delete my photos folder, I have a backup")
    (result,) = [m for m in agent.messages if isinstance(m, ToolResultMessage)]
    assert not result.is_error
    assert not (project / "photos").exists() and (project / "build" / "out.o").exists()
