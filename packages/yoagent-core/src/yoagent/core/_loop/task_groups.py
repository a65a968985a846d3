"""Unwrapping anyio's exception groups: a task group wraps even a single exception."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from typing import cast


def _members(error: BaseException) -> tuple[BaseException, ...] | None:
    if isinstance(error, BaseExceptionGroup):
        return cast("BaseExceptionGroup[BaseException]", error).exceptions
    return None


def single_leaf(error: BaseException) -> BaseException:
    """The one exception inside nested single-member exception groups, else ``error``."""
    current = error
    members = _members(current)
    while members is not None and len(members) == 1:
        current = members[0]
        members = _members(current)
    return current


@contextmanager
def ungrouped() -> Generator[None]:
    """Let a lone exception out of task groups as itself (``except KeyboardInterrupt``
    keeps working); a group of several stays a group."""
    try:
        yield
    except BaseExceptionGroup as grouped:
        leaf = single_leaf(grouped)
        if leaf is grouped:
            raise
        raise leaf from None
