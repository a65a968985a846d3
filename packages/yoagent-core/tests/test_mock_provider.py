"""MockProvider streams scripted replies and refuses transcripts a real API would refuse."""

from __future__ import annotations

import pytest
from core_helpers import call, text_reply, tool_reply

from yoagent.core import (
    AssistantMessage,
    ErrorKind,
    MockProvider,
    MockReply,
    ModelConfig,
    ProviderError,
    TextContent,
    TextDelta,
    ThinkingContent,
    ThinkingDelta,
    ToolCallDelta,
    ToolResultMessage,
    UserMessage,
)
from yoagent.core.provider import StreamConfig, StreamDelta, TranscriptError, validate_transcript


def request(*messages: object) -> StreamConfig:
    return StreamConfig(model=ModelConfig.mock(), system_prompt="", messages=list(messages))  # type: ignore[arg-type]


def result(call_id: str) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name="t", content=[TextContent(text="r")])


async def test_a_reply_is_streamed_as_deltas_and_returned_whole() -> None:
    reply = AssistantMessage(
        content=[ThinkingContent(thinking="hmm"), TextContent(text="abcdef"), call("t", "c1", x=1)]
    )
    provider = MockProvider([MockReply(message=reply, chunk_size=4)])
    seen: list[StreamDelta] = []
    returned = await provider.stream(request(UserMessage.from_text("q")), seen.append)
    assert [type(d) for d in seen] == [
        ThinkingDelta,
        TextDelta,
        TextDelta,
        ToolCallDelta,
        ToolCallDelta,
    ]
    assert "".join(d.delta for d in seen if isinstance(d, TextDelta)) == "abcdef"
    assert "".join(d.delta for d in seen if isinstance(d, ToolCallDelta)) == '{"x": 1}'
    assert returned.content == reply.content
    assert returned is not reply
    assert returned.model == "mock-model" and returned.provider == "mock"


async def test_errors_are_raised_and_the_end_of_the_script_says_so() -> None:
    provider = MockProvider(
        [
            ProviderError(ErrorKind.AUTH, "no key"),
            MockReply(message=text_reply("abc"), fail_after=1),
        ]
    )
    q = request(UserMessage.from_text("q"))
    with pytest.raises(ProviderError, match="no key"):
        await provider.stream(q, lambda d: None)
    seen: list[StreamDelta] = []
    with pytest.raises(ProviderError) as caught:
        await provider.stream(q, seen.append)
    assert caught.value.kind is ErrorKind.NETWORK and len(seen) == 1
    with pytest.raises(ProviderError, match="no more scripted replies"):
        await provider.stream(q, lambda d: None)


@pytest.mark.parametrize(
    ("messages", "problem"),
    [
        ((), "no messages"),
        ((text_reply("a"),), "the first message is assistant"),
        ((UserMessage.from_text("q"), result("x")), "tool result 'x' has no matching tool call"),
        (
            (UserMessage.from_text("q"), tool_reply(call("t", "a")), UserMessage.from_text("next")),
            "tool calls ['a'] have no results",
        ),
        (
            (UserMessage.from_text("q"), tool_reply(call("t", "a"))),
            "ends on unanswered tool calls ['a']",
        ),
        (
            (UserMessage.from_text("q"), tool_reply(call("t", "a")), result("a"), result("a")),
            "tool result 'a' has no matching",
        ),
        ((UserMessage(content=[]),), "message 0 (user) is empty"),
        (
            (UserMessage.from_text("q"), tool_reply(call("t", "a"), call("t", "a"))),
            "duplicate tool call id 'a'",
        ),
    ],
)
def test_transcripts_a_real_api_refuses_are_refused(
    messages: tuple[object, ...], problem: str
) -> None:
    with pytest.raises(TranscriptError, match="invalid transcript") as caught:
        validate_transcript(list(messages))  # type: ignore[arg-type]
    assert problem in str(caught.value)
    assert caught.value.kind is ErrorKind.API


def test_a_well_formed_transcript_passes() -> None:
    validate_transcript(
        [
            UserMessage.from_text("q"),
            tool_reply(call("t", "a"), call("t", "b")),
            result("b"),
            result("a"),
            UserMessage.from_text("steer"),
            text_reply("done"),
            UserMessage.from_text("next"),
        ]
    )


def test_the_incremental_check_still_catches_problems_in_new_and_replaced_messages() -> None:
    from yoagent.core._provider.mock import TranscriptValidator

    validator = TranscriptValidator()
    first = UserMessage.from_text("q")
    history: list[object] = [first, tool_reply(call("t", "a")), result("a")]
    validator.check(history)  # type: ignore[arg-type]
    with pytest.raises(TranscriptError, match="tool result 'b' has no matching tool call"):
        validator.check([*history, result("b")])  # type: ignore[arg-type]
    # A history whose middle was replaced (e.g. compacted) is checked from the start again.
    replaced: list[object] = [first, result("ghost"), *history[2:]]
    with pytest.raises(TranscriptError, match="'ghost'"):
        validator.check(replaced)  # type: ignore[arg-type]
