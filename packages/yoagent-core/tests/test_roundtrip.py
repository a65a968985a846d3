"""Every message and event survives a JSON round trip exactly."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from yoagent.core import (
    AgentEnd,
    AgentStart,
    ApiProtocol,
    AssistantMessage,
    CustomMessage,
    ErrorKind,
    ImageContent,
    InputRejected,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ProgressMessage,
    ProviderRetry,
    SessionStats,
    StopReason,
    TextContent,
    TextDelta,
    ThinkingContent,
    ThinkingDelta,
    ToolCall,
    ToolCallDelta,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    ToolResultMessage,
    TurnEnd,
    TurnStart,
    Usage,
    UserMessage,
    event_adapter,
    message_adapter,
    messages_adapter,
)
from yoagent.core.extension import SubAgentSpend

text = st.text(max_size=40)
ints = st.integers(min_value=0, max_value=2**53)
json_scalars = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False)
    | text
)
json_values: st.SearchStrategy[Any] = st.recursive(
    json_scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(text, inner, max_size=3),
    max_leaves=8,
)
usage = st.builds(Usage, input=ints, output=ints, cache_read=ints, cache_write=ints)
text_content = st.builds(TextContent, text=text)
image_content = st.builds(
    ImageContent, data=text, mime_type=st.sampled_from(["image/png", "image/jpeg"])
)
thinking = st.builds(
    ThinkingContent,
    thinking=text,
    signature=st.none() | text,
    redacted=st.none() | text,
    redacted_protocol=st.none() | st.sampled_from(list(ApiProtocol)),
)
tool_call = st.builds(
    ToolCall, id=text, name=text, arguments=st.dictionaries(text, json_values, max_size=4)
)
user_content = st.lists(text_content | image_content, max_size=3)
user = st.builds(UserMessage, content=user_content, timestamp=ints)
assistant = st.builds(
    AssistantMessage,
    content=st.lists(text_content | thinking | tool_call | image_content, max_size=4),
    stop_reason=st.sampled_from(list(StopReason)),
    usage=usage,
    model=text,
    provider=text,
    error_message=st.none() | text,
    timestamp=ints,
)
tool_result = st.builds(
    ToolResultMessage,
    tool_call_id=text,
    tool_name=text,
    content=user_content,
    is_error=st.booleans(),
    details=json_values,
    timestamp=ints,
)
custom = st.builds(CustomMessage, kind=text, data=json_values, timestamp=ints)
any_message = user | assistant | tool_result | custom
cost = st.none() | st.floats(min_value=0, max_value=1e6, allow_nan=False)
stats = st.builds(
    SessionStats,
    usage=usage,
    cost_usd=cost,
    turns=ints,
    sub_agents=st.builds(SubAgentSpend, usage=usage, cost_usd=cost, runs=ints),
)
delta = (
    st.builds(TextDelta, content_index=ints, delta=text)
    | st.builds(ThinkingDelta, content_index=ints, delta=text)
    | st.builds(ToolCallDelta, content_index=ints, id=text, name=text, delta=text)
)
event = st.one_of(
    st.just(AgentStart()),
    st.builds(TurnStart, turn=ints),
    st.builds(MessageStart, message=any_message),
    st.builds(MessageUpdate, delta=delta),
    st.builds(MessageEnd, message=any_message),
    st.builds(
        ToolExecutionStart,
        tool_call_id=text,
        tool_name=text,
        arguments=st.dictionaries(text, json_values, max_size=3),
    ),
    st.builds(
        ToolExecutionUpdate,
        tool_call_id=text,
        tool_name=text,
        content=user_content,
        details=json_values,
    ),
    st.builds(ToolExecutionEnd, result=tool_result),
    st.builds(ProgressMessage, tool_call_id=text, tool_name=text, text=text),
    st.builds(InputRejected, reason=text),
    st.builds(
        ProviderRetry,
        attempt=ints,
        max_retries=ints,
        delay_seconds=st.floats(min_value=0, max_value=1e4),
        kind=st.sampled_from(list(ErrorKind)),
        error=text,
    ),
    st.builds(
        TurnEnd, turn=ints, message=assistant, tool_results=st.lists(tool_result, max_size=2)
    ),
    st.builds(AgentEnd, messages=st.lists(any_message, max_size=3), stats=stats),
)


@settings(max_examples=300)
@given(any_message)
def test_every_message_round_trips_through_json(message: Any) -> None:
    """dump → load gives an equal message of the same type."""
    loaded = message_adapter.validate_json(message_adapter.dump_json(message))
    assert loaded == message
    assert type(loaded) is type(message)


@settings(max_examples=300)
@given(event)
def test_every_event_round_trips_through_json(value: Any) -> None:
    """dump → load gives an equal event of the same type; ``type`` names it."""
    dumped = event_adapter.dump_json(value)
    loaded = event_adapter.validate_json(dumped)
    assert loaded == value
    assert type(loaded) is type(value)
    assert event_adapter.dump_python(loaded, mode="json")["type"] == value.type


@settings(max_examples=100)
@given(st.lists(any_message, max_size=6))
def test_a_history_round_trips_through_json(history: list[Any]) -> None:
    """A whole history (what a session saves) round-trips too."""
    assert messages_adapter.validate_json(messages_adapter.dump_json(history)) == history
