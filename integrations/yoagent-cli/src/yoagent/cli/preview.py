"""What a write or an edit will change, shown before the person is asked to allow it.

``edit_file`` is previewed by applying its edits to the file's current bytes in memory
(with the tool's own :func:`~yoagent.tools.edit_file.apply_edits`, so the preview matches
what will be written), ``write_file`` by a diff against the file it replaces, or the new
file's first lines. Nothing is written here.

The preview must not misstate the bytes. Lines are cut at ``\\n`` only: every other line
break (``\\r``, ``\\v``, ``\\f``, ``\\x1c``-``\\x1e``, ``\\x85``, ``\\u2028``, ``\\u2029``)
stays inside its line, where the strict rendering shows it as an escape (so
``keep\\rcurl … | sh`` is one added line, not a separate ``curl`` line). Contents are "the
same" only when their bytes are; a change of line endings or of the final newline, which
a line diff cannot show, is said in words. :func:`holds_hidden` tells the caller to warn.

The target is resolved through the file tools' :class:`~yoagent.tools.PathSandbox` and
read safely (see :mod:`.file_read`), all of it in a worker thread that cancelling abandons.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from functools import partial
from typing import Any

import anyio

from yoagent.core import ToolError
from yoagent.tools import PathSandbox
from yoagent.tools.edit_file import Edit, apply_edits

from .file_read import Unreadable, read_regular, resolve_inside
from .safe_text import has_hidden

MAX_PREVIEW_BYTES = 2 * 1024 * 1024
"""Files larger than this are not read for a preview."""
DIFF_LINES = 80
"""The most diff lines a preview shows."""
HEAD_LINES = 20
"""How much of a new file a preview shows."""
SAME = "(the content is the same as the file's)"


def split_lines(text: str) -> list[str]:
    """``text`` cut at ``\\n`` only; a final newline ends the last line (no empty one after)."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return lines


def unified(before: str, after: str, name: str) -> list[str]:
    """A unified diff of two texts, as lines (``---``/``+++`` headers first), lines cut at
    ``\\n`` only."""
    return list(
        difflib.unified_diff(
            split_lines(before),
            split_lines(after),
            fromfile=f"a/{name}",
            tofile=f"b/{name}",
            n=2,
            lineterm="",
        )
    )


def holds_hidden(lines: list[str]) -> bool:
    """Whether a preview shows a control or invisible character (as an escape) that the
    person should be warned about; a ``\\r`` ending a line (CRLF) hides nothing."""
    return any(has_hidden(line.removesuffix("\r")) for line in lines)


def _line_endings(text: str) -> str | None:
    crlf = text.count("\r\n")
    lf = text.count("\n") - crlf
    if crlf and lf:
        return "mixed"
    return "CRLF" if crlf else "LF" if lf else None


def _notes(before: str, after: str) -> list[str]:
    """What a line diff of ``before`` → ``after`` cannot show, in words."""
    notes: list[str] = []
    old, new = _line_endings(before), _line_endings(after)
    if old is not None and new is not None and old != new:
        notes.append(f"(line endings change: {old} → {new})")
    if before and after and before.endswith("\n") != after.endswith("\n"):
        now = "now end" if after.endswith("\n") else "no longer end"
        notes.append(f"(the file will {now} with a newline)")
    return notes


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


def _compare(current: bytes, new: bytes, name: str, encoding: str = "utf-8") -> list[str]:
    """Notes and a diff of two contents of one file."""
    if new == current:
        return [SAME]
    before = current.decode(encoding, errors="replace")
    after = new.decode(encoding, errors="replace")
    shown = _notes(before, after) + _cap(unified(before, after, name))
    return shown or [
        f"(the file's bytes differ from the content where they are not {encoding.upper()})"
    ]


def preview_lines(tool_name: str, arguments: Mapping[str, Any], sandbox: PathSandbox) -> list[str]:
    """The lines to show before asking about a ``write_file`` or ``edit_file`` call: a
    unified diff, a new file's first lines, or why there is no preview (blocking: see
    :func:`preview`)."""
    path_argument = arguments.get("path")
    if not isinstance(path_argument, str) or tool_name not in ("write_file", "edit_file"):
        return []
    try:
        path = resolve_inside(sandbox, path_argument)
        current = read_regular(path, MAX_PREVIEW_BYTES, path_argument)
    except Unreadable as error:
        return [f"(no preview: {error})"]
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
        return _compare(current, outcome.data, path_argument, outcome.encoding)
    content = arguments.get("content")
    if not isinstance(content, str):
        return []
    try:
        data = content.encode("utf-8")
    except UnicodeEncodeError:
        return ["(this write will fail: the content is not valid text)"]
    if current is not None:
        return _compare(current, data, path_argument)
    lines = split_lines(content)
    head = [f"+{line}" for line in lines[:HEAD_LINES]]
    more = len(lines) - HEAD_LINES
    return [f"new file {path_argument}", *head] + ([f"… {more} more lines"] if more > 0 else [])


async def preview(tool_name: str, arguments: Mapping[str, Any], sandbox: PathSandbox) -> list[str]:
    """:func:`preview_lines` in a worker thread; cancelling the caller abandons it."""
    work = partial(preview_lines, tool_name, arguments, sandbox)
    return await anyio.to_thread.run_sync(work, abandon_on_cancel=True)
