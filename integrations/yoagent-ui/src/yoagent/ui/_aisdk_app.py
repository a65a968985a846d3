"""The AI SDK endpoint: ``useChat``'s request in, the run out as a UI message stream."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from anyio.streams.memory import MemoryObjectSendStream

from yoagent.core import (
    AgentEvent,
    AgentMessage,
    Allow,
    ApprovalDecision,
    AssistantMessage,
    Deny,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    PendingApproval,
    ProgressMessage,
    TextContent,
    TextDelta,
    ThinkingContent,
    ThinkingDelta,
    ToolCall,
    ToolExecutionEnd,
    ToolResultMessage,
    TurnEnd,
    TurnStart,
    UserMessage,
)

from ._agui_events import is_held
from ._agui_messages import system_notes
from ._aisdk_messages import UiMessage, from_ui_message, tool_name_of
from ._endpoint import PreparedRun, RunEndpoint, new_id
from ._errors import BadRunInputError
from ._outcome import Outcome
from ._run import LentAgent, RunPlan, build_agent, drive
from ._store import StoredThread, continues, prompt_start

UI_MESSAGE_STREAM_HEADERS = {
    "content-type": "text/event-stream",
    "cache-control": "no-cache",
    "connection": "keep-alive",
    "x-vercel-ai-ui-message-stream": "v1",
    "x-accel-buffering": "no",
}
"""The headers of a UI message stream, as the ``ai`` package sends them."""

DENIED_PREFIX = "Tool call denied: "


@dataclass(slots=True, kw_only=True)
class ChatRequest:
    """What ``useChat`` (the ``ai`` package's ``DefaultChatTransport``) posts."""

    chat_id: str
    messages: list[UiMessage]
    trigger: str = "submit-message"


def _chat_request(body: Any) -> ChatRequest:
    if not isinstance(body, dict):
        raise BadRunInputError("not an AI SDK chat request: the body must be a JSON object")
    record = cast("dict[str, Any]", body)
    chat_id, messages = record.get("id"), record.get("messages")
    if not isinstance(chat_id, str) or not chat_id:
        raise BadRunInputError("not an AI SDK chat request: 'id' (the chat's id) is missing")
    if not isinstance(messages, list):
        raise BadRunInputError("not an AI SDK chat request: 'messages' must be a list")
    for index, message in enumerate(cast("list[Any]", messages)):
        if not isinstance(message, dict) or not isinstance(
            cast("dict[str, Any]", message).get("id"), str
        ):
            raise BadRunInputError(f"messages[{index}]: a UI message needs an 'id'")
    return ChatRequest(
        chat_id=chat_id,
        messages=cast("list[UiMessage]", messages),
        trigger=str(record.get("trigger", "submit-message")),
    )


class AiSdkEndpoint(RunEndpoint):
    """An endpoint for the Vercel AI SDK's ``useChat`` (``DefaultChatTransport``): an ASGI
    app answering ``POST`` with the chat's messages by streaming the run as a UI message
    stream (Server-Sent Events with the ``x-vercel-ai-ui-message-stream: v1`` header).

    The chat's id is the thread; its history is kept in ``store``. A call held for approval
    is a ``tool-approval-request`` part; the client's ``addToolApprovalResponse`` and the
    next request resume the run. Usage goes out as the finish part's ``messageMetadata``.
    Errors and limits as for :class:`AgUiEndpoint`.
    """

    def _parse(self, body: Any) -> tuple[str, ChatRequest]:
        chat = _chat_request(body)
        return chat.chat_id, chat

    async def _prepare(self, request: Any, stored: StoredThread) -> PreparedRun:
        chat = cast(ChatRequest, request)
        sent_ids = [str(message["id"]) for message in chat.messages]
        consumed = continues(stored.ids, sent_ids)
        plan = RunPlan()
        message_id = new_id()
        if consumed is None:  # a history the server does not hold: the client's is taken
            history, ids = _convert(chat.messages)
            known = {id(m): key for m, key in zip(history, ids, strict=True)}
            cut = prompt_start(history)
            history, plan = history[:cut], RunPlan(prompt=history[cut:])
        else:
            history = stored.messages
            known = {id(m): key for m, key in zip(history, stored.ids, strict=True)}
            tail, tail_ids = _convert(chat.messages[consumed:])
            known |= {id(m): key for m, key in zip(tail, tail_ids, strict=True)}
            pending = PendingApproval.from_messages(history)
            answered = chat.messages[consumed - 1] if consumed else None
            decisions = _approvals(pending, answered)
            if decisions:
                plan = RunPlan(decisions=decisions, follow_ups=tail)
                message_id = str(answered["id"]) if answered else message_id
            else:
                plan = RunPlan(prompt=tail)
        if plan.decisions is None and not _runnable([*history, *plan.prompt]):
            raise BadRunInputError("nothing to run: the last message is the assistant's")
        lent = await build_agent(
            self.factory, history, notes=system_notes([*history, *plan.prompt])
        )
        return _AiSdkRun(
            thread_id=chat.chat_id, lent=lent, plan=plan, known_ids=known, message_id=message_id
        )


def _convert(messages: Sequence[UiMessage]) -> tuple[list[AgentMessage], list[str]]:
    out: list[AgentMessage] = []
    ids: list[str] = []
    for index, message in enumerate(messages):
        made = from_ui_message(message, f"messages[{index}]")
        out.extend(made)
        ids.extend([str(message["id"])] * len(made))
    return out, ids


def _runnable(history: Sequence[AgentMessage]) -> bool:
    for message in reversed(history):
        if isinstance(message, UserMessage | ToolResultMessage):
            return True
        if isinstance(message, AssistantMessage):
            return False
    return False


def _approvals(
    pending: PendingApproval | None, message: UiMessage | None
) -> dict[str, ApprovalDecision]:
    """The decisions a resent assistant message carries: its tool parts the client answered
    (``approval-responded``) for calls the thread holds."""
    if pending is None or message is None or message.get("role") != "assistant":
        return {}
    decisions: dict[str, ApprovalDecision] = {}
    held = set(pending.call_ids)
    for part in cast("list[dict[str, Any]]", message.get("parts") or []):
        if tool_name_of(part) is None or part.get("state") != "approval-responded":
            continue
        call_id = part.get("toolCallId")
        if call_id not in held:
            continue
        approval = cast("dict[str, Any]", part.get("approval") or {})
        if approval.get("approved") is True:
            decisions[str(call_id)] = Allow()
        else:
            decisions[str(call_id)] = Deny(str(approval.get("reason") or "denied by the user"))
    if decisions:
        missing = [
            c.tool_call_id
            for c in pending.calls
            if c.needs_decision and c.tool_call_id not in decisions
        ]
        if missing:
            raise BadRunInputError(f"the held calls {missing} have no approval response")
    return decisions


@dataclass(slots=True)
class _Reply:
    index: int
    open_text: set[int] = field(default_factory=set[int])
    open_reasoning: set[int] = field(default_factory=set[int])
    started_calls: set[str] = field(default_factory=set[str])
    streamed: set[int] = field(default_factory=set[int])


class _AiSdkRun(PreparedRun):
    """One prepared run: its events as UI message stream parts."""

    headers = UI_MESSAGE_STREAM_HEADERS

    def __init__(
        self,
        *,
        thread_id: str,
        lent: LentAgent,
        plan: RunPlan,
        known_ids: dict[int, str],
        message_id: str,
    ) -> None:
        super().__init__(thread_id=thread_id, lent=lent, known_ids=known_ids)
        self.plan = plan
        self.message_id = message_id
        self.fallback_id = message_id
        self._ids: dict[int, str] = {}
        self._reply: _Reply | None = None
        self._replies = 0

    def new_ids(self) -> dict[int, str]:
        return self._ids

    async def stream(self, out: MemoryObjectSendStream[bytes]) -> None:
        async def emit(*parts: dict[str, Any]) -> None:
            for part in parts:
                await out.send(b"data: " + json.dumps(part).encode() + b"\n\n")

        await emit({"type": "start", "messageId": self.message_id})
        try:

            async def on_event(event: AgentEvent) -> None:
                await emit(*self._parts(event))

            outcome = await drive(self.lent, self.plan, on_event)
        except Exception as error:  # a bug or a failing hook: the stream says so
            await emit(
                {"type": "error", "errorText": f"the run failed: {type(error).__name__}"},
                {"type": "finish", "finishReason": "error"},
            )
        else:
            await emit(*self._finish(outcome))
        await out.send(b"data: [DONE]\n\n")

    def _block_id(self, index: int) -> str:
        assert self._reply is not None
        return f"{self.message_id}-{self._reply.index}-{index}"

    def _parts(self, event: AgentEvent) -> list[dict[str, Any]]:
        if isinstance(event, TurnStart):
            return [{"type": "start-step"}]
        if isinstance(event, TurnEnd):
            return [{"type": "finish-step"}]
        if isinstance(event, MessageStart) and isinstance(event.message, AssistantMessage):
            self._replies += 1
            self._reply = _Reply(index=self._replies)
            return []
        if isinstance(event, MessageUpdate) and self._reply is not None:
            return self._delta(event, self._reply)
        if isinstance(event, MessageEnd) and isinstance(event.message, AssistantMessage):
            return self._reply_end(event.message)
        if isinstance(event, ToolExecutionEnd):
            return self._result(event.result)
        if isinstance(event, ProgressMessage):
            data = {"toolCallId": event.tool_call_id, "text": event.text}
            return [{"type": "data-yoagent-progress", "data": data, "transient": True}]
        return []

    def _delta(self, event: MessageUpdate, reply: _Reply) -> list[dict[str, Any]]:
        delta = event.delta
        index = delta.content_index
        reply.streamed.add(index)
        key = self._block_id(index)
        parts: list[dict[str, Any]] = []
        if isinstance(delta, TextDelta):
            if index not in reply.open_text:
                reply.open_text.add(index)
                parts.append({"type": "text-start", "id": key})
            parts.append({"type": "text-delta", "id": key, "delta": delta.delta})
        elif isinstance(delta, ThinkingDelta):
            if index not in reply.open_reasoning:
                reply.open_reasoning.add(index)
                parts.append({"type": "reasoning-start", "id": key})
            parts.append({"type": "reasoning-delta", "id": key, "delta": delta.delta})
        else:
            if delta.id not in reply.started_calls:
                reply.started_calls.add(delta.id)
                parts.append(
                    {"type": "tool-input-start", "toolCallId": delta.id, "toolName": delta.name}
                )
            if delta.delta:
                parts.append(
                    {
                        "type": "tool-input-delta",
                        "toolCallId": delta.id,
                        "inputTextDelta": delta.delta,
                    }
                )
        return parts

    def _reply_end(self, message: AssistantMessage) -> list[dict[str, Any]]:
        reply = self._reply or _Reply(index=self._replies + 1)
        self._reply = reply
        parts: list[dict[str, Any]] = []
        for index, block in enumerate(message.content):
            key = self._block_id(index)
            if isinstance(block, TextContent):
                if index not in reply.streamed:
                    parts.append({"type": "text-start", "id": key})
                    parts.append({"type": "text-delta", "id": key, "delta": block.text})
                parts.append({"type": "text-end", "id": key})
            elif isinstance(block, ThinkingContent):
                if index not in reply.streamed:
                    parts.append({"type": "reasoning-start", "id": key})
                    parts.append({"type": "reasoning-delta", "id": key, "delta": block.thinking})
                parts.append({"type": "reasoning-end", "id": key})
            elif isinstance(block, ToolCall):
                parts.append(
                    {
                        "type": "tool-input-available",
                        "toolCallId": block.id,
                        "toolName": block.name,
                        "input": block.arguments,
                    }
                )
        self._ids[id(message)] = self.message_id
        self._reply = None
        return parts

    def _result(self, result: ToolResultMessage) -> list[dict[str, Any]]:
        self._ids[id(result)] = self.message_id
        call_id = result.tool_call_id
        if is_held(result):
            return [{"type": "tool-approval-request", "approvalId": call_id, "toolCallId": call_id}]
        if result.is_error and result.text.startswith(DENIED_PREFIX):
            return [{"type": "tool-output-denied", "toolCallId": call_id}]
        if result.is_error:
            return [{"type": "tool-output-error", "toolCallId": call_id, "errorText": result.text}]
        return [{"type": "tool-output-available", "toolCallId": call_id, "output": result.text}]

    def _finish(self, outcome: Outcome) -> list[dict[str, Any]]:
        usage = outcome.usage
        prompt = usage.input + usage.cache_read + usage.cache_write
        metadata = {
            "usage": {
                "inputTokens": prompt,
                "outputTokens": usage.output,
                "totalTokens": prompt + usage.output,
                "cachedInputTokens": usage.cache_read,
            }
        }
        if outcome.kind in ("failed", "rejected"):
            return [
                {"type": "error", "errorText": outcome.text},
                {"type": "finish", "finishReason": "error", "messageMetadata": metadata},
            ]
        if outcome.kind == "cancelled":
            return [{"type": "abort", "reason": outcome.text}]
        reason = {"completed": "stop", "paused": "tool-calls", "stopped": "length"}[outcome.kind]
        return [{"type": "finish", "finishReason": reason, "messageMetadata": metadata}]
