"""One run's steps: the model request and each tool call, checkpointed by DBOS.

The loop runs inside the workflow as it always does; only the provider and the tools are
wrapped. A wrapped call runs as a DBOS step when inside a workflow: the first time for
real (its value checkpointed), on a replay from the checkpoint. Tool calls of one reply
may run in parallel and reach DBOS in any order, so their step numbers are drawn when the
reply arrives, in call order (``DBOS.reserve_step``), and each call runs at its own.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from dbos import DBOS, StepOptions, StepReservation
from yoagent.core import (
    AgentTool,
    AssistantMessage,
    ErrorKind,
    ModelConfig,
    ProviderError,
    ToolContext,
    ToolError,
    ToolResult,
    ToolSource,
)
from yoagent.core.provider import DeltaSink, StreamConfig, StreamProvider

from ._codec import (
    dump_details,
    dump_reply,
    dump_tool_result,
    load_reply,
    load_stats,
    load_tool_result,
)
from ._errors import CheckpointError
from ._events import EventLog

logger = logging.getLogger("yoagent.dbos")

SpendRecorder = Callable[[AssistantMessage, ModelConfig, int], Awaitable[None]]
"""Records one reply's spend (reply, model, step number); the same step number twice
counts once."""
Lease = Callable[[ModelConfig], Any]
"""An async context manager that holds a request slot of the model's provider."""


class RunSteps:
    """What the wrapped provider and tools of one run's execution share."""

    def __init__(
        self,
        run_id: str,
        events: EventLog,
        *,
        lease: Lease | None = None,
        record_spend: SpendRecorder | None = None,
    ) -> None:
        self.run_id = run_id
        self.events = events
        self.lease = lease
        self.record_spend = record_spend
        self._reserved: dict[str, deque[StepReservation]] = {}

    def reserve_tool_steps(self, reply: AssistantMessage) -> None:
        """Draw one step number per tool call of ``reply``, in call order."""
        for call in reply.tool_calls:
            self._reserved.setdefault(call.id, deque()).append(DBOS.reserve_step())

    def take_reservation(self, call_id: str) -> StepReservation | None:
        """The step number drawn for this call (``None``: none was, e.g. a repeated id)."""
        queue = self._reserved.get(call_id)
        return queue.popleft() if queue else None


def in_workflow() -> bool:
    """True inside a DBOS workflow (and not inside one of its steps)."""
    return DBOS.workflow_id is not None and DBOS.step_id is None


class DurableProvider:
    """A provider whose every request is a step: the whole streamed reply, with its usage,
    is checkpointed; a replay returns it without a request (and without deltas)."""

    def __init__(self, inner: StreamProvider, run: RunSteps) -> None:
        self.inner = inner
        self.run = run

    async def stream(self, config: StreamConfig, sink: DeltaSink) -> AssistantMessage:
        if not in_workflow():
            return await self.inner.stream(config, sink)
        run = self.run

        async def request() -> dict[str, Any]:
            await run.events.flush()
            try:
                if run.lease is None:
                    reply = await self.inner.stream(config, sink)
                else:
                    async with run.lease(config.model):
                        reply = await self.inner.stream(config, sink)
            except ProviderError as error:  # the loop decides on retries: hand it back
                return {"error": _dump_provider_error(error)}
            data = dump_reply(reply)
            if run.record_spend is not None:
                await run.record_spend(reply, config.model, _step_id())
            return {"reply": data}

        outcome = await DBOS.run_step_async({"name": "yoagent.model"}, request)
        if "error" in outcome:
            raise _load_provider_error(outcome["error"])
        reply = load_reply(outcome["reply"])
        run.reserve_tool_steps(reply)
        return reply


def _step_id() -> int:
    step = DBOS.step_id
    assert step is not None  # called inside the step
    return step


def _dump_provider_error(error: ProviderError) -> dict[str, Any]:
    return {
        "kind": error.kind.value,
        "message": error.message,
        "status": error.status,
        "retry_after": error.retry_after,
    }


def _load_provider_error(data: dict[str, Any]) -> ProviderError:
    return ProviderError(
        ErrorKind(data["kind"]),
        data["message"],
        status=data["status"],
        retry_after=data["retry_after"],
    )


class DurableTool:
    """A tool whose every call is a step: its result (or its failure, as the text the model
    reads) is checkpointed, so a completed call never runs again. The tool sees a context
    whose ``run_id`` is the durable run's id: ``f"{ctx.run_id}:{ctx.tool_call_id}"`` is
    the same in a recovered run (see :func:`idempotency_key`)."""

    def __init__(self, inner: AgentTool, run: RunSteps) -> None:
        self.inner = inner
        self.run = run

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def description(self) -> str:
        return self.inner.description

    @property
    def parameters(self) -> dict[str, Any]:
        return self.inner.parameters

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        if not in_workflow():
            return await self.inner.execute(arguments, ctx)
        run = self.run
        reservation = run.take_reservation(ctx.tool_call_id)
        durable_ctx = with_run_id(ctx, run.run_id)

        async def call() -> dict[str, Any]:
            await run.events.flush()
            return await self.call(arguments, durable_ctx)

        options: StepOptions = {"name": f"yoagent.tool:{self.name}"}
        outcome: dict[str, Any]
        if reservation is None:
            outcome = await DBOS.run_step_async(options, call)
        else:
            outcome = await reservation.run_async(options, call)
        for stats in outcome.get("delegated", ()):  # a sub-agent's spend, checkpointed too
            ctx.report_delegated_run(load_stats(stats))
        return outcome_result(outcome)

    async def call(self, arguments: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
        """Run the tool once; its outcome as checkpoint data (a failure is data too)."""
        try:
            result = await self.inner.execute(arguments, ctx)
        except ToolError as error:
            return {
                "error": str(error) or type(error).__name__,
                "details": dump_details(error.details),
            }
        except Exception as error:  # contained as the loop would: the model reads it
            logger.exception("tool %s raised on call %s", self.name, ctx.tool_call_id)
            return {"error": f"{type(error).__name__}: {error}", "details": None}
        try:
            return {"result": dump_tool_result(self.name, ctx.tool_call_id, result)}
        except CheckpointError as error:
            logger.error("%s", error)
            return {"error": str(error), "details": None}


def outcome_result(outcome: dict[str, Any]) -> ToolResult:
    """The result a checkpointed tool outcome stands for (a failure raises ``ToolError``)."""
    if "error" in outcome:
        raise ToolError(outcome["error"], details=outcome["details"])
    return load_tool_result(outcome["result"])


def with_run_id(ctx: ToolContext, run_id: str) -> ToolContext:
    """``ctx`` as seen from the durable run ``run_id`` (everything else unchanged)."""
    return ToolContext(
        tool_call_id=ctx.tool_call_id,
        tool_name=ctx.tool_name,
        cancel=ctx.cancel,
        on_update=ctx.update,
        on_progress=ctx.progress,
        on_delegated_run=ctx.report_delegated_run,
        on_event=ctx.report_event,
        run_id=run_id,
        depth=ctx.depth,
        spend=ctx.spend,
        tree_extensions=ctx.tree_extensions,
    )


def idempotency_key(ctx: ToolContext) -> str:
    """A key naming this tool call for good: the durable run's id and the call's id. A
    tool whose effect must not happen twice (a payment, an email) passes it to the
    service it calls, which then ignores the repeat a crash between the effect and its
    checkpoint can cause."""
    return f"{ctx.run_id}:{ctx.tool_call_id}"


class DurableToolSource:
    """A tool source whose tools are :class:`DurableTool` s of the run."""

    def __init__(self, inner: ToolSource, wrap: Callable[[AgentTool], AgentTool]) -> None:
        self.inner = inner
        self.wrap = wrap

    async def tools(self) -> Sequence[AgentTool]:
        return [self.wrap(tool) for tool in await self.inner.tools()]

    def generation(self) -> int:
        return self.inner.generation()
