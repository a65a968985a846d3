"""DurableAgent: an Agent whose runs are DBOS workflows.

One run is one workflow, its id the run id. Inside it the agent's loop runs as usual on a
fresh copy of the agent whose provider and tools are wrapped (see ``_steps``): each model
request and each tool call is a step. A run that pauses for approval waits for a message
(see ``_approval``) and goes on in the same workflow. A sub-agent's run is a workflow of
its own, ``<run id>/<call id>``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Coroutine, Sequence
from typing import Any, cast

from dbos import DBOS, SetWorkflowID, WorkflowHandleAsync
from dbos import error as dbos_error
from yoagent.core import (
    Agent,
    AgentEvent,
    AgentMessage,
    AgentTool,
    Allow,
    AssistantMessage,
    Deny,
    ModelConfig,
    PendingApproval,
    ResumeError,
    RunFailedError,
    SessionStats,
    SubAgentEvent,
    SubAgentTool,
    ToolContext,
    UserMessage,
    tool,
)
from yoagent.core.loop import PromptInput

from ._approval import (
    PENDING_EVENT,
    Decisions,
    announcement,
    decode,
    topic,
)
from ._codec import dump_messages, dump_stats, load_messages
from ._context import outside_workflow, require_asyncio
from ._errors import DbosError
from ._events import EventLog, LiveSink
from ._limits import BudgetCheck, Limiter, ProviderLimit, SharedBudget
from ._queues import RunQueue, declare, is_declared
from ._run import DurableRun, RunResult, get_run
from ._runtime import current_runtime
from ._steps import DurableProvider, DurableTool, DurableToolSource, RunSteps, logger

APPROVAL_TIMED_OUT = Deny("no one answered the approval in time")
"""What an approval nobody answered within ``approval_timeout`` becomes, by default."""
FOREVER = 10 * 365 * 24 * 3600.0
"""An approval wait with no timeout: ten years."""

_agents: dict[str, DurableAgent] = {}
_live: dict[str, LiveSink] = {}
"""``on_event`` of the runs this process started, until their workflow picks it up."""
_delegating: dict[str, ToolContext] = {}
"""The delegating call of each delegation running from this process."""


class DurableAgent:
    """An :class:`~yoagent.core.Agent` whose runs survive crashes, restarts and long waits.

    Each run is a DBOS workflow: every model request (the whole streamed reply, its usage
    and cost) and every tool call is a step whose result is checkpointed. After a crash,
    the runtime's recovery (at the next launch, or on another worker sharing the
    PostgreSQL database) continues the run from its last completed step: no completed
    tool call runs again, no completed model request is sent again.

    ``name`` names the agent's workflows: it must be the same in every process that runs
    or recovers its runs, and unique among the process's durable agents. Build durable
    agents before launching the :class:`~yoagent.dbos.DurableRuntime`.

    Approvals: a hook's ``Defer`` makes the run wait, durably, for decisions sent with
    :meth:`resume` from any process; ``approval_timeout`` seconds without an answer
    apply ``on_approval_timeout`` (a ``Deny`` by default; ``Allow()``; or ``None``: the
    run ends, still paused). ``limits`` cap each provider's requests across workers;
    ``budgets`` stop runs once a ledger shared across runs is spent.
    """

    def __init__(
        self,
        agent: Agent,
        *,
        name: str,
        approval_timeout: float | None = None,
        on_approval_timeout: Allow | Deny | None = APPROVAL_TIMED_OUT,
        limits: Sequence[ProviderLimit] = (),
        budgets: Sequence[SharedBudget] = (),
        queue: RunQueue | None = None,
    ) -> None:
        if not isinstance(cast(object, agent), Agent):
            raise TypeError(f"DurableAgent wraps an Agent, got {type(agent).__name__}")
        if not name or any(c in name for c in ":/ "):
            raise ValueError(
                f"a durable agent's name must be non-empty, without ':', '/' or spaces: {name!r}"
            )
        if name in _agents:
            raise ValueError(f"a durable agent named {name!r} exists already in this process")
        if approval_timeout is not None and not approval_timeout > 0:
            raise ValueError(f"approval_timeout must be > 0 seconds, got {approval_timeout}")
        self.agent = agent
        self.name = name
        self.approval_timeout = approval_timeout
        self.on_approval_timeout = on_approval_timeout
        self.limits = tuple(limits)
        self.budgets = tuple(budgets)
        self.queue = queue
        if queue is not None:
            declare(queue)
        self._sub_agents = _sub_agents(agent.tools)
        _agents[name] = self

        async def run_workflow(request: dict[str, Any]) -> dict[str, Any]:
            return await self._execute(request)

        async def delegation_workflow(request: dict[str, Any]) -> dict[str, Any]:
            return await self._delegate(request)

        self._workflow = DBOS.workflow(name=f"yoagent.run.{name}")(run_workflow)
        self._delegation = DBOS.workflow(name=f"yoagent.delegate.{name}")(delegation_workflow)

    # --- starting runs ------------------------------------------------------------------------

    async def run(
        self,
        prompt: PromptInput,
        *,
        run_id: str | None = None,
        history: Sequence[AgentMessage] | None = None,
        on_event: LiveSink | None = None,
    ) -> RunResult:
        """Start a run and wait for its end (approvals included); see :meth:`start`."""
        run = await self.start(prompt, run_id=run_id, history=history, on_event=on_event)
        return await run.result()

    async def start(
        self,
        prompt: PromptInput,
        *,
        run_id: str | None = None,
        history: Sequence[AgentMessage] | None = None,
        on_event: LiveSink | None = None,
    ) -> DurableRun:
        """Start a run in this process and return its handle at once.

        ``run_id`` (default: a new UUID) names the run for good; a run id in use already
        is refused (:class:`DbosError`) — look the run up with :meth:`get`. ``history``
        is where the run starts (default: the wrapped agent's messages). ``on_event``
        gets every event live, token deltas included, while this process runs it.
        """
        require_asyncio("DurableAgent.start")
        request, run_id = self._request(prompt, run_id, history)
        if on_event is not None:
            _live[run_id] = on_event
        try:
            handle = await _new_run(run_id, DBOS.start_workflow_async(self._workflow, request))
        except BaseException:
            _live.pop(run_id, None)
            raise
        return DurableRun(run_id, _handle=handle)

    async def enqueue(
        self,
        prompt: PromptInput,
        *,
        run_id: str | None = None,
        history: Sequence[AgentMessage] | None = None,
        queue: RunQueue | None = None,
    ) -> DurableRun:
        """Put a run on ``queue`` (default: the agent's): some worker with the queue starts
        it when the queue's limits allow."""
        require_asyncio("DurableAgent.enqueue")
        chosen = queue or self.queue
        if chosen is None:
            raise DbosError(f"durable agent {self.name!r} has no queue: pass queue=RunQueue(...)")
        if not is_declared(chosen):
            raise DbosError(
                f"run queue {chosen.name!r} is unknown to the runtime: give it to a "
                "DurableAgent (queue=...) before launching, so workers take its runs"
            )
        request, run_id = self._request(prompt, run_id, history)
        await _new_run(run_id, DBOS.enqueue_workflow_async(chosen.name, self._workflow, request))
        return DurableRun(run_id)

    async def get(self, run_id: str) -> DurableRun:
        """:func:`get_run`: the handle of an existing run."""
        return await get_run(run_id)

    async def resume(self, run_id: str, decisions: Decisions) -> None:
        """:meth:`DurableRun.resume` of run ``run_id``."""
        await (await get_run(run_id)).resume(decisions)

    def _request(
        self, prompt: PromptInput, run_id: str | None, history: Sequence[AgentMessage] | None
    ) -> tuple[dict[str, Any], str]:
        if run_id is not None and (not run_id or "/" in run_id):
            raise ValueError(f"a run id must be non-empty and without '/': {run_id!r}")
        chosen = run_id or str(uuid.uuid4())
        messages = _prompt_messages(prompt)
        start = list(self.agent.messages if history is None else history)
        return {"history": dump_messages(start), "prompt": dump_messages(messages)}, chosen

    # --- the workflows ------------------------------------------------------------------------

    async def _open(self, live: LiveSink | None = None) -> tuple[str, EventLog, RunSteps]:
        """The current workflow's run id, its event log (knowing what an earlier execution
        wrote) and the steps of this execution."""
        run_id = DBOS.workflow_id
        assert run_id is not None
        events = EventLog(live)
        await events.load(run_id)
        return run_id, events, self._steps(run_id, events)

    def _steps(self, run_id: str, events: EventLog) -> RunSteps:
        runtime = current_runtime()
        limiter = Limiter(runtime.store, self.limits) if self.limits else None
        budgets = self.budgets

        async def record_spend(reply: AssistantMessage, model: ModelConfig, step: int) -> None:
            import asyncio

            tokens = reply.usage.total
            for budget in budgets:
                await asyncio.to_thread(
                    runtime.store.record_spend,
                    budget.name,
                    run_id,
                    step,
                    budget.price(reply, model),
                    tokens,
                )

        return RunSteps(
            run_id,
            events,
            lease=limiter.lease if limiter is not None else None,
            record_spend=record_spend if budgets else None,
        )

    def _wrap(self, steps: RunSteps) -> Callable[[AgentTool], AgentTool]:
        def wrap(agent_tool: AgentTool) -> AgentTool:
            if isinstance(agent_tool, SubAgentTool):
                self._sub_agents.setdefault(agent_tool.name, agent_tool)  # from a source too
                return _Delegation(agent_tool, steps, self)
            return DurableTool(agent_tool, steps)

        return wrap

    def _fresh_agent(self, history: list[AgentMessage], steps: RunSteps) -> Agent:
        template = self.agent
        wrap = self._wrap(steps)
        settings = template.settings
        if settings.tool_sources:
            settings = settings.replace(
                tool_sources=[DurableToolSource(s, wrap) for s in settings.tool_sources]
            )
        if self.budgets:
            check = BudgetCheck(current_runtime().store, self.budgets)
            settings = settings.replace(extensions=(*settings.extensions, check))
        return Agent(
            DurableProvider(template.provider, steps),
            template.model,
            system_prompt=template.system_prompt,
            tools=[wrap(_as_tool(t)) for t in template.tools],
            messages=history,
            settings=settings,
            shared_state=template.shared_state,
        )

    async def _execute(self, request: dict[str, Any]) -> dict[str, Any]:
        run_id, events, steps = await self._open(_live.pop(DBOS.workflow_id or "", None))
        start = load_messages(request["history"])
        agent = self._fresh_agent(start, steps)
        stats = SessionStats()
        failure: dict[str, Any] | None = None
        left_pending: PendingApproval | None = None
        decisions: Decisions | None = None
        round_ = 0
        while True:
            ran = True
            try:
                if decisions is None:
                    await agent.prompt(load_messages(request["prompt"]), on_event=events.emit)
                else:  # the results of the held calls take their placeholders' places
                    await agent.resume(decisions, on_event=events.emit)
            except RunFailedError as error:
                failure = {"kind": error.kind.value, "message": error.message}
            except ResumeError as error:  # refused before anything ran: wait for others
                logger.error("run %s: the decisions sent were refused: %s", run_id, error)
                ran = False
            if ran:
                stats.merge(agent.last_run_stats)
            pending = agent.pending
            if failure is not None or pending is None:
                break
            decisions = await self._wait(run_id, round_, pending, events)
            if decisions is None:
                left_pending = pending
                break
            round_ += 1
            events.segment += 1

        await _finish(events)
        history = agent.messages
        return {
            "messages": dump_messages(history[len(start) :]),
            "history": dump_messages(history),
            "stats": dump_stats(stats),
            "failure": failure,
            "pending": left_pending.to_json() if left_pending is not None else None,
        }

    async def _wait(
        self, run_id: str, round_: int, pending: PendingApproval, events: EventLog
    ) -> Decisions | None:
        """Wait for the decisions of approval round ``round_`` (durably)."""

        async def announce() -> None:
            await events.flush()

        await DBOS.run_step_async({"name": "yoagent.flush"}, announce)
        await DBOS.set_event_async(PENDING_EVENT, announcement(round_, pending))
        message = await DBOS.recv_async(
            topic(round_), timeout_seconds=self.approval_timeout or FOREVER
        )
        await DBOS.set_event_async(PENDING_EVENT, None)
        if message is None:
            return self.on_approval_timeout
        return decode(message)

    async def _delegate(self, request: dict[str, Any]) -> dict[str, Any]:
        """One sub-agent call, as a workflow of its own (its model requests and tool calls
        are its steps; its events are in its own stream)."""
        run_id, events, steps = await self._open()
        parent_run_id, call_id = run_id.rsplit("/", 1)
        sub = self._sub_agents.get(request["tool"])
        if sub is None:
            raise DbosError(
                f"durable agent {self.name!r} knows no sub-agent tool {request['tool']!r}: "
                "build it with the same sub-agents in every worker"
            )
        parent = _delegating.get(run_id)
        wrap = self._wrap(steps)
        child = SubAgentTool(
            sub.name,
            sub.description,
            provider=DurableProvider(sub.provider, steps),
            model=sub.model,
            system_prompt=sub.system_prompt,
            tools=[wrap(t) for t in sub.tools],
            settings=sub.settings,
            shared_state=sub.shared_state,
            max_depth=sub.max_depth,
        )
        reported: list[SessionStats] = []

        def on_event(event: AgentEvent) -> None:
            if isinstance(event, SubAgentEvent) and event.tool_call_id == call_id:
                events.emit(event.event)
            if parent is not None:
                parent.report_event(event)

        ctx = ToolContext(
            tool_call_id=call_id,
            tool_name=sub.name,
            cancel=parent.cancel if parent is not None else None,
            on_event=on_event,
            on_delegated_run=reported.append,
            run_id=parent_run_id,
            depth=int(request["depth"]),
            tree_extensions=parent.tree_extensions
            if parent is not None
            else tuple(self.agent.settings.tree_extensions),
        )
        outcome = await DurableTool(child, steps).call(request["arguments"], ctx)

        await _finish(events)
        outcome["delegated"] = [dump_stats(s) for s in reported]
        return outcome


async def _new_run(
    run_id: str, start: Coroutine[Any, Any, WorkflowHandleAsync[Any]]
) -> WorkflowHandleAsync[Any]:
    """Start (or enqueue) the workflow of a new run, its id ``run_id``: a taken id is
    refused with :class:`DbosError`."""
    try:
        with SetWorkflowID(run_id, workflow_id_reuse_policy="reject"):
            return await start
    except dbos_error.DBOSWorkflowIDInUseError:
        raise DbosError(f"the run id {run_id!r} is taken: look the run up with get()") from None


async def _finish(events: EventLog) -> None:
    """The run's last events, written by a step of their own (readers end with the run)."""
    await DBOS.run_step_async({"name": "yoagent.finish"}, events.flush)


class _Delegation(DurableTool):
    """A sub-agent call: its step starts (or rejoins) the delegation's own workflow."""

    def __init__(self, inner: SubAgentTool, run: RunSteps, owner: DurableAgent) -> None:
        super().__init__(inner, run)
        self.owner = owner

    async def call(self, arguments: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        child_id = f"{ctx.run_id}/{ctx.tool_call_id}"
        request = {"tool": self.name, "arguments": arguments, "depth": ctx.depth}
        _delegating[child_id] = ctx

        async def start() -> dict[str, Any]:
            with SetWorkflowID(child_id):  # a delegation started before rejoins: same id
                handle = await DBOS.start_workflow_async(self.owner._delegation, request)  # pyright: ignore[reportPrivateUsage]
            return await handle.get_result(polling_interval_sec=polling)

        polling = current_runtime().polling_interval
        try:
            return await outside_workflow(start)
        finally:
            _delegating.pop(child_id, None)


def _prompt_messages(prompt: PromptInput) -> list[AgentMessage]:
    if isinstance(prompt, str):
        return [UserMessage.from_text(prompt)]
    if isinstance(prompt, Sequence):
        return list(prompt)
    return [prompt]


def _as_tool(value: object) -> AgentTool:
    return value if isinstance(value, AgentTool) else tool(cast("Callable[..., Any]", value))


def _sub_agents(tools: Sequence[object]) -> dict[str, SubAgentTool]:
    """Every sub-agent tool reachable from ``tools``, by name (names must be unique: a
    delegation workflow finds its tool by name)."""
    found: dict[str, SubAgentTool] = {}
    stack = list(tools)
    while stack:
        item = stack.pop()
        if isinstance(item, SubAgentTool):
            if item.name in found and found[item.name] is not item:
                raise ValueError(f"two sub-agent tools are named {item.name!r}: name them apart")
            found[item.name] = item
            stack.extend(item.tools)
    return found
