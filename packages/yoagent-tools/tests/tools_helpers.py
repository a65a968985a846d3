"""Helpers for the tool tests: contexts, process-group probes, and whether rg must be found."""

from __future__ import annotations

import importlib.metadata
import os
import time
from collections.abc import Callable

import pytest

from yoagent.core import CancelToken, ToolContext, ToolResult
from yoagent.tools import find_ripgrep


def ripgrep_expected() -> str | None:
    """Why ``rg`` must be found here, or ``None`` when its tests may skip.

    It must when ``YOAGENT_REQUIRE_RG`` or ``CI`` is set, or when the ``ripgrep`` wheel
    (the dev group, the ``ripgrep`` extra) is installed: a CI run without rg then fails
    instead of passing on skipped tests.
    """
    if os.environ.get("YOAGENT_REQUIRE_RG"):
        return "YOAGENT_REQUIRE_RG is set"
    if os.environ.get("CI"):
        return "CI is set"
    try:
        importlib.metadata.distribution("ripgrep")
    except importlib.metadata.PackageNotFoundError:
        return None
    return "the ripgrep wheel is installed"


needs_rg = pytest.mark.skipif(
    find_ripgrep() is None and ripgrep_expected() is None,
    reason="ripgrep (rg) is not installed: install the `ripgrep` extra",
)
"""For tests of the ripgrep engine: skipped only where rg is neither found nor expected."""

ENGINES = [pytest.param("ripgrep", marks=needs_rg), "python"]
"""Both search engines, for ``@pytest.mark.parametrize("engine", ENGINES)``."""


def make_ctx(
    name: str = "tool",
    *,
    cancel: CancelToken | None = None,
    on_update: Callable[[ToolResult], None] | None = None,
) -> ToolContext:
    """A ToolContext for one call."""
    return ToolContext(tool_call_id="call-1", tool_name=name, cancel=cancel, on_update=on_update)


def _stat_fields(pid: int | str) -> list[str] | None:
    """The fields of ``/proc/<pid>/stat`` after the command name, or ``None`` when unreadable."""
    try:
        with open(f"/proc/{pid}/stat") as file:
            text = file.read()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def group_members(pgid: int) -> list[int]:
    """Live (not zombie) processes whose process group is ``pgid``."""
    if not os.path.isdir("/proc"):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return []
        return [pgid]
    members: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields = _stat_fields(entry)
        if fields is None:
            continue
        state, pgrp = fields[0], int(fields[2])
        if pgrp == pgid and state not in ("Z", "X"):
            members.append(int(entry))
    return members


def wait_group_gone(pgid: int, within: float = 3.0) -> list[int]:
    """Poll until no live process is left in the group; returns what is left."""
    deadline = time.monotonic() + within
    left = group_members(pgid)
    while left and time.monotonic() < deadline:
        time.sleep(0.02)
        left = group_members(pgid)
    return left


def is_alive(pid: int) -> bool:
    """Whether ``pid`` runs and is not a zombie."""
    fields = _stat_fields(pid)
    return fields is not None and fields[0] not in ("Z", "X")
