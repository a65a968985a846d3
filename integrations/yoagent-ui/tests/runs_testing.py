"""Recorded runs for the viewer's tests: a GASP repository of real recorded runs, a huge
synthetic one, a cassette, and malformed ones."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import anyio

from yoagent.core import (
    Agent,
    AssistantMessage,
    CostConfig,
    MockProvider,
    ModelConfig,
    StopReason,
    TextContent,
    ToolCall,
    Usage,
    cost_of,
    tool,
)
from yoagent.gasp import Actor, Event, NewGoal, Recorder, RecordingExtension

PRICES = CostConfig(input=3.0, output=15.0, cache_read=0.3)
MODEL = replace(ModelConfig.mock("priced-model"), cost=PRICES)


@tool
async def write_file(path: str, content: str) -> str:
    """Write a file (scripted)."""
    return f"wrote {len(content)} bytes to {path}"


@tool
async def read_file(path: str) -> str:
    """Read a file (scripted)."""
    return f"contents of {path}"


def call(name: str, turn: int, **arguments: str) -> AssistantMessage:
    return AssistantMessage(
        content=[ToolCall(id=f"call_{turn}", name=name, arguments=dict(arguments))],
        stop_reason=StopReason.TOOL_USE,
        usage=Usage(input=1000 * turn, output=100 * turn, cache_read=500),
    )


def answer(text: str) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)], usage=Usage(input=800, output=40))


RUNS: list[tuple[str, list[AssistantMessage]]] = [
    ("write the parser", [call("write_file", 1, path="parser.py", content="x"), answer("done")]),
    (
        "read and fix",
        [
            call("read_file", 1, path="a.py"),
            call("write_file", 2, path="a.py", content="y"),
            answer("fixed"),
        ],
    ),
    ("say hi", [answer("hi")]),
]
"""Three runs: their tasks and replies."""


def run_async(main: Callable[[], Awaitable[None]]) -> None:
    """``anyio.run(main)`` in a thread of its own (Playwright's sync API keeps an event
    loop running in this one)."""
    with ThreadPoolExecutor(1) as pool:
        pool.submit(anyio.run, main).result()


def run_cost(replies: list[AssistantMessage]) -> float:
    """What a run of these replies costs at :data:`PRICES`."""
    return sum(cost_of(reply.usage, PRICES) or 0.0 for reply in replies)


def record_three_runs(root: Path) -> Path:
    """A GASP repository holding the three :data:`RUNS`, recorded by the extension."""

    async def main() -> None:
        recorder = Recorder.init(root, "viewer-agent", NewGoal("show runs"))
        extension = RecordingExtension(recorder)
        for task, replies in RUNS:
            agent = Agent.from_provider(
                MockProvider(list(replies)), MODEL, tools=[write_file, read_file]
            )
            agent.with_extension(extension)
            await agent.prompt(task)
        await extension.aclose()

    run_async(main)
    return root


def huge_run_log(root: Path, turns: int) -> Path:
    """A GASP log of one run of ``turns`` turns (each a model call and a bash call)."""
    actor = Actor(kind="agent", id="huge")
    log = root / "state" / "events.jsonl"
    log.parent.mkdir(parents=True)
    start = 1_700_000_000_000
    run = "run_huge"
    started = Event.new(
        actor,
        "run.started",
        {"run_id": run, "task": "a very long run"},
        correlation_id=run,
        ts_ms=start,
    )
    lines = [started.to_line()]
    ts = start
    for turn in range(1, turns + 1):
        ts += 40
        metadata = {
            "usage": {"input": 1000 + turn % 97, "output": 50 + turn % 13},
            "cost_usd": 0.001,
        }
        for kind, payload in (
            ("model.called", {"run_id": run, "model": "m", "prompt_summary": f"turn {turn}"}),
            (
                "model.finished",
                {"run_id": run, "model": "m", "output_summary": "ok", "metadata": metadata},
            ),
            ("tool.called", {"run_id": run, "tool": "bash", "input_summary": '{"command":"ls"}'}),
        ):
            lines.append(Event.new(actor, kind, payload, correlation_id=run, ts_ms=ts).to_line())
        ts += 10
        finished = {"run_id": run, "tool": "bash", "output_summary": "a b", "success": True}
        lines.append(
            Event.new(actor, "tool.finished", finished, correlation_id=run, ts_ms=ts).to_line()
        )
    done = {"run_id": run, "outcome": "completed"}
    lines.append(Event.new(actor, "run.finished", done, correlation_id=run, ts_ms=ts + 5).to_line())
    log.write_text("".join(lines), encoding="utf-8")
    return root
