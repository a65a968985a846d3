"""Where decision spend goes: the recorder of the run (or other scope) a call is made in.

A gate, guard or advisor running inside an agent run sets the run's ledger as the recorder
for the duration of its hook (``recording_decision_spend``); every decision request made
meanwhile — the requests of a fallback chain, the parts of a split request — is recorded
there, including the usage of a request that failed or timed out part way.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Generator
from contextlib import contextmanager
from contextvars import ContextVar

from yoagent.core import Usage

logger = logging.getLogger("yoagent.decision")

SpendRecorder = Callable[[Usage, float | None], None]
"""Takes one request's usage and its cost in dollars (``None``: unpriced). Core's run
ledger method ``RunSpend.record_decision`` has this shape."""

_recorder: ContextVar[SpendRecorder | None] = ContextVar("yoagent_decision_spend", default=None)


@contextmanager
def recording_decision_spend(recorder: SpendRecorder | None) -> Generator[None]:
    """Record every decision request made inside the block (in this task and the tasks it
    starts) with ``recorder``; ``None`` records nothing."""
    token = _recorder.set(recorder)
    try:
        yield
    finally:
        _recorder.reset(token)


def record_decision(usage: Usage | None, cost_usd: float | None) -> None:
    """Record one request with the current recorder, if any. A failing recorder is logged,
    never raised: spend accounting must not change a decision."""
    recorder = _recorder.get()
    if recorder is None:
        return
    try:
        recorder(usage if usage is not None else Usage(), cost_usd)
    except Exception:
        logger.exception("recording decision spend failed")
