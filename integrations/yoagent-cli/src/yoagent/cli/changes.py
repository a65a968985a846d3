"""The agent's own file changes, turn by turn: what ``/undo`` takes back and ``/diff`` shows.

:class:`ChangeTracker` is tool middleware placed after the confirmation: for every
``write_file`` and ``edit_file`` call that is about to run, it keeps the file's bytes (or
that there was no file). When the call's result comes back without an error, the change is
recorded in the current turn with a digest of what the agent wrote. Only the agent's own
writes and edits are tracked — not what ``bash`` does, and never the user's work: a file
changed by anyone since the agent wrote it is left alone by ``/undo``.

Paths are resolved by the file tools' own :class:`~yoagent.tools.PathSandbox`: a call whose
path leads outside it is not tracked (the tool refuses it). Files are read as
:mod:`.file_read` reads them — never a FIFO or device, never more than the snapshot limit —
and the snapshot before a call is taken in a worker thread that cancelling abandons.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio

from yoagent.core import (
    AgentEvent,
    AgentMessage,
    Allow,
    ToolCallRequest,
    ToolDecision,
    ToolExecutionEnd,
)
from yoagent.core.support import atomic_write
from yoagent.tools import PathSandbox

from .file_read import Unreadable, read_regular, resolve_inside
from .preview import unified

TRACKED_TOOLS = frozenset({"write_file", "edit_file"})
MAX_SNAPSHOT_BYTES = 16 * 1024 * 1024
"""A larger file is changed without a snapshot (``/undo`` then says it cannot restore it)."""


def _digest(data: bytes | None) -> str | None:
    return None if data is None else hashlib.sha256(data).hexdigest()


def _read(path: Path) -> bytes | None:
    """The file's bytes (``None``: no file); :class:`Unreadable` when it is not a regular
    file, is larger than :data:`MAX_SNAPSHOT_BYTES` or cannot be read."""
    return read_regular(str(path), MAX_SNAPSHOT_BYTES, str(path))


@dataclass(slots=True)
class FileChange:
    """One file the agent changed in a turn: what it held before (``None``: no file) and
    the digest of what the agent left in it."""

    path: Path
    shown: str
    before: bytes | None
    after: str | None
    unkept: str = ""
    """Why no copy of the file before the change was kept (too large, not a regular file,
    unreadable); empty when one was."""

    @property
    def snapshot(self) -> bool:
        """Whether a copy of the file before the change was kept."""
        return not self.unkept


@dataclass(slots=True)
class Turn:
    """The changes of one prompt's run, and the prompt message it started with."""

    changes: list[FileChange] = field(default_factory=list[FileChange])
    prompt: AgentMessage | None = None


@dataclass(slots=True)
class UndoReport:
    """What ``/undo`` did for each file."""

    restored: list[str] = field(default_factory=list[str])
    removed: list[str] = field(default_factory=list[str])
    skipped: list[str] = field(default_factory=list[str])
    """``"path (why)"`` for each file left as it is."""


class ChangeTracker:
    """See the module docstring. Call :meth:`begin_turn` before a run, feed it every event
    with :meth:`observe`, and :meth:`end_turn` after. ``sandbox`` is the file tools'
    (by default: ``cwd`` alone)."""

    def __init__(self, cwd: Path, sandbox: PathSandbox | None = None) -> None:
        self.cwd = cwd
        self.sandbox = sandbox if sandbox is not None else PathSandbox([cwd])
        self.turns: list[Turn] = []
        self._pending: dict[str, FileChange] = {}
        self._current: Turn | None = None

    async def __call__(self, request: ToolCallRequest) -> ToolDecision:
        if request.tool_name in TRACKED_TOOLS and self._current is not None:
            path_argument = request.arguments.get("path")
            if isinstance(path_argument, str):
                change = await anyio.to_thread.run_sync(
                    self._snapshot, path_argument, abandon_on_cancel=True
                )
                if change is not None:
                    self._pending[request.tool_call_id] = change
        return Allow()

    def _snapshot(self, shown: str) -> FileChange | None:
        """The file before the call; ``None`` when its path leads outside the sandbox."""
        try:
            path = Path(resolve_inside(self.sandbox, shown))
        except Unreadable:
            return None
        try:
            return FileChange(path, shown, _read(path), None)
        except Unreadable as error:
            return FileChange(path, shown, None, None, unkept=error.reason)

    def begin_turn(self) -> None:
        """A prompt's run starts: its changes are one turn."""
        self._current = Turn()
        self._pending.clear()

    def observe(self, event: AgentEvent) -> None:
        """Record a tracked call's change when its result comes back without an error."""
        if not isinstance(event, ToolExecutionEnd) or self._current is None:
            return
        change = self._pending.pop(event.result.tool_call_id, None)
        if change is None or event.result.is_error:
            return
        try:
            change.after = _digest(_read(change.path))
        except Unreadable:
            change.after = None
        earlier = next((c for c in self._current.changes if c.path == change.path), None)
        if earlier is None:
            self._current.changes.append(change)
        else:  # the same file again: keep the first "before", take the newest "after"
            earlier.after = change.after

    def end_turn(self, messages: Sequence[AgentMessage], start: int) -> None:
        """The run ended; ``messages[start]`` is its prompt (if the turn was kept)."""
        turn, self._current = self._current, None
        self._pending.clear()
        if turn is None:
            return
        turn.prompt = messages[start] if start < len(messages) else None
        if turn.prompt is not None or turn.changes:
            self.turns.append(turn)

    def forget_all(self) -> None:
        """A new conversation: nothing before it can be undone from it."""
        self.turns.clear()

    def undo_last(self) -> tuple[Turn, UndoReport] | None:
        """Take back the newest turn's file changes (newest first); ``None`` when no turn
        is left. The caller takes the turn out of the conversation."""
        if not self.turns:
            return None
        turn = self.turns.pop()
        report = UndoReport()
        for change in reversed(turn.changes):
            self._restore(change, report)
        return turn, report

    @staticmethod
    def _restore(change: FileChange, report: UndoReport) -> None:
        if not change.snapshot:
            report.skipped.append(f"{change.shown} (no copy was kept: it {change.unkept})")
            return
        try:
            now = _read(change.path)
        except Unreadable as error:
            report.skipped.append(f"{change.shown} (it {error.reason})")
            return
        if _digest(now) != change.after:
            report.skipped.append(f"{change.shown} (changed since the agent wrote it)")
            return
        try:
            if change.before is None:
                if now is not None:
                    change.path.unlink()
                report.removed.append(change.shown)
            else:
                atomic_write(change.path, change.before)
                report.restored.append(change.shown)
        except OSError as error:
            report.skipped.append(f"{change.shown} ({error.strerror or error})")

    def session_diff(self) -> list[str]:
        """A unified diff of every file the agent changed this session, from before its
        first change to what is on disk now."""
        first: dict[Path, FileChange] = {}
        for turn in self.turns:
            for change in turn.changes:
                first.setdefault(change.path, change)
        lines: list[str] = []
        for change in first.values():
            if not change.snapshot:
                lines.append(f"{change.shown}: changed (not compared: it {change.unkept})")
                continue
            try:
                now = _read(change.path)
            except Unreadable as error:
                lines.append(f"{change.shown}: not compared (it {error.reason})")
                continue
            if now == change.before:
                continue
            before = (change.before or b"").decode("utf-8", errors="replace")
            after = (now or b"").decode("utf-8", errors="replace")
            diff = unified(before, after, change.shown)
            if change.before is None:
                diff = [f"new file {change.shown}", *diff[2:]]
            elif now is None:
                diff = [f"deleted {change.shown}", *diff[2:]]
            lines += diff
        return lines
