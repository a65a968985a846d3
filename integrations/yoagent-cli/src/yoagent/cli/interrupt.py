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


EXIT_SIGNALS: tuple[signal.Signals, ...] = tuple(
    getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)
)
"""The signals that end ``yoagent`` the way Ctrl+C ends a run: the terminal closing
(SIGHUP) and a polite kill (SIGTERM)."""


class ExitRequest:
    """Which exit signal arrived (``None``: none yet)."""

    def __init__(self) -> None:
        self.signal: int | None = None

    @property
    def exit_code(self) -> int:
        """The shell's convention: 128 + the signal's number."""
        return 128 + (self.signal or 0)


@contextmanager
def exit_signals_call(callback: Callable[[int], None]) -> Generator[ExitRequest]:
    """While inside, SIGTERM and SIGHUP schedule ``callback(signum)`` on the running event
    loop (the first one is recorded in the yielded :class:`ExitRequest`).

    When SIGHUP arrives the terminal is gone: stdout and stderr are pointed at the null
    device first, so the clean-up that follows cannot fail writing to it. The previous
    handlers come back on exit; outside the main thread nothing is installed.
    """
    request = ExitRequest()
    if threading.current_thread() is not threading.main_thread():
        yield request
        return
    loop = asyncio.get_running_loop()

    def handler(signum: int, frame: FrameType | None) -> None:
        if request.signal is None:
            request.signal = signum
        if signum == getattr(signal, "SIGHUP", None):
            _silence_output()
        loop.call_soon_threadsafe(callback, signum)

    previous = {sig: signal.signal(sig, handler) for sig in EXIT_SIGNALS}
    try:
        yield request
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _silence_output() -> None:
    with contextlib.suppress(OSError):
        null = os.open(os.devnull, os.O_WRONLY)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError, AttributeError):
                os.dup2(null, stream.fileno())
        os.close(null)
