"""yoagent events as AG-UI events: one translator per run.

A reply streams as one AG-UI assistant message: its text as ``TEXT_MESSAGE_*``, its tool
calls as ``TOOL_CALL_*`` under it (``parentMessageId``), its reasoning as ``REASONING_*``
with a message of its own. A tool's result is ``TOOL_CALL_RESULT``; a held call gets none
(the front-end answers it, or the run's interrupt names it). A sub-agent's events come
between ``SUBAGENT_STARTED`` and ``SUBAGENT_FINISHED`` (or ``SUBAGENT_ERROR``), each
attributed to it by ``subagentRunId``. Tool progress goes out as ``CUSTOM`` events named
``yoagent.progress`` and ``yoagent.tool_update``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ag_ui.core import (
    BaseEvent,
    CustomEvent,
    ReasoningEncryptedValueEvent,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    SubagentErrorEvent,
    SubagentFinishedEvent,
    SubagentStartedEvent,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from yoagent.core import (
    AgentEnd,
    AgentEvent,
    AgentMessage,
    AssistantMessage,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ProgressMessage,
    SubAgentEvent,
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
)
from yoagent.core.extension import HELD_RESULT
from yoagent.core.provider import StreamDelta

from ._agui_messages import to_agui_messages
from ._endpoint import new_id
from ._outcome import outcome_of


def is_held(result: ToolResultMessage) -> bool:
    """Whether ``result`` is a held call's placeholder, not a result."""
    details = result.details
    return (
        result.is_error
        and result.text == HELD_RESULT
        and isinstance(details, dict)
        and "pending_approval" in details
    )


@dataclass(slots=True)
class _Reply:
    """The reply streaming now: its id and what of it is open."""

    message_id: str
    text_open: bool = False
    reasoning_id: str | None = None
    reasoning_count: int = 0
    calls_open: list[str] = field(default_factory=list[str])
    calls_seen: set[str] = field(default_factory=set[str])
    streamed: set[int] = field(default_factory=set[int])


class AguiTranslator:
    """Turns one run's events (at one depth) into AG-UI events, and remembers the AG-UI
    id it gave each message the run added (:attr:`ids`, by message identity)."""

    def __init__(
        self, subagent_run_id: str | None = None, *, client_results: dict[str, str] | None = None
    ) -> None:
        self._attribution = subagent_run_id
        self._client_results = client_results or {}
        self._reply: _Reply | None = None
        self.ids: dict[int, str] = {}
        """The AG-UI id of each message this run added, keyed by ``id(message)``."""
        self._children: dict[str, tuple[str, AguiTranslator]] = {}
        self._parents: dict[str, str] = {}  # tool call id -> the message that holds it

    def _tag(self, event: BaseEvent) -> BaseEvent:
        if self._attribution is not None:
            event.subagent_run_id = self._attribution  # type: ignore[attr-defined]
        return event

    def events(self, event: AgentEvent) -> list[BaseEvent]:
        """The AG-UI events for one yoagent event."""
        out: list[BaseEvent] = []
        if isinstance(event, MessageStart) and isinstance(event.message, AssistantMessage):
            self._reply = _Reply(message_id=new_id())
        elif isinstance(event, MessageUpdate):
            self._delta(event, out)
        elif isinstance(event, MessageEnd):
            self._message_end(event.message, out)
        elif isinstance(event, ToolExecutionEnd):
            self._result(event.result, out)
        elif isinstance(event, ProgressMessage):
            out.append(
                CustomEvent(
                    name="yoagent.progress",
                    value={"toolCallId": event.tool_call_id, "text": event.text},
                )
            )
        elif isinstance(event, ToolExecutionUpdate):
            text = "\n".join(b.text for b in event.content if isinstance(b, TextContent))
            out.append(
                CustomEvent(
                    name="yoagent.tool_update",
                    value={"toolCallId": event.tool_call_id, "text": text},
                )
            )
        elif isinstance(event, SubAgentEvent):
            self._sub_agent(event, out)
        elif isinstance(event, ToolExecutionStart):
            pass  # the call itself went out with the reply
        return [self._tag(item) for item in out]

    # --- replies -------------------------------------------------------------------------

    def _delta(self, event: MessageUpdate, out: list[BaseEvent]) -> None:
        reply = self._reply
        if reply is None:
            reply = self._reply = _Reply(message_id=new_id())
        delta = event.delta
        if isinstance(delta, TextDelta):
            self._close_reasoning(reply, out)
            reply.streamed.add(delta.content_index)
            if not delta.delta:
                return
            if not reply.text_open:
                out.append(TextMessageStartEvent(message_id=reply.message_id, role="assistant"))
                reply.text_open = True
            out.append(TextMessageContentEvent(message_id=reply.message_id, delta=delta.delta))
        elif isinstance(delta, ThinkingDelta):
            reply.streamed.add(delta.content_index)
            if not delta.delta:
                return
            if reply.reasoning_id is None:
                reply.reasoning_id = f"{reply.message_id}.reasoning.{reply.reasoning_count}"
                reply.reasoning_count += 1
                out.append(ReasoningStartEvent(message_id=reply.reasoning_id))
                out.append(ReasoningMessageStartEvent(message_id=reply.reasoning_id))
            out.append(
                ReasoningMessageContentEvent(message_id=reply.reasoning_id, delta=delta.delta)
            )
        else:
            self._call_delta(reply, delta, out)

    def _call_delta(self, reply: _Reply, delta: ToolCallDelta, out: list[BaseEvent]) -> None:
        self._close_reasoning(reply, out)
        reply.streamed.add(delta.content_index)
        if delta.id not in reply.calls_seen:
            reply.calls_seen.add(delta.id)
            reply.calls_open.append(delta.id)
            self._parents[delta.id] = reply.message_id
            out.append(
                ToolCallStartEvent(
                    tool_call_id=delta.id,
                    tool_call_name=delta.name,
                    parent_message_id=reply.message_id,
                )
            )
        if delta.delta:
            out.append(ToolCallArgsEvent(tool_call_id=delta.id, delta=delta.delta))

    def _close_reasoning(self, reply: _Reply, out: list[BaseEvent]) -> None:
        if reply.reasoning_id is not None:
            out.append(ReasoningMessageEndEvent(message_id=reply.reasoning_id))
            out.append(ReasoningEndEvent(message_id=reply.reasoning_id))
            reply.reasoning_id = None

    def _message_end(self, message: AgentMessage, out: list[BaseEvent]) -> None:
        if not isinstance(message, AssistantMessage):
            return
        reply = self._reply = self._reply or _Reply(message_id=new_id())
        # What the provider did not stream (one that sends whole replies) goes out as if
        # it had been streamed in one piece.
        for index, block in enumerate(message.content):
            delta: StreamDelta | None = None
            if index in reply.streamed:
                continue
            if isinstance(block, TextContent):
                delta = TextDelta(content_index=index, delta=block.text)
            elif isinstance(block, ThinkingContent):
                delta = ThinkingDelta(content_index=index, delta=block.thinking)
            elif isinstance(block, ToolCall) and block.id not in reply.calls_seen:
                arguments = json.dumps(block.arguments)
                delta = ToolCallDelta(
                    content_index=index, id=block.id, name=block.name, delta=arguments
                )
            if delta is not None:
                self._delta(MessageUpdate(delta=delta), out)
        self._reply = None
        self._close_reasoning(reply, out)
        for block in message.content:
            if isinstance(block, ThinkingContent) and block.redacted:
                out.append(
                    ReasoningEncryptedValueEvent(
                        subtype="message",
                        entity_id=reply.message_id,
                        encrypted_value=block.redacted,
                    )
                )
        if reply.text_open:
            out.append(TextMessageEndEvent(message_id=reply.message_id))
        for call_id in reply.calls_open:
            out.append(ToolCallEndEvent(tool_call_id=call_id))
        self.ids[id(message)] = reply.message_id

    def _result(self, result: ToolResultMessage, out: list[BaseEvent]) -> None:
        if is_held(result):
            self.ids[id(result)] = ""  # the client never sees a placeholder
            return
        if result.tool_call_id in self._client_results:  # the client's own result
            self.ids[id(result)] = self._client_results[result.tool_call_id]
            return
        message_id = new_id()
        self.ids[id(result)] = message_id
        (converted,) = to_agui_messages([result], [message_id])
        out.append(
            ToolCallResultEvent(
                message_id=message_id,
                tool_call_id=result.tool_call_id,
                content=converted.content,  # type: ignore[union-attr]
                role="tool",
            )
        )

    # --- sub-agents -----------------------------------------------------------------------

    def _sub_agent(self, event: SubAgentEvent, out: list[BaseEvent]) -> None:
        """A delegated run's event. Its own events are translated by a translator of its
        own, whose events carry its ``subagentRunId``; deeper delegations reach it in turn."""
        child = self._children.get(event.tool_call_id)
        if child is None:
            run_id = new_id()
            translator = AguiTranslator(run_id)
            child = self._children[event.tool_call_id] = (run_id, translator)
            out.append(
                self._tag(
                    SubagentStartedEvent(
                        subagent_run_id=run_id,
                        name=event.tool_name,
                        parent_tool_call_id=event.tool_call_id,
                        parent_message_id=self._parents.get(event.tool_call_id),
                        parent_subagent_run_id=self._attribution,
                    )
                )
            )
        run_id, translator = child
        inner = event.event
        out.extend(translator.events(inner))
        if isinstance(inner, AgentEnd):
            ended = outcome_of(inner.outcome, inner.messages)
            if ended.kind == "failed":
                out.append(
                    self._tag(
                        SubagentErrorEvent(
                            subagent_run_id=run_id,
                            message=ended.text,
                            code=ended.error_kind.value if ended.error_kind else None,
                        )
                    )
                )
            else:
                out.append(self._tag(SubagentFinishedEvent(subagent_run_id=run_id)))
            del self._children[event.tool_call_id]

    def close_open(self) -> list[BaseEvent]:
        """End what a run cut short left open (a reply that never ended)."""
        out: list[BaseEvent] = []
        reply = self._reply
        if reply is not None:
            self._close_reasoning(reply, out)
            if reply.text_open:
                out.append(TextMessageEndEvent(message_id=reply.message_id))
            for call_id in reply.calls_open:
                out.append(ToolCallEndEvent(tool_call_id=call_id))
            self._reply = None
        return out
