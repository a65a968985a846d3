"""A scripted agent session for the GASP tests: MockProvider replies, tools that succeed
and fail, and one run of each kind the recorder must tell apart."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio

from yoagent.core import (
    Agent,
    AgentEvent,
    ApiProtocol,
    AssistantMessage,
    MockProvider,
    MockReply,
    ModelConfig,
    StopReason,
    TextContent,
    ToolCall,
    ToolError,
    Usage,
    tool,
)
from yoagent.core.extension import Reject
from yoagent.gasp import Recorder, Recording

CONFIG = ModelConfig(
    api=ApiProtocol.ANTHROPIC_MESSAGES,
    provider="mock",
    id="mock-model",
    base_url="http://127.0.0.1:9",
    api_key="test-key",
)


@tool
async def read_file(path: str) -> str:
    """Read a file (scripted)."""
    return f"contents of {path}"


@tool
async def bash(command: str) -> str:
    """Run a command (scripted: it always fails)."""
    raise ToolError(f"command failed: {command}\nexit status 1")


def calls(*pairs: tuple[str, dict[str, Any]], turn: int = 0) -> AssistantMessage:
    """A reply asking for tool calls."""
    return AssistantMessage(
        content=[
            ToolCall(id=f"call_{turn}_{i}", name=name, arguments=args)
            for i, (name, args) in enumerate(pairs)
        ],
        stop_reason=StopReason.TOOL_USE,
        usage=Usage(input=100 + turn, output=20, cache_read=50, cache_write=0),
    )


def text(reply: str) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=reply)], usage=Usage(input=120, output=10))


def make_agent(replies: list[Any], **options: Any) -> Agent:
    return Agent.from_provider(MockProvider(replies), CONFIG, tools=[read_file, bash], **options)


@dataclass
class SessionResult:
    """What the scripted session produced."""

    run_ids: list[str | None] = field(default_factory=list[str | None])
    outcomes: list[str] = field(default_factory=list[str])
    forwarded: list[list[str]] = field(default_factory=list[list[str]])
    errors: list[BaseException | None] = field(default_factory=list[BaseException | None])


async def _record(
    recorder: Recorder,
    agent: Agent,
    prompt: str,
    result: SessionResult,
    during: Callable[[Agent], Any] | None = None,
) -> Recording:
    seen: list[str] = []
    async with recorder.recording(prompt, forward=lambda e: seen.append(e.type)) as recording:
        if during is None:
            await agent.prompt(prompt, on_event=recording)
        else:
            async with anyio.create_task_group() as group:
                group.start_soon(during, agent)
                await agent.prompt(prompt, on_event=recording)
    result.run_ids.append(recording.run_id)
    result.outcomes.append(recording.outcome)
    result.forwarded.append(seen)
    result.errors.append(recording.error)
    return recording


async def _abort_soon(agent: Agent) -> None:
    while not agent.is_running:  # noqa: ASYNC110 - polls the agent's state, nothing to wait on
        await anyio.sleep(0.001)
    await anyio.sleep(0.02)
    agent.abort()


def _refuse(_text: str) -> Reject:
    return Reject("the prompt asks for secrets")


async def scripted_session(recorder: Recorder) -> SessionResult:
    """Five runs: tool calls, a failing tool, an aborted run, an input rejection and a
    loop abort (the repeated-call detector skips the third identical round with a nudge
    and stops the fourth)."""
    result = SessionResult()
    tools_run = make_agent(
        [
            calls(("read_file", {"path": "src/a.py"}), ("read_file", {"path": "src/b.py"}), turn=1),
            text("Both files read."),
        ]
    )
    await _record(recorder, tools_run, "read the two modules", result)
    failing = make_agent(
        [calls(("bash", {"command": "pytest -q"}), turn=1), text("The tests fail.")]
    )
    await _record(recorder, failing, "run the tests", result)
    slow = "x" * 4000
    aborted = make_agent([MockReply(message=text(slow), delay=0.01, chunk_size=8)])
    await _record(recorder, aborted, "write a long essay", result, during=_abort_soon)
    rejected = make_agent([text("never sent")], input_filters=[_refuse])
    await _record(recorder, rejected, "print the API key", result)
    same = ("read_file", {"path": "loop.py"})
    looping = make_agent([calls(same, turn=t) for t in range(1, 5)], max_repeated_tool_calls=3)
    await _record(recorder, looping, "keep reading loop.py", result)
    return result


def log_events(root: Path) -> list[dict[str, Any]]:
    """The log's events as JSON objects."""
    raw = (root / "state" / "events.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in raw.splitlines() if line.strip()]


def forward_log(events: list[AgentEvent]) -> Callable[[AgentEvent], None]:
    return events.append


def snapshot_record(root: Path, line_count: int) -> dict[str, Any]:
    """A valid ``snapshots/<id>/graph.json`` of the log's first ``line_count`` lines."""
    from yoagent.gasp.fold import read_log

    raw = (root / "state" / "events.jsonl").read_bytes()
    prefix = b"".join(raw.splitlines(keepends=True)[:line_count])
    fold = read_log(prefix)
    return {
        "graph": fold.graph.to_json(),
        "integrity": {
            "event_id": fold.events[-1].id,
            "line_count": line_count,
            "sha256": hashlib.sha256(prefix).hexdigest(),
        },
    }


def write_snapshot(root: Path, snapshot: object) -> None:
    """Write ``snapshot`` as ``snapshots/snap/graph.json``."""
    folder = root / "snapshots" / "snap"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "graph.json").write_text(json.dumps(snapshot))
