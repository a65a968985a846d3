"""Running a reply's tool calls, batch by batch, per the run's ``ToolExecution``.

Each call goes its one way through ``ToolCalls.execute`` (see ``tool_call``); this module
decides when: which calls form a batch, which run at once in this task (see ``eager``)
and which in the run's background group, and what answers the calls never begun
(see ``held``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import anyio
from anyio.abc import TaskGroup

from yoagent.core._hooks.basic import ApprovalDecision
from yoagent.core._types.content import ToolCall
from yoagent.core._types.messages import AgentMessage, ToolResultMessage

from .eager import Suspended, first_step, resume
from .held import unbegun, unbegun_on_resume
from .settings import ToolExecution
from .state import RunState
from .tool_call import CANCELLED_RESULT, ToolCalls, error_result


class ToolRunner:
    """Runs one run's tool calls under its strategy and cancellation."""

    __slots__ = ("_background", "calls", "state", "yielded")

    def __init__(self, state: RunState, calls: ToolCalls) -> None:
        self.state = state
        self.calls = calls
        self.yielded = False
        """Set when a batch ran in a task group (which always yields to the event loop)."""
        self._background: TaskGroup | None = None

    def run_in(self, background: TaskGroup | None) -> None:
        """Where calls run that must wait alongside another (the run's background group)."""
        self._background = background

    async def run_calls(
        self, calls: list[ToolCall], *, answers: Mapping[str, ApprovalDecision] | None = None
    ) -> tuple[list[ToolResultMessage], list[AgentMessage]]:
        """Run ``calls`` per the run's strategy; returns their results (in call order,
        appended to the history) and any steering messages that arrived, which skip calls
        not yet begun. A cancel answers every unfinished call "cancelled".

        A call a hook defers is held: a placeholder answers it, and batches after it wait
        (held, unjudged). With ``answers`` (a resume) ``calls`` are held ones: their results
        replace the placeholders, the caller's decision answers a deferral, a caller's
        denial answers a call at once (it never runs, begun or not), and a call not begun
        (a cancel, or queued behind a call deferred again) stays held, carrying the caller's
        ``Allow`` / ``Modify`` to the next resume."""
        state = self.state
        tool_calls = self.calls
        resuming = answers is not None
        place = state.settle if resuming else state.append
        results: list[ToolResultMessage | None] = [None] * len(calls)
        steering: list[AgentMessage] = []
        if tool_calls.deferred:
            tool_calls.deferred = []
        if answers is not None:
            tool_calls.answers = answers
        size = len(calls)
        strategy = state.settings.tool_execution
        if strategy is ToolExecution.SEQUENTIAL:
            size = 1
        elif strategy is ToolExecution.BATCHED:
            size = max(state.settings.batch_size, 1)
        try:
            for start in range(0, len(calls), size):
                if state.cancel.cancelled:
                    break
                await self._run_batch(calls, range(start, min(start + size, len(calls))), results)
                steering = state.take_steering()
                if steering or tool_calls.deferred:
                    break
        except BaseException:
            # The run is dying: keep what finished; the run answers the rest "cancelled" (a
            # resume does here: a held call that began must not stay held, to run again).
            if answers is not None:
                state.quiet()
            for index, result in enumerate(results):
                call = calls[index]
                if result is None and answers is not None:
                    if call.id in tool_calls.started:
                        result = tool_calls.answer(call, CANCELLED_RESULT)
                    else:
                        result = unbegun_on_resume(tool_calls, call, answers.get(call.id))
                if result is not None:
                    place(result)
            raise
        finally:
            if resuming:
                tool_calls.answers = {}
        steered = bool(steering)
        for index, call in enumerate(calls):
            if results[index] is None:
                answer = answers.get(call.id) if answers is not None else None
                results[index] = unbegun(
                    tool_calls, call, answer, resuming=resuming, steered=steered
                )
        final = [result for result in results if result is not None]
        for result in final:
            place(result)
        return final, steering

    async def _run_batch(
        self, calls: Sequence[ToolCall], batch: range, results: list[ToolResultMessage | None]
    ) -> None:
        """Run one batch. Each call starts at once, in call order, in this task (see
        ``eager``): a batch whose calls never wait needs no task at all. The first call
        that waits is driven on here, and the calls after it start in the run's background
        group, so they run while it waits; the batch ends when all have."""
        started: set[int] = set()
        execute = self.calls.execute
        # One cancel scope for the batch: a cancel stops every call in it at once.
        with self.state.cancel.scope():
            waiting: Suspended | None = None
            position = 0
            while waiting is None and position < len(batch):
                index = batch[position]
                started.add(index)
                results[index], waiting = first_step(execute(calls[index]))
                position += 1
            if waiting is not None:
                await self._finish_batch(
                    waiting, batch[position - 1], batch[position:], calls, results, started
                )
        for index in batch:
            if results[index] is None and index in started:
                # Cancelled while running: it has its start event; it gets its end.
                result = error_result(calls[index], CANCELLED_RESULT)
                self.calls.end(result)
                results[index] = result

    async def _finish_batch(
        self,
        waiting: Suspended,
        index: int,
        rest: range,
        calls: Sequence[ToolCall],
        results: list[ToolResultMessage | None],
        started: set[int],
    ) -> None:
        """Drive the waiting call here while the ``rest`` run in the background group.

        No cancel scope may be opened in this task while the waiting call may hold one
        (they would not nest), hence the run's group rather than one of the batch's own.
        """
        others = len(rest)
        all_done = anyio.Event()
        execute = self.calls.execute

        async def one(position: int) -> None:
            nonlocal others
            try:
                with self.state.cancel.scope():
                    started.add(position)
                    results[position] = await execute(calls[position])
            finally:
                others -= 1
                if others == 0:
                    all_done.set()

        background = self._background
        assert background is not None or not rest, "tool calls run inside a run"
        failed = True
        try:
            if rest and background is not None:
                self.yielded = True
                for position in rest:
                    # A fixed name spares anyio deriving one from the callable.
                    background.start_soon(one, position, name="yoagent tool call")
            results[index] = await resume(waiting)
            failed = False
        finally:
            if results[index] is None:
                waiting.close()
            if rest:
                if failed:
                    self.state.cancel.cancel()  # the run is dying: its calls end with it
                with anyio.CancelScope(shield=True):
                    await all_done.wait()
