"""``interrupt`` in this process: SIGINT, SIGTERM and SIGHUP call back on the event loop
while a handler is installed (and the one before comes back), only the first exit signal
is the exit code's, SIGHUP sends stdout and stderr to the null device, nothing is
installed outside the main thread, and the terminal's echo is off during a run."""

from __future__ import annotations

import io
import os
import signal
import sys
import termios
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from yoagent.cli.interrupt import (
    EXIT_SIGNALS,
    ExitRequest,
    exit_signals_call,
    quiet_terminal,
    sigint_calls,
)


async def settle() -> None:
    """Let the callbacks a signal handler scheduled run."""
    for _ in range(3):
        await anyio.lowlevel.checkpoint()


def test_the_exit_signals_are_sigterm_then_sighup() -> None:
    assert EXIT_SIGNALS == (signal.SIGTERM, signal.SIGHUP)


def test_the_exit_code_is_128_plus_the_signal() -> None:
    request = ExitRequest()
    assert (request.signal, request.exit_code) == (None, 128)
    request.signal = signal.SIGTERM
    assert request.exit_code == 143


async def test_sigint_calls_back_on_the_loop_and_counts() -> None:
    calls: list[str] = []
    before = signal.getsignal(signal.SIGINT)
    with sigint_calls(lambda: calls.append("called")) as interrupts:
        assert signal.getsignal(signal.SIGINT) is not before
        signal.raise_signal(signal.SIGINT)
        signal.raise_signal(signal.SIGINT)
        assert calls == []  # scheduled on the loop, not called in the handler
        await settle()
        assert calls == ["called", "called"]
        assert interrupts.count == 2
    assert signal.getsignal(signal.SIGINT) is before


async def test_the_first_exit_signal_is_kept_and_each_calls_back(tmp_path: Path) -> None:
    calls: list[int] = []
    before = {sig: signal.getsignal(sig) for sig in EXIT_SIGNALS}
    with quiet(tmp_path), exit_signals_call(calls.append) as request:
        assert request.signal is None
        signal.raise_signal(signal.SIGTERM)
        signal.raise_signal(signal.SIGHUP)
        await settle()
        assert calls == [signal.SIGTERM, signal.SIGHUP]
        assert request.signal == signal.SIGTERM
        assert request.exit_code == 143
    assert {sig: signal.getsignal(sig) for sig in EXIT_SIGNALS} == before


@contextmanager
def quiet(tmp_path: Path) -> Iterator[tuple[Path, Path]]:
    """stdout and stderr on files of their own while inside (SIGHUP points their
    descriptors at the null device: never at pytest's own capture files). Entered in the
    test itself: pytest sets its own capture back between a fixture and the test."""
    out, err = tmp_path / "out", tmp_path / "err"
    saved = sys.stdout, sys.stderr
    with out.open("w", encoding="utf-8") as stdout, err.open("w", encoding="utf-8") as stderr:
        sys.stdout, sys.stderr = stdout, stderr
        try:
            yield out, err
        finally:
            sys.stdout, sys.stderr = saved


async def test_sighup_sends_stdout_and_stderr_to_the_null_device(tmp_path: Path) -> None:
    calls: list[int] = []
    with quiet(tmp_path) as (out, err):
        for stream in (sys.stdout, sys.stderr):
            stream.write("before\n")
            stream.flush()
        with exit_signals_call(calls.append) as request:
            signal.raise_signal(signal.SIGHUP)
            await settle()
        for stream in (sys.stdout, sys.stderr):
            stream.write("after\n")
            stream.flush()
    assert (calls, request.exit_code) == ([signal.SIGHUP], 129)
    assert out.read_text() == err.read_text() == "before\n"


async def test_sigterm_leaves_stdout_alone(tmp_path: Path) -> None:
    with quiet(tmp_path) as (out, _):
        with exit_signals_call(lambda signum: None):
            signal.raise_signal(signal.SIGTERM)
            await settle()
        sys.stdout.write("after\n")
        sys.stdout.flush()
    assert out.read_text() == "after\n"


@pytest.mark.parametrize("installer", [sigint_calls, exit_signals_call])
def test_nothing_is_installed_outside_the_main_thread(
    installer: Callable[[Any], Any],
) -> None:
    watched = (signal.SIGINT, *EXIT_SIGNALS)
    before = {sig: signal.getsignal(sig) for sig in watched}
    seen: list[object] = []

    def in_thread() -> None:
        with installer(lambda *args: None) as state:
            seen.append(state)
            seen.append({sig: signal.getsignal(sig) for sig in watched})

    thread = threading.Thread(target=in_thread)
    thread.start()
    thread.join(5)
    assert seen[1] == before
    assert getattr(seen[0], "count", 0) == 0
    assert getattr(seen[0], "signal", None) is None


def test_echo_is_off_inside_and_back_after_on_a_terminal() -> None:
    leader, follower = os.openpty()
    try:
        with open(follower, encoding="utf-8", closefd=False) as stream:
            before = termios.tcgetattr(follower)
            assert before[3] & termios.ECHO
            with quiet_terminal(stream):
                inside = termios.tcgetattr(follower)
                assert inside[3] & (termios.ECHO | termios.ECHOCTL) == 0
                assert inside[3] | termios.ECHO | termios.ECHOCTL == before[3] | (
                    termios.ECHO | termios.ECHOCTL
                )  # nothing else changed
            assert termios.tcgetattr(follower) == before
    finally:
        os.close(leader)
        os.close(follower)


def test_stdin_is_the_terminal_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    leader, follower = os.openpty()
    try:
        with open(follower, encoding="utf-8", closefd=False) as stream:
            monkeypatch.setattr("sys.stdin", stream)
            with quiet_terminal():
                assert termios.tcgetattr(follower)[3] & termios.ECHO == 0
            assert termios.tcgetattr(follower)[3] & termios.ECHO
    finally:
        os.close(leader)
        os.close(follower)


def test_without_a_terminal_nothing_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with (tmp_path / "file").open("w") as plain, quiet_terminal(plain):
        pass
    monkeypatch.setattr("sys.stdin", None)
    entered: list[bool] = []
    with quiet_terminal():
        entered.append(True)
    with quiet_terminal(io.StringIO()):  # no descriptor at all
        entered.append(True)
    assert entered == [True, True]
