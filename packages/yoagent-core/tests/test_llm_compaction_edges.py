"""LlmCompaction at its edges: who a message is to it, the transcript it sends (cut at
its bound exactly), the request it makes, when it wants a span, when a summary covers one,
which replies become a summary, and what it logs when the summarizer fails."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import anyio
import pytest
from core_helpers import call, text_reply

from yoagent.core import (
    AssistantMessage,
    MockProvider,
    ModelConfig,
    StopReason,
    TextContent,
    ToolResultMessage,
    UserMessage,
)
from yoagent.core._context import llm_compaction
from yoagent.core._context.budget import ContextConfig
from yoagent.core._context.llm_compaction import (
    SUMMARY_INSTRUCTIONS,
    LlmCompaction,
    _fingerprint,  # pyright: ignore[reportPrivateUsage]
    render_transcript,
)
from yoagent.core._provider.protocol import DeltaSink, StreamConfig
from yoagent.core._types.errors import ErrorKind, ProviderError
from yoagent.core._types.messages import AgentMessage
from yoagent.core._types.stats import RunSpend, SessionStats


class Recording(MockProvider):
    def __init__(self, *replies: AssistantMessage | Exception) -> None:
        super().__init__(replies)
        self.configs: list[StreamConfig] = []

    async def stream(self, config: StreamConfig, sink: DeltaSink) -> AssistantMessage:
        self.configs.append(config)
        return await super().stream(config, sink)


def span() -> list[AgentMessage]:
    return [
        UserMessage.from_text("fix the bug"),
        AssistantMessage(content=[TextContent(text="looking"), call("read", "c1", path="a")]),
        ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="x")]),
    ]


async def summarize(
    compaction: LlmCompaction, messages: list[AgentMessage], spend: RunSpend | None = None
) -> None:
    async with anyio.create_task_group() as group:
        compaction.start(group, messages, spend or RunSpend(SessionStats()))


def test_a_reply_with_tool_calls_is_known_by_its_first_calls_id() -> None:
    message = AssistantMessage(content=[TextContent(text="t"), call("a", "c1"), call("b", "c2")])
    assert _fingerprint(message) == ("assistant", message.timestamp, "c1")


def test_a_reply_or_a_user_message_without_calls_is_known_by_its_texts_hash() -> None:
    reply = text_reply("done")
    user = UserMessage.from_text("go")
    assert _fingerprint(reply) == ("assistant", reply.timestamp, str(hash("done")))
    assert _fingerprint(user) == ("user", user.timestamp, str(hash("go")))


def test_a_message_as_long_as_the_bound_is_not_cut_and_a_longer_one_is() -> None:
    messages: list[AgentMessage] = [UserMessage.from_text("abcd"), UserMessage.from_text("abcde")]
    assert render_transcript(messages, 4) == "USER: abcd\nUSER: abcd […]"


def test_a_failed_tool_result_is_marked_as_an_error() -> None:
    failed = ToolResultMessage(
        tool_call_id="c", tool_name="bash", content=[TextContent(text="boom")], is_error=True
    )
    assert render_transcript([failed], 100) == "TOOL RESULT bash (error): boom"


def test_the_defaults_and_the_settings_kept() -> None:
    compaction = LlmCompaction(MockProvider(), ModelConfig.mock("m"))
    assert compaction.instructions == SUMMARY_INSTRUCTIONS
    assert compaction.max_tokens == 2_048
    assert compaction.max_chars_per_message == 2_000
    assert compaction.settle_timeout == 30.0
    set_up = LlmCompaction(
        MockProvider(),
        ModelConfig.mock("m"),
        instructions="be brief",
        max_tokens=7,
        settle_timeout=2.5,
    )
    assert (set_up.instructions, set_up.max_tokens, set_up.settle_timeout) == ("be brief", 7, 2.5)


@pytest.mark.parametrize("fraction", [0.0, 1.0000001, 1.5])
def test_a_start_fraction_outside_zero_to_one_is_refused(fraction: float) -> None:
    with pytest.raises(ValueError, match="start_fraction") as caught:
        LlmCompaction(MockProvider(), ModelConfig.mock("m"), start_fraction=fraction)
    assert str(caught.value) == f"start_fraction must be in (0, 1], got {fraction}"


def test_a_start_fraction_of_one_is_allowed() -> None:
    assert (
        LlmCompaction(MockProvider(), ModelConfig.mock("m"), start_fraction=1.0).start_fraction
        == 1.0
    )


async def test_the_request_carries_the_instructions_the_bound_and_the_transcript() -> None:
    provider = Recording(text_reply("- summary"))
    compaction = LlmCompaction(
        provider, ModelConfig.mock("m"), max_tokens=99, max_chars_per_message=3
    )
    messages = span()
    await summarize(compaction, messages)
    [config] = provider.configs
    assert config.system_prompt == SUMMARY_INSTRUCTIONS
    assert config.max_tokens == 99
    [message] = config.messages
    assert isinstance(message, UserMessage)
    assert message.text == render_transcript(messages, 3)


async def test_a_summary_covering_the_whole_span_is_used_for_it() -> None:
    compaction = LlmCompaction(Recording(text_reply("  - summary \n")), ModelConfig.mock("m"))
    messages = span()
    await summarize(compaction, messages)
    assert compaction.summarizer(messages) == ("- summary", 3)
    assert compaction.summarizer(messages[:2]) is None


@pytest.mark.parametrize("reason", [StopReason.ERROR, StopReason.ABORTED, StopReason.REFUSAL])
async def test_a_reply_that_did_not_end_well_is_no_summary(reason: StopReason) -> None:
    reply = AssistantMessage(content=[TextContent(text="- half")], stop_reason=reason)
    compaction = LlmCompaction(Recording(reply), ModelConfig.mock("m"))
    messages = span()
    await summarize(compaction, messages)
    assert compaction.summarizer(messages) is None


def span_of(monkeypatch: pytest.MonkeyPatch, start: int, end: int) -> None:
    def fixed(messages: Sequence[AgentMessage], config: ContextConfig) -> tuple[int, int]:
        return start, end

    monkeypatch.setattr(llm_compaction, "summary_span", fixed)


def test_a_span_is_wanted_from_the_start_fraction_of_the_budget_exactly(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    span_of(monkeypatch, 1, 3)
    config = ContextConfig(budget_tokens=1_000)
    messages = [*span(), UserMessage.from_text("next")]
    compaction = LlmCompaction(MockProvider(), ModelConfig.mock("m"), start_fraction=1.0)
    assert compaction.wanted(messages, config, config.budget()) == messages[1:3]
    assert compaction.wanted(messages, config, config.budget() - 1) is None
    half = LlmCompaction(MockProvider(), ModelConfig.mock("m"), start_fraction=0.5)
    assert half.wanted(messages, config, 10) is None


@pytest.mark.parametrize(("start", "end", "wanted"), [(1, 3, True), (2, 3, False), (3, 3, False)])
def test_a_span_of_two_messages_is_the_shortest_wanted(
    monkeypatch: pytest.MonkeyPatch, start: int, end: int, wanted: bool
) -> None:
    span_of(monkeypatch, start, end)
    config = ContextConfig(budget_tokens=1_000)
    messages = [*span(), UserMessage.from_text("next")]
    compaction = LlmCompaction(MockProvider(), ModelConfig.mock("m"))
    got = compaction.wanted(messages, config, config.budget())
    assert got == (messages[start:end] if wanted else None)


async def test_a_provider_error_is_logged_as_a_warning_with_its_text(
    caplog: pytest.LogCaptureFixture,
) -> None:
    compaction = LlmCompaction(
        Recording(ProviderError(ErrorKind.API, "summarizer down")), ModelConfig.mock("m")
    )
    with caplog.at_level(logging.WARNING, logger="yoagent.core"):
        await summarize(compaction, span())
    [record] = [r for r in caplog.records if r.name == "yoagent.core"]
    assert record.levelno == logging.WARNING
    assert record.getMessage() == "compaction summary failed: API: summarizer down"
    assert compaction.pending is False


async def test_a_broken_summarizer_is_logged_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    compaction = LlmCompaction(Recording(RuntimeError("bug")), ModelConfig.mock("m"))
    with caplog.at_level(logging.WARNING, logger="yoagent.core"):
        await summarize(compaction, span())
    [record] = [r for r in caplog.records if r.name == "yoagent.core"]
    assert record.levelno == logging.ERROR
    assert record.getMessage() == "compaction summary failed"
    assert record.exc_info is not None
