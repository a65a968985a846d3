"""The stdio server's child process: spawn, stderr tail, exit watch, kill (its group), reap.

Owned here rather than by the SDK's ``stdio_client`` because the behaviour asked of it
is not the SDK's: the exit status and stderr tail quoted in errors, an exit watch that
answers without blocking, a process group that is killed whole when the command's exit
is first seen (a launcher that backgrounds the real server takes it down), and a group
id that is never signalled once it may have been reused.

* The child is spawned with :class:`subprocess.Popen` (optionally ``process_group=0``)
  on three pipes; stdin and stdout are read and written by the transport's tasks.
* A daemon thread drains stderr lossily in 8 KiB chunks to ``debug`` on the
  ``yoagent.mcp.stderr`` logger and keeps the last 4 KiB.
* A daemon thread waits for the command with ``waitid(WNOWAIT)``: it learns the exit
  status without reaping, kills the group while its id is still ours, then reaps.

Every child still running when the interpreter exits is killed, and so is a child
whose :class:`ServerProcess` is garbage-collected without being closed.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import signal
import subprocess
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from typing import IO, Final

from ._log import logger

STDERR_TAIL_BYTES: Final = 4096
"""How much of the server's last stderr output is kept for error messages."""

_STDERR_CHUNK: Final = 8192
_KILL_REAP_WAIT: Final = 2.0

stderr_logger = logging.getLogger("yoagent.mcp.stderr")

_live: weakref.WeakSet[ServerProcess] = weakref.WeakSet()
_live_lock = threading.Lock()


def _kill_live() -> None:
    with _live_lock:
        alive = list(_live)
    for process in alive:
        process.kill()


atexit.register(_kill_live)


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


class _StderrTail:
    """Drains a pipe to EOF on a daemon thread, logging it and keeping its last bytes."""

    def __init__(self, pipe: IO[bytes], name: str) -> None:
        self._pipe = pipe
        self._name = name
        self._lock = threading.Lock()
        self._tail = bytearray()
        self.done = threading.Event()
        self.total = 0
        threading.Thread(target=self._run, name=f"yoagent-mcp-stderr-{name}", daemon=True).start()

    def _run(self) -> None:
        fd = self._pipe.fileno()
        try:
            while True:
                try:
                    chunk = os.read(fd, _STDERR_CHUNK)
                except OSError:
                    break
                if not chunk:
                    break
                with self._lock:
                    self.total += len(chunk)
                    self._tail += chunk
                    if len(self._tail) > STDERR_TAIL_BYTES:
                        del self._tail[: len(self._tail) - STDERR_TAIL_BYTES]
                if stderr_logger.isEnabledFor(logging.DEBUG):
                    text = chunk.decode("utf-8", errors="replace").rstrip("\n")
                    stderr_logger.debug("%s: %s", self._name, text)
        finally:
            self._pipe.close()
            self.done.set()

    def text(self) -> str:
        """The kept tail, decoded lossily, trimmed, starting at a line when it was cut."""
        with self._lock:
            raw = bytes(self._tail)
            cut = self.total > len(raw)
        text = raw.decode("utf-8", errors="replace")
        if cut and "\n" in text:
            text = text.split("\n", 1)[1]
        text = text.strip()
        return f"…{text}" if cut and text else text


class _Child:
    """What the watcher thread and the owner share: never a reference to the owner itself,
    so an owner dropped without :meth:`ServerProcess.close` can still be collected and
    its finalizer kill the child."""

    def __init__(self, popen: subprocess.Popen[bytes], name: str, own_process_group: bool) -> None:
        self.popen = popen
        self.name = name
        self.lock = threading.Lock()
        self.group_armed = own_process_group  # while True, killpg(pid) reaches only our group
        self.reaped = False
        self.status: str | None = None
        self.exited = threading.Event()

    def watch(self) -> None:
        pid = self.popen.pid
        status: str | None = None
        if hasattr(os, "waitid"):
            try:
                info = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)
            except ChildProcessError as error:
                status = f"has gone (exit status unknown: {error.strerror or error})"
            else:
                if info is not None:
                    code = info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
                    status = describe_status(code)
        # The command has exited: its group goes now, while the group id is still ours.
        self.kill_group()
        with self.lock:
            self.group_armed = False
            try:
                code = self.popen.wait()
            except ChildProcessError:
                code = None
            self.reaped = True
        if status is None:
            status = describe_status(code) if code is not None else "has gone (exit status unknown)"
        self.status = status
        self.exited.set()

    def kill_group(self) -> None:
        with self.lock:
            if not self.group_armed:
                return
            try:
                os.killpg(self.popen.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            except OSError as error:
                logger.debug("%s: killing its process group failed: %s", self.name, error)

    def kill(self) -> None:
        self.kill_group()
        with self.lock:
            if self.reaped:
                return
            with contextlib.suppress(ProcessLookupError, PermissionError):
                self.popen.kill()


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
        popen = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=dict(env) if env is not None else None,
            cwd=cwd,
            process_group=0 if own_process_group else None,
            close_fds=True,
            bufsize=0,
        )
        assert popen.stdin is not None
        assert popen.stdout is not None
        assert popen.stderr is not None
        self.pid = popen.pid
        self.stdin: IO[bytes] = popen.stdin
        self.stdout: IO[bytes] = popen.stdout
        self.stderr = _StderrTail(popen.stderr, name)
        self._child = _Child(popen, name, own_process_group)
        with _live_lock:
            _live.add(self)
        weakref.finalize(self, self._child.kill)
        threading.Thread(
            target=self._child.watch, name=f"yoagent-mcp-wait-{self.pid}", daemon=True
        ).start()

    @property
    def status(self) -> str | None:
        """Why the command ended (``exited with status 0``), once it has (and was reaped)."""
        return self._child.status

    @property
    def has_exited(self) -> bool:
        """Whether the command's exit has been seen."""
        return self._child.exited.is_set()

    def kill(self) -> None:
        """SIGKILL the command, and its whole group when it has one of its own."""
        self._child.kill()

    def wait_exited(self, timeout: float) -> bool:
        """Block up to ``timeout`` seconds for the command's exit to be seen."""
        return self._child.exited.wait(timeout)

    def close_pipes(self) -> None:
        """Close our ends of stdin and stdout (stderr belongs to its drain thread)."""
        for pipe in (self.stdin, self.stdout):
            with contextlib.suppress(OSError):
                pipe.close()

    def forget(self) -> None:
        """Stop tracking this process for the at-exit kill (it has been reaped)."""
        with _live_lock:
            _live.discard(self)


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
    if process.has_exited:
        process.forget()
