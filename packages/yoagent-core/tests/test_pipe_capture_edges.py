"""A pipe capture's reader loop chunk by chunk, and the self-pipe that wakes the event loop:
the head filled to its last byte, the tail kept to its bound across chunks, which chunks
count as a visible change, notifications at most every 50 ms of the clock and at the end,
a read error's text, a detached capture draining to the end; a wakeup that never blocks
its notifier, returns after its bound, and closes once. (Added from mutation testing: each
pins a behaviour a surviving mutant changed.)

The loop tests script ``os.readv`` (one chunk per read, the clock set per chunk) and run
the reader on the test's own thread, so every chunk boundary and every notification is
the test's."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import anyio
import pytest

from yoagent.core.support import PipeCapture, Wakeup

Step = bytes | float | OSError | Callable[[], object]
"""A scripted read: bytes read; a float sets the clock first; an error raised; a callable
run before the next read."""


class _Counting(Wakeup):
    """Records, at each notification, the capture's version and whether it ended."""

    def __init__(self) -> None:
        super().__init__()
        self.capture: PipeCapture | None = None
        self.seen: list[tuple[int, bool]] = []

    def notify(self) -> None:
        assert self.capture is not None
        self.seen.append((self.capture.version, self.capture.eof))
        super().notify()


@pytest.fixture
def pipe() -> Iterator[tuple[int, int]]:
    read, write = os.pipe()
    yield read, write
    os.close(write)  # the capture closes the read end


def _run(
    monkeypatch: pytest.MonkeyPatch,
    capture: PipeCapture,
    fd: int,
    steps: list[Step],
) -> list[Step]:
    """Run ``capture``'s reader over ``steps`` on this thread; what is left of them."""
    clock = [0.0]
    script = list(steps)
    real_readv = os.readv

    def readv(descriptor: int, buffers: list[bytearray]) -> int:
        if descriptor != fd:  # another test's reader thread, still running
            return real_readv(descriptor, buffers)
        while script:
            step = script.pop(0)
            if isinstance(step, float):
                clock[0] = step
            elif isinstance(step, OSError):
                raise step
            elif isinstance(step, bytes):
                buffers[0][: len(step)] = step
                return len(step)
            else:
                step()
        return 0

    monkeypatch.setattr(os, "readv", readv)
    monkeypatch.setattr(time, "monotonic", lambda: clock[0])
    capture._run()  # pyright: ignore[reportPrivateUsage]
    monkeypatch.undo()
    return script


def test_the_head_is_filled_to_its_last_byte_and_the_tail_kept_across_chunks(
    monkeypatch: pytest.MonkeyPatch, pipe: tuple[int, int]
) -> None:
    capture = PipeCapture(pipe[0], None, limit=10, tail=4, name="edges")
    versions: list[tuple[bytes, bytes, int, int]] = []

    def look() -> None:
        versions.append((*capture.snapshot(), capture.version))

    steps: list[Step] = [b"01234", look, b"56", look, b"7", look, b"89A", look, b"B", look]
    assert _run(monkeypatch, capture, pipe[0], steps) == []
    assert versions == [
        (b"01234", b"", 5, 1),  # within the head
        (b"012345", b"6", 7, 2),  # the head's last byte, then the tail
        (b"012345", b"67", 8, 3),  # the tail grows across chunks
        (b"012345", b"789A", 11, 4),  # one byte over the tail's bound drops its first
        (b"012345", b"89AB", 12, 5),
    ]
    assert capture.cut and capture.eof and capture.error is None
    assert capture.limit == 10


def test_without_a_tail_only_the_head_is_kept_and_a_full_head_is_no_change(
    monkeypatch: pytest.MonkeyPatch, pipe: tuple[int, int]
) -> None:
    capture = PipeCapture(pipe[0], None, limit=4, name="edges")  # tail defaults to none
    versions: list[int] = []

    def look() -> None:
        versions.append(capture.version)

    steps: list[Step] = [b"abc", look, b"def", look, b"ghi", look]
    _run(monkeypatch, capture, pipe[0], steps)
    assert versions == [1, 2, 2]  # the third chunk changed nothing visible
    assert capture.snapshot() == (b"abcd", b"", 9)


def test_a_capture_with_the_default_tail_keeps_its_whole_limit_as_head() -> None:
    read, write = os.pipe()
    capture = PipeCapture(read, None, limit=10, name="edges")
    os.write(write, b"0123456789abcdef")
    os.close(write)
    capture.start()
    assert capture.done.wait(10)
    assert capture.snapshot() == (b"0123456789", b"", 16)
    assert capture.version == 1


def test_notifications_come_at_most_every_50_ms_of_the_clock_and_at_the_end(
    monkeypatch: pytest.MonkeyPatch, pipe: tuple[int, int]
) -> None:
    wakeup = _Counting()
    capture = PipeCapture(pipe[0], wakeup, limit=100, name="edges")
    wakeup.capture = capture
    # 0.05 and 0.1 are exact: 0.1 - 0.05 == 0.05 in floating point.
    steps: list[Step] = [0.05, b"a", b"b", 0.0999, b"c", 0.1, b"d", b"e"]
    _run(monkeypatch, capture, pipe[0], steps)
    # "a" 50 ms after the clock's zero; "d" 50 ms after "a"; the end.
    assert wakeup.seen == [(1, False), (4, False), (5, True)]
    wakeup.close()


def test_a_read_error_is_kept_as_its_text_and_ends_the_capture(
    monkeypatch: pytest.MonkeyPatch, pipe: tuple[int, int]
) -> None:
    wakeup = _Counting()
    capture = PipeCapture(pipe[0], wakeup, limit=100, name="edges")
    wakeup.capture = capture
    failure = OSError(5, "Input/output error")
    left = _run(monkeypatch, capture, pipe[0], [0.05, b"x", failure, b"never read"])
    assert left == [b"never read"]
    assert capture.error == "Input/output error"
    assert capture.eof and capture.snapshot() == (b"x", b"", 1)
    assert wakeup.seen[-1] == (1, True)
    wakeup.close()


def test_a_directory_read_as_a_pipe_reports_the_systems_reason(tmp_path: Path) -> None:
    capture = PipeCapture(os.open(tmp_path, os.O_RDONLY), None, limit=10, name="edges")
    capture.start()
    assert capture.done.wait(10)
    assert capture.error == "Is a directory"


def test_a_capture_detached_midway_reads_its_pipe_to_the_end(
    monkeypatch: pytest.MonkeyPatch, pipe: tuple[int, int]
) -> None:
    capture = PipeCapture(pipe[0], None, limit=100, name="edges")
    steps: list[Step] = [b"kept", capture.detach, b"dropped", b"dropped too"]
    assert _run(monkeypatch, capture, pipe[0], steps) == []
    assert capture.snapshot() == (b"kept", b"", 4)
    assert capture.eof


def test_the_reader_is_a_daemon_thread_with_the_captures_name() -> None:
    read, write = os.pipe()
    capture = PipeCapture(read, None, limit=10, name="edges-reader-name")
    capture.start()
    try:
        (thread,) = [t for t in threading.enumerate() if t.name == "edges-reader-name"]
        assert thread.daemon
    finally:
        os.close(write)
    assert capture.done.wait(10)


# -- Wakeup ----------------------------------------------------------------------------------


def test_notifying_a_wakeup_nobody_waits_on_never_blocks() -> None:
    wakeup = Wakeup()
    finished = threading.Event()

    def notify_many() -> None:
        for _ in range(70_000):  # more than a pipe holds (64 KiB)
            wakeup.notify()
        finished.set()

    threading.Thread(target=notify_many, daemon=True).start()
    assert finished.wait(10)
    wakeup.close()


def test_a_wakeup_not_notified_returns_after_its_bound() -> None:
    async def main() -> None:
        wakeup = Wakeup()
        with anyio.fail_after(5):
            await wakeup.wait(0.001)
        wakeup.close()

    anyio.run(main)


def test_a_closed_wakeup_ignores_notifications_and_a_second_close() -> None:
    wakeup = Wakeup()
    wakeup.close()
    wakeup.notify()
    wakeup.close()
