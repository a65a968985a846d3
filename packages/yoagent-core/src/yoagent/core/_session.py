"""Session trees: a conversation's history as a tree of entries, persisted as JSONL.

Every entry holds one message and its parent's id. :meth:`Session.append` adds a child of
the head and moves the head to it; :meth:`Session.seek` moves the head anywhere, so the
next append forks a new branch (nothing is ever overwritten). :meth:`Session.path_messages`
is the branch ending at the head — what to give an agent — and :meth:`Session.append_new`
is the sync after a run.

On disk, one JSON object per line: ``{"id", "parent_id", "message"}`` for an entry, and
``{"head": id}`` when the head is not the entry just written. Loading replays the lines in
order (an entry moves the head to itself, as ``append`` does). :meth:`Session.save` only
appends what the file does not have yet; a whole-file write is atomic (the floor's
``atomic_write``), so a crash leaves the old file or the new one, never half of one.

Concurrent use: any number of readers and writers, in threads or processes, may load and
save the same file. On POSIX each save holds an exclusive ``flock`` on the file's folder
from its check to its last write (each load a shared one), so a save either lands whole or
raises :class:`SessionError` because another writer changed the file since this session
read it — an acknowledged save is never lost. Windows has no such lock: there, one writer
per file. Two sessions that keep saving to one file must each reload after a refused save.

A save cut by a crash can leave the history on an unanswered tool call, which every API
rejects. Loading closes such calls (those of the head's branch) with an error result
reading :data:`LOST_TOOL_RESULT`, as the loop does on an abort, and says so in
:attr:`Session.load_warnings`; the next save writes the closing results.

Lines are UTF-8 JSON; text that cannot be UTF-8 (a lone surrogate, e.g. from a ``\\ud800``
escape in model output) is written as a ``\\uXXXX`` escape, so it survives the round trip.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
from collections.abc import Generator, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from ._support.atomic import atomic_write
from ._support.surrogates import utf8_safe_json
from ._types.adapters import is_validation_error
from ._types.content import TextContent
from ._types.errors import YoagentError
from ._types.messages import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    StopReason,
    ToolResultMessage,
    message_adapter,
)

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: saves are not locked (see the docstring)
    fcntl = None

LOST_TOOL_RESULT = (
    "[Tool result lost: the session was saved before this tool call finished; "
    "it may or may not have run]"
)
"""The text of the error result that :meth:`Session.load` gives a tool call left
unanswered by a cut-off save."""

_NEW_FILE_MODE = 0o600
"""A session file this module creates is private: a conversation may hold anything typed."""

_RUN_ENDED = (StopReason.ERROR, StopReason.ABORTED, StopReason.REFUSAL)
"""A reply that ended its run this way has no tool results to wait for (as in the loop)."""


class SessionError(YoagentError):
    """A session file cannot be read or written as asked."""


class SessionCorruptError(SessionError):
    """A session file holds a line that is not a valid record (before its last line).

    ``line`` is the 1-based line number.
    """

    def __init__(self, source: str, line: int, problem: str) -> None:
        super().__init__(f"{source}: line {line}: {problem}")
        self.line = line
        self.problem = problem


@dataclass(slots=True, frozen=True)
class LoadWarning:
    """A problem loading skipped over: a corrupt or cut-off last line (``line`` is 1-based)."""

    line: int
    problem: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.problem}"


@dataclass(slots=True, kw_only=True, frozen=True)
class SessionEntry:
    """One node of the tree: a message and the id of the entry before it."""

    id: str
    parent_id: str | None
    message: AgentMessage


class _Corrupt(Exception):
    pass


class Session:
    """A conversation tree with a head; see the module docstring."""

    __slots__ = (
        "_children",
        "_entries",
        "_file",
        "_written",
        "_written_head",
        "head",
        "load_warnings",
    )

    def __init__(self) -> None:
        self._entries: dict[str, SessionEntry] = {}
        self._children: dict[str | None, list[str]] = {None: []}
        self.head: str | None = None
        """The id of the entry the next :meth:`append` follows (``None``: a new root)."""
        self.load_warnings: list[LoadWarning] = []
        """What :meth:`load` skipped over (a corrupt or partial last line)."""
        self._file: _FileState | None = None
        self._written = 0
        self._written_head: str | None = None

    # -- the tree -------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def entries(self) -> list[SessionEntry]:
        """Every entry, in the order it was added."""
        return list(self._entries.values())

    def get(self, entry_id: str) -> SessionEntry:
        """The entry with this id (``KeyError`` naming it when there is none)."""
        try:
            return self._entries[entry_id]
        except KeyError:
            raise KeyError(f"no session entry with id {entry_id!r}") from None

    def _new_id(self) -> str:
        while True:
            candidate = secrets.token_hex(6)
            if candidate not in self._entries:
                return candidate

    def _add(self, entry: SessionEntry) -> None:
        self._entries[entry.id] = entry
        self._children.setdefault(entry.parent_id, []).append(entry.id)
        self._children.setdefault(entry.id, [])

    def append(self, message: AgentMessage) -> str:
        """Add ``message`` as a child of the head, move the head to it, return its id."""
        entry = SessionEntry(id=self._new_id(), parent_id=self.head, message=message)
        self._add(entry)
        self.head = entry.id
        return entry.id

    def extend(self, messages: Iterable[AgentMessage]) -> list[str]:
        """:meth:`append` each message in turn."""
        return [self.append(message) for message in messages]

    def seek(self, entry_id: str | None) -> None:
        """Move the head to ``entry_id`` (``None``: before the first message).

        The next :meth:`append` then starts a new branch from there.
        """
        if entry_id is not None and entry_id not in self._entries:
            raise KeyError(f"no session entry with id {entry_id!r}")
        self.head = entry_id

    def seek_checkpoint(self, back: int = 1) -> str:
        """Move the head back ``back`` checkpoints along its branch; returns the new head.

        A checkpoint is where the conversation was at rest: an assistant reply that asks
        for no tool calls (the end of an exchange). Counting starts before the head, so
        ``seek_checkpoint()`` at rest undoes the last exchange. ``KeyError`` when the
        branch has fewer checkpoints.
        """
        if back < 1:
            raise ValueError(f"back must be >= 1, got {back}")
        found = 0
        for entry in reversed(self.path()[:-1]):
            message = entry.message
            if isinstance(message, AssistantMessage) and not message.tool_calls:
                found += 1
                if found == back:
                    self.head = entry.id
                    return entry.id
        raise KeyError(f"the head's branch has {found} checkpoint(s) before it, not {back}")

    def path(self, entry_id: str | None = None) -> list[SessionEntry]:
        """The entries from the root to ``entry_id`` (default: the head)."""
        current = self.head if entry_id is None else self.get(entry_id).id
        out: list[SessionEntry] = []
        while current is not None:
            entry = self._entries[current]
            out.append(entry)
            current = entry.parent_id
        out.reverse()
        return out

    def path_messages(self, entry_id: str | None = None) -> list[AgentMessage]:
        """The messages of the branch ending at ``entry_id`` (default: the head)."""
        return [entry.message for entry in self.path(entry_id)]

    def children(self, entry_id: str | None) -> list[SessionEntry]:
        """The entries that follow ``entry_id`` (``None``: the roots), oldest first."""
        if entry_id is not None and entry_id not in self._entries:
            raise KeyError(f"no session entry with id {entry_id!r}")
        return [self._entries[child] for child in self._children.get(entry_id, [])]

    def branches(self) -> list[str]:
        """The id of every leaf (one per branch), oldest first."""
        return [entry_id for entry_id in self._entries if not self._children[entry_id]]

    def append_new(self, messages: Sequence[AgentMessage]) -> list[str]:
        """Bring the head's branch in line with ``messages`` (e.g. ``agent.messages`` after a run).

        The messages the branch already holds (same object, or equal, position by
        position) are skipped; the rest are appended. When ``messages`` departs from the
        branch (the history was compacted or edited), the new messages fork from the last
        entry they share, so the old branch stays intact. Returns the new entries' ids.
        """
        path = self.path()
        shared = 0
        for entry, message in zip(path, messages, strict=False):
            if not _same_message(entry.message, message):
                break
            shared += 1
        if shared < len(path):
            self.head = path[shared - 1].id if shared else None
        return self.extend(messages[shared:])

    # -- JSONL ------------------------------------------------------------------

    @staticmethod
    def _entry_line(entry: SessionEntry) -> str:
        record = {
            "id": entry.id,
            "parent_id": entry.parent_id,
            "message": message_adapter.dump_python(entry.message, mode="json"),
        }
        text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        return utf8_safe_json(text, lossless=True) + "\n"

    @staticmethod
    def _head_line(head: str | None) -> str:
        return json.dumps({"head": head}) + "\n"

    def _lines_since(self, written: int, written_head: str | None) -> list[str]:
        entries = self.entries[written:]
        lines = [self._entry_line(entry) for entry in entries]
        replayed_head = entries[-1].id if entries else written_head
        if self.head != replayed_head:
            lines.append(self._head_line(self.head))
        return lines

    def to_jsonl(self) -> str:
        """The whole session as JSONL text."""
        return "".join(self._lines_since(0, None))

    @classmethod
    def from_jsonl(cls, text: str, *, source: str = "<jsonl>") -> Session:
        """Read a session from JSONL text; see :meth:`load` for how problems are reported."""
        session = cls()
        _, lines = session._replay(text.split("\n"), source)
        session._close_dangling_calls(lines + 1)
        return session

    def save(self, path: str | Path, *, overwrite: bool = False) -> None:
        """Write the session to ``path``, appending only what the file does not have yet.

        The first save to a path (or to a different path) writes the whole session,
        atomically (:func:`yoagent.core.support.atomic_write`; a new file is readable by
        its owner only, a replaced one keeps its mode). It refuses
        to replace an existing file this session did not load or save, and a save to the
        session's own file refuses when someone else changed that file since this session
        read or wrote it (:class:`SessionError` either way); ``overwrite=True`` replaces
        the file with the whole session instead.
        """
        target = Path(path)
        with _folder_lock(target, shared=False):
            self._save_locked(target, overwrite)

    def _save_locked(self, target: Path, overwrite: bool) -> None:
        resolved = target.resolve()
        state = self._file
        if state is None or state.path != resolved:
            if not overwrite and os.path.lexists(target):
                raise SessionError(
                    f"{target}: a file is already there that this session did not load or "
                    "save; pass overwrite=True to replace it, or save to a new path"
                )
            atomic_write(target, self.to_jsonl(), mode=_NEW_FILE_MODE)
        else:
            lines = self._lines_since(self._written, self._written_head)
            if not lines and state.good_size == state.size:
                return
            try:
                status = target.stat()
            except FileNotFoundError:
                status = None
                if not overwrite:
                    raise SessionError(
                        f"{target}: the session file was removed since it was read"
                    ) from None
            if status is None or (
                status.st_size != state.size or status.st_mtime_ns != state.mtime_ns
            ):
                if not overwrite:
                    actual = status.st_size if status is not None else 0
                    raise SessionError(
                        f"{target}: the file changed on disk since this session read or wrote "
                        f"it ({state.size} bytes expected, {actual} found); save to a new path"
                    )
                atomic_write(target, self.to_jsonl(), mode=_NEW_FILE_MODE)
            else:
                with target.open("r+b") as handle:
                    handle.truncate(state.good_size)  # drops a partial last line found on load
                    handle.seek(state.good_size)
                    if state.needs_newline:
                        handle.write(b"\n")
                    handle.write("".join(lines).encode("utf-8"))
        status = target.stat()
        self._file = _FileState(
            path=resolved,
            size=status.st_size,
            mtime_ns=status.st_mtime_ns,
            good_size=status.st_size,
            needs_newline=False,
        )
        self._written = len(self._entries)
        self._written_head = self.head

    @classmethod
    def load(cls, path: str | Path) -> Session:
        """Read a session file written by :meth:`save`.

        A corrupt or cut-off *last* line (a write interrupted mid-line) is skipped and
        reported in :attr:`load_warnings`; the next :meth:`save` to the same path replaces
        it. A bad line anywhere else raises :class:`SessionCorruptError` naming its line.
        """
        target = Path(path)
        with _folder_lock(target, shared=True):
            changed = target.stat().st_mtime_ns
            raw = target.read_bytes()
        session = cls()
        good, lines = session._replay(raw.split(b"\n"), str(target))
        good_size = min(good, len(raw))
        session._file = _FileState(
            path=target.resolve(),
            size=len(raw),
            mtime_ns=changed,
            good_size=good_size,
            needs_newline=good_size > 0 and not raw[:good_size].endswith(b"\n"),
        )
        session._written = len(session._entries)
        session._written_head = session.head
        session._close_dangling_calls(lines + 1)  # after _written: the next save writes it
        return session

    open = load
    """Alias of :meth:`load`."""

    def _replay(self, lines: Sequence[str] | Sequence[bytes], source: str) -> tuple[int, int]:
        """Apply each line; return the size of the part that loaded (bytes, for byte lines)
        and the number of its last line.

        Byte lines are decoded strictly: a line that is not UTF-8 is corrupt like any other.
        """
        last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
        offset = 0
        good = 0
        good_line = 0
        for index, line in enumerate(lines):
            offset += len(line) + 1
            if not line.strip():
                continue
            try:
                text = line.decode("utf-8") if isinstance(line, bytes) else line
                self._apply(json.loads(text))
            except (_Corrupt, ValueError, TypeError, RecursionError) as error:
                problem = _problem(error)
                if index == last:
                    self.load_warnings.append(LoadWarning(line=index + 1, problem=problem))
                    return good, good_line
                raise SessionCorruptError(source, index + 1, problem) from None
            good = offset
            good_line = index + 1
        return good, good_line

    def _close_dangling_calls(self, line: int) -> None:
        """Answer the tool calls the head's branch leaves unanswered (a save cut between a
        call and its results) with an error result each; ``line`` is where the results
        should have been, for the warning."""
        path = self.path_messages()
        last = next(
            (i for i in range(len(path) - 1, -1, -1) if isinstance(path[i], AssistantMessage)),
            None,
        )
        if last is None:
            return
        reply = cast(AssistantMessage, path[last])
        after = path[last + 1 :]
        if reply.stop_reason in _RUN_ENDED or not all(
            isinstance(m, ToolResultMessage | CustomMessage) for m in after
        ):
            return  # the run ended there, or the history moved on: not a cut save
        answered = {m.tool_call_id for m in after if isinstance(m, ToolResultMessage)}
        dangling = [call for call in reply.tool_calls if call.id not in answered]
        for call in dangling:
            self.append(
                ToolResultMessage(
                    tool_call_id=call.id,
                    tool_name=call.name,
                    content=[TextContent(text=LOST_TOOL_RESULT)],
                    is_error=True,
                    # The call's own time, so loading the same file twice repairs it alike.
                    timestamp=reply.timestamp,
                )
            )
        if dangling:
            ids = ", ".join(repr(call.id) for call in dangling)
            self.load_warnings.append(
                LoadWarning(
                    line=line,
                    problem=f"tool call {ids} has no result (the save was cut off); "
                    "answered it as an error",
                )
            )

    def _apply(self, record: Any) -> None:
        if not isinstance(record, dict):
            raise _Corrupt("a record must be a JSON object")
        fields = cast(dict[str, Any], record)
        if set(fields) == {"head"}:
            head = fields["head"]
            if head is not None and (not isinstance(head, str) or head not in self._entries):
                raise _Corrupt(f"head {head!r} names no entry")
            self.head = head
            return
        if set(fields) != {"id", "parent_id", "message"}:
            raise _Corrupt(f"unknown record with keys {sorted(fields)}")
        entry_id, parent_id = fields["id"], fields["parent_id"]
        if not isinstance(entry_id, str) or not entry_id:
            raise _Corrupt("an entry id must be a non-empty string")
        if entry_id in self._entries:
            raise _Corrupt(f"entry {entry_id!r} appears twice")
        if parent_id is not None and (
            not isinstance(parent_id, str) or parent_id not in self._entries
        ):
            raise _Corrupt(
                f"entry {entry_id!r} names parent {parent_id!r}, which comes nowhere before it"
            )
        try:
            message = message_adapter.validate_python(fields["message"])
        except ValueError as error:  # pydantic's ValidationError is one
            if not is_validation_error(error):
                raise
            first = error.errors()[0]
            where = ".".join(str(part) for part in first["loc"])
            raise _Corrupt(
                f"entry {entry_id!r} holds an invalid message ({where}: {first['msg']})"
            ) from None
        self._add(SessionEntry(id=entry_id, parent_id=parent_id, message=message))
        self.head = entry_id


@dataclass(slots=True, kw_only=True)
class _FileState:
    path: Path
    size: int  # what the file held when last read or written
    mtime_ns: int  # when it was last changed then: a same-size rewrite is a change too
    good_size: int  # the part of it that loaded (a partial last line excluded)
    needs_newline: bool  # the good part ends without a newline


def _problem(error: Exception) -> str:
    if isinstance(error, _Corrupt):
        return str(error)
    if isinstance(error, UnicodeDecodeError):
        return f"not UTF-8 (invalid byte at column {error.start + 1})"
    if isinstance(error, RecursionError):
        return "nested too deeply to read"
    if isinstance(error, TypeError):
        return f"a field of the wrong type ({error})"
    return f"not JSON ({error})"


def _same_message(stored: AgentMessage, message: AgentMessage) -> bool:
    """Whether ``message`` is the one ``stored`` holds: the same object, equal, or (for values
    that change type through JSON, like tuples, int keys or ``inf``) equal as JSON."""
    if stored is message or stored == message:
        return True
    try:
        return message_adapter.dump_json(stored) == message_adapter.dump_json(message)
    except (ValueError, TypeError, RecursionError):  # pydantic's errors are ValueErrors
        return False


@contextlib.contextmanager
def _folder_lock(target: Path, *, shared: bool) -> Generator[None]:
    """Hold a ``flock`` on ``target``'s folder (shared for a load, exclusive for a save).

    The folder, not the file: a whole-file save replaces the file, and a lock on the old
    one would not stop the next writer. Nothing is locked without ``fcntl`` (Windows) or
    when the folder cannot be opened (it is missing: the save fails on its own).
    """
    if fcntl is None:
        yield
        return
    try:
        fd = os.open(target.parent, os.O_RDONLY)
    except OSError:
        yield
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
