"""AG-UI messages to yoagent messages and back: nothing lost, whatever the content kind."""

from __future__ import annotations

import pytest
from ag_ui.core import (
    ActivityMessage,
    AudioPart,
    DataSource,
    DeveloperMessage,
    FunctionCall,
    ImagePart,
    ReasoningMessage,
    SystemMessage,
    TextPart,
    ToolMessage,
    UrlSource,
)
from ag_ui.core import (
    AssistantMessage as AguiAssistant,
)
from ag_ui.core import (
    ToolCall as AguiToolCall,
)
from ag_ui.core import (
    UserMessage as AguiUser,
)

from yoagent.core import (
    ApiProtocol,
    AssistantMessage,
    CustomMessage,
    ErrorKind,
    ImageContent,
    StopReason,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from yoagent.ui import BadRunInputError, from_agui_messages, to_agui_messages

EVERY_KIND = [
    CustomMessage(kind="ui.system", data={"content": "Be brief.", "name": "ops"}),
    UserMessage(
        content=[
            TextContent(text="What is this?"),
            ImageContent(data="aGk=", mime_type="image/png"),
        ]
    ),
    AssistantMessage(
        content=[
            ThinkingContent(thinking="Look first.", signature="sig-1"),
            ThinkingContent(redacted="opaque", redacted_protocol=ApiProtocol.ANTHROPIC_MESSAGES),
            TextContent(text="A cat. "),
            ToolCall(id="c1", name="zoom", arguments={"factor": 2, "box": [1, 2]}),
            TextContent(text="Zooming."),
            ImageContent(data="Ymk=", mime_type="image/jpeg"),
        ],
        stop_reason=StopReason.TOOL_USE,
        usage=Usage(input=10, output=5, cache_read=3, cache_write=1),
        model="m-1",
        provider="p",
    ),
    ToolResultMessage(
        tool_call_id="c1",
        tool_name="zoom",
        content=[TextContent(text="zoomed"), ImageContent(data="YQ==", mime_type="image/png")],
        details={"scale": 2},
    ),
    ToolResultMessage(
        tool_call_id="c1", tool_name="zoom", content=[TextContent(text="boom")], is_error=True
    ),
    AssistantMessage(
        content=[TextContent(text="partial")],
        stop_reason=StopReason.ERROR,
        error_message="overloaded",
        error_kind=ErrorKind.RATE_LIMITED,
    ),
    CustomMessage(kind="bookmark", data=["a", 1]),
    CustomMessage(kind="note", data={"text": "kept"}),
    CustomMessage(kind="ui.developer", data={"content": "Use tools."}),
    UserMessage.from_text("thanks"),
]


def test_yoagent_to_agui_and_back_is_exact() -> None:
    """Every message and content kind yoagent holds survives the trip through AG-UI."""
    assert from_agui_messages(to_agui_messages(EVERY_KIND)) == EVERY_KIND


def test_the_trip_survives_json() -> None:
    """The same holds for AG-UI messages as they travel: serialized and parsed again."""
    from ag_ui.core import Message
    from pydantic import TypeAdapter

    adapter = TypeAdapter(list[Message])
    wire = adapter.dump_json(to_agui_messages(EVERY_KIND), by_alias=True)
    assert from_agui_messages(adapter.validate_json(wire)) == EVERY_KIND


def test_agui_to_yoagent_and_back_keeps_every_message() -> None:
    """A client's messages, of every AG-UI kind yoagent takes, come back the same."""
    sent = [
        SystemMessage(id="s", content="Be brief."),
        DeveloperMessage(id="d", content="Use tools.", name="dev", metadata={"app": 1}),
        AguiUser(id="u1", content="plain text"),
        AguiUser(
            id="u2",
            content=[
                TextPart(text="look"),
                ImagePart(source=DataSource(value="aGk=", mime_type="image/png")),
            ],
        ),
        ReasoningMessage(id="r", content="thinking it over", encrypted_value="enc"),
        AguiAssistant(
            id="a",
            content="calling",
            tool_calls=[
                AguiToolCall(id="c", function=FunctionCall(name="f", arguments='{"x": 1}'))
            ],
        ),
        ToolMessage(id="t", tool_call_id="c", content="done"),
        ToolMessage(id="t2", tool_call_id="c", content="failed", error="failed"),
        ActivityMessage(id="act", activity_type="progress", content={"percent": 50}),
    ]
    again = to_agui_messages(
        from_agui_messages(sent), ["s", "d", "u1", "u2", "a", "t", "t2", "act"]
    )

    def essentials(message: object) -> dict[str, object]:
        dumped = message.model_dump(by_alias=True)  # type: ignore[attr-defined]
        dumped.pop("metadata", None)  # yoagent's own fields are added there
        return dumped

    assert [m.id for m in again] == ["s", "d", "u1", "u2", "a.reasoning.0", "a", "t", "t2", "act"]
    kept = [essentials(m) for m in again]
    expected = [essentials(m) for m in sent]
    expected[4]["id"] = "a.reasoning.0"  # a reply's reasoning takes ids made from the reply's
    assert kept == expected
    assert again[1].metadata == {"app": 1, "yoagent": again[1].metadata["yoagent"]}


def test_client_messages_without_metadata_get_sensible_defaults() -> None:
    (reply,) = from_agui_messages(
        [
            AguiAssistant(
                id="a",
                content="hi",
                tool_calls=[AguiToolCall(id="c", function=FunctionCall(name="f", arguments=""))],
            )
        ]
    )
    assert isinstance(reply, AssistantMessage)
    assert reply.stop_reason is StopReason.TOOL_USE
    assert reply.content == [TextContent(text="hi"), ToolCall(id="c", name="f", arguments={})]


@pytest.mark.parametrize(
    ("message", "says"),
    [
        (
            AguiUser(
                id="u", content=[AudioPart(source=DataSource(value="x", mime_type="audio/wav"))]
            ),
            "'audio'",
        ),
        (
            AguiUser(id="u", content=[ImagePart(source=UrlSource(value="https://x/y.png"))]),
            "by url",
        ),
        (ToolMessage(id="t", tool_call_id="nobody", content="x"), "answers no tool call"),
        (
            AguiAssistant(
                id="a",
                tool_calls=[AguiToolCall(id="c", function=FunctionCall(name="f", arguments="{"))],
            ),
            "not JSON",
        ),
        (
            AguiAssistant(
                id="a",
                tool_calls=[AguiToolCall(id="c", function=FunctionCall(name="f", arguments="[1]"))],
            ),
            "not a JSON object",
        ),
    ],
)
def test_what_yoagent_cannot_hold_is_refused_by_name(message: object, says: str) -> None:
    with pytest.raises(BadRunInputError, match=says) as caught:
        from_agui_messages([message])  # type: ignore[list-item]
    assert caught.value.status == 400
