"""Execution limits: how many turns, tokens and seconds one run may use."""

from __future__ import annotations

import time
from dataclasses import dataclass

from .messages import Usage
from .outcome import StopCause


@dataclass(slots=True, kw_only=True, frozen=True)
class ExecutionLimits:
    """Caps on one run. ``None`` means no cap. Defaults: 50 turns, 1M tokens, 10 minutes."""

    max_turns: int | None = 50
    max_total_tokens: int | None = 1_000_000
    max_duration: float | None = 600.0

    @classmethod
    def unlimited(cls) -> ExecutionLimits:
        """No cap at all (a run then ends only when the model stops, or on a cancel)."""
        return cls(max_turns=None, max_total_tokens=None, max_duration=None)


class ExecutionTracker:
    """Counts one run against its :class:`ExecutionLimits`."""

    __slots__ = ("_started", "limits", "tokens", "turns")

    def __init__(self, limits: ExecutionLimits) -> None:
        self.limits = limits
        self.turns = 0
        self.tokens = 0
        self._started = time.monotonic()

    def record(self, usage: Usage) -> None:
        """Count one model call's tokens."""
        self.tokens += usage.total

    def elapsed(self) -> float:
        """Seconds since the run started."""
        return time.monotonic() - self._started

    def exceeded(self) -> tuple[StopCause, str] | None:
        """Which limit stops the run before another request, and why in words; ``None``
        while none does."""
        limits = self.limits
        if limits.max_turns is not None and self.turns >= limits.max_turns:
            return StopCause.TURN_LIMIT, f"turn limit reached ({limits.max_turns} turns)"
        if limits.max_total_tokens is not None and self.tokens >= limits.max_total_tokens:
            return (
                StopCause.TOKEN_LIMIT,
                f"token limit reached ({self.tokens} of {limits.max_total_tokens} tokens)",
            )
        if limits.max_duration is not None:
            elapsed = self.elapsed()
            if elapsed >= limits.max_duration:
                return (
                    StopCause.TIME_LIMIT,
                    f"time limit reached ({elapsed:.0f}s of {limits.max_duration:.0f}s)",
                )
        return None
