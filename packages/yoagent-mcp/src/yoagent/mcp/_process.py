"""The stdio server's child process: the floor's process-group runner, its stderr tail, settle.

Owned here rather than by the SDK's ``stdio_client`` because the behaviour asked of it
is not the SDK's: the exit status and stderr tail quoted in errors, an exit watch that
answers without blocking, a process group that is killed whole when the command's exit
is first seen (a launcher that backgrounds the real server takes it down), and a group
id that is never signalled once it may have been reused.

The child, its group and its reaping are :func:`yoagent.core.support.spawn_process`'s
(``kill_group_on_exit``; optionally a process group of its own). What is MCP's: stdin and
stdout are pipes the transport's tasks write and read; stderr is drained lossily by a
:class:`~yoagent.core.support.PipeCapture` that logs it to ``debug`` on the
``yoagent.mcp.stderr`` logger and keeps its last 4 KiB for error messages.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
from collections.abc import Mapping, Sequence
from typing import IO, Final

from yoagent.core.support import Command, PipeCapture, spawn_process

from ._log import logger

STDERR_TAIL_BYTES: Final = 4096
"""How much of the server's last stderr output is kept for error messages."""

_KILL_REAP_WAIT: Final = 2.0

stderr_logger = logging.getLogger("yoagent.mcp.stderr")


def describe_status(code: int) -> str:
    """``exited with status 3`` / ``was killed by signal 9 (SIGKILL)``, from a Popen return code."""
    if code >= 0:
        return f"exited with status {code}"
    number = -code
    try:
        name = signal.Signals(number).name
    except ValueError:
        return f"was killed by signal {number}"
    return f"was killed by signal {number} ({name})"


class _StderrTail(PipeCapture):
    """Drains the server's stderr, logging it and keeping its last bytes."""

    def __init__(self, fd: int, name: str) -> None:
        super().__init__(
            fd,
            None,
            limit=STDERR_TAIL_BYTES,
            tail=STDERR_TAIL_BYTES,
            name=f"yoagent-mcp-stderr-{name}",
        )
        self._server = name

    def _consume(self, chunk: memoryview) -> bool:
        if stderr_logger.isEnabledFor(logging.DEBUG):
            text = bytes(chunk).decode("utf-8", errors="replace").rstrip("\n")
            stderr_logger.debug("%s: %s", self._server, text)
        return super()._consume(chunk)

    def text(self) -> str:
        """The kept tail, decoded lossily, trimmed, starting at a line when it was cut."""
        _, raw, total = self.snapshot()
        cut = total > len(raw)
        text = raw.decode("utf-8", errors="replace")
        if cut and "\n" in text:
            text = text.split("\n", 1)[1]
        text = text.strip()
        return f"…{text}" if cut and text else text


class ServerProcess:
    """A stdio server's child process, watched without being reaped until its group is gone.

    ``own_process_group`` puts the child in a new process group: that whole group is
    killed when the command's exit is first seen and on :meth:`kill`. Without it the
    child shares the host's group (Ctrl+C in a terminal reaches it) and only the
    command itself is killed.
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        name: str,
        env: Mapping[str, str] | None,
        cwd: str | None,
        own_process_group: bool,
    ) -> None:
        self.name = name
        self.own_process_group = own_process_group
        self._child = spawn_process(
            Command(argv, cwd=cwd, env=env),
            isolation="group" if own_process_group else "none",
            stdin="pipe",
            kill_group_on_exit=True,
        )
        assert self._child.stdin is not None
        self.pid = self._child.pid
        self.stdin: IO[bytes] = os.fdopen(self._child.stdin, "wb", buffering=0)
        self.stdout: IO[bytes] = os.fdopen(self._child.stdout, "rb", buffering=0)
        self.stderr = _StderrTail(self._child.stderr, name)
        self.stderr.start()

    @property
    def status(self) -> str | None:
        """Why the command ended (``exited with status 0``), once it has (and was reaped)."""
        if not self._child.reaped.is_set():
            return None
        code = self._child.returncode
        return describe_status(code) if code is not None else "has gone (exit status unknown)"

    @property
    def has_exited(self) -> bool:
        """Whether the command's exit has been seen (and it was reaped)."""
        return self._child.reaped.is_set()

    def kill(self) -> None:
        """SIGKILL the command, and its whole group when it has one of its own."""
        self._child.kill()

    def wait_exited(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds for the command's exit to be seen."""
        return self._child.reaped.wait(timeout)

    def close_pipes(self) -> None:
        """Close our ends of stdin and stdout (stderr belongs to its drain thread)."""
        for pipe in (self.stdin, self.stdout):
            with contextlib.suppress(OSError):
                pipe.close()


def settle(process: ServerProcess, grace: float) -> None:
    """Close the server's input, wait ``grace`` seconds for it to exit, then kill it.

    Blocking (run it in a worker thread). Waits a little longer for the kill to be seen.
    """
    with contextlib.suppress(OSError):
        process.stdin.close()
    deadline = time.monotonic() + grace
    if not process.wait_exited(max(0.0, deadline - time.monotonic())):
        process.kill()
        if not process.wait_exited(_KILL_REAP_WAIT):
            logger.warning("%s (pid %d) is still running after SIGKILL", process.name, process.pid)
    process.close_pipes()
