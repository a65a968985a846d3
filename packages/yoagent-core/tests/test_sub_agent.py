"""SubAgentTool: delegation to a child loop — nesting, cancel, spend, failures."""

from __future__ import annotations

import anyio
import pytest
from core_helpers import FAST_RETRY, call, text_reply, tool_reply

from yoagent.core import (
    Agent,
    AgentEnd,
    AgentEvent,
    AssistantMessage,
    CostConfig,
    ErrorKind,
    ExecutionLimits,
    MessageUpdate,
    MockProvider,
    MockReply,
    ModelConfig,
    ModelTool,
    ProviderError,
    RetryConfig,
    SubAgentEvent,
    TextDelta,
    ToolContext,
    ToolError,
    ToolResultMessage,
    Usage,
    event_adapter,
    tool,
)
from yoagent.core._sub_agent import SubAgentTool
from yoagent.core.context import estimate_messages
from yoagent.core.extension import Reject
from yoagent.core.loop import DEFAULT_MAX_DEPTH, SUB_AGENT_LIMITS, SUB_AGENT_STATS_KEY
from yoagent.core.provider import DeltaSink, StreamConfig


def priced(id: str, rate: float) -> ModelConfig:
    config = ModelConfig.mock(id)
    config.cost = CostConfig(input=rate, output=rate)
    return config


@tool
async def lookup(key: str) -> str:
    """Look a key up."""
    return f"value of {key}"


def results(agent: Agent) -> list[ToolResultMessage]:
    return [m for m in agent.messages if isinstance(m, ToolResultMessage)]


async def test_the_child_answers_and_its_spend_goes_in_its_own_bucket() -> None:
    child_provider = MockProvider(
        [
            tool_reply(call("lookup", key="k"), usage=Usage(input=100, output=10)),
            text_reply("k is 42", usage=Usage(input=200, output=5)),
        ]
    )
    researcher = SubAgentTool(
        "research",
        "Researches a question.",
        provider=child_provider,
        model=priced("child", 1.0),
        tools=[lookup],
        system_prompt="You research.",
    )
    parent_provider = MockProvider(
        [
            tool_reply(call("research", task="what is k?"), usage=Usage(input=1000, output=50)),
            text_reply("k is 42", usage=Usage(input=1100, output=5)),
        ]
    )
    agent = Agent.from_provider(parent_provider, priced("parent", 2.0), tools=[researcher])
    await agent.prompt("find k")

    (result,) = results(agent)
    assert not result.is_error and result.text == "k is 42"
    spent = result.details[SUB_AGENT_STATS_KEY]
    assert spent["runs"] == 1 and spent["turns"] == 2
    assert spent["usage"] == {"input": 300, "output": 15, "cache_read": 0, "cache_write": 0}
    assert child_provider.requests[0].system_prompt == "You research."
    stats = agent.last_run_stats
    assert stats.usage == Usage(input=2100, output=55)
    assert stats.cost_usd == pytest.approx(2155 * 2.0 / 1e6)
    assert stats.sub_agents.usage == Usage(input=300, output=15)
    assert stats.sub_agents.cost_usd == pytest.approx(315 * 1.0 / 1e6)
    assert stats.sub_agents.runs == 1
    assert stats.total_cost_usd() == pytest.approx((2155 * 2.0 + 315) / 1e6)


async def test_sub_agents_nest_and_spend_rolls_up_the_whole_tree() -> None:
    grandchild = SubAgentTool(
        "leaf",
        "Leaf.",
        provider=MockProvider([text_reply("leaf done", usage=Usage(input=1))]),
        model=priced("leaf", 1.0),
    )
    child = SubAgentTool(
        "middle",
        "Middle.",
        provider=MockProvider(
            [
                tool_reply(call("leaf", task="go deeper"), usage=Usage(input=10)),
                text_reply("middle done", usage=Usage(input=10)),
            ]
        ),
        model=priced("middle", 1.0),
        tools=[grandchild],
    )
    parent = Agent.from_provider(
        MockProvider([tool_reply(call("middle", task="delegate")), text_reply("all done")]),
        priced("top", 1.0),
        tools=[child],
    )
    await parent.prompt("start")
    assert results(parent)[0].text == "middle done"
    spend = parent.last_run_stats.sub_agents
    assert spend.runs == 2
    assert spend.usage == Usage(input=21)
    assert spend.cost_usd == pytest.approx(21 / 1e6)


async def test_a_failing_child_is_an_error_result_and_still_reports_spend() -> None:
    child = SubAgentTool(
        "worker",
        "Works.",
        provider=MockProvider(
            [
                tool_reply(call("lookup", key="a"), usage=Usage(input=7)),
                ProviderError(ErrorKind.AUTH, "bad key"),
            ]
        ),
        model=ModelConfig.mock(),
        tools=[lookup],
        retry=RetryConfig.none(),
    )
    parent = Agent.from_provider(
        MockProvider([tool_reply(call("worker", task="t")), text_reply("ok")]),
        ModelConfig.mock(),
        tools=[child],
    )
    await parent.prompt("go")
    (result,) = results(parent)
    assert result.is_error
    assert result.text == "the sub-agent failed: AUTH: bad key"
    assert parent.last_run_stats.sub_agents.usage == Usage(input=7)


async def test_a_child_stopped_by_its_limit_returns_what_it_has_with_the_marker() -> None:
    child = SubAgentTool(
        "worker",
        "Works.",
        provider=MockProvider(
            [
                tool_reply(call("lookup", "c1", key="a"), text="looking"),
                tool_reply(call("lookup", "c2", key="b")),
            ]
        ),
        model=ModelConfig.mock(),
        tools=[lookup],
    ).with_max_turns(2)
    assert child.settings.limits.max_turns == 2 and child.settings.limits.max_duration == 300.0
    parent = Agent.from_provider(
        MockProvider([tool_reply(call("worker", task="t")), text_reply("ok")]),
        ModelConfig.mock(),
        tools=[child],
    )
    await parent.prompt("go")
    (result,) = results(parent)
    assert not result.is_error
    assert result.text == "[Agent stopped: turn limit reached (2 turns)]"


async def test_a_rejected_task_and_a_bad_argument_fail_the_call() -> None:
    child = SubAgentTool(
        "worker",
        "Works.",
        provider=MockProvider([text_reply("never")]),
        model=ModelConfig.mock(),
        input_filters=[lambda text: Reject("no tasks today")],
    )
    parent = Agent.from_provider(
        MockProvider(
            [
                tool_reply(call("worker", "a", task="t"), call("worker", "b", task="  ")),
                text_reply("ok"),
            ]
        ),
        ModelConfig.mock(),
        tools=[child],
    )
    await parent.prompt("go")
    first, second = results(parent)
    assert first.is_error and first.text == "the sub-agent refused the task: no tasks today"
    assert second.is_error
    assert second.text == "invalid arguments for worker: task: must say what to do (it is blank)"


async def test_the_parents_cancel_reaches_the_child() -> None:
    streaming = anyio.Event()

    class SlowChild(MockProvider):
        async def stream(self, config: StreamConfig, sink: DeltaSink) -> AssistantMessage:
            streaming.set()
            return await super().stream(config, sink)

    slow_child = SlowChild([MockReply(message=text_reply("z" * 500), delay=0.01, chunk_size=5)])
    child = SubAgentTool("worker", "Works.", provider=slow_child, model=ModelConfig.mock())
    parent = Agent.from_provider(
        MockProvider([tool_reply(call("worker", task="long")), text_reply("never")]),
        ModelConfig.mock(),
        tools=[child],
        retry=FAST_RETRY,
    )

    async def abort_when_child_streams() -> None:
        await streaming.wait()
        await anyio.sleep(0.03)
        parent.abort()

    with anyio.fail_after(5):
        async with anyio.create_task_group() as group:
            group.start_soon(abort_when_child_streams)
            await parent.prompt("go")
    (result,) = results(parent)
    assert result.is_error
    # The parent's cancel ends the call (and, through its child token, the child's stream).
    assert result.text == "Tool execution cancelled."
    assert slow_child.remaining == 0


async def test_from_config_uses_the_registry_and_env_key(monkeypatch: pytest.MonkeyPatch) -> None:
    from yoagent.core import ApiProtocol
    from yoagent.core.provider import ProviderRegistry

    monkeypatch.setenv("MISTRAL_API_KEY", "mk")
    seen: list[ModelConfig] = []
    registry = ProviderRegistry(load_entry_points=False)
    registry.register(ApiProtocol.OPENAI_COMPLETIONS, lambda c: seen.append(c) or MockProvider())  # type: ignore[func-returns-value]
    sub = SubAgentTool.from_config(
        "w",
        "d",
        ModelConfig(
            api=ApiProtocol.OPENAI_COMPLETIONS,
            provider="mistral",
            id="m",
            key_variable="MISTRAL_API_KEY",
        ),
        registry=registry,
        limits=ExecutionLimits(max_turns=3),
    )
    assert seen[0].api_key == "mk"
    assert sub.settings.limits.max_turns == 3
    assert sub.parameters["required"] == ["task"]


async def test_a_failed_delegation_still_carries_its_spend_in_the_result_details() -> None:
    child = SubAgentTool(
        "worker",
        "Works.",
        provider=MockProvider(
            [
                tool_reply(call("lookup", key="a"), usage=Usage(input=7)),
                ProviderError(ErrorKind.AUTH, "x"),
            ]
        ),
        model=ModelConfig.mock(),
        tools=[lookup],
        retry=RetryConfig.none(),
    )
    parent = Agent.from_provider(
        MockProvider([tool_reply(call("worker", task="t")), text_reply("ok")]),
        ModelConfig.mock(),
        tools=[child],
    )
    await parent.prompt("go")
    (result,) = results(parent)
    assert result.is_error
    assert result.details[SUB_AGENT_STATS_KEY]["usage"]["input"] == 7


async def test_the_parents_stream_carries_the_childs_events_tagged_with_call_and_depth() -> None:
    inner = SubAgentTool(
        "inner", "Answers.", provider=MockProvider.text("inner says hi"), model=ModelConfig.mock()
    )
    outer = SubAgentTool(
        "outer",
        "Delegates.",
        provider=MockProvider(
            [tool_reply(call("inner", "in-1", task="say hi")), text_reply("outer done")]
        ),
        model=ModelConfig.mock(),
        tools=[inner],
    )
    parent = Agent.from_provider(
        MockProvider([tool_reply(call("outer", "out-1", task="go")), text_reply("all done")]),
        ModelConfig.mock(),
        tools=[outer],
    )
    events: list[AgentEvent] = []
    async with parent.stream("start") as stream:
        async for event in stream:
            events.append(event)
    forwarded = [e for e in events if isinstance(e, SubAgentEvent)]
    child = [(e.tool_call_id, e.depth, e.event.type) for e in forwarded]
    assert child[0] == ("out-1", 1, "agent_start")
    text = "".join(
        e.event.delta.delta
        for e in forwarded
        if e.depth == 2
        and isinstance(e.event, MessageUpdate)
        and isinstance(e.event.delta, TextDelta)
    )
    assert text == "inner says hi"
    assert ("out-1", 1, "tool_execution_start") in child
    assert ("out-1", 1, "tool_execution_end") in child
    assert all(call_id == "in-1" for call_id, depth, _ in child if depth == 2)
    child_end = next(e.event for e in forwarded if e.depth == 1 and e.event.type == "agent_end")
    assert isinstance(child_end, AgentEnd) and child_end.stats.turns == 2
    # The parent's own history is unchanged: no child message in it.
    assert [m.role for m in parent.messages] == ["user", "assistant", "tool_result", "assistant"]
    # And the events serialize (a UI can ship them as JSON).
    assert event_adapter.validate_json(event_adapter.dump_json(forwarded[-1])) == forwarded[-1]


async def test_a_self_delegating_sub_agent_stops_at_the_depth_limit() -> None:
    """Issue 10 item 19: a sub-agent that can call itself used to nest without bound
    (154,492 requests in 60 s). Every level now refuses past ``max_depth``."""
    provider = MockProvider(
        lambda config: (
            tool_reply(call("recurse", f"r{len(config.messages)}", task="again"))
            if len(config.messages) == 1
            else text_reply("stopping")
        )
        for _ in range(100)
    )
    recurse = SubAgentTool(
        "recurse", "Delegates to itself.", provider=provider, model=ModelConfig.mock()
    )
    recurse.tools.append(recurse)
    parent = Agent.from_provider(
        MockProvider([tool_reply(call("recurse", "top", task="go")), text_reply("done")]),
        ModelConfig.mock(),
        tools=[recurse],
    )
    await parent.prompt("go")
    # Depth 1 and depth 2 ran (two requests each); depth 3 was refused.
    assert len(provider.requests) == 4
    refused = [
        m
        for request in provider.requests
        for m in request.messages
        if isinstance(m, ToolResultMessage) and "delegation is limited to 2 level" in m.text
    ]
    assert refused and refused[0].is_error
    assert DEFAULT_MAX_DEPTH == 2
    assert recurse.settings.limits == SUB_AGENT_LIMITS  # the child's own limits by default


async def test_a_sub_agent_on_a_small_context_window_compacts_and_completes_a_long_task() -> None:
    parts = 12
    asked = 0

    def script(config: StreamConfig) -> AssistantMessage:
        nonlocal asked
        results_seen = [m.text for m in config.messages if isinstance(m, ToolResultMessage)]
        if results_seen and results_seen[-1].startswith(f"value of part{parts - 1}:"):
            return text_reply(f"read all {parts} parts")
        asked += 1
        return tool_reply(call("chunk", f"k{asked}", n=asked - 1))

    @tool
    async def chunk(n: int) -> str:
        """Read part n of the document (about 1,000 tokens)."""
        return f"value of part{n}: " + "x" * 4_000

    small = ModelConfig.mock()
    small.context_window = 8_000  # twelve parts are ~12,000 tokens: they cannot all fit
    small.max_tokens = 1_000
    provider = MockProvider([script] * 40)
    child = SubAgentTool(
        "reader",
        "Reads the document.",
        provider=provider,
        model=small,
        tools=[chunk],
        limits=ExecutionLimits(max_turns=30),
    )
    parent = Agent.from_provider(
        MockProvider([tool_reply(call("reader", "r", task="read it all")), text_reply("ok")]),
        ModelConfig.mock(),
        tools=[child],
    )
    events: list[AgentEvent] = []
    await parent.prompt("go", on_event=events.append)
    (result,) = results(parent)
    assert not result.is_error and result.text == f"read all {parts} parts"
    child_end = next(
        e.event for e in events if isinstance(e, SubAgentEvent) and isinstance(e.event, AgentEnd)
    )
    assert isinstance(child_end, AgentEnd) and child_end.stats.compactions >= 1
    window = small.context_window - small.max_tokens
    assert all(estimate_messages(list(r.messages)) <= window for r in provider.requests)


async def test_shared_state_turn_delay_and_limits_are_settable_on_a_sub_agent() -> None:
    from yoagent.core import SharedState

    state = SharedState()
    await state.set("plan", "step one")
    provider = MockProvider(
        [tool_reply(call("shared_state", action="get", key="plan")), text_reply("got it")]
    )
    child = (
        SubAgentTool(
            "w", "Works.", provider=provider, model=ModelConfig.mock(), system_prompt="Work."
        )
        .with_shared_state(state)
        .with_turn_delay(0.01)
        .with_execution_limits(ExecutionLimits(max_turns=5))
    )
    assert child.settings.turn_delay == 0.01 and child.settings.limits.max_turns == 5
    parent = Agent.from_provider(
        MockProvider([tool_reply(call("w", task="read the plan")), text_reply("ok")]),
        ModelConfig.mock(),
        tools=[child],
    )
    await parent.prompt("go")
    (result,) = results(parent)
    assert result.text == "got it"
    first = provider.requests[0]
    assert first.system_prompt.startswith("Work.\n\nShared state holds 1 keys: plan")
    assert [d.name for d in first.tools] == ["shared_state"]
    assert provider.requests[1].messages[-1].text == "step one"  # type: ignore[union-attr]


async def test_parallel_sub_agents_in_one_batch_each_answer() -> None:
    def helper(name: str, answer: str) -> SubAgentTool:
        slow = MockReply(message=text_reply(answer), delay=0.01, chunk_size=3)
        return SubAgentTool(name, "Helps.", provider=MockProvider([slow]), model=ModelConfig.mock())

    parent = Agent.from_provider(
        MockProvider(
            [
                tool_reply(
                    call("lookup", "l", key="k"),
                    call("first", "a", task="one"),
                    call("second", "b", task="two"),
                ),
                text_reply("both done"),
            ]
        ),
        ModelConfig.mock(),
        tools=[lookup, helper("first", "answer one"), helper("second", "answer two")],
    )
    with anyio.fail_after(10):
        await parent.prompt("go")
    assert [r.text for r in results(parent)] == ["value of k", "answer one", "answer two"]
    assert parent.last_run_stats.sub_agents.runs == 2


async def test_an_unknown_argument_is_an_error_result_and_no_child_runs() -> None:
    child_provider = MockProvider([text_reply("never")])
    child = SubAgentTool("worker", "Works.", provider=child_provider, model=ModelConfig.mock())
    parent = Agent.from_provider(
        MockProvider([tool_reply(call("worker", task="t", priority="high")), text_reply("ok")]),
        ModelConfig.mock(),
        tools=[child],
    )
    await parent.prompt("go")
    (result,) = results(parent)
    assert result.is_error
    assert result.text == "invalid arguments for worker: priority: Extra inputs are not permitted"
    assert child_provider.remaining == 1  # the child never ran


async def test_the_task_is_validated_by_its_model_in_lax_mode() -> None:
    child_provider = MockProvider([text_reply("from bytes"), text_reply("never")])
    child = SubAgentTool("worker", "Works.", provider=child_provider, model=ModelConfig.mock())
    assert isinstance(child, ModelTool)
    assert child.parameters == {
        "type": "object",
        "properties": {
            "task": {
                "type": "string",
                "description": (
                    "The task, complete and self-contained: the sub-agent sees nothing else."
                ),
            }
        },
        "required": ["task"],
        "additionalProperties": False,
    }
    ctx = ToolContext(tool_call_id="c1", tool_name="worker")
    # Lax mode: what pydantic coerces to text (bytes are decoded) is accepted...
    assert (await child.execute({"task": b"summarise"}, ctx)).text == "from bytes"
    # ...a number is not a task, and a null task is a missing one.
    with pytest.raises(ToolError, match="task: Input should be a valid string"):
        await child.execute({"task": 42}, ctx)
    with pytest.raises(ToolError, match="task: Field required"):
        await child.execute({"task": None}, ctx)
    assert child_provider.remaining == 1
