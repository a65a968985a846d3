"""Eager start: run a coroutine's first step at once, in the calling task.

Most tool calls (a lookup, a computation, a cached answer) finish without ever waiting.
Running each call's first step right away lets such a batch complete with no task group
and no spawned task (measured: an anyio task group with two spawns is about a third of
the loop's cost per turn). A call that does wait is driven on in the same task by
:func:`resume`, which hands what the coroutine yielded to the event loop unchanged, as
``await`` would: cancel scopes and context variables stay with the task that entered
them. Only the coroutine protocol is used, so this runs under asyncio and trio alike.
"""

from __future__ import annotations

import types
from collections.abc import Coroutine, Generator
from typing import Any, TypeVar

T = TypeVar("T")


class Suspended:
    """A coroutine stopped at its first wait, and what it yielded there."""

    __slots__ = ("coroutine", "yielded")

    def __init__(self, coroutine: Coroutine[Any, Any, Any], yielded: Any) -> None:
        self.coroutine = coroutine
        self.yielded = yielded

    def close(self) -> None:
        """Abandon it (its ``finally`` blocks run now)."""
        self.coroutine.close()


def first_step(coroutine: Coroutine[Any, Any, T]) -> tuple[T | None, Suspended | None]:
    """Run ``coroutine`` until it first waits: ``(result, None)`` when it finished,
    ``(None, suspended)`` when it waits. Exceptions it raises propagate."""
    try:
        yielded = coroutine.send(None)
    except StopIteration as done:
        return done.value, None
    return None, Suspended(coroutine, yielded)


@types.coroutine
def resume(suspended: Suspended) -> Generator[Any, Any, Any]:
    """Drive a suspended coroutine to its end in the awaiting task; returns its result."""
    coroutine = suspended.coroutine
    yielded = suspended.yielded
    while True:
        try:
            sent = yield yielded
        except GeneratorExit:
            coroutine.close()
            raise
        except BaseException as error:  # a cancellation, delivered to the coroutine
            try:
                yielded = coroutine.throw(error)
            except StopIteration as done:
                return done.value
        else:
            try:
                yielded = coroutine.send(sent)
            except StopIteration as done:
                return done.value
