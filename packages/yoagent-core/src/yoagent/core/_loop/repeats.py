"""The same tool calls over and over: not run again, the model told once, then the stop."""

from __future__ import annotations

import json

from yoagent.core._types.content import ToolCall
from yoagent.core._types.markers import LOOP_NUDGE_PREFIX


class RepeatGuard:
    """Counts identical rounds of tool calls (same names and arguments, any order).

    At ``limit`` rounds in a row the calls are not run and the model gets a nudge; if it
    repeats them once more, the run stops. ``None`` turns the check off.
    """

    __slots__ = ("_count", "_limit", "_nudged", "_signature")

    def __init__(self, limit: int | None) -> None:
        self._limit = limit
        self._signature: tuple[tuple[str, str], ...] | None = None
        self._count = 0
        self._nudged = False

    def reset(self) -> None:
        """A turn without calls breaks any repetition."""
        self._signature = None

    def seen(self, calls: list[ToolCall]) -> int | None:
        """Count this round; the number of identical rounds when it is at the limit."""
        if self._limit is None:
            return None
        signature = tuple(
            sorted(
                (call.name, json.dumps(call.arguments, sort_keys=True, default=str))
                for call in calls
            )
        )
        if signature == self._signature:
            self._count += 1
        else:
            self._signature = signature
            self._count = 1
            self._nudged = False
        return self._count if self._count >= self._limit else None

    def verdict(self, calls: list[ToolCall], count: int) -> tuple[bool, str]:
        """``(False, nudge)`` the first time (a note for the model), then ``(True, reason)``
        (why the run stops)."""
        names = ", ".join(sorted({call.name for call in calls}))
        if not self._nudged:
            self._nudged = True
            return False, (
                f"{LOOP_NUDGE_PREFIX}{names} called with the same arguments {count} turns in a "
                "row; they were not run again. Try a different approach, or answer with what "
                "you have.]"
            )
        return True, f"loop detected: {names} called with the same arguments {count} turns in a row"
