"""The web app's chat: the AG-UI endpoint with the app's approval rules, what each reply
spent, and the stored thread read back for the page (its messages, its held calls)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from ag_ui.core import BaseEvent, CustomEvent
from starlette.requests import Request
from starlette.responses import JSONResponse

from yoagent.core import (
    Agent,
    AgentEnd,
    AgentEvent,
    AssistantMessage,
    MessageEnd,
    PendingApproval,
    PendingCall,
    SessionStats,
    Usage,
)
from yoagent.core.extension import MiddlewareLike
from yoagent.core.loop import AgentFactory
from yoagent.core.provider import cost_of, resolve_cost
from yoagent.ui._agui_app import AgUiEndpoint
from yoagent.ui._agui_messages import to_agui_messages
from yoagent.ui._store import ThreadStore

from ._approvals import WebApprovals

logger = logging.getLogger("yoagent.ui")

SPEND_EVENT = "yoagent.spend"
"""The ``CUSTOM`` event sent after each reply: its tokens, its cost, the context filled."""
RUN_SPEND_EVENT = "yoagent.run_spend"
"""The ``CUSTOM`` event sent when a run ends: what the whole run spent (delegated runs,
summaries and decision requests included)."""


def _usage_json(usage: Usage) -> dict[str, int]:
    return {
        "input": usage.input,
        "output": usage.output,
        "cacheRead": usage.cache_read,
        "cacheWrite": usage.cache_write,
    }


def run_total(stats: SessionStats) -> float | None:
    """What a run cost in all, delegated runs and side requests included; ``None`` when
    any of it was spent at an unknown price."""
    parts = [
        (stats.cost_usd, stats.usage),
        (stats.sub_agents.cost_usd, stats.sub_agents.usage),
        (stats.compaction.cost_usd, stats.compaction.usage),
        (stats.decision.cost_usd, stats.decision.usage),
    ]
    total = 0.0
    for cost, usage in parts:
        if cost is None:
            if not usage.is_zero():
                return None
            continue
        total += cost
    return round(total, 10)


class WebChat(AgUiEndpoint):
    """The AG-UI endpoint behind the page: the approval rules' ``hold`` added to every
    run's agent (for that run only), their ``denial`` for what the model reads, and a
    ``yoagent.spend`` event after each reply (``yoagent.run_spend`` at the end)."""

    def __init__(
        self, factory: AgentFactory, *, approvals: WebApprovals, store: ThreadStore | None
    ) -> None:
        super().__init__(factory, store=store)
        self.approvals = approvals

    def _tool_middleware(self) -> Sequence[MiddlewareLike]:
        hold = self.approvals.hold
        return () if hold is None else (hold,)

    def _denial(self, reason: str) -> str:
        return self.approvals.denial_text(reason)

    def _more_events(self, agent: Agent, event: AgentEvent) -> list[BaseEvent]:
        if isinstance(event, MessageEnd) and isinstance(event.message, AssistantMessage):
            usage = event.message.usage
            model = agent.model
            value = {
                "usage": _usage_json(usage),
                "costUsd": cost_of(usage, resolve_cost(model)),
                "contextTokens": usage.input + usage.cache_read + usage.cache_write,
                "contextWindow": model.context_window,
            }
            return [CustomEvent(name=SPEND_EVENT, value=value)]
        if isinstance(event, AgentEnd):
            stats = event.stats
            value = {
                "usage": _usage_json(stats.usage),
                "costUsd": run_total(stats),
                "turns": stats.turns,
            }
            return [CustomEvent(name=RUN_SPEND_EVENT, value=value)]
        return []

    async def thread(self, request: Request) -> JSONResponse:
        """``GET``: the thread's messages as AG-UI messages, the ones the page was shown
        (what it sends back with its next run), and whether a run is going on in it."""
        thread_id: str = request.path_params["thread_id"]
        running = self.locks.busy(thread_id)
        stored = await self.store.load(thread_id)
        if stored is None:
            return JSONResponse({"messages": [], "running": running})
        shown = [(m, key) for m, key in zip(stored.messages, stored.ids, strict=True) if key]
        converted = to_agui_messages([m for m, _ in shown], [key for _, key in shown])
        messages = [m.model_dump(mode="json", by_alias=True, exclude_none=True) for m in converted]
        return JSONResponse({"messages": messages, "running": running})

    async def held(self, request: Request) -> JSONResponse:
        """``GET``: the calls the thread's paused run holds, each with what it would change."""
        stored = await self.store.load(request.path_params["thread_id"])
        pending = PendingApproval.from_messages(stored.messages) if stored else None
        calls: list[dict[str, Any]] = []
        waiting: tuple[PendingCall, ...] = pending.calls if pending is not None else ()
        for call in waiting:
            if not call.needs_decision:
                continue
            arguments = call.arguments
            calls.append(
                {
                    "toolCallId": call.tool_call_id,
                    "toolName": call.tool_name,
                    "reason": call.reason,
                    "arguments": arguments,
                    "preview": await self._preview(call.tool_name, arguments),
                }
            )
        return JSONResponse({"calls": calls})

    async def _preview(self, tool_name: str, arguments: dict[str, Any]) -> list[str]:
        preview = self.approvals.preview
        if preview is None:
            return []
        try:
            return list(await preview(tool_name, arguments))
        except Exception as error:  # a preview is help, never a reason to fail the page
            logger.exception("the preview of a held %s call failed", tool_name)
            return [f"(no preview: {type(error).__name__})"]
