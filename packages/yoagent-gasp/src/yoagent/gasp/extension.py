"""The recorder as an extension of core's: ``agent.with_extension(RecordingExtension(r))``
records each of the agent's runs without wrapping its stream.

Core calls :meth:`RunHooks.on_event` with every event *after* the caller got it, so the
caller's UI is always served before the recording; the hook only enqueues (the
recording's writer thread does the disk work). The extension is advisory and its hooks
never raise: a recording that fails (or cannot start) stops, the run goes on, and the
failure is logged once, as it happens (logger ``yoagent.gasp``), then kept on
:attr:`RecordingExtension.errors` and handed to ``on_error`` (when the run finishes).

A delegated run whose top-level run is being recorded is already in that recording (its
events reach the top-level stream as ``SubAgentEvent``s and are logged as a run of its
own, derived from the delegating call), so the extension does not open a second
recording for it; a delegated run with nothing recording above it is recorded as a run
of its own.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import anyio

from yoagent.core import AgentEvent, Extension, RunOutcome
from yoagent.core.extension import RunContext, RunHooks

from .recorder import Recorder
from .recording import Recording, RecordingError

logger = logging.getLogger("yoagent.gasp")

ErrorSink = Callable[[RecordingError], None]


def default_task(run: RunContext) -> str:
    """What a run was asked: its prompts (one per line), else its label, else
    ``(continue)`` for a run that continues the conversation without a prompt."""
    if run.prompts:
        return "\n".join(run.prompts)
    return run.label or "(continue)"


START_WAIT = 1.0
"""Seconds a run's start waits for the run before it to be committed."""


class RecordingExtension(Extension):
    """Records the runs of the agents it is installed on into ``recorder``'s repository.

    Install it with ``agent.with_extension(...)`` (or ``with_tree_extension``: delegated
    runs are recorded inside their top-level run either way). Runs are recorded one at a
    time, as the recorder requires; call :meth:`close` (or :meth:`aclose`) before the
    process exits so the last run's commit is made.
    """

    name = "gasp-recorder"

    def __init__(
        self,
        recorder: Recorder,
        *,
        task: Callable[[RunContext], str] = default_task,
        on_error: ErrorSink | None = None,
    ) -> None:
        self.recorder = recorder
        self._task = task
        self._on_error = on_error
        self.errors: list[RecordingError] = []
        """Every recording failure so far (each also logged and given to ``on_error``)."""
        self.last: Recording | None = None
        """The latest run's recording (a failed one too: see its ``error``)."""
        self._pending: list[Recording] = []
        """Recordings started and not yet settled (closed, failure reported)."""
        self._lock = threading.Lock()

    def start_run(self, run: RunContext) -> RunHooks:
        """The run's hooks: a fresh recording, or no-ops for a delegated run already
        recorded above it, or when the recording cannot start (reported)."""
        with self._lock:
            current = self.last
            if run.depth > 0 and current is not None and not current.closed:
                return RunHooks()  # recorded inside the top-level run's recording
            try:
                # Called in the event loop: a slow commit hook of the run before must not
                # stall it for long, so after START_WAIT this run goes unrecorded (reported).
                recording = self.recorder.recording(
                    self._task(run), wait=START_WAIT, model=run.model
                )
            except Exception as error:
                self.report(error, "could not start recording the run")
                return RunHooks()
            self.last = recording
            self._pending.append(recording)
        return _RecordingHooks(self, recording)

    def report(self, error: BaseException, what: str, *, log: bool = True) -> None:
        """Keep and hand on a recording failure (the run is not affected); ``log`` it
        unless that was done when it happened."""
        failure = RecordingError(f"{what}: {error}")
        failure.__cause__ = error
        if log:
            logger.error("GASP: %s; the run goes on without it: %s", what, error)
        self.errors.append(failure)
        if self._on_error is not None:
            try:
                self._on_error(failure)
            except Exception:
                logger.exception("the on_error callback of the GASP recording extension raised")

    def settle(self, recording: Recording) -> None:
        """A closed recording's failure, if any, reported (once)."""
        with self._lock:
            if recording not in self._pending:
                return
            self._pending.remove(recording)
        if recording.error is not None:
            # the writer logged it when it happened
            self.report(recording.error, "recording the run failed", log=False)

    def close(self) -> None:
        """Wait for the recordings still being written (their runs' commits), and report
        the failures not yet reported."""
        with self._lock:
            pending = list(self._pending)
        for recording in pending:
            recording.close()  # returns at once when already closed
            self.settle(recording)

    async def aclose(self) -> None:
        """:meth:`close` without blocking the event loop."""
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(self.close)


class _RecordingHooks(RunHooks):
    """One run's hooks: every event into the recording; the recording closed at the end."""

    def __init__(self, extension: RecordingExtension, recording: Recording) -> None:
        self._extension = extension
        self._recording = recording

    def on_event(self, event: AgentEvent) -> None:
        self._recording(event)  # only enqueues; never raises

    async def finish(self, outcome: RunOutcome) -> None:
        recording = self._recording
        recording.note_outcome(outcome)  # its AgentEnd comes after this hook
        try:
            # Abandoned (not cancelled) if core's finish bound runs out: the writer goes on
            # and commits; the next run, or close(), waits for it.
            await anyio.to_thread.run_sync(recording.close, abandon_on_cancel=True)
        finally:
            if recording.closed:
                self._extension.settle(recording)
