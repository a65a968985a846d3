"""One front-end request's run, whatever the protocol: the agent built for it, the
front-end's tools, the history it continues, and the run driven to its outcome.

A front-end tool is one the client declares and runs itself (in the browser). The agent
gets a stand-in for it whose calls are deferred (``Defer``), so the run pauses on them
through the pause/resume contract; the client's next request carries the results, and the
run is resumed with ``Allow`` for those calls: the stand-in then returns the client's
result, which takes the held placeholder's place.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from yoagent.core import (
    Agent,
    AgentEnd,
    AgentEvent,
    AgentMessage,
    Allow,
    ApprovalDecision,
    Defer,
    RunFailedError,
    ToolCallRequest,
    ToolContext,
    ToolDecision,
    ToolError,
    ToolResult,
)

from ._outcome import Outcome, outcome_of

logger = logging.getLogger("yoagent.ui")

AgentFactory = Callable[[], Agent | Awaitable[Agent]]
"""Builds a fresh agent (model, system prompt, tools, settings) for one request; the
endpoint gives it the thread's history."""

FRONTEND_REASON = "runs in the front-end: waiting for the client's result"
"""The reason a front-end tool's call is held (``PendingCall.reason``)."""


@dataclass(slots=True, kw_only=True, frozen=True)
class ClientResult:
    """A front-end tool's result as the client sent it."""

    content: ToolResult
    error: str | None = None


class FrontendTool:
    """A tool the client declared and runs itself: its calls wait for the client's result."""

    __slots__ = ("description", "name", "parameters", "results")

    def __init__(
        self,
        name: str,
        description: str,
        parameters: dict[str, Any] | None,
        results: Mapping[str, ClientResult],
    ) -> None:
        self.name = name
        self.description = description
        self.parameters: dict[str, Any] = parameters or {"type": "object", "properties": {}}
        self.results = results
        """The client's results, by call id (shared by every stand-in of a request)."""

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        result = self.results.get(ctx.tool_call_id)
        if result is None:  # only reached when a hook allowed the call without a result
            raise ToolError(f"{self.name} runs in the front-end and the client sent no result")
        if result.error is not None:
            raise ToolError(result.error)
        return result.content


def frontend_middleware(
    names: frozenset[str], results: Mapping[str, ClientResult]
) -> Callable[[ToolCallRequest], ToolDecision]:
    """Tool middleware holding every call of a front-end tool the client has not answered."""

    def hold(request: ToolCallRequest) -> ToolDecision:
        if request.tool_name in names and request.tool_call_id not in results:
            return Defer(FRONTEND_REASON)
        return Allow()

    return hold


async def build_agent(
    factory: AgentFactory,
    history: Sequence[AgentMessage],
    *,
    frontend: Sequence[FrontendTool] = (),
    notes: Sequence[str] = (),
) -> Agent:
    """The factory's agent on ``history``, with the front-end's tools (a tool of the
    agent's own keeps its name: the client's of the same name is left out) and ``notes``
    added to its system prompt."""
    made = factory()
    agent = await made if inspect.isawaitable(made) else made
    if not isinstance(cast(object, agent), Agent):
        raise TypeError(f"the agent factory returned {type(agent).__name__}, not an Agent")
    agent.replace_messages(history)
    own = {tool.name for tool in agent.tools}
    added = [tool for tool in frontend if tool.name not in own]
    if added:
        agent.tools = [*agent.tools, *added]
        names = frozenset(tool.name for tool in added)
        results = added[0].results
        middleware = (*agent.settings.tool_middleware, frontend_middleware(names, results))
        agent.settings = agent.settings.replace(tool_middleware=middleware)
    extra = "\n\n".join(note for note in notes if note)
    if extra:
        agent.system_prompt = f"{agent.system_prompt}\n\n{extra}" if agent.system_prompt else extra
    return agent


@dataclass(slots=True, kw_only=True)
class RunPlan:
    """What a request asks of its thread: run on new ``prompt`` messages (none: go on from
    the history, which ends on a user message or tool results), or resume held calls with
    ``decisions`` (then the ``follow_ups`` the client sent after its answers)."""

    prompt: list[AgentMessage] = field(default_factory=list[AgentMessage])
    decisions: dict[str, ApprovalDecision] | None = None
    follow_ups: list[AgentMessage] = field(default_factory=list[AgentMessage])


async def drive(
    agent: Agent, plan: RunPlan, on_event: Callable[[AgentEvent], Awaitable[None]]
) -> Outcome:
    """Run ``plan`` on ``agent``, handing each event to ``on_event``; the run's outcome."""
    added: list[AgentMessage] = []
    if plan.decisions is not None:
        for message in plan.follow_ups:
            agent.follow_up(message)
        stream = agent.stream_resume(plan.decisions)
    elif plan.prompt:
        stream = agent.stream(plan.prompt)
    else:
        stream = agent.stream_continue()
    try:
        async with stream as events:
            async for event in events:
                if isinstance(event, AgentEnd):
                    added = list(event.messages)
                await on_event(event)
    except RunFailedError as failure:
        added = added or failure.messages
    return outcome_of(agent.last_outcome, added)
