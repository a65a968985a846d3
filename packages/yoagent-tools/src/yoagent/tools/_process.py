"""Child processes in their own process group: spawn, watch, capture, kill.

Shared by ``bash`` and ``search``. The design, chosen to behave the same under
asyncio and trio:

* The child is spawned with :class:`subprocess.Popen` in a new session
  (``start_new_session``: its own process group, and no controlling terminal, so
  ``/dev/tty`` fails at once), stdin from ``/dev/null``, on pipes this module owns as
  raw file descriptors.
* One daemon thread per pipe reads it with blocking ``os.read`` into a
  :class:`Capture` (bounded: the rest is counted and dropped). A capture can be
  *detached*: its thread goes on draining the pipe to EOF without keeping
  anything, so a background job that still holds the pipe is never SIGPIPE'd.
* One daemon thread waits for the child with ``waitid(WNOWAIT)``: it learns the
  exit status without reaping, so the process group id stays ours (and cannot be
  reused) until :meth:`ProcessGroup.release` lets the thread reap it. Killing the
  group therefore never signals a stranger.
* The threads wake the event loop through a self-pipe (:class:`Wakeup`), awaited
  with :func:`anyio.wait_readable`.

Every group that is still armed when the interpreter exits is killed. A command may
also be tracked by an id in its environment, so processes that left its group (a
``setsid`` child) are killed with it (:func:`kill_marked`).
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import os
import secrets
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Final

import anyio

from yoagent.core.support import utf8_decode

READ_GRACE: Final = 1.0
"""Seconds to keep reading after the command exited, before leaving its pipes to a drain."""

_CHUNK: Final = 1 << 18
_NOTIFY_INTERVAL: Final = 0.05
_F_SETPIPE_SZ: Final = 1031  # Linux: a bigger pipe means fewer reads for large output


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


class Capture:
    """One pipe read to EOF by a daemon thread, keeping at most ``limit`` bytes.

    The first part (``limit - tail``) and the last ``tail`` bytes are kept; what
    falls between is counted and dropped, so memory stays bounded whatever the
    child prints. Override :meth:`_consume` to keep something else.
    """

    def __init__(self, fd: int, wakeup: Wakeup, *, limit: int, tail: int = 0, name: str) -> None:
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
        """Stop keeping output; the thread drains the pipe to its end and closes it."""
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
                        self._wakeup.notify()
        finally:
            os.close(self._fd)
            self.done.set()
            self._wakeup.notify()


RUN_ID_VARIABLE: Final = "YOAGENT_RUN_ID"
"""Set in a tracked command's environment (a random id per run); its descendants inherit it."""
_KILL_ROUNDS: Final = 5


def kill_marked(run_id: str) -> int:
    """SIGKILL every live process whose environment holds ``YOAGENT_RUN_ID=run_id``.

    This reaches what left the process group, such as a ``setsid`` child that was
    re-parented. Linux only (``/proc``); a process that cleared its environment
    (``env -i``) is not found. Returns how many processes were signalled.
    """
    needle = f"{RUN_ID_VARIABLE}={run_id}".encode()
    own = os.getpid()
    signalled = 0
    for round_number in range(_KILL_ROUNDS):
        found = [pid for pid in _pids_with(needle) if pid != own]
        if not found:
            break
        for pid in found:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                signalled += 1
        time.sleep(0.005 * (round_number + 1))  # let them die before looking again
    return signalled


def _pids_with(needle: bytes) -> list[int]:
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    found: list[int] = []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as file:
                environ = file.read()
        except OSError:
            continue  # gone, a zombie, or not ours to read
        if needle in environ.split(b"\0"):
            found.append(int(name))
    return found


_live_groups: set[ProcessGroup] = set()
_live_lock = threading.Lock()


def _kill_live_groups() -> None:
    with _live_lock:
        groups = list(_live_groups)
    for group in groups:
        group.kill()


atexit.register(_kill_live_groups)


class ProcessGroup:
    """A child that leads its own process group, watched by a thread that does not reap it.

    While *armed*, :meth:`kill` sends SIGKILL to the whole group. :meth:`release`
    disarms it and lets the watcher reap the child; after that the group id is no
    longer ours and is never signalled again.
    """

    def __init__(
        self, popen: subprocess.Popen[bytes], wakeup: Wakeup, *, run_id: str | None = None
    ) -> None:
        self.popen = popen
        self._run_id = run_id
        self.pid = popen.pid
        self.pgid = popen.pid
        self.exited = threading.Event()
        self.returncode: int | None = None
        self._wakeup = wakeup
        self._reap = threading.Event()
        self._lock = threading.Lock()
        self._armed = True
        with _live_lock:
            _live_groups.add(self)
        self._watcher = threading.Thread(
            target=self._watch, name=f"yoagent-wait-{self.pid}", daemon=True
        )
        self._watcher.start()

    def _watch(self) -> None:
        code: int | None = None
        if hasattr(os, "waitid"):
            while True:
                try:
                    info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)
                except ChildProcessError:
                    break
                if info is None:  # pragma: no cover - only with WNOHANG
                    continue
                code = info.si_status if info.si_code == os.CLD_EXITED else -info.si_status
                break
            self.returncode = code
            self.exited.set()
            self._wakeup.notify()
            self._reap.wait()
            with contextlib.suppress(ChildProcessError):
                self.popen.wait()
        else:  # pragma: no cover - platforms without waitid reap at once
            self.returncode = self.popen.wait()
            self.exited.set()
            self._wakeup.notify()
        if self.returncode is None:
            self.returncode = self.popen.returncode

    def kill(self) -> None:
        """SIGKILL every process of the group, and every tracked descendant, if still ours."""
        with self._lock:
            if not self._armed:
                return
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pgid, signal.SIGKILL)
            if self._run_id is not None:
                kill_marked(self._run_id)

    def release(self) -> None:
        """Disarm (never signal the group again) and let the watcher reap the child."""
        with self._lock:
            self._armed = False
        with _live_lock:
            _live_groups.discard(self)
        self._reap.set()


def spawn_group(
    argv: Sequence[str],
    *,
    cwd: str | None,
    env: Mapping[str, str] | None,
    wakeup: Wakeup,
    stdout_limit: int,
    stderr_limit: int,
    tail: int = 0,
    stdout_capture: Callable[[int, Wakeup, str], Capture] | None = None,
    pass_fds: tuple[int, ...] = (),
    track_descendants: bool = False,
) -> tuple[ProcessGroup, Capture, Capture]:
    """Start ``argv`` in a new session (and so a new process group) with stdin from ``/dev/null``.

    The new session has no controlling terminal: opening ``/dev/tty`` fails at once
    (``ENXIO``) instead of waiting for input that never comes. With
    ``track_descendants``, the child's environment carries :data:`RUN_ID_VARIABLE`, so
    :meth:`ProcessGroup.kill` also finds processes that left the group (``setsid``).
    Returns the group and the two running captures (stdout, stderr).
    """
    opened: list[int] = []
    try:
        out_r, out_w = os.pipe()
        opened += (out_r, out_w)
        err_r, err_w = os.pipe()
        opened += (err_r, err_w)
    except BaseException:
        for fd in opened:
            os.close(fd)
        raise
    for fd in (out_r, err_r):
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, _F_SETPIPE_SZ, 1 << 20)
    run_id: str | None = None
    child_env = dict(env) if env is not None else None
    if track_descendants:
        run_id = secrets.token_hex(12)
        child_env = dict(os.environ) if child_env is None else child_env
        child_env[RUN_ID_VARIABLE] = run_id
    try:
        popen = subprocess.Popen(
            list(argv),
            stdin=subprocess.DEVNULL,
            stdout=out_w,
            stderr=err_w,
            cwd=cwd,
            env=child_env,
            start_new_session=True,
            close_fds=True,
            pass_fds=pass_fds,
        )
    except BaseException:
        for fd in opened:
            os.close(fd)
        raise
    os.close(out_w)
    os.close(err_w)
    group = ProcessGroup(popen, wakeup, run_id=run_id)
    if stdout_capture is not None:
        out = stdout_capture(out_r, wakeup, f"yoagent-out-{popen.pid}")
    else:
        out = Capture(out_r, wakeup, limit=stdout_limit, tail=tail, name=f"yoagent-out-{popen.pid}")
    err = Capture(err_r, wakeup, limit=stderr_limit, tail=tail, name=f"yoagent-err-{popen.pid}")
    out.start()
    err.start()
    return group, out, err


def decode_capture(capture: Capture, what: str) -> tuple[str, bool]:
    """The kept output as text (decoded after cutting), with a marker where bytes were cut.

    Returns the text and whether anything was cut.
    """
    head, tail, total = capture.snapshot()
    text = utf8_decode(head)
    cut = total > len(head) + len(tail)
    if cut:
        dropped = total - len(head) - len(tail)
        text += (
            f"\n[... {what} cut: {dropped} bytes dropped; kept the first {len(head)} "
            f"and the last {len(tail)} of {total} bytes ...]\n"
        )
    if tail:
        text += utf8_decode(tail)
    return text, cut
