"""A child's output pipes read by threads, and the self-pipe that wakes the event loop.

A pipe is read with blocking ``os.read`` on a daemon thread rather than in the event loop:
the same code then runs under asyncio and trio, and a child that prints gigabytes is
drained at the pipe's speed with bounded memory. The thread wakes the one task that
waits through a :class:`Wakeup` (``anyio.wait_readable`` on a self-pipe).
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from typing import Final

import anyio

_CHUNK: Final = 1 << 18
_NOTIFY_INTERVAL: Final = 0.05


class Wakeup:
    """A self-pipe: threads call :meth:`notify`, one task awaits :meth:`wait`."""

    __slots__ = ("_closed", "_lock", "_r", "_w")

    def __init__(self) -> None:
        self._r, self._w = os.pipe()
        os.set_blocking(self._r, False)
        os.set_blocking(self._w, False)
        self._lock = threading.Lock()
        self._closed = False

    def notify(self) -> None:
        """Wake the waiting task (from any thread; a no-op once closed)."""
        with self._lock:
            if self._closed:
                return
            with contextlib.suppress(BlockingIOError):
                os.write(self._w, b"\0")

    async def wait(self, within: float) -> None:
        """Return when notified, or after ``within`` seconds."""
        with anyio.move_on_after(within):
            await anyio.wait_readable(self._r)
        with self._lock:
            if self._closed:
                return
            with contextlib.suppress(BlockingIOError):
                while os.read(self._r, 4096):
                    pass

    def close(self) -> None:
        """Close both ends; later notifications are ignored."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            os.close(self._r)
            os.close(self._w)


class PipeCapture:
    """One pipe read to its end by a daemon thread, keeping at most ``limit`` bytes.

    The first part (``limit - tail``) and the last ``tail`` bytes are kept; what falls
    between is counted and dropped, so memory stays bounded whatever the child prints.
    The descriptor is the capture's: it is closed at the end. ``wakeup`` (if any) is
    notified when something visible changed (at most every 50 ms) and at the end.
    Override :meth:`_consume` to keep something else.
    """

    def __init__(
        self, fd: int, wakeup: Wakeup | None, *, limit: int, tail: int = 0, name: str
    ) -> None:
        self._fd = fd
        self._wakeup = wakeup
        self._lock = threading.Lock()
        self.limit = limit
        self._tail_limit = min(tail, limit)
        self._head_limit = limit - self._tail_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.error: str | None = None
        self.done = threading.Event()
        self.version = 0
        self._detached = False
        self._last_notify = 0.0
        self._notify_now = False  # set by _consume for news that must not wait
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        """Start the reader thread."""
        self._thread.start()

    @property
    def cut(self) -> bool:
        """Whether bytes were dropped between the kept head and tail."""
        return self.total > len(self.head) + len(self.tail)

    @property
    def eof(self) -> bool:
        """Whether the pipe reached its end (or failed) and was closed."""
        return self.done.is_set()

    def snapshot(self) -> tuple[bytes, bytes, int]:
        """The kept head, the kept tail and the total byte count, consistently."""
        with self._lock:
            return bytes(self.head), bytes(self.tail), self.total

    def detach(self) -> None:
        """Stop keeping output; the thread drains the pipe to its end and closes it.

        For output still held open by a process left running (a background job): it is
        never closed under that process (which would get ``SIGPIPE``), only drained.
        """
        with self._lock:
            self._detached = True

    def _consume(self, chunk: memoryview) -> bool:
        """Keep what fits of ``chunk`` (lock held). Returns whether anything visible changed."""
        self.total += len(chunk)
        room = self._head_limit - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
            if not chunk:
                return True
        if self._tail_limit == 0:
            return room > 0
        self.tail += chunk[-self._tail_limit :]
        excess = len(self.tail) - self._tail_limit
        if excess > 0:
            del self.tail[:excess]
        return True

    def _notify(self) -> None:
        if self._wakeup is not None:
            self._wakeup.notify()

    def _run(self) -> None:
        try:
            buffer = bytearray(_CHUNK)  # reused: no allocation per read
            view = memoryview(buffer)
            while True:
                try:
                    size = os.readv(self._fd, [buffer])
                except OSError as error:
                    with self._lock:
                        self.error = error.strerror or str(error)
                    break
                if not size:
                    break
                chunk = view[:size]
                with self._lock:
                    if self._detached:
                        continue
                    changed = self._consume(chunk)
                    if changed:
                        self.version += 1
                if changed:
                    now = time.monotonic()
                    if self._notify_now or now - self._last_notify >= _NOTIFY_INTERVAL:
                        self._notify_now = False
                        self._last_notify = now
                        self._notify()
        finally:
            os.close(self._fd)
            self.done.set()
            self._notify()
