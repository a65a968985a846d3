"""How one run's agent events become GASP events (the table in the GASP bridge spec).

Pure bookkeeping: :class:`RunMapper` takes agent events and returns the log entries to
append; writing them is the recorder's job.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from yoagent.core import (
    AgentEnd,
    AgentEvent,
    AgentStart,
    AssistantMessage,
    InputRejected,
    MessageEnd,
    ModelConfig,
    ProviderRetry,
    RunEnd,
    RunOutcome,
    SessionStats,
    StopCause,
    StopReason,
    TextContent,
    ToolExecutionEnd,
    ToolExecutionStart,
    cost_of,
    resolve_cost,
)

from .envelope import STATE_OPS_APPLIED, Actor, Event, new_id
from .ops import CreateNode, CreateRelation, Op, UpdateNode, ops_to_json
from .summary import Summarizer, args_fingerprint, args_json, outcome_for

INTERRUPTED = "interrupted"

Pricer = Callable[[AssistantMessage], "float | None"]
"""What a reply cost (as the loop priced it), or ``None`` when unknown."""


def pricer(model: ModelConfig) -> Pricer:
    """Prices a reply of ``model`` as the loop does (the config's ``cost``, else the price
    resolver's); a reply that names another model (a delegated run's) is not priced."""

    def price(message: AssistantMessage) -> float | None:
        if message.model and message.model != model.id:
            return None
        return cost_of(message.usage, resolve_cost(model))

    return price


FILE_TOOLS = frozenset({"write_file", "edit_file"})
"""The tools whose ``path`` names the file a call changes (``tool.called``'s
``metadata.path``)."""


@dataclass(slots=True)
class Entry:
    """One event to append, with its ops when it is a ``state.ops_applied``."""

    event: Event
    ops: list[Op] | None = None


@dataclass(slots=True)
class OpenRun:
    """A run whose ``run.started`` is in the log without its ``run.finished``."""

    run_id: str
    started_event: str


@dataclass(slots=True, frozen=True)
class OpenCall:
    """A tool call whose ``tool.called`` is logged and whose end has not come yet."""

    node: str
    event: str
    """The ``tool.called`` event's id."""
    tool: str
    arguments: Any


@dataclass(slots=True, frozen=True)
class Delegation:
    """Where a delegated run hangs in the log: the delegating call (its ``tool_call``
    node and ``tool.called`` event) in the run one level up."""

    parent_run_id: str
    call: OpenCall
    depth: int


def ops_entry(actor: Actor, ops: list[Op], cause: str, correlation: str | None, ts: int) -> Entry:
    """The ``state.ops_applied`` pair of a domain event."""
    event = Event.new(
        actor,
        STATE_OPS_APPLIED,
        ops_to_json(ops),
        causation_id=cause,
        correlation_id=correlation,
        ts_ms=ts,
    )
    return Entry(event, ops)


def finish_entries(
    actor: Actor, run: OpenRun, outcome: str, ts: int, metadata: Any = None
) -> list[Entry]:
    """``run.finished`` (chained to the run's start) and its ``UpdateNode`` pair."""
    payload: dict[str, Any] = {"run_id": run.run_id, "outcome": outcome}
    if metadata is not None:
        payload["metadata"] = metadata
    finished = Event.new(
        actor,
        "run.finished",
        payload,
        causation_id=run.started_event,
        correlation_id=run.run_id,
        ts_ms=ts,
    )
    update = UpdateNode(run.run_id, {"status": "finished", "outcome": outcome})
    return [Entry(finished), ops_entry(actor, [update], finished.id, run.run_id, ts)]


def goal_entries(actor: Actor, goal_id: str, title: str, ts: int) -> list[Entry]:
    """``goal.created`` (a root) and its ``CreateNode goal`` pair."""
    goal: dict[str, Any] = {
        "id": goal_id,
        "title": title,
        "summary": title,
        "status": "Open",
        "owner": actor.to_json(),
        "metadata": {},
    }
    created = Event.new(actor, "goal.created", goal, ts_ms=ts)
    props = {key: value for key, value in goal.items() if key != "id"}
    return [
        Entry(created),
        ops_entry(actor, [CreateNode(goal_id, "goal", props)], created.id, None, ts),
    ]


def stats_metadata(stats: SessionStats) -> dict[str, Any]:
    """The run's spend for ``run.finished``'s metadata, plus ``cacheHitRate``: the share
    of prompt tokens read from the cache."""
    try:
        metadata: dict[str, Any] = json.loads(json.dumps(dataclasses.asdict(stats), default=str))
    except (TypeError, ValueError):
        return {"error": "session stats not serializable"}
    usage = stats.usage
    prompt = usage.input + usage.cache_read + usage.cache_write
    metadata["cacheHitRate"] = usage.cache_read / prompt if prompt else 0.0
    return metadata


def _loop_outcome(names: list[str]) -> str:
    """``loop_aborted:<tools>``: the tools the model kept calling (its last reply's)."""
    tools = ",".join(sorted({name.strip() for name in names if name.strip()}))
    tools = "".join(ch for ch in tools if ch.isprintable() and not ch.isspace())
    return f"loop_aborted:{tools}" if tools else "loop_aborted"


@dataclass(slots=True)
class RunMapper:
    """One run's state while its events are mapped."""

    actor: Actor
    goal_id: str
    task: str
    summarize: Summarizer
    run: OpenRun | None = None
    finished: bool = False
    outcome: str = INTERRUPTED
    turn: int = 0
    delegation: Delegation | None = None
    """Set for a run delegated by a tool call of another recorded run."""
    open_calls: dict[str, OpenCall] = field(default_factory=dict[str, OpenCall])
    """This run's tool calls still running, by call id."""
    price: Pricer | None = None
    """Prices each reply for ``model.finished``'s ``metadata.cost_usd`` (unset: no cost)."""
    _held: tuple[AssistantMessage, int] | None = None
    _called: list[str] = field(default_factory=list[str])
    """The tools the latest reply called (what a loop stop names)."""

    @property
    def started(self) -> bool:
        return self.run is not None

    def take(self, event: AgentEvent, ts: int) -> list[Entry]:
        """The entries one agent event adds (an error reply waits for the next event: a
        ``ProviderRetry`` after it means the attempt is being retried, not recorded)."""
        entries: list[Entry] = []
        if self._held is not None:
            held, held_ts = self._held
            self._held = None
            if isinstance(event, ProviderRetry):
                return entries
            entries += self._model_call(held, held_ts)
        if isinstance(event, AgentStart):
            if self.run is not None:
                raise ValueError(
                    "a second AgentStart: one recording records one run; start a new recording"
                )
            return entries + self._start(ts)
        if self.run is None or self.finished:
            return entries
        if isinstance(event, MessageEnd):
            message = event.message
            if isinstance(message, AssistantMessage):
                self._called = [call.name for call in message.tool_calls]
                if message.stop_reason is StopReason.ERROR:
                    self._held = (message, ts)
                else:
                    entries += self._model_call(message, ts)
        elif isinstance(event, ToolExecutionStart):
            entries += self._tool_called(event, ts)
        elif isinstance(event, ToolExecutionEnd):
            entries += self._tool_finished(event, ts)
        elif isinstance(event, InputRejected):
            self.outcome = "rejected"
        elif isinstance(event, AgentEnd):
            self.note_end(event.outcome)
            entries += self.finish(ts, stats_metadata(event.stats))
        return entries

    def note_end(self, outcome: RunOutcome) -> None:
        """What the run's end says beyond its last reply: a stop, a cancel, a rejection."""
        if outcome.end is RunEnd.STOPPED:
            loop = outcome.cause is StopCause.LOOP
            self.outcome = _loop_outcome(self._called) if loop else "stopped"
        elif outcome.end is RunEnd.CANCELLED:
            self.outcome = "aborted"
        elif outcome.end is RunEnd.REJECTED:
            self.outcome = "rejected"

    def _start(self, ts: int) -> list[Entry]:
        run_id = new_id("run")
        payload: dict[str, Any] = {"run_id": run_id, "task": self.task}
        props: dict[str, Any] = {"task": self.task, "status": "started"}
        delegation = self.delegation
        if delegation is None:  # a root: the run serves the recorder's goal
            cause = None
            link = CreateRelation(run_id, "serves", self.goal_id, {})
        else:  # caused by, and derived from, the call that delegated it
            payload["parent_run_id"] = delegation.parent_run_id
            props["depth"] = delegation.depth
            cause = delegation.call.event
            link = CreateRelation(run_id, "derived_from", delegation.call.node, {})
        started = Event.new(
            self.actor,
            "run.started",
            payload,
            causation_id=cause,
            correlation_id=run_id,
            ts_ms=ts,
        )
        self.run = OpenRun(run_id, started.id)
        ops: list[Op] = [CreateNode(run_id, "run", props), link]
        return [Entry(started), ops_entry(self.actor, ops, started.id, run_id, ts)]

    def _event(self, kind: str, payload: Any, ts: int) -> Event:
        assert self.run is not None
        return Event.new(
            self.actor,
            kind,
            payload,
            causation_id=self.run.started_event,
            correlation_id=self.run.run_id,
            ts_ms=ts,
        )

    def _paired(self, kind: str, payload: dict[str, Any], ops: list[Op], ts: int) -> list[Entry]:
        assert self.run is not None
        domain = self._event(kind, payload, ts)
        return [Entry(domain), ops_entry(self.actor, ops, domain.id, self.run.run_id, ts)]

    def _model_call(self, message: AssistantMessage, ts: int) -> list[Entry]:
        assert self.run is not None
        run_id = self.run.run_id
        self.turn += 1
        node = new_id("node")
        prompt = self.summarize(self.task) if self.turn == 1 else f"turn {self.turn}"
        call: dict[str, Any] = {
            "run_id": run_id,
            "model": message.model,
            "prompt_summary": prompt,
            "output_summary": None,
            "metadata": {},
        }
        ops: list[Op] = [
            CreateNode(node, "model_call", dict(call)),
            CreateRelation(node, "produced_by", run_id, {}),
        ]
        text = next(
            (b.text for b in message.content if isinstance(b, TextContent) and b.text), None
        )
        usage = message.usage
        finished: dict[str, Any] = {
            "run_id": run_id,
            "model": message.model,
            "output_summary": self.summarize(text if text is not None else "(no text)"),
            "metadata": {
                "usage": {
                    "input": usage.input,
                    "output": usage.output,
                    "cache_read": usage.cache_read,
                    "cache_write": usage.cache_write,
                }
            },
        }
        if self.price is not None and (cost := self.price(message)) is not None:
            finished["metadata"]["cost_usd"] = cost
        self.outcome = outcome_for(message.stop_reason)
        entries = self._paired("model.called", {"id": node, **call}, ops, ts)
        return [*entries, Entry(self._event("model.finished", finished, ts))]

    def _tool_called(self, event: ToolExecutionStart, ts: int) -> list[Entry]:
        assert self.run is not None
        run_id = self.run.run_id
        node = new_id("node")
        call: dict[str, Any] = {
            "run_id": run_id,
            "tool": event.tool_name,
            "input_summary": self.summarize(args_json(event.arguments)),
            "output_summary": None,
            "success": None,
            "metadata": {"args_fingerprint": args_fingerprint(event.tool_name, event.arguments)},
        }
        path = event.arguments.get("path")
        if event.tool_name in FILE_TOOLS and isinstance(path, str):
            call["metadata"]["path"] = self.summarize(path)
        ops: list[Op] = [
            CreateNode(node, "tool_call", dict(call)),
            CreateRelation(node, "produced_by", run_id, {}),
        ]
        entries = self._paired("tool.called", {"id": node, **call}, ops, ts)
        self.open_calls[event.tool_call_id] = OpenCall(
            node, entries[0].event.id, event.tool_name, event.arguments
        )
        return entries

    def _tool_finished(self, event: ToolExecutionEnd, ts: int) -> list[Entry]:
        assert self.run is not None
        result = event.result
        text = next((b.text for b in result.content if isinstance(b, TextContent)), None)
        summary = self.summarize(text if text is not None else "(no output)")
        entries: list[Entry] = []
        if result.is_error:
            failure = new_id("node")
            title = f"tool {result.tool_name} failed"
            ops: list[Op] = [CreateNode(failure, "failure", {"title": title, "summary": summary})]
            call = self.open_calls.get(result.tool_call_id)
            if call is not None:
                ops.append(CreateRelation(failure, "derived_from", call.node, {}))
            payload = {"id": failure, "failure_id": failure, "title": title, "summary": summary}
            entries += self._paired("failure.observed", payload, ops, ts)
        finished: dict[str, Any] = {
            "run_id": self.run.run_id,
            "tool": result.tool_name,
            "output_summary": summary,
            "success": not result.is_error,
        }
        entries.append(Entry(self._event("tool.finished", finished, ts)))
        self.open_calls.pop(result.tool_call_id, None)
        return entries

    def finish(self, ts: int, metadata: Any = None) -> list[Entry]:
        """``run.finished`` with the outcome derived so far (once; nothing before a start)."""
        if self.run is None or self.finished:
            return []
        entries: list[Entry] = []
        if self._held is not None:
            held, held_ts = self._held
            self._held = None
            entries += self._model_call(held, held_ts)
        self.finished = True
        return entries + finish_entries(self.actor, self.run, self.outcome, ts, metadata)
