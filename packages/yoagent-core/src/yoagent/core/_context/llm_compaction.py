"""LlmCompaction: summaries of old turns written by a model, in the background.

As the history nears its budget, the loop starts a summary of the turns compaction would
summarize; when compaction happens and that summary is ready (and still matches the
history), it replaces the mechanical summary lines for the turns it covers. A summary not
ready in time costs nothing but its request: the mechanical summary is used instead.
"""

from __future__ import annotations

import json
import operator
from collections.abc import Sequence

import anyio
from anyio.abc import TaskGroup

from yoagent.core._logging import logger
from yoagent.core._provider.pricing import cost_of, resolve_cost
from yoagent.core._provider.protocol import StreamConfig, StreamProvider
from yoagent.core._types.config import ModelConfig
from yoagent.core._types.content import TextContent, ToolCall
from yoagent.core._types.errors import ProviderError
from yoagent.core._types.events import StreamDelta
from yoagent.core._types.messages import (
    AgentMessage,
    AssistantMessage,
    StopReason,
    ToolResultMessage,
    UserMessage,
)
from yoagent.core._types.stats import RunSpend

from .budget import ContextConfig
from .compaction import summary_span

SUMMARY_INSTRUCTIONS = (
    "You compress the early part of a coding agent's conversation so the agent can keep "
    "working without it. Write bullet lines starting with '- ': the user's task and "
    "requirements, decisions made, files read or changed and how, commands run and what "
    "they showed, facts learned, and what is still open. Be specific (paths, names, "
    "numbers); leave out chatter. No preamble, no closing remarks."
)


def _ignore(_: StreamDelta) -> None:
    return None


def _fingerprint(message: AgentMessage) -> tuple[str, int, str]:
    """Who a message is, surviving level 1's copies (which cut a tool output's text).

    A summary written by compaction takes the timestamp of the first message it replaces
    (often the previous summary), so user messages are told apart by their text too.
    """
    if isinstance(message, ToolResultMessage):
        return (message.role, message.timestamp, message.tool_call_id)
    if isinstance(message, AssistantMessage):
        calls = message.tool_calls
        return (message.role, message.timestamp, calls[0].id if calls else str(hash(message.text)))
    if isinstance(message, UserMessage):
        return (message.role, message.timestamp, str(hash(message.text)))
    return (message.role, message.timestamp, message.kind)


def render_transcript(messages: Sequence[AgentMessage], max_chars: int) -> str:
    """The span as plain text for the summarizer, each message cut to ``max_chars``."""

    def clip(text: str) -> str:
        return text if len(text) <= max_chars else text[:max_chars] + " […]"

    lines: list[str] = []
    for message in messages:
        if isinstance(message, UserMessage):
            lines.append(f"USER: {clip(message.text)}")
        elif isinstance(message, AssistantMessage):
            if message.text:
                lines.append(f"ASSISTANT: {clip(message.text)}")
            for block in message.content:
                if isinstance(block, ToolCall):
                    lines.append(f"TOOL CALL {block.name}: {clip(json.dumps(block.arguments))}")
        elif isinstance(message, ToolResultMessage):
            status = "error" if message.is_error else "ok"
            lines.append(f"TOOL RESULT {message.tool_name} ({status}): {clip(message.text)}")
    return "\n".join(lines)


class LlmCompaction:
    """Model-written summaries for level 2 compaction, requested ahead of need.

    ``start_fraction`` of the budget is when a summary is requested. Its spend goes into
    the run's ``SessionStats.compaction``, priced at ``model``'s rates. A request still
    running when the run ends is waited for up to ``settle_timeout`` seconds (so it is
    billed, and ready for the next run); past that it is cancelled and its spend unknown.
    """

    def __init__(
        self,
        provider: StreamProvider,
        model: ModelConfig,
        *,
        instructions: str = SUMMARY_INSTRUCTIONS,
        start_fraction: float = 0.8,
        max_tokens: int = 2_048,
        max_chars_per_message: int = 2_000,
        settle_timeout: float = 30.0,
    ) -> None:
        if not 0.0 < start_fraction <= 1.0:
            raise ValueError(f"start_fraction must be in (0, 1], got {start_fraction}")
        self.provider = provider
        self.model = model
        self.instructions = instructions
        self.start_fraction = start_fraction
        self.max_tokens = max_tokens
        self.max_chars_per_message = max_chars_per_message
        self.settle_timeout = settle_timeout
        self._pending: anyio.Event | None = None
        self._ready: tuple[list[tuple[str, int, str]], str] | None = None

    def summarizer(self, span: Sequence[AgentMessage]) -> tuple[str, int] | None:
        """Level 2's hook: the ready summary, if it covers the start of ``span``."""
        if self._ready is None:
            return None
        covered, text = self._ready
        if len(covered) <= len(span) and all(
            map(operator.eq, covered, map(_fingerprint, span[: len(covered)]))
        ):
            return text, len(covered)
        return None

    def wanted(
        self, messages: Sequence[AgentMessage], config: ContextConfig, estimate: int
    ) -> list[AgentMessage] | None:
        """The span to summarize now, or ``None``: not near the budget yet, a request is
        running, or a ready summary still matches the history (it will serve the next
        compaction; the turns after it get mechanical lines)."""
        if self._pending is not None or estimate < self.start_fraction * config.budget():
            return None
        start, end = summary_span(messages, config)
        if end - start < 2:
            return None
        span = list(messages[start:end])
        if self.summarizer(span) is not None:
            return None  # one summary per compaction: the ready one still fits this history
        return span

    @property
    def pending(self) -> bool:
        """True while a summary request is running."""
        return self._pending is not None

    async def wait(self) -> None:
        """Return once no summary request is running."""
        pending = self._pending
        if pending is not None:
            await pending.wait()

    def start(self, group: TaskGroup, span: list[AgentMessage], spend: RunSpend) -> None:
        """Request a summary of ``span`` in ``group`` (one request at a time); its spend is
        recorded in the run's ``spend`` ledger."""
        self._pending = anyio.Event()
        group.start_soon(self._summarize, span, spend)

    async def _summarize(self, span: list[AgentMessage], spend: RunSpend) -> None:
        try:
            request = StreamConfig(
                model=self.model,
                system_prompt=self.instructions,
                messages=[
                    UserMessage(
                        content=[
                            TextContent(text=render_transcript(span, self.max_chars_per_message))
                        ]
                    )
                ],
                max_tokens=self.max_tokens,
            )
            reply = await self.provider.stream(request, _ignore)
        except ProviderError as error:
            logger.warning("compaction summary failed: %s", error)
            return
        except Exception:  # a broken summarizer must not end the run: the mechanical one stays
            logger.exception("compaction summary failed")
            return
        finally:
            pending, self._pending = self._pending, None
            if pending is not None:
                pending.set()
        spend.record_compaction(reply.usage, cost_of(reply.usage, resolve_cost(self.model)))
        text = reply.text.strip()
        if reply.stop_reason in (StopReason.STOP, StopReason.LENGTH) and text:
            self._ready = ([_fingerprint(message) for message in span], text)
