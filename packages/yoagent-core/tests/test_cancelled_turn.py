"""A cancelled turn keeps what it produced: the text that streamed before the cancel is in
the history and in the next request, so the next prompt is its own user turn, after it."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from core_helpers import call, text_reply

from yoagent.core import (
    Agent,
    AgentEvent,
    AssistantMessage,
    ErrorKind,
    MockProvider,
    MockReply,
    ModelConfig,
    ProviderError,
    RetryConfig,
    RunFailedError,
    StopReason,
    TextContent,
    ThinkingContent,
    UserMessage,
)
from yoagent.core.context import context_messages
from yoagent.core.extension import CANCELLED_MARKER


def aborting_after(agent: Agent, deltas: int, seen: list[str]) -> Any:
    """An event sink that aborts ``agent`` once ``deltas`` text deltas have streamed."""

    def on_event(event: AgentEvent) -> None:
        if event.type == "message_update" and event.delta.type == "text_delta":
            seen.append(event.delta.delta)
            if len(seen) == deltas:
                agent.abort()

    return on_event


async def test_the_next_prompt_follows_the_text_a_cancelled_turn_streamed() -> None:
    slow = MockReply(
        message=text_reply("The answer is forty-two, because"), delay=0.01, chunk_size=4
    )
    provider = MockProvider([slow, text_reply("as I was saying")])
    agent = Agent.from_provider(provider, ModelConfig.mock())
    seen: list[str] = []
    with anyio.fail_after(5):
        await agent.prompt("what is the answer?", on_event=aborting_after(agent, 3, seen))
        await agent.prompt("go on")

    sent = provider.requests[1].messages
    assert [m.role for m in sent] == ["user", "assistant", "user", "user"]
    streamed = sent[1]
    assert isinstance(streamed, AssistantMessage)
    assert streamed.text == "".join(seen) == "The answer i"
    assert [m.text for m in sent if isinstance(m, UserMessage)] == [
        "what is the answer?",
        CANCELLED_MARKER,
        "go on",
    ]


async def test_a_cancelled_turn_sends_its_text_only() -> None:
    """Streamed reasoning has no signature yet and a half-built call never ran: neither is
    sent again. A cancelled reply with no text is left out, as before."""
    aborted = AssistantMessage(
        content=[
            ThinkingContent(thinking="let me think"),
            TextContent(text="Partial"),
            TextContent(text=""),
            call("look", path="."),
        ],
        stop_reason=StopReason.ABORTED,
        error_message="cancelled",
    )
    silent = AssistantMessage(
        content=[ThinkingContent(thinking="hmm")], stop_reason=StopReason.ABORTED
    )
    history = [UserMessage.from_text("a"), aborted, UserMessage.from_text("b"), silent]
    sent = context_messages(history)
    assert [m.role for m in sent] == ["user", "assistant", "user"]
    kept = sent[1]
    assert isinstance(kept, AssistantMessage)
    assert kept.content == [TextContent(text="Partial")]
    assert aborted.content[0] == ThinkingContent(thinking="let me think")  # history untouched


async def test_a_failed_turn_is_still_left_out_so_continue_retries_it() -> None:
    """A reply that failed (retries used up) is not sent: ``continue_`` asks again."""
    failing = MockReply(
        message=text_reply("half an ans"),
        error=ProviderError(ErrorKind.NETWORK, "connection reset"),
        fail_after=1,
    )
    provider = MockProvider([failing, text_reply("a whole answer")])
    agent = Agent.from_provider(provider, ModelConfig.mock(), retry=RetryConfig.none())
    with pytest.raises(RunFailedError):
        await agent.prompt("question")
    await agent.continue_()
    assert [m.role for m in provider.requests[1].messages] == ["user"]
    assert agent.messages[-1].text == "a whole answer"  # type: ignore[union-attr]
