"""One front-end request's run, whatever the protocol: the agent built for it, the
front-end's tools, the history it continues, and the run driven to its outcome.

A front-end tool is one the client declares and runs itself (in the browser). The agent
gets a stand-in for it whose calls are deferred (``Defer``), so the run pauses on them
through the pause/resume contract; the client's next request carries the results, and the
run is resumed with ``Allow`` for those calls: the stand-in then returns the client's
result, which takes the held placeholder's place.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from yoagent.core import (
    Agent,
    AgentBusyError,
    AgentEnd,
    AgentEvent,
    AgentMessage,
    AgentStart,
    Allow,
    ApprovalDecision,
    Defer,
    ResumeError,
    RunFailedError,
    RunStream,
    ToolCallRequest,
    ToolContext,
    ToolDecision,
    ToolError,
    ToolResult,
    Usage,
)
from yoagent.core.extension import MiddlewareLike
from yoagent.core.loop import AgentFactory, agent_from

from ._outcome import Outcome, outcome_of

logger = logging.getLogger("yoagent.ui")

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


BUSY = "the agent is in use by another conversation: nothing was run"
"""What a run that could not start on its own thread's history reports."""


class LentAgent:
    """The agent of one request's run, lent to it: the per-run changes made to it (tools,
    tool middleware, system prompt) are undone by :meth:`restore`, and its run goes on
    only if it starts on the history it was given while its client is still there."""

    __slots__ = ("_saved", "agent", "began", "gone", "history")

    def __init__(self, agent: Agent, history: Sequence[AgentMessage]) -> None:
        self.agent = agent
        self.history = list(history)
        self._saved = (agent.tools, agent.settings, agent.system_prompt)
        self.began = False
        """The run started, on this history: what it leaves may be stored as the thread."""
        self.gone = False
        """The client went away: the run stops, or never gets past its start."""

    def restore(self) -> None:
        """Undo the per-run changes (the agent may serve other requests)."""
        self.agent.tools, self.agent.settings, self.agent.system_prompt = self._saved

    def client_left(self) -> None:
        """The client hung up: stop the run, now or as it starts."""
        self.gone = True
        self.agent.abort()

    def starting(self) -> None:
        """At the run's first event, in the run's own task (before any prompt is taken or
        the model asked): stop it when its client left, or when the agent holds another
        history than the one it was prepared on (another request replaced it)."""
        messages = self.agent.messages
        own = len(messages) >= len(self.history) and all(
            found is kept for found, kept in zip(messages, self.history, strict=False)
        )
        self.began = own
        if self.gone or not own:
            self.agent.abort()


async def build_agent(
    factory: AgentFactory,
    history: Sequence[AgentMessage],
    *,
    frontend: Sequence[FrontendTool] = (),
    middleware: Sequence[MiddlewareLike] = (),
    notes: Sequence[str] = (),
) -> LentAgent:
    """The factory's agent on ``history``, with ``middleware`` after its own, the
    front-end's tools (a tool of the agent's own keeps its name: the client's of the same
    name is left out) and ``notes`` added to its system prompt — changes the returned
    :class:`LentAgent` undoes after the run."""
    agent = await agent_from(factory)
    agent.replace_messages(history)
    lent = LentAgent(agent, history)
    own = {tool.name for tool in agent.tools}
    added = [tool for tool in frontend if tool.name not in own]
    extra = list(middleware)
    if added:
        agent.tools = [*agent.tools, *added]
        extra.append(frontend_middleware(frozenset(t.name for t in added), added[0].results))
    if extra:
        middleware_now = (*agent.settings.tool_middleware, *extra)
        agent.settings = agent.settings.replace(tool_middleware=middleware_now)
    notes_text = "\n\n".join(note for note in notes if note)
    if notes_text:
        prompt = agent.system_prompt
        agent.system_prompt = f"{prompt}\n\n{notes_text}" if prompt else notes_text
    return lent


@dataclass(slots=True, kw_only=True)
class RunPlan:
    """What a request asks of its thread: run on new ``prompt`` messages (none: go on from
    the history, which ends on a user message or tool results), or resume held calls with
    ``decisions`` (then the ``follow_ups`` the client sent after its answers)."""

    prompt: list[AgentMessage] = field(default_factory=list[AgentMessage])
    decisions: dict[str, ApprovalDecision] | None = None
    follow_ups: list[AgentMessage] = field(default_factory=list[AgentMessage])


async def drive(
    lent: LentAgent, plan: RunPlan, on_event: Callable[[AgentEvent], Awaitable[None]]
) -> Outcome:
    """Run ``plan`` on the lent agent, handing each event to ``on_event``; the run's
    outcome. A run that cannot start on its own history (the agent is busy, or holds
    another) ends failed with :data:`BUSY`, having run nothing."""
    agent = lent.agent
    if agent.is_running:
        return Outcome(kind="failed", text=BUSY, usage=Usage())

    refused: list[Exception] = []

    async def produce(emit: Callable[[AgentEvent], None]) -> list[AgentMessage]:
        checked = False

        def sink(event: AgentEvent) -> None:  # in the run's task, as the loop emits
            nonlocal checked
            if not checked and isinstance(event, AgentStart):
                checked = True
                lent.starting()
            emit(event)

        try:
            if plan.decisions is not None:
                for message in plan.follow_ups:
                    agent.follow_up(message)
                return await agent.resume(plan.decisions, on_event=sink)
            if plan.prompt:
                return await agent.prompt(plan.prompt, on_event=sink)
            return await agent.continue_(on_event=sink)
        except (AgentBusyError, ResumeError) as error:  # refused before the run began
            refused.append(error)
            return []

    added: list[AgentMessage] = []
    try:
        async with RunStream(produce, agent.abort) as events:
            async for event in events:
                if isinstance(event, AgentEnd):
                    added = list(event.messages)
                await on_event(event)
    except RunFailedError as failure:
        added = added or failure.messages
    if refused and not isinstance(refused[0], AgentBusyError):
        raise refused[0]
    if not lent.began:
        return Outcome(kind="failed", text=BUSY, usage=Usage())
    return outcome_of(agent.last_outcome, added)
