"""The run's durable event stream: what a reconnecting consumer reads, each event once.

Events are written from inside steps only (a write from workflow code would take a step
number, and events of parallel tool calls arrive in no fixed order): what the loop emitted
since the last write goes out as one record when the next step runs for real. Each event
gets a key that is the same in a recovered run (its kind, the run's segment, the tool call
it belongs to, and how many like it came before); a recovered run re-emits the events of
the steps it replays, and the keys already in the stream are not written again. Events are
numbered in the order they were first written: a reader resumes from any number.

Token deltas, tool progress and sub-agent events are live only (``on_event`` in the
process running the run): a delegation's events are in its own stream.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, cast

from dbos import DBOS
from dbos import error as dbos_error
from yoagent.core import (
    AgentEvent,
    MessageEnd,
    MessageStart,
    MessageUpdate,
    ProgressMessage,
    SubAgentEvent,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolExecutionUpdate,
    ToolResultMessage,
)

from ._codec import dump_event, load_event
from ._context import outside_workflow

STREAM_KEY = "yoagent.events"
"""The DBOS stream (of the run's workflow) holding its events."""

_LIVE_ONLY = (MessageUpdate, ToolExecutionUpdate, ProgressMessage, SubAgentEvent)

LiveSink = Callable[[AgentEvent], None]


@dataclass(slots=True, frozen=True)
class DurableEvent:
    """One event of a run's durable stream; ``offset`` numbers it from 0 (read again from
    ``offset + 1`` to go on after it)."""

    offset: int
    event: AgentEvent


def _group(event: AgentEvent) -> str:
    """What tells this event from others of its kind: the tool call it belongs to."""
    if isinstance(event, ToolExecutionStart):
        return event.tool_call_id
    if isinstance(event, ToolExecutionEnd):
        return event.result.tool_call_id
    if isinstance(event, MessageStart | MessageEnd) and isinstance(
        event.message, ToolResultMessage
    ):
        return event.message.tool_call_id
    return ""


class EventLog:
    """One execution of a run's workflow: events buffered as the loop emits them, written
    to the durable stream by the next step that runs for real."""

    def __init__(self, live: LiveSink | None = None) -> None:
        self.live = live
        self.segment = 0
        """Counts the run's resumes: the loop numbers turns from 1 again in each."""
        self._seen: Counter[tuple[int, str, str]] = Counter()
        self._buffer: list[tuple[str, Any]] = []
        self._written: set[str] = set()
        self._count = 0

    async def load(self, run_id: str) -> None:
        """Learn the keys the stream holds already (from an execution before a crash).
        Read outside the workflow: a workflow's reads are recorded, and a replay would be
        handed the stream as it was the first time."""

        async def read() -> None:
            offset = 0
            while True:
                try:
                    record = await DBOS.read_stream_offset_async(
                        run_id, STREAM_KEY, offset, timeout_seconds=0.0
                    )
                except dbos_error.DBOSStreamTimeoutError:
                    return
                events = cast("dict[str, Any]", record)["events"]
                self._written.update(item["key"] for item in events)
                self._count += len(events)
                offset += 1

        await outside_workflow(read)

    def emit(self, event: AgentEvent) -> None:
        """The loop's event sink: to the live consumer, and buffered for the stream."""
        if self.live is not None:
            self.live(event)
        if isinstance(event, _LIVE_ONLY):
            return
        group = _group(event)
        index = (self.segment, event.type, group)
        self._seen[index] += 1
        key = f"{self.segment}/{event.type}/{group}/{self._seen[index]}"
        if key not in self._written:
            self._buffer.append((key, event))

    async def flush(self) -> None:
        """Write what is buffered (call from inside a step, where writes take no number)."""
        taken, self._buffer = self._buffer, []
        events: list[dict[str, Any]] = []
        for key, event in taken:
            if key not in self._written:
                self._written.add(key)
                events.append({"key": key, "event": dump_event(event)})
        if events:
            first, self._count = self._count, self._count + len(events)
            await DBOS.write_stream_async(STREAM_KEY, {"first": first, "events": events})


async def read_events(
    run_id: str, *, offset: int = 0, max_wait: float | None = None
) -> AsyncIterator[DurableEvent]:
    """The events of run ``run_id`` from ``offset`` on, as they are written, until the run
    ends. ``max_wait`` bounds the wait for each next event (``None``: no bound)."""
    if offset < 0:
        raise ValueError(f"offset must be >= 0, got {offset}")
    async for record in DBOS.read_stream_async(run_id, STREAM_KEY, timeout_seconds=max_wait):
        data = cast("dict[str, Any]", record)
        for index, item in enumerate(data["events"]):
            number = data["first"] + index
            if number >= offset:
                yield DurableEvent(offset=number, event=load_event(item["event"]))
