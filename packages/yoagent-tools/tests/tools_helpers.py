"""Helpers for the tool tests: contexts and process-group probes."""

from __future__ import annotations

import os
import time
from collections.abc import Callable

from yoagent.core import CancelToken, ToolContext, ToolResult


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
