"""A durable run in one process: its steps, its event stream, its results."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from dbos import DBOS
from dbos_helpers import without_timestamps as strip
from durable_fixtures import MODEL, calls_then_text, durable

from yoagent.core import (
    Agent,
    AgentEvent,
    MessageUpdate,
    MockProvider,
    SubAgentTool,
    ToolContext,
    ToolResult,
    messages_adapter,
    tool,
)
from yoagent.dbos import DbosError, DurableRuntime, get_run, idempotency_key

effects: list[str] = []


@tool
async def add(a: int, b: int, ctx: ToolContext) -> str:
    """Add two numbers."""
    effects.append(idempotency_key(ctx))
    return str(a + b)


@pytest.fixture
def runtime_url(tmp_path: Path) -> str:
    effects.clear()
    return f"sqlite:///{tmp_path / 'system.sqlite'}"


async def test_each_model_request_and_tool_call_is_a_checkpointed_step(runtime_url: str) -> None:
    agent = durable([add], script=calls_then_text(("add", {"a": 2, "b": 3})))
    plain = Agent(
        MockProvider([calls_then_text(("add", {"a": 2, "b": 3}))] * 2), MODEL, tools=[add]
    )
    with DurableRuntime(runtime_url):
        result = await agent.run("add 2 and 3", run_id="r1")
        steps = [step["function_name"] for step in await DBOS.list_workflow_steps_async("r1")]
    expected = await plain.prompt("add 2 and 3")

    assert steps == ["yoagent.model", "yoagent.tool:add", "yoagent.model", "yoagent.finish"]
    dump = messages_adapter.dump_python
    assert strip(dump(result.messages, mode="json")) == strip(dump(expected, mode="json"))
    assert result.messages[-1].text == "done"  # pyright: ignore[reportAttributeAccessIssue]
    assert result.stats.turns == 2 and result.stats.usage.input == 20
    assert effects[0] == "r1:call_0"  # the durable run's id, stable across recoveries


async def test_the_event_stream_reads_again_from_the_start_or_any_offset(runtime_url: str) -> None:
    agent = durable([add], script=calls_then_text(("add", {"a": 1, "b": 1})))
    live: list[AgentEvent] = []
    with DurableRuntime(runtime_url):
        run = await agent.start("go", run_id="r1", on_event=live.append)
        first = [item async for item in run.events()]  # while it runs, then to its end
        again = [item async for item in (await get_run("r1")).events()]
        tail = [item async for item in run.events(offset=5)]

    types = [item.event.type for item in first]
    assert types[0] == "agent_start" and types[-1] == "agent_end"
    assert [item.offset for item in first] == list(range(len(first)))
    assert [(i.offset, i.event.type) for i in again] == [(i.offset, i.event.type) for i in first]
    assert [(i.offset, i.event.type) for i in tail] == [(i.offset, i.event.type) for i in first[5:]]
    # Token deltas are live only; everything else is in the stream, once.
    assert any(isinstance(event, MessageUpdate) for event in live)
    assert [e.type for e in live if not isinstance(e, MessageUpdate)] == types


async def test_a_run_id_in_use_is_refused(runtime_url: str) -> None:
    agent = durable(script=calls_then_text())
    with DurableRuntime(runtime_url):
        await agent.run("one", run_id="same")
        with pytest.raises(DbosError, match="the run id 'same' is taken"):
            await agent.start("two", run_id="same")


async def test_a_tool_result_that_cannot_be_checkpointed_is_an_error_result_naming_it(
    runtime_url: str,
) -> None:
    class Opaque:
        name = "opaque"
        description = "Returns something that is not JSON."
        parameters: dict[str, object] = {"type": "object", "properties": {}}  # noqa: RUF012

        async def execute(self, arguments: dict[str, object], ctx: ToolContext) -> ToolResult:
            return ToolResult.from_text("made", details=object())

    agent = durable([Opaque()], script=calls_then_text(("opaque", {})))
    with DurableRuntime(runtime_url):
        result = await agent.run("go", run_id="r1")

    outcome = result.messages[2]
    assert outcome.role == "tool_result" and outcome.is_error  # pyright: ignore[reportAttributeAccessIssue]
    assert "the result of tool 'opaque' (call call_0) cannot be checkpointed" in outcome.text  # pyright: ignore[reportAttributeAccessIssue]
    assert result.messages[-1].text == "done"  # pyright: ignore[reportAttributeAccessIssue]


async def test_a_sub_agent_runs_as_a_workflow_of_its_own(runtime_url: str) -> None:
    helper = SubAgentTool(
        "helper", "Delegate.", provider=MockProvider.text(*["helped"] * 5), model=MODEL
    )
    agent = durable([helper], script=calls_then_text(("helper", {"task": "help"})))
    with DurableRuntime(runtime_url):
        result = await agent.run("go", run_id="r1")
        child = await DBOS.get_workflow_status_async("r1/call_0")
        child_steps = [
            s["function_name"] for s in await DBOS.list_workflow_steps_async("r1/call_0")
        ]
        child_events = [item.event.type async for item in (await get_run("r1/call_0")).events()]

    assert child is not None and child.status == "SUCCESS"
    assert child_steps == ["yoagent.model", "yoagent.finish"]
    assert child_events[0] == "agent_start" and child_events[-1] == "agent_end"
    assert result.messages[2].text == "helped"  # pyright: ignore[reportAttributeAccessIssue]
    assert result.stats.sub_agents.runs == 1


async def test_the_event_loop_keeps_a_working_thread_pool_after_the_runtime_stops(
    runtime_url: str,
) -> None:
    async with DurableRuntime(runtime_url, recover_after=None):
        assert await DBOS.get_workflow_status_async("none") is None  # DBOS's pool in use
    assert await asyncio.to_thread(lambda: "still runs") == "still runs"
    # and the next runtime in this loop works as the first did
    async with DurableRuntime(runtime_url, recover_after=None):
        assert await DBOS.get_workflow_status_async("none") is None
    assert await asyncio.to_thread(lambda: "again") == "again"


def test_a_uvloop_loop_keeps_a_working_thread_pool_after_the_runtime_stops(
    runtime_url: str,
) -> None:
    """uvicorn's loop: its default executor is private, so the stopped runtime's pool is
    found by trying it, not by looking at it."""
    import uvloop

    async def body() -> tuple[str, str]:
        async with DurableRuntime(runtime_url, recover_after=None):
            assert await DBOS.get_workflow_status_async("none") is None  # DBOS's pool in use
        after = await asyncio.to_thread(lambda: "still runs")
        async with DurableRuntime(runtime_url, recover_after=None):
            assert await DBOS.get_workflow_status_async("none") is None
        return after, await asyncio.to_thread(lambda: "again")

    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        assert runner.run(body()) == ("still runs", "again")
