"""Ctrl+C during a run: call back on the event loop instead of raising KeyboardInterrupt."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Generator
from contextlib import contextmanager
from types import FrameType
from typing import TextIO


class Interrupts:
    """How many times Ctrl+C was pressed while the handler was installed."""

    def __init__(self) -> None:
        self.count = 0


@contextmanager
def quiet_terminal(stream: TextIO | None = None) -> Generator[None]:
    """While inside, keys typed at the terminal are not echoed (``^C`` would break the
    output being drawn). Ctrl+C still sends SIGINT. A no-op where there is no terminal."""
    target = stream if stream is not None else sys.stdin
    try:
        import termios
    except ImportError:  # Windows
        yield
        return
    try:
        if target is None:
            raise OSError
        fd = target.fileno()
        if not os.isatty(fd):
            raise OSError
        saved = termios.tcgetattr(fd)
    except (OSError, ValueError, termios.error):
        yield
        return
    quiet = list(saved)
    quiet[3] = saved[3] & ~(termios.ECHO | termios.ECHOCTL)
    try:
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
    except termios.error:
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, saved)


@contextmanager
def sigint_calls(callback: Callable[[], None]) -> Generator[Interrupts]:
    """While inside, SIGINT schedules ``callback`` on the running event loop.

    The previous handler comes back on exit. Outside the main thread (where signals cannot
    be handled) nothing is installed.
    """
    interrupts = Interrupts()
    if threading.current_thread() is not threading.main_thread():
        yield interrupts
        return
    loop = asyncio.get_running_loop()

    def handler(signum: int, frame: FrameType | None) -> None:
        interrupts.count += 1
        loop.call_soon_threadsafe(callback)

    previous = signal.signal(signal.SIGINT, handler)
    try:
        yield interrupts
    finally:
        signal.signal(signal.SIGINT, previous)
