"""The AG-UI endpoint: a run input in, the run out as AG-UI events over SSE."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from typing import Any, cast

from ag_ui.core import (
    PROTOCOL_VERSION,
    BaseEvent,
    Interrupt,
    ResumeEntry,
    RunAgentInput,
    RunErrorEvent,
    RunFinishedCancelledOutcome,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    RunStartedEvent,
    StateDeltaEvent,
    StateSnapshotEvent,
    TokenUsage,
)
from ag_ui.encoder import EventEncoder
from anyio.streams.memory import MemoryObjectSendStream
from pydantic import ValidationError

from yoagent.core import (
    Agent,
    AgentEvent,
    AgentMessage,
    Allow,
    ApprovalDecision,
    Deny,
    Modify,
    PendingApproval,
    PendingCall,
    TextContent,
    ToolExecutionEnd,
    ToolResult,
    ToolResultMessage,
    Usage,
)
from yoagent.core.extension import MiddlewareLike
from yoagent.core.loop import last_assistant

from ._agui_events import AguiTranslator
from ._agui_messages import from_agui_with_ids, system_notes
from ._endpoint import PreparedRun, RunEndpoint
from ._errors import BadRunInputError
from ._outcome import Outcome
from ._run import (
    FRONTEND_REASON,
    ClientResult,
    FrontendTool,
    LentAgent,
    RunPlan,
    build_agent,
    drive,
)
from ._state import StateSync
from ._store import StoredThread, continues, prompt_start

logger = logging.getLogger("yoagent.ui")

APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approved": {"type": "boolean"},
        "reason": {"type": "string"},
        "arguments": {"type": "object"},
    },
    "required": ["approved"],
}
"""The answer a tool approval interrupt expects in its resume entry's ``payload``."""

_SSE_HEADERS = {"content-type": "text/event-stream", "cache-control": "no-cache"}


class AgUiEndpoint(RunEndpoint):
    """An AG-UI endpoint for the agents ``agent`` builds: an ASGI app answering ``POST``
    with a run input by streaming the run as AG-UI events (Server-Sent Events).

    Each thread's history is kept in ``store`` (default: a :class:`MemoryThreadStore`);
    a request continues it and adds what the client sent that is new. Mount it anywhere
    (``Mount("/agent", app=endpoint)``) or serve it alone; :meth:`handle` is its request
    handler, for a route of your own. Bad requests get HTTP 400 (413 over
    ``max_body_bytes``, 409 while the thread runs) with ``{"error": text}``.
    """

    def _denial(self, reason: str) -> str:
        """What the model reads (after ``Tool call denied: ``) when a person denies a held
        call, ``reason`` being what they said (empty: nothing)."""
        return reason or "denied by the user"

    def _more_events(self, agent: Agent, event: AgentEvent) -> list[BaseEvent]:
        """Events of the application's own to send after ``event``'s (none here)."""
        del agent, event
        return []

    def _tool_middleware(self) -> Sequence[MiddlewareLike]:
        """Tool middleware of the application's own, added to each run's agent after the
        agent's own (none here)."""
        return ()

    def _parse(self, body: Any) -> tuple[str, RunAgentInput]:
        run_input = _run_input(body)
        return run_input.thread_id, run_input

    async def _prepare(self, request: Any, stored: StoredThread) -> _AgUiRun:
        run_input = cast(RunAgentInput, request)
        messages, ids = from_agui_with_ids(run_input.messages)
        consumed = continues(stored.ids, ids)
        if consumed is None:  # a history the server does not hold: the client's is taken
            cut = prompt_start(messages)  # (what it claims was held, nothing holds)
            history, history_ids, tail, tail_ids = (
                messages[:cut],
                ids[:cut],
                messages[cut:],
                ids[cut:],
            )
            pending = None
        else:
            history, history_ids = stored.messages, stored.ids
            tail, tail_ids = messages[consumed:], ids[consumed:]
            pending = PendingApproval.from_messages(history)
        results: dict[str, ClientResult] = {}
        client_ids: dict[str, str] = {}
        plan = _plan(
            pending, tail, tail_ids, run_input.resume or [], results, client_ids, self._denial
        )
        if plan.decisions is None and not _runnable([*history, *plan.prompt]):
            raise BadRunInputError(
                "nothing to run: send a user message (or the results of the calls the "
                "last run left to the front-end)"
            )
        frontend = [
            FrontendTool(tool.name, tool.description, tool.parameters, results)
            for tool in run_input.tools or []
        ]
        notes = system_notes([*history, *tail])
        notes += [f"{item.description}: {item.value}" for item in run_input.context or []]
        lent = await build_agent(
            self.factory,
            history,
            frontend=frontend,
            middleware=self._tool_middleware(),
            notes=notes,
        )
        agent = lent.agent
        state = StateSync(agent.shared_state) if agent.shared_state is not None else None
        if state is not None and run_input.state is not None:
            try:
                await state.seed(run_input.state)
            except BaseException:
                lent.restore()
                raise
        return _AgUiRun(
            run_input=run_input,
            lent=lent,
            plan=plan,
            state=state,
            known_ids={id(m): key for m, key in zip(history, history_ids, strict=True)}
            | {id(m): key for m, key in zip(tail, tail_ids, strict=True)},
            client_ids=client_ids,
            more=lambda event: self._more_events(agent, event),
        )


def _run_input(body: Any) -> RunAgentInput:
    try:
        return RunAgentInput.model_validate(body)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(part) for part in item['loc']) or 'body'}: {item['msg']}"
            for item in error.errors()[:5]
        )
        raise BadRunInputError(f"not an AG-UI run input: {problems}") from None


def _runnable(history: Sequence[AgentMessage]) -> bool:
    """Whether a run can go on from ``history``: it ends on a user message or a result."""
    for message in reversed(history):
        if message.role == "user" or message.role == "tool_result":
            return True
        if message.role == "assistant":
            return False
    return False


def _plan(
    pending: PendingApproval | None,
    tail: list[AgentMessage],
    tail_ids: list[str],
    resume: list[ResumeEntry],
    results: dict[str, ClientResult],
    client_ids: dict[str, str],
    denial: Callable[[str], str],
) -> RunPlan:
    """What the new messages and resume entries ask: answers to held calls (a resume),
    or a new prompt."""
    held = {call.tool_call_id: call for call in pending.calls} if pending else {}
    decisions: dict[str, ApprovalDecision] = {}
    rest: list[AgentMessage] = []
    for message, key in zip(tail, tail_ids, strict=True):
        if isinstance(message, ToolResultMessage):
            call = held.get(message.tool_call_id)
            if call is None or call.reason != FRONTEND_REASON:
                raise BadRunInputError(
                    f"the tool result {key!r} answers call {message.tool_call_id!r}, which "
                    "no front-end tool call of the thread waits on (a call held for "
                    "approval is answered by a resume entry)"
                )
            results[call.tool_call_id] = ClientResult(
                content=ToolResult(content=list(message.content)),
                error=(message.text or "error") if message.is_error else None,
            )
            client_ids[call.tool_call_id] = key
            decisions[call.tool_call_id] = Allow()
        else:
            rest.append(message)
    for entry in resume:
        call = held.get(entry.interrupt_id)
        if call is None:
            raise BadRunInputError(
                f"resume entry {entry.interrupt_id!r} answers no interrupt of this thread"
            )
        decisions[call.tool_call_id] = _decision(call, entry, results, denial)
    if not decisions:
        return RunPlan(prompt=rest)
    assert pending is not None
    missing = [call.tool_call_id for call in pending.calls if call.needs_decision]
    missing = [call_id for call_id in missing if call_id not in decisions]
    if missing:
        raise BadRunInputError(
            f"the thread's held calls {missing} have no answer: send a result (front-end "
            "tools) or a resume entry for each"
        )
    return RunPlan(decisions=decisions, follow_ups=rest)


def _decision(
    call: PendingCall,
    entry: ResumeEntry,
    results: dict[str, ClientResult],
    denial: Callable[[str], str],
) -> ApprovalDecision:
    """A resume entry as a decision: ``cancelled`` denies; ``resolved`` approves or denies
    per its payload (a front-end tool's payload is its result: ``content`` or ``error``);
    ``denial`` makes what the model reads of a person's reason."""
    if entry.status == "cancelled":
        return Deny("cancelled by the user")
    raw = cast(object, entry.payload)
    payload = cast("dict[str, Any]", raw) if isinstance(raw, dict) else {}
    if call.reason == FRONTEND_REASON:
        error = payload.get("error")
        results[call.tool_call_id] = ClientResult(
            content=ToolResult(content=[TextContent(text=str(payload.get("content", "")))]),
            error=str(error) if error is not None else None,
        )
        return Allow()
    if payload.get("approved") is not True:
        return Deny(denial(str(payload.get("reason") or "").strip()))
    arguments = cast(object, payload.get("arguments"))
    return Modify(cast("dict[str, Any]", arguments)) if isinstance(arguments, dict) else Allow()


class _AgUiRun(PreparedRun):
    """One prepared AG-UI run: drives it and sends its events."""

    headers = _SSE_HEADERS

    def __init__(
        self,
        *,
        run_input: RunAgentInput,
        lent: LentAgent,
        plan: RunPlan,
        state: StateSync | None,
        known_ids: dict[int, str],
        client_ids: dict[str, str],
        more: Callable[[AgentEvent], list[BaseEvent]],
    ) -> None:
        super().__init__(thread_id=run_input.thread_id, lent=lent, known_ids=known_ids)
        self.more = more
        self.input = run_input
        self.plan = plan
        self.state = state
        self.translator = AguiTranslator(client_results=client_ids)
        self.encoder = EventEncoder()

    def new_ids(self) -> dict[int, str]:
        return self.translator.ids

    async def stream(self, out: MemoryObjectSendStream[bytes]) -> None:
        async def emit(*events: BaseEvent) -> None:
            for event in events:
                await out.send(self.encoder.encode(event).encode())

        thread_id, run_id = self.input.thread_id, self.input.run_id
        await emit(
            RunStartedEvent(thread_id=thread_id, run_id=run_id, protocol_version=PROTOCOL_VERSION)
        )
        try:
            if self.state is not None:
                await emit(StateSnapshotEvent(snapshot=await self.state.snapshot()))

            async def on_event(event: AgentEvent) -> None:
                await emit(*self.translator.events(event), *self.more(event))
                if isinstance(event, ToolExecutionEnd) and self.state is not None:
                    delta = await self.state.delta()
                    if delta:
                        await emit(StateDeltaEvent.model_validate({"delta": delta}))

            outcome = await drive(self.lent, self.plan, on_event)
        except Exception as error:  # a bug or a failing hook: the stream says so, the server lives
            logger.exception("AG-UI run %s on thread %s failed", run_id, thread_id)
            await emit(*self.translator.close_open())
            await emit(
                RunErrorEvent(message=f"the run failed: {type(error).__name__}", code="internal")
            )
            return
        await emit(*self.translator.close_open(), *self._finish(outcome))

    def _finish(self, outcome: Outcome) -> list[BaseEvent]:
        usage = [_token_usage(outcome.usage, self.agent)] if not outcome.usage.is_zero() else None
        thread_id, run_id = self.input.thread_id, self.input.run_id
        if outcome.kind == "failed":
            code = outcome.error_kind.value if outcome.error_kind else None
            return [RunErrorEvent(message=outcome.text, code=code, usage=usage)]
        if outcome.kind == "rejected":
            return [RunErrorEvent(message=outcome.text, code="rejected", usage=usage)]
        if outcome.kind == "cancelled":
            result: Any = RunFinishedCancelledOutcome()
        elif outcome.kind == "paused" and outcome.pending is not None:
            result = _paused(outcome.pending)
        else:
            result = RunFinishedSuccessOutcome()
        reply = last_assistant(self.agent.messages)
        text = (
            reply.text if reply is not None and outcome.kind in ("completed", "stopped") else None
        )
        return [
            RunFinishedEvent(
                thread_id=thread_id, run_id=run_id, outcome=result, result=text, usage=usage
            )
        ]


def _paused(pending: PendingApproval) -> Any:
    """A pause as AG-UI's outcome: front-end calls alone are a success naming the calls
    the application answers; any approval makes it an interrupt, one per held call."""
    waiting = [call for call in pending.calls if call.needs_decision]
    if all(call.reason == FRONTEND_REASON for call in waiting):
        return RunFinishedSuccessOutcome(pending_tool_call_ids=[c.tool_call_id for c in waiting])
    return RunFinishedInterruptOutcome(
        interrupts=[
            Interrupt(
                id=call.tool_call_id,
                reason="frontend_tool" if call.reason == FRONTEND_REASON else "tool_approval",
                message=call.reason,
                tool_call_id=call.tool_call_id,
                response_schema=None if call.reason == FRONTEND_REASON else APPROVAL_SCHEMA,
                metadata={"yoagent": {"tool_name": call.tool_name, "arguments": call.arguments}},
            )
            for call in waiting
        ]
    )


def _token_usage(usage: Usage, agent: Agent) -> TokenUsage:
    prompt = usage.input + usage.cache_read + usage.cache_write
    return TokenUsage(
        provider=agent.model.provider or None,
        model=agent.model.id or None,
        input_tokens=prompt,
        output_tokens=usage.output,
        total_tokens=prompt + usage.output,
        cached_input_tokens=usage.cache_read,
        cache_write_input_tokens=usage.cache_write,
    )
