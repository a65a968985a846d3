"""One run being recorded: the event sink a run feeds, and the handle on its outcome."""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable
from types import TracebackType

import anyio

from yoagent.core import AgentEvent, RunOutcome

from ._errors import GaspError
from ._run_writer import RunWriter

logger = logging.getLogger("yoagent.gasp")

EventSink = Callable[[AgentEvent], None]


class RecordingError(GaspError, RuntimeError):
    """Recording a run failed (the run itself went on); the cause is chained."""


class Recording:
    """One run being recorded: an event sink, and the handle on the recording's outcome.

    Call it with each event (``on_event=recording``), then :meth:`close` it (or use it as a
    ``with`` / ``async with`` block). A run whose ``AgentEnd`` never came (a dropped
    stream) is finished on close with the outcome derived so far — and so is the run of a
    recording dropped without being closed, once it is garbage-collected.
    """

    def __init__(self, writer: RunWriter, forward: EventSink | None) -> None:
        self._writer = writer
        self._forward = forward
        # The writer thread holds no reference to this handle: when the handle is garbage,
        # the run is closed instead of holding the lease for ever.
        finalizer = weakref.finalize(self, writer.close_dropped)
        finalizer.atexit = False

    # --- the sink ------------------------------------------------------------------------

    def __call__(self, event: AgentEvent) -> None:
        """Forward ``event``, then queue it for recording. Never raises."""
        forward = self._forward
        if forward is not None:
            try:
                forward(event)
            except Exception:
                self._forward = None
                logger.exception("the forwarded event consumer raised; it gets no more events")
        self._writer.put(event)

    def note_outcome(self, outcome: RunOutcome) -> None:
        """How the run ended, when the recording must close before its ``AgentEnd``
        arrives (an extension's ``finish`` comes first). Never raises."""
        self._writer.put(outcome)

    # --- the handle ----------------------------------------------------------------------

    @property
    def run_id(self) -> str | None:
        """The recorded run's id (``None`` until ``AgentStart`` arrives)."""
        run = self._writer.mapper.run
        return None if run is None else run.run_id

    @property
    def outcome(self) -> str:
        """The run's outcome as derived so far."""
        return self._writer.mapper.outcome

    @property
    def error(self) -> BaseException | None:
        """Why recording stopped, if it failed (it was logged when it happened)."""
        return self._writer.error

    @property
    def commit(self) -> str | None:
        """The sha of the run's closing commit, once made."""
        return self._writer.commit

    @property
    def closed(self) -> bool:
        """True once :meth:`close` finished."""
        return self._writer.closing and self._writer.done

    def close(self) -> str | None:
        """Finish the recording (the run, if it never ended, as dropped), wait for the
        writer and the commit, and return the run id (``None`` if no run started).

        Never raises for a recording failure: check :attr:`error`, or use :meth:`result`.
        """
        self._writer.close()
        self._writer.join()
        return self.run_id

    def result(self) -> str | None:
        """:meth:`close`, raising :class:`RecordingError` if recording failed."""
        run_id = self.close()
        if self.error is not None:
            raise RecordingError(f"recording the run failed: {self.error}") from self.error
        return run_id

    async def aclose(self) -> str | None:
        """:meth:`close` without blocking the event loop (shielded from cancellation, so
        the run is always closed in the log)."""
        with anyio.CancelScope(shield=True):
            return await anyio.to_thread.run_sync(self.close)

    async def finish(self) -> str | None:
        """:meth:`aclose`, raising :class:`RecordingError` if recording failed."""
        await self.aclose()
        return self.result()

    def __enter__(self) -> Recording:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> Recording:
        return self

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
