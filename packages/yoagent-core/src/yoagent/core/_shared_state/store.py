"""Shared state: a key-value store agents and sub-agents share, to pass artifacts by key.

A parent stores a large artifact once and its sub-agents read or write it by reference
(no re-pasting into prompts). :class:`SharedState` validates keys and delegates to a
:class:`SharedStateBackend`: :class:`MemoryBackend` (the default, capped at 10 MB) or
:class:`FileBackend` (one file per key in a folder, persistent). :class:`SharedStateSink`
is what the loop calls to stash a truncated tool output under a key the model can read
back with the ``shared_state`` tool.
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
from pathlib import Path
from typing import Protocol, runtime_checkable

import anyio.to_thread

from yoagent.core._support.atomic import atomic_write
from yoagent.core._types.errors import YoagentError

KeyList = list[str]

MAX_KEY_LENGTH = 200
"""Longest key, in UTF-8 bytes (a file name must stay under the usual 255-byte limit)."""
DEFAULT_MAX_BYTES = 10 * 1024 * 1024
""":class:`MemoryBackend`'s default cap: 10 MB of keys and values."""
TOOL_OUTPUT_PREFIX = "tool-output-"
"""Where :class:`SharedStateSink` stashes tool outputs: ``tool-output-<call id>``."""

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_UNSAFE_ID_CHARS = re.compile(r"[^A-Za-z0-9_.-]")
_SURROGATE = re.compile("[\ud800-\udfff]")


class SharedStateError(YoagentError):
    """A shared-state operation was refused; the text says why and what to do."""


class InvalidKeyError(SharedStateError, ValueError):
    """A key that could escape a folder or is not a usable name."""


class SharedStateFullError(SharedStateError):
    """A value that would take the store over its size cap."""


def validate_key(key: str) -> str:
    """Return ``key`` if it is safe as a key and a file name; else raise :class:`InvalidKeyError`.

    Refused: empty keys, path separators, ``..``, a leading dot, NUL and other control
    characters, lone surrogates (not text UTF-8 can hold), and keys over
    :data:`MAX_KEY_LENGTH` UTF-8 bytes. Every backend applies the same check.
    """
    if not key:
        raise InvalidKeyError("shared state key is empty")
    if "/" in key or "\\" in key:
        raise InvalidKeyError(f"shared state key {key!r} contains a path separator; use '-' or '.'")
    if ".." in key:
        raise InvalidKeyError(f"shared state key {key!r} contains '..'")
    if key.startswith("."):
        raise InvalidKeyError(f"shared state key {key!r} starts with a dot")
    if _CONTROL.search(key):
        raise InvalidKeyError(f"shared state key {key!r} contains a NUL or control character")
    if _SURROGATE.search(key):
        raise InvalidKeyError(
            f"shared state key {key!r} contains a lone surrogate, which is not valid text"
        )
    size = len(key.encode("utf-8", "surrogatepass"))
    if size > MAX_KEY_LENGTH:
        raise InvalidKeyError(
            f"shared state key is {size} bytes long; the limit is {MAX_KEY_LENGTH} "
            f"(key starts {key[:40]!r})"
        )
    return key


def validate_value(key: str, value: str) -> str:
    """Return ``value`` if every backend can store it; else raise :class:`SharedStateError`.

    Refused: text with a lone surrogate (e.g. from a ``\\ud800`` JSON escape), which UTF-8
    cannot encode.
    """
    found = _SURROGATE.search(value)
    if found is not None:
        raise SharedStateError(
            f"the value for {key!r} contains a lone surrogate {found.group()!r} at character "
            f"{found.start()}, which is not valid text; remove or replace it"
        )
    return value


@runtime_checkable
class SharedStateBackend(Protocol):
    """Where shared state lives. Keys reach a backend already validated."""

    async def get(self, key: str) -> str | None:
        """The value under ``key``, or ``None``."""
        ...

    async def set(self, key: str, value: str) -> None:
        """Store ``value`` under ``key``, replacing any value there."""
        ...

    async def list(self) -> KeyList:
        """Every key, sorted."""
        ...

    async def remove(self, key: str) -> bool:
        """Delete ``key``; ``True`` if it was there."""
        ...


def _size(text: str) -> int:
    return len(text.encode("utf-8", "surrogatepass"))


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.2f} MB"


class MemoryBackend:
    """Shared state in a dict, capped at ``max_bytes`` of keys + values (UTF-8)."""

    __slots__ = ("_data", "_used", "max_bytes")

    def __init__(self, max_bytes: int = DEFAULT_MAX_BYTES) -> None:
        if max_bytes < 0:
            raise ValueError(f"MemoryBackend max_bytes must be >= 0, got {max_bytes}")
        self.max_bytes = max_bytes
        self._data: dict[str, str] = {}
        self._used = 0

    @property
    def used_bytes(self) -> int:
        """Bytes of keys and values stored now."""
        return self._used

    async def get(self, key: str) -> str | None:
        return self._data.get(validate_key(key))

    async def set(self, key: str, value: str) -> None:
        validate_value(validate_key(key), value)
        old = self._data.get(key)
        freed = _size(key) + _size(old) if old is not None else 0
        after = self._used - freed + _size(key) + _size(value)
        if after > self.max_bytes:
            raise SharedStateFullError(
                f"shared state is full: storing {key!r} ({_megabytes(_size(value))}) would use "
                f"{_megabytes(after)} of its {_megabytes(self.max_bytes)} cap; remove keys "
                "that are no longer needed, or give MemoryBackend a larger max_bytes"
            )
        self._data[key] = value
        self._used = after

    async def list(self) -> KeyList:
        return sorted(self._data)

    async def remove(self, key: str) -> bool:
        old = self._data.pop(validate_key(key), None)
        if old is None:
            return False
        self._used -= _size(key) + _size(old)
        return True


class FileBackend:
    """Shared state as files: one UTF-8 file per key in ``folder`` (created if missing).

    Writes are atomic (a temporary file renamed over the key's file), so a reader never
    sees half a value. Files whose names start with a dot, or are not valid keys, are not
    keys; nor are symbolic links (never followed, so nothing outside the folder is read)
    and other non-regular files.
    """

    __slots__ = ("folder",)

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    def _path(self, key: str) -> Path:
        return self.folder / validate_key(key)

    async def get(self, key: str) -> str | None:
        path = self._path(key)

        def read() -> str | None:
            flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
            try:
                fd = os.open(path, flags)
            except FileNotFoundError:
                return None
            except OSError as error:
                if error.errno == errno.ELOOP:
                    raise SharedStateError(
                        f"shared state {key!r} is a symbolic link in {self.folder}; "
                        "links are not followed"
                    ) from None
                raise _os_error("read", key, error) from None
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                raise SharedStateError(
                    f"shared state {key!r} is not a regular file in {self.folder} "
                    "(a directory or device named like the key); remove it"
                )
            with os.fdopen(fd, "rb") as handle:
                try:
                    data = handle.read()
                except OSError as error:
                    raise _os_error("read", key, error) from None
            try:
                return data.decode("utf-8")
            except UnicodeDecodeError as error:
                raise SharedStateError(
                    f"shared state {key!r} holds bytes that are not UTF-8 text "
                    f"(at byte {error.start}); set it again to replace it"
                ) from None

        return await anyio.to_thread.run_sync(read)

    async def set(self, key: str, value: str) -> None:
        path = self._path(key)
        data = validate_value(key, value).encode("utf-8")
        folder = self.folder

        def write() -> None:
            folder.mkdir(parents=True, exist_ok=True)
            try:
                atomic_write(path, data)
            except OSError as error:
                raise _os_error("write", key, error) from None

        await anyio.to_thread.run_sync(write)

    async def list(self) -> KeyList:
        folder = self.folder

        def scan() -> KeyList:
            try:
                with os.scandir(folder) as entries:
                    names = [
                        entry.name for entry in entries if entry.is_file(follow_symlinks=False)
                    ]
            except FileNotFoundError:
                return []
            return sorted(name for name in names if _is_key(name))

        return await anyio.to_thread.run_sync(scan)

    async def remove(self, key: str) -> bool:
        path = self._path(key)

        def delete() -> bool:
            try:
                path.unlink()
            except FileNotFoundError:
                return False
            except OSError as error:
                raise _os_error("remove", key, error) from None
            return True

        return await anyio.to_thread.run_sync(delete)


def _is_key(name: str) -> bool:
    try:
        validate_key(name)
    except InvalidKeyError:
        return False
    return True


def _os_error(action: str, key: str, error: OSError) -> SharedStateError:
    if error.errno in (errno.EISDIR, errno.ENOTEMPTY, errno.EEXIST):
        reason = "a directory of that name is in the way"
    else:
        reason = error.strerror or str(error)
    return SharedStateError(f"cannot {action} shared state {key!r}: {reason}")


class SharedState:
    """A key-value store of text shared between agents; keys are checked by :func:`validate_key`."""

    __slots__ = ("backend",)

    def __init__(self, backend: SharedStateBackend | None = None) -> None:
        self.backend: SharedStateBackend = backend if backend is not None else MemoryBackend()

    async def get(self, key: str) -> str | None:
        """The value under ``key``, or ``None``."""
        return await self.backend.get(validate_key(key))

    async def set(self, key: str, value: str) -> None:
        """Store ``value`` under ``key`` (:class:`SharedStateFullError` past the backend's cap;
        :class:`SharedStateError` for a value no backend can store, see :func:`validate_value`)."""
        await self.backend.set(validate_key(key), validate_value(key, value))

    async def list(self, prefix: str = "") -> KeyList:
        """The keys, sorted; only those starting with ``prefix`` when given."""
        keys = await self.backend.list()
        return [key for key in keys if key.startswith(prefix)]

    async def remove(self, key: str) -> bool:
        """Delete ``key``; ``True`` if it was there."""
        return await self.backend.remove(validate_key(key))

    async def summary(self, max_keys: int = 50) -> str:
        """A few lines for a system prompt: what the store holds and how to read it."""
        keys = await self.list()
        if not keys:
            return "Shared state is empty. Use the shared_state tool to store artifacts by key."
        shown = ", ".join(keys[:max_keys])
        more = f" (and {len(keys) - max_keys} more)" if len(keys) > max_keys else ""
        return (
            f"Shared state holds {len(keys)} keys: {shown}{more}. "
            "Read one with the shared_state tool (action get)."
        )

    def sink(self, prefix: str = TOOL_OUTPUT_PREFIX) -> SharedStateSink:
        """A :class:`SharedStateSink` writing to this store."""
        return SharedStateSink(self, prefix=prefix)


def tool_output_key(tool_call_id: str, prefix: str = TOOL_OUTPUT_PREFIX) -> str:
    """The key a tool call's stashed output goes under: ``prefix`` + the call id made safe.

    When the id had to be changed (unsafe characters) or cut (too long), a short hash of
    the raw id is appended, so two different ids never share a key (``call/1`` vs ``call_1``).
    """
    safe = _UNSAFE_ID_CHARS.sub("_", tool_call_id).replace("..", "__") or "call"
    key = prefix + safe
    if safe == tool_call_id and len(key.encode("utf-8", "surrogatepass")) <= MAX_KEY_LENGTH:
        return validate_key(key)
    raw = tool_call_id.encode("utf-8", "surrogatepass")
    digest = "-" + hashlib.sha256(raw).hexdigest()[:12]
    return validate_key(key[: MAX_KEY_LENGTH - len(digest)] + digest)


class ToolOutputSink(Protocol):
    """What the loop calls to keep a tool output it is about to truncate; returns the key."""

    async def __call__(self, tool_call_id: str, tool_name: str, text: str) -> str: ...


class SharedStateSink:
    """Stashes the full text of a truncated tool output in a :class:`SharedState`.

    ``await sink(tool_call_id, tool_name, text)`` stores ``text`` under
    :func:`tool_output_key` and returns the key, for the truncation marker to name. It
    raises :class:`SharedStateError` when the store refuses (e.g. full): the caller then
    truncates without a key.
    """

    __slots__ = ("prefix", "state")

    def __init__(self, state: SharedState, *, prefix: str = TOOL_OUTPUT_PREFIX) -> None:
        self.state = state
        self.prefix = prefix

    async def __call__(self, tool_call_id: str, tool_name: str, text: str) -> str:
        key = tool_output_key(tool_call_id, self.prefix)
        await self.state.set(key, text)
        return key
