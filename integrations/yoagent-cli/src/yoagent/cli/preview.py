"""What a write or an edit will change, shown before the person is asked to allow it.

``edit_file`` is previewed by applying its edits to the file's current text in memory
(with the tool's own :func:`~yoagent.tools.edit_file.apply_edits`, so the preview matches
what will be written), ``write_file`` by a diff against the file it replaces, or the new
file's first lines. Nothing is written here.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from yoagent.core import ToolError
from yoagent.tools.edit_file import Edit, apply_edits

MAX_PREVIEW_BYTES = 2 * 1024 * 1024
"""Files larger than this are not read for a preview."""
DIFF_LINES = 80
"""The most diff lines a preview shows."""
HEAD_LINES = 20
"""How much of a new file a preview shows."""


def target_path(cwd: Path, path: str) -> Path:
    """Where a tool's ``path`` argument points, for previews and undo (``cwd``-relative)."""
    return cwd / Path(path).expanduser() if not Path(path).is_absolute() else Path(path)


def _edits(arguments: Mapping[str, Any]) -> list[Edit] | None:
    raw = arguments.get("edits")
    if isinstance(raw, list) and raw:
        edits: list[Edit] = []
        for item in raw:  # pyright: ignore[reportUnknownVariableType]
            if not isinstance(item, dict):
                return None
            entry: dict[str, Any] = item  # pyright: ignore[reportUnknownVariableType]
            old, new = entry.get("old_text"), entry.get("new_text")
            if not isinstance(old, str) or not isinstance(new, str):
                return None
            edits.append(Edit(old, new))
        return edits
    old, new = arguments.get("old_text"), arguments.get("new_text")
    if isinstance(old, str) and isinstance(new, str):
        return [Edit(old, new)]
    return None


def _cap(lines: list[str]) -> list[str]:
    if len(lines) <= DIFF_LINES:
        return lines
    return [*lines[:DIFF_LINES], f"… {len(lines) - DIFF_LINES} more diff lines"]


def unified(before: str, after: str, name: str) -> list[str]:
    """A unified diff of two texts, as lines (``---``/``+++`` headers first)."""
    return list(
        difflib.unified_diff(
            before.splitlines(),
            after.splitlines(),
            fromfile=f"a/{name}",
            tofile=f"b/{name}",
            n=2,
            lineterm="",
        )
    )


def _read(path: Path) -> bytes | None:
    """The file's bytes; ``None`` when it does not exist. ``OSError`` when it cannot be read."""
    try:
        if path.stat().st_size > MAX_PREVIEW_BYTES:
            raise OSError(f"it is larger than {MAX_PREVIEW_BYTES // 1024 // 1024} MB")
        return path.read_bytes()
    except FileNotFoundError:
        return None


def preview(tool_name: str, arguments: Mapping[str, Any], cwd: Path) -> list[str]:
    """The lines to show before asking about a ``write_file`` or ``edit_file`` call: a
    unified diff, a new file's first lines, or why there is no preview."""
    path_argument = arguments.get("path")
    if not isinstance(path_argument, str) or tool_name not in ("write_file", "edit_file"):
        return []
    path = target_path(cwd, path_argument)
    try:
        current = _read(path)
    except (OSError, ValueError) as error:
        return [f"(no preview: {getattr(error, 'strerror', None) or error})"]
    if tool_name == "edit_file":
        edits = _edits(arguments)
        if current is None:
            return [f"(this edit will fail: {path_argument} does not exist)"]
        if edits is None:
            return ["(no preview: the edit's arguments are incomplete)"]
        try:
            outcome = apply_edits(current, edits, shown=path_argument)
        except ToolError as error:
            return [f"(this edit will fail: {error})"]
        return _cap(outcome.diff.splitlines())
    content = arguments.get("content")
    if not isinstance(content, str):
        return []
    if current is None:
        lines = content.splitlines()
        head = [f"+{line}" for line in lines[:HEAD_LINES]]
        more = len(lines) - HEAD_LINES
        return [f"new file {path_argument}", *head] + ([f"… {more} more lines"] if more > 0 else [])
    old = current.decode("utf-8", errors="replace")
    diff = unified(old, content, path_argument)
    return _cap(diff) if diff else ["(the content is the same as the file's)"]
