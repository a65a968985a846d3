"""The AG-UI translator on its own: what a reply that was not streamed becomes, how a
sub-agent's events nest, and two calls a model gave one id (the client tests cover the
streamed paths end to end)."""

from __future__ import annotations

from ag_ui.core import BaseEvent

from yoagent.core import (
    Agent,
    AgentEnd,
    ApiProtocol,
    AssistantMessage,
    ErrorKind,
    MessageEnd,
    MessageStart,
    MockProvider,
    ModelConfig,
    RunEnd,
    RunOutcome,
    StopReason,
    SubAgentEvent,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolExecutionEnd,
    ToolResultMessage,
    tool,
)
from yoagent.ui._agui_events import AguiTranslator


def dumped(events: list[BaseEvent]) -> list[dict[str, object]]:
    return [event.model_dump(by_alias=True, mode="json") for event in events]


def test_a_reply_that_was_not_streamed_goes_out_whole() -> None:
    reply = AssistantMessage(
        content=[
            ThinkingContent(
                thinking="Think.",
                redacted="opaque",
                redacted_protocol=ApiProtocol.ANTHROPIC_MESSAGES,
            ),
            TextContent(text="Calling."),
            ToolCall(id="c1", name="look", arguments={"at": "sky"}),
        ],
        stop_reason=StopReason.TOOL_USE,
    )
    translator = AguiTranslator()
    events = translator.events(MessageStart(message=reply)) + translator.events(
        MessageEnd(message=reply)
    )
    got = dumped(events)
    message_id = translator.ids[id(reply)]
    assert [e["type"] for e in got] == [
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TOOL_CALL_START",
        "TOOL_CALL_ARGS",
        "REASONING_ENCRYPTED_VALUE",
        "TEXT_MESSAGE_END",
        "TOOL_CALL_END",
    ]
    assert got[2]["delta"] == "Think." and got[6]["delta"] == "Calling."
    assert got[7]["parentMessageId"] == message_id and got[8]["delta"] == '{"at": "sky"}'
    assert got[9]["entityId"] == message_id and got[9]["encryptedValue"] == "opaque"


def test_a_sub_agents_events_carry_its_run_id_and_end_with_its_outcome() -> None:
    translator = AguiTranslator()
    inner = AssistantMessage(content=[TextContent(text="sub answer")])
    failed = AssistantMessage(stop_reason=StopReason.ERROR, error_message="boom")
    events = []
    for event in (
        MessageStart(message=inner),
        MessageEnd(message=inner),
        AgentEnd(messages=[inner]),
    ):
        events += translator.events(
            SubAgentEvent(tool_call_id="c1", tool_name="helper", depth=1, event=event)
        )
    events += translator.events(
        SubAgentEvent(
            tool_call_id="c2",
            tool_name="helper",
            depth=1,
            # what the loop says of a run whose model call failed
            event=AgentEnd(
                messages=[failed],
                outcome=RunOutcome(end=RunEnd.FAILED, reason="boom", error_kind=ErrorKind.API),
            ),
        )
    )
    got = dumped(events)
    first, second = got[0]["subagentRunId"], got[-2]["subagentRunId"]
    assert first != second
    assert [e["type"] for e in got] == [
        "SUBAGENT_STARTED",
        "TEXT_MESSAGE_START",
        "TEXT_MESSAGE_CONTENT",
        "TEXT_MESSAGE_END",
        "SUBAGENT_FINISHED",
        "SUBAGENT_STARTED",
        "SUBAGENT_ERROR",
    ]
    assert all(e["subagentRunId"] == first for e in got[:5])
    assert got[0]["parentToolCallId"] == "c1" and got[0]["name"] == "helper"
    assert got[-1]["message"] == "boom"


def test_a_held_placeholder_is_not_a_result() -> None:
    from yoagent.core.extension import HELD_RESULT

    held = ToolResultMessage(
        tool_call_id="c1",
        tool_name="t",
        content=[TextContent(text=HELD_RESULT)],
        is_error=True,
        details={"pending_approval": {"tool_call_id": "c1"}},
    )
    translator = AguiTranslator()
    assert translator.events(ToolExecutionEnd(result=held)) == []
    assert translator.ids[id(held)] == ""


async def test_two_calls_sharing_an_id_are_two_calls_in_the_stream() -> None:
    """The settled reply gave the repeat its own id, but the streamed deltas still carried
    the model's: the client saw one call with both argument strings glued together."""

    @tool
    async def echo(x: int) -> str:
        """Echo."""
        return f"echo {x}"

    repeated = AssistantMessage(
        content=[
            ToolCall(id="d", name="echo", arguments={"x": 1}),
            ToolCall(id="d", name="echo", arguments={"x": 2}),
        ],
        stop_reason=StopReason.TOOL_USE,
    )
    provider = MockProvider([repeated, AssistantMessage(content=[TextContent(text="done")])])
    agent = Agent.from_provider(provider, ModelConfig.mock(), tools=[echo])
    translator = AguiTranslator()
    out: list[BaseEvent] = []
    async with agent.stream("go") as events:
        async for event in events:
            out += translator.events(event)
    got = dumped(out)
    starts = [e["toolCallId"] for e in got if e["type"] == "TOOL_CALL_START"]
    assert starts == ["d", "d_2"]
    args = {e["toolCallId"]: e["delta"] for e in got if e["type"] == "TOOL_CALL_ARGS"}
    assert args == {"d": '{"x": 1}', "d_2": '{"x": 2}'}
    results = [(e["toolCallId"], e["content"]) for e in got if e["type"] == "TOOL_CALL_RESULT"]
    assert results == [("d", "echo 1"), ("d_2", "echo 2")]
