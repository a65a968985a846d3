"""Child processes that leave nothing running: spawned in their own process group, watched
without being reaped, killed whole, then reaped.

Hand-written, because no library does this under both asyncio and trio: anyio's
``open_process`` reaps a child as soon as it exits, after which its process group id may
be reused and a ``killpg`` could reach a stranger. The design:

* :func:`spawn_process` is the one place a child is started: :class:`subprocess.Popen`
  with the :class:`Command` (a wrapper such as a sandbox changes the command, never this
  step), in a new session (its own process group and no controlling terminal, so
  ``/dev/tty`` fails at once), a new process group, or the caller's own group; stdout and
  stderr on pipes this module creates and hands over as raw descriptors; stdin from
  ``/dev/null`` or on a pipe.
* One daemon thread waits for the child with ``waitid(WNOWAIT)``: it learns the exit
  status without reaping, so the group id stays ours (and cannot be reused) until the
  child is reaped: when the owner calls :meth:`ChildProcess.release`, or at once after
  the watcher has killed the group itself (``kill_group_on_exit``). Without
  ``os.waitid`` (macOS before Python 3.13) it polls, and reaps the child as soon as it
  has exited. No lock is held across a wait that can block.
* A child another part of the program reaped (a ``waitpid(-1)`` of its own) is found
  gone, by the watcher or by the next kill: it is never signalled again, and its status
  is unknown (``None``).
* :meth:`ChildProcess.kill` SIGKILLs the group while it is ours, the child itself while
  it is not reaped, and, for a child spawned with ``track_descendants``, every process
  whose environment carries its run id (what left the group with ``setsid``).

Every child not yet reaped is killed when the interpreter exits, and a child whose
:class:`ChildProcess` is garbage-collected unreleased is killed and reaped; in a forked
copy of the program, neither (the children are the parent's). Exit handlers
do not run when the program is stopped by a signal it does not handle (SIGTERM by
default) or by SIGKILL: for that, the first child starts a watchdog (:mod:`.reaper`), a
small process of its own that notices the program's death through a pipe and kills every
child, group and tracked descendant that was still the program's.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from . import reaper
from .pipes import Wakeup
from .reaper import RUN_ID_VARIABLE, kill_marked

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None

logger = logging.getLogger("yoagent.core")

Isolation = Literal["session", "group", "none"]
"""Where a child runs: a new session (and group), a new group in this session, or ours."""

_F_SETPIPE_SZ: Final = 1031  # Linux: a bigger pipe means fewer reads for large output
_POLL_FIRST: Final = 0.001
_POLL_EVERY: Final = 0.05
"""Without ``os.waitid``: the first and the longest pause between two looks at the child."""


@dataclass(frozen=True, slots=True)
class Command:
    """What to start: the command line, its working folder, its environment (``None``:
    this process's) and descriptors it inherits besides its stdio.

    A wrapper (a sandbox that runs the command under another program) is a function
    from one :class:`Command` to another; :func:`spawn_process` starts whatever it is given.
    """

    argv: Sequence[str]
    cwd: str | None = None
    env: Mapping[str, str] | None = None
    pass_fds: tuple[int, ...] = ()


class _Child:
    """What the watcher thread and the owner share: never a reference to the owner, so an
    owner dropped unreleased can be collected and its finalizer kill the child.

    :attr:`lock` guards the signalling state and is never held across a wait that can
    block: a kill, a release or :func:`kill_children` never waits for the child.
    """

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        *,
        own_group: bool,
        run_id: str | None,
        kill_group_on_exit: bool,
        wakeup: Wakeup | None,
    ) -> None:
        self.popen = popen
        self.pid = popen.pid
        self.owner = os.getpid()  # a forked copy of the program leaves the child alone
        self.run_id = run_id
        self.lock = threading.Lock()
        self.armed = own_group  # while True, killpg(pid) reaches only the child's group
        self.ours = True  # not reaped (by us or anyone): the pid is still the child's
        self.released = False
        self.returncode: int | None = None
        self.exited = threading.Event()
        self.reaped = threading.Event()
        self._release = threading.Event()
        self._kill_group_on_exit = kill_group_on_exit
        self._wakeup = wakeup
        # Looked up once: a child watched one way is reaped the same way, even if
        # ``os.waitid`` comes or goes meanwhile (a test patching it out and back in).
        self._waitid = hasattr(os, "waitid")
        kind = "g" if own_group else "p"  # a group of its own is killed whole
        self.watched: tuple[str, ...] = (f"{kind}{self.pid}",)
        if run_id is not None:
            self.watched += (f"r{run_id}",)

    def unwatch(self) -> None:
        """Take the child off the watchdog's list (before it is reaped: called under
        :attr:`lock`)."""
        if self.watched:
            _watchdog.remove(self.watched)
            self.watched = ()

    def watch(self) -> None:
        """The watcher thread: learn the exit, then reap when the time comes."""
        if self._waitid:
            self._watch_unreaped()
        else:
            self._poll()

    def _watch_unreaped(self) -> None:
        try:
            info = os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOWAIT)
        except ChildProcessError:  # reaped by another part of the program
            with self.lock:
                self._gone(None)
            return
        assert info is not None  # without WNOHANG there is always one
        code = info.si_status
        self.returncode = code if info.si_code == os.CLD_EXITED else -code
        self.exited.set()
        self._notify()
        if self._kill_group_on_exit:
            self.kill_group()  # while the group id is still ours
        else:
            self._release.wait()
        with self.lock:
            if not self.ours:
                return  # found reaped elsewhere meanwhile
            self.armed = False
            self.unwatch()  # first: once reaped, its ids may be someone else's
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)  # a zombie by now: returns at once
            self._gone(self.returncode)

    def _poll(self) -> None:
        """Without ``os.waitid`` (macOS before Python 3.13) the exit cannot be seen without
        reaping: poll, and reap it as soon as it has exited."""
        delay = _POLL_FIRST
        while True:
            with self.lock:
                if not self._still_ours():
                    return
            time.sleep(delay)
            delay = min(delay * 2, _POLL_EVERY)

    def _still_ours(self) -> bool:
        """Under :attr:`lock`: whether the pid is still the child's, unreaped.

        Asks without blocking. A child another part of the program reaped is found gone
        (its status lost); without ``os.waitid``, a child that has exited is reaped here.
        """
        if not self.ours:
            return False
        try:
            if self._waitid:
                os.waitid(os.P_PID, self.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
                return True
            pid, status = os.waitpid(self.pid, os.WNOHANG)
        except ChildProcessError:  # reaped by another part of the program
            self._gone(None)
            return False
        if pid == 0:
            return True
        if self._kill_group_on_exit and self.armed:
            # Just reaped: a group still holding a member keeps its id (it cannot be
            # reused); an empty one is not handed out again within these microseconds.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.pid, signal.SIGKILL)
        self._gone(os.waitstatus_to_exitcode(status))
        return False

    def _gone(self, returncode: int | None) -> None:
        """Under :attr:`lock`: the child has been reaped (``returncode`` ``None``: by someone
        else, its status lost). Nothing is signalled from now on."""
        if not self.ours:
            return
        self.ours = False
        self.armed = False
        self.unwatch()
        if self.returncode is None:
            self.returncode = returncode
        # Popen's own record: set, so that it never waits for this pid again (by then it
        # may be another child's). An unknown status reads there as Popen's own guess, 0.
        self.popen.returncode = 0 if returncode is None else returncode
        with _live_lock:
            _live.discard(self)
        self._release.set()  # the watcher has nothing left to wait for
        self.exited.set()
        self.reaped.set()
        self._notify()

    def _notify(self) -> None:
        if self._wakeup is not None:
            self._wakeup.notify()

    def kill_group(self) -> None:
        with self.lock:
            if self.armed and self._still_ours():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.pid, signal.SIGKILL)

    def kill(self) -> None:
        if os.getpid() != self.owner:
            return
        with self.lock:
            if self.released or not self._still_ours():
                return
            if self.armed:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self.pid, signal.SIGKILL)
            # Not reaped, so the pid is still ours: reaches a child that left its group.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(self.pid, signal.SIGKILL)
            run_id = self.run_id
        if run_id is not None:
            kill_marked(run_id)

    def release(self) -> None:
        if os.getpid() != self.owner:
            return
        with self.lock:
            self.released = True
            self.armed = False
            self.unwatch()
        self._release.set()

    def abandon(self) -> None:
        self.kill()
        self.release()


_live: set[_Child] = set()
_live_lock = threading.Lock()


def kill_children() -> int:
    """SIGKILL every child :func:`spawn_process` started that is still this program's
    (not released, not reaped): its whole group when it leads one, and its tracked
    descendants. Returns how many children that was.

    The interpreter's exit does this by itself, and the watchdog does it when the program
    dies without exiting (SIGTERM, SIGKILL); call it from a signal handler of your own, or
    before :func:`os._exit`, to end them sooner.
    """
    with _live_lock:
        children = list(_live)
    for child in children:
        child.kill()
    return len(children)


def _kill_live() -> None:
    kill_children()
    _watchdog.stand_down()  # nothing left for it to do


atexit.register(_kill_live)


class _Watchdog:
    """This program's side of the watchdog (:mod:`.reaper`): the write end of its pipe.

    Started with the first child. Where it cannot start (no interpreter to run it, no
    ``os.killpg``), children are still killed at exit and on :func:`kill_children`.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pipe: int | None = None
        self._failed = False

    def add(self, entries: tuple[str, ...]) -> None:
        self._send("".join(f"+{entry}\n" for entry in entries), start=True)

    def remove(self, entries: tuple[str, ...]) -> None:
        self._send("".join(f"-{entry}\n" for entry in entries))

    def stand_down(self) -> None:
        self._send("x\n")

    def forget(self) -> None:
        """In a forked child: the pipe is the parent's watchdog's, not ours."""
        pipe, self._pipe, self._lock = self._pipe, None, threading.Lock()
        if pipe is not None:
            with contextlib.suppress(OSError):
                os.close(pipe)

    def _send(self, text: str, *, start: bool = False) -> None:
        with self._lock:
            if self._pipe is None and start and not self._failed:
                self._pipe = self._start()
            if self._pipe is None:
                return
            try:
                os.write(self._pipe, text.encode("ascii"))
            except OSError as error:  # it was killed: children are still killed at exit
                logger.warning(
                    "the child-process watchdog has gone (%s); children are killed when "
                    "this program exits, no longer when it is killed",
                    error.strerror,
                )
                os.close(self._pipe)
                self._pipe = None
                self._failed = True

    def _start(self) -> int | None:
        script = reaper.__file__
        if not (hasattr(os, "killpg") and sys.executable and os.path.isfile(script)):
            self._failed = True
            return None
        read, write = os.pipe()
        try:
            launcher = subprocess.Popen(
                [sys.executable, "-I", "-S", script],
                stdin=read,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd="/",
                start_new_session=True,  # out of the terminal's reach (Ctrl+C, hang-up)
                close_fds=True,
            )
        except OSError as error:
            os.close(write)
            logger.warning(
                "could not start the child-process watchdog (%s); children are killed "
                "when this program exits, not when it is killed",
                error.strerror,
            )
            self._failed = True
            return None
        finally:
            os.close(read)
        # The launcher forks the watchdog and exits at once: the watchdog is nobody's
        # child here, so it is never a zombie of ours, whenever it ends.
        threading.Thread(target=launcher.wait, name="yoagent-watchdog-start", daemon=True).start()
        return write


_watchdog = _Watchdog()


def _after_fork() -> None:
    """In a forked copy of the program: the children are the parent's, not this copy's.

    Its exit, its :func:`kill_children` and its finalizers leave them alone (each child
    also knows its owner's pid), and a lock a parent's thread held at the fork is not
    inherited held.
    """
    global _live_lock
    _live.clear()
    _live_lock = threading.Lock()
    _watchdog.forget()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork)


class ChildProcess:
    """A started child (see :func:`spawn_process`), watched by a thread that does not reap it.

    :attr:`exited` is set when its exit is seen (:attr:`returncode` is then known: the exit
    status, or minus the signal that killed it), :attr:`reaped` once it has been reaped and
    its group id is no longer ours. :attr:`stdout` and :attr:`stderr` are the read ends of
    its output pipes and :attr:`stdin` the write end of its input pipe (``None`` when its
    stdin is ``/dev/null``): they are the caller's to read (drain them: a full pipe stops
    the child) and to close.
    """

    def __init__(self, child: _Child, *, stdin: int | None, stdout: int, stderr: int) -> None:
        self._child = child
        self.pid = child.pid
        self.pgid: int | None = child.pid if child.armed else None
        """The child's process group id, when it leads a group of its own."""
        self.stdin = stdin
        self.stdout = stdout
        self.stderr = stderr
        self.exited = child.exited
        self.reaped = child.reaped
        weakref.finalize(self, child.abandon)

    @property
    def returncode(self) -> int | None:
        """The exit status (negative: killed by that signal), once known; ``None`` for good
        when another part of the program reaped the child before its exit was seen."""
        return self._child.returncode

    def kill(self) -> None:
        """SIGKILL the child's whole group (while it is ours), the child, and every tracked
        descendant; a no-op once released or reaped, and in a forked copy of the program."""
        self._child.kill()

    def release(self) -> None:
        """Never signal the child again, and let the watcher reap it once it has exited."""
        self._child.release()


def spawn_process(
    command: Command,
    *,
    isolation: Isolation = "session",
    stdin: Literal["null", "pipe"] = "null",
    track_descendants: bool = False,
    kill_group_on_exit: bool = False,
    wakeup: Wakeup | None = None,
) -> ChildProcess:
    """Start ``command`` with its output on two new pipes; the one place a child starts.

    ``isolation``: ``"session"`` (a new session: its own process group, and no controlling
    terminal, so opening ``/dev/tty`` fails at once instead of waiting for input that never
    comes), ``"group"`` (a new process group in this session) or ``"none"`` (this process's
    group: a Ctrl+C in the terminal reaches it, and only the child itself is killed).
    ``stdin``: ``"null"`` (``/dev/null``) or ``"pipe"``. With ``track_descendants``, the
    child's environment carries :data:`RUN_ID_VARIABLE`, so :meth:`ChildProcess.kill` also
    finds processes that left the group (``setsid``). With ``kill_group_on_exit``, the
    group is killed as soon as the child's exit is seen (a launcher that backgrounds the
    real program takes it down) and the child reaped; otherwise the group stays ours,
    and armed, until :meth:`ChildProcess.release`. ``wakeup`` is notified when the child
    exits and when it is reaped.

    Raises :class:`OSError` when the pipes or the child cannot be made; nothing is left open.
    """
    opened: list[int] = []
    try:
        out_r, out_w = _pipe(opened)
        err_r, err_w = _pipe(opened)
        in_r, in_w = _pipe(opened) if stdin == "pipe" else (None, None)
        for fd in (out_r, err_r):
            if fcntl is not None:
                with contextlib.suppress(OSError):
                    fcntl.fcntl(fd, _F_SETPIPE_SZ, 1 << 20)
        env = dict(command.env) if command.env is not None else None
        run_id: str | None = None
        if track_descendants:
            run_id = secrets.token_hex(12)
            env = dict(os.environ) if env is None else env
            env[RUN_ID_VARIABLE] = run_id
        popen = subprocess.Popen(
            list(command.argv),
            stdin=subprocess.DEVNULL if in_r is None else in_r,
            stdout=out_w,
            stderr=err_w,
            cwd=command.cwd,
            env=env,
            start_new_session=isolation == "session",
            process_group=0 if isolation == "group" else None,
            close_fds=True,
            pass_fds=command.pass_fds,
        )
    except BaseException:
        for fd in opened:
            os.close(fd)
        raise
    for fd in (out_w, err_w, in_r):
        if fd is not None:
            os.close(fd)
    child = _Child(
        popen,
        own_group=isolation != "none",
        run_id=run_id,
        kill_group_on_exit=kill_group_on_exit,
        wakeup=wakeup,
    )
    with _live_lock:
        _live.add(child)
    _watchdog.add(child.watched)  # before the watcher can reap it
    watcher = threading.Thread(target=child.watch, name=f"yoagent-wait-{child.pid}", daemon=True)
    try:
        watcher.start()
    except BaseException:  # no thread to watch it: the child must not outlive this call
        child.kill()
        with child.lock:  # off the watchdog's list before the reap frees its group id
            child.unwatch()
        popen.wait()
        with _live_lock:
            _live.discard(child)
        for fd in (out_r, err_r, in_w):
            if fd is not None:
                os.close(fd)
        raise
    return ChildProcess(child, stdin=in_w, stdout=out_r, stderr=err_r)


def _pipe(opened: list[int]) -> tuple[int, int]:
    read, write = os.pipe()
    opened += (read, write)
    return read, write
