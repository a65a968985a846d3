"""A program on a fresh pseudo-terminal, started without forking the test process.

``pexpect.spawn`` forks the calling process (``pty.fork``), and the test process has
threads (the scripted server, anyio's worker threads): Python 3.12+ warns that forking a
multi-threaded process may deadlock the child, and it may. Here the terminal pair comes
from ``os.openpty()`` and the child from ``subprocess`` (fork and exec in C, nothing of
Python in between). A few lines of Python in the new process make the terminal its
controlling one, so Ctrl+C typed on it sends SIGINT, then exec the program.
:class:`PtyChild` drives it with pexpect's ``expect`` machinery over the terminal's master
side and offers the ``pexpect.spawn`` methods the tests use.
"""

from __future__ import annotations

import fcntl
import os
import struct
import subprocess
import sys
import termios
from collections.abc import Sequence
from pathlib import Path

from pexpect.fdpexpect import fdspawn

# Run in the child: take the terminal on stdin as the controlling one (the child is a
# session leader: start_new_session), then become the program.
_LAUNCH = (
    "import fcntl, os, sys, termios; "
    "fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execvp(sys.argv[1], sys.argv[1:])"
)


class PtyChild(fdspawn):
    """``program *args`` on its own pseudo-terminal of ``rows`` x ``columns``."""

    def __init__(
        self,
        program: str,
        args: Sequence[str],
        *,
        cwd: Path,
        env: dict[str, str],
        timeout: float,
        dimensions: tuple[int, int] = (24, 80),
    ) -> None:
        master, terminal = os.openpty()
        rows, columns = dimensions
        fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-c", _LAUNCH, program, *args],
                stdin=terminal,
                stdout=terminal,
                stderr=terminal,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
        except BaseException:
            os.close(master)
            raise
        finally:
            os.close(terminal)  # the child holds its own copies: EOF comes when it exits
        super().__init__(master, encoding="utf-8", timeout=timeout)
        self.exitstatus: int | None = None
        self.signalstatus: int | None = None

    def sendintr(self) -> None:
        """Type Ctrl+C (the terminal turns it into SIGINT unless the program reads raw keys)."""
        self.send("\x03")

    def sendeof(self) -> None:
        """Type Ctrl+D."""
        self.send("\x04")

    def kill(self, sig: int) -> None:
        """Send signal ``sig`` to the program."""
        if self.process.poll() is None:
            self.process.send_signal(sig)

    def isalive(self) -> bool:
        return self.process.poll() is None

    def terminate(self, force: bool = False) -> bool:
        """SIGTERM, or SIGKILL with ``force``; True once the program has ended."""
        if self.process.poll() is None:
            if force:
                self.process.kill()
            else:
                self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            return False
        return True

    def close(self, force: bool = True) -> None:
        """Close the terminal and reap the program, recording how it ended."""
        if not self.closed:
            super().close()
        try:
            code = self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            if not force:
                raise
            self.process.kill()
            code = self.process.wait()
        self.exitstatus, self.signalstatus = (code, None) if code >= 0 else (None, -code)
