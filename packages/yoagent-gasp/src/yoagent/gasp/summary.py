"""What the recorder keeps of each call: one-line summaries, argument fingerprints, and the
run outcome a stop reason stands for. The log is meant to be cloned and shared, so it
holds bounded summaries, never whole transcripts."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from yoagent.core import StopReason

from ._json import as_object

Summarizer = Callable[[str], str]
"""Turns a text (a task, tool arguments or output, a reply) into what the log keeps."""

SUMMARY_CHARS = 200

_FNV_OFFSET = 0xCBF29CE484222325
_FNV_PRIME = 0x100000001B3
_MASK = 2**64 - 1

_IDENTITY_KEYS: dict[str, tuple[str, ...]] = {
    "read_file": ("path",),
    "edit_file": ("path",),
    "write_file": ("path",),
    "list_files": ("directory", "path"),
    "bash": ("command",),
}

_OUTCOMES = {
    StopReason.STOP: "completed",
    StopReason.TOOL_USE: "completed",
    StopReason.LENGTH: "truncated",
    StopReason.ERROR: "error",
    StopReason.ABORTED: "aborted",
    StopReason.REFUSAL: "refused",
}


def summarize(text: str) -> str:
    """Collapse all whitespace to single spaces; past 200 characters, keep the first 200
    and add ``…``."""
    line = " ".join(text.split())
    return line if len(line) <= SUMMARY_CHARS else line[:SUMMARY_CHARS] + "…"


def args_json(arguments: Any) -> str:
    """Tool arguments as compact JSON with sorted keys (as serde_json writes a map)."""
    return json.dumps(
        arguments, ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str
    )


def fnv1a_64(data: bytes) -> int:
    """The 64-bit FNV-1a hash."""
    value = _FNV_OFFSET
    for byte in data:
        value = ((value ^ byte) * _FNV_PRIME) & _MASK
    return value


def args_fingerprint(tool: str, arguments: Any) -> str:
    """``<tool>:<16 hex digits>``: FNV-1a over what identifies the call — the path for the
    file tools, the directory (else path) for ``list_files``, the command for ``bash``,
    otherwise the whole arguments JSON. Paging arguments do not split a file's identity."""
    identity: str | None = None
    fields = as_object(arguments)
    if fields is not None:
        present = [key for key in _IDENTITY_KEYS.get(tool, ()) if key in fields]
        if present and isinstance(fields[present[0]], str):
            identity = fields[present[0]]
    if identity is None:
        identity = args_json(arguments)
    return f"{tool}:{fnv1a_64(identity.encode('utf-8')):016x}"


def outcome_for(stop_reason: StopReason) -> str:
    """The run outcome a reply's stop reason stands for."""
    return _OUTCOMES.get(stop_reason, "completed")
