"""The process runner's edges: what a child is started with (its stdin, environment, pipes,
descriptors, run id), its watcher thread, a spawn whose watcher cannot start, the lines the
watchdog is sent, how the watchdog is started (or why not), a forked copy of the program,
and what a child found exited is (never signalled again, its status kept). (Added from
mutation testing: each pins a behaviour a surviving mutant changed.)

Signals the runner would send to a child that has already exited are recorded, not sent
(:class:`_Signals`): each such test builds its child from a real, exited process."""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import signal
import subprocess
import sys
import threading
import types
from collections.abc import Callable, Iterator

import pytest

from yoagent.core._support import process, reaper
from yoagent.core.support import RUN_ID_VARIABLE, ChildProcess, Command, PipeCapture, spawn_process

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc (Linux)")

_F_GETPIPE_SZ = 1032
_REAL_KILL = os.kill


def _output(child: ChildProcess) -> str:
    out = PipeCapture(child.stdout, None, limit=1 << 16, name="edges-out")
    out.start()
    os.close(child.stderr)
    assert out.done.wait(10) and child.exited.wait(10)
    return out.snapshot()[0].decode()


def _run(command: Command, spawned: list[ChildProcess], **options: object) -> str:
    child = spawn_process(command, **options)  # type: ignore[arg-type]
    spawned.append(child)
    return _output(child)


def _open_fds() -> set[str]:
    return set(os.listdir("/proc/self/fd"))


# -- what a child is started with ---------------------------------------------------------------


def test_a_childs_stdin_is_dev_null_and_its_environment_carries_no_run_id_by_default(
    spawned: list[ChildProcess],
) -> None:
    script = f'readlink /proc/self/fd/0; echo "${{{RUN_ID_VARIABLE}-unset}}"'
    # This process's own stdin is a pipe meanwhile: the child must not inherit it.
    saved = os.dup(0)
    read, write = os.pipe()
    os.dup2(read, 0)
    try:
        assert _run(Command(["sh", "-c", script]), spawned) == "/dev/null\nunset\n"
    finally:
        os.dup2(saved, 0)
        for fd in (saved, read, write):
            os.close(fd)


def test_an_inheritable_descriptor_not_passed_is_closed_in_the_child(
    spawned: list[ChildProcess],
) -> None:
    read, write = os.pipe()
    os.set_inheritable(read, True)
    try:
        script = f"test -e /proc/self/fd/{read} && echo leaked; echo done"
        assert _run(Command(["sh", "-c", script]), spawned) == "done\n"
    finally:
        os.close(read)
        os.close(write)


def test_a_commands_environment_is_the_childs_whole_environment(
    spawned: list[ChildProcess],
) -> None:
    command = Command(["/usr/bin/env"], env={"ONLY": "this"})
    assert _run(command, spawned) == "ONLY=this\n"


def test_a_tracked_childs_run_id_is_24_hex_digits_and_kill_looks_for_it(
    spawned: list[ChildProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    looked_for: list[str] = []
    monkeypatch.setattr(process, "kill_marked", looked_for.append)
    script = f'echo "${RUN_ID_VARIABLE}"; exec sleep 30'
    tracked = spawn_process(Command(["sh", "-c", script]), track_descendants=True)
    untracked = spawn_process(Command(["sleep", "30"]))
    spawned += [tracked, untracked]
    printed = b""
    while not printed.endswith(b"\n"):  # blocks until the child has printed its line
        printed += os.read(tracked.stdout, 100)
    run_id = printed.decode().strip()
    assert len(run_id) == 24 and int(run_id, 16) >= 0
    untracked.kill()
    assert looked_for == []  # an untracked child has no run id to look for
    tracked.kill()
    assert looked_for == [run_id]
    assert tracked.exited.wait(10) and untracked.exited.wait(10)
    for fd in (tracked.stdout, tracked.stderr, untracked.stdout, untracked.stderr):
        os.close(fd)


def test_the_output_pipes_are_one_mebibyte(spawned: list[ChildProcess]) -> None:
    child = spawn_process(Command(["true"]))
    spawned.append(child)
    try:
        assert fcntl.fcntl(child.stdout, _F_GETPIPE_SZ) == 1 << 20
        assert fcntl.fcntl(child.stderr, _F_GETPIPE_SZ) == 1 << 20
    finally:
        os.close(child.stdout)
        os.close(child.stderr)


def test_a_pipe_size_the_system_refuses_is_no_error(
    spawned: list[ChildProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(fd: int, command: int, value: int = 0) -> int:
        raise PermissionError(1, "Operation not permitted")

    monkeypatch.setattr(fcntl, "fcntl", refuse)
    assert _run(Command(["echo", "started"]), spawned) == "started\n"


def test_only_the_descriptors_passed_reach_the_child(spawned: list[ChildProcess]) -> None:
    passed_r, passed_w = os.pipe()
    leaked_r, leaked_w = os.pipe()
    os.set_inheritable(leaked_r, True)  # inheritable, yet not passed: closed in the child
    try:
        script = (
            f"test -e /proc/self/fd/{passed_r} && echo passed; "
            f"test -e /proc/self/fd/{leaked_r} && echo leaked; true"
        )
        command = Command(["sh", "-c", script], pass_fds=(passed_r,))
        assert _run(command, spawned) == "passed\n"
    finally:
        for fd in (passed_r, passed_w, leaked_r, leaked_w):
            os.close(fd)


def test_the_watcher_is_a_daemon_thread_named_for_the_child(spawned: list[ChildProcess]) -> None:
    child = spawn_process(Command(["sleep", "30"]))
    spawned.append(child)
    (watcher,) = [t for t in threading.enumerate() if t.name == f"yoagent-wait-{child.pid}"]
    assert watcher.daemon
    child.kill()
    assert child.exited.wait(10)
    os.close(child.stdout)
    os.close(child.stderr)


def test_a_spawn_whose_watcher_cannot_start_leaves_no_child_and_no_descriptor(
    monkeypatch: pytest.MonkeyPatch,
    watchdog: tuple[process._Watchdog, int],  # pyright: ignore[reportPrivateUsage]
) -> None:
    class NoWatcher(threading.Thread):
        def start(self) -> None:
            if self.name.startswith("yoagent-wait-"):
                raise RuntimeError("can't start new thread")
            super().start()

    monkeypatch.setattr(
        process, "threading", types.SimpleNamespace(**{**vars(threading), "Thread": NoWatcher})
    )
    live = set(process._live)  # pyright: ignore[reportPrivateUsage]
    before = _open_fds()
    with pytest.raises(RuntimeError, match="can't start new thread"):
        spawn_process(Command(["sleep", "30"]), stdin="pipe")
    assert _open_fds() <= before  # none left open (another thread may close one meanwhile)
    assert set(process._live) <= live  # pyright: ignore[reportPrivateUsage]
    # the child was killed and reaped, and taken off the watchdog's list first: a group id
    # left there would be killed at exit, by then perhaps another program's
    added, removed = _sent(watchdog[1]).decode().splitlines()
    assert added.startswith("+g") and removed == "-" + added[1:]
    with pytest.raises(ProcessLookupError):
        os.kill(int(added[2:]), 0)


# -- the lines the watchdog is sent -----------------------------------------------------------


@pytest.fixture
def watchdog(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[process._Watchdog, int]]:  # pyright: ignore[reportPrivateUsage]
    """A watchdog whose pipe this test reads (nothing is started)."""
    read, write = os.pipe()
    os.set_blocking(read, False)
    fresh = process._Watchdog()  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setattr(fresh, "_start", lambda: write)
    monkeypatch.setattr(process, "_watchdog", fresh)
    yield fresh, read
    os.close(read)
    with contextlib.suppress(OSError):
        os.close(write)


def _sent(read: int) -> bytes:
    with contextlib.suppress(BlockingIOError):
        return os.read(read, 65536)
    return b""


def test_the_watchdog_is_started_by_the_first_entry_and_told_each_one(
    watchdog: tuple[process._Watchdog, int],  # pyright: ignore[reportPrivateUsage]
) -> None:
    fresh, read = watchdog
    fresh.add(("g10", "rabc"))
    fresh.remove(("g10",))
    fresh.stand_down()
    assert _sent(read) == b"+g10\n+rabc\n-g10\nx\n"


def test_a_childs_entries_name_its_group_or_itself_and_its_run_id(
    watchdog: tuple[process._Watchdog, int],  # pyright: ignore[reportPrivateUsage]
    spawned: list[ChildProcess],
) -> None:
    _, read = watchdog
    leader = spawn_process(Command(["sleep", "30"]))
    spawned.append(leader)
    assert _sent(read) == f"+g{leader.pid}\n".encode()
    member = spawn_process(Command(["sleep", "30"]), isolation="none", track_descendants=True)
    spawned.append(member)
    lines = _sent(read).decode().splitlines()
    assert lines[0] == f"+p{member.pid}" and lines[1].startswith("+r") and len(lines) == 2
    member.release()
    assert _sent(read).decode().splitlines() == [f"-p{member.pid}", f"-{lines[1][1:]}"]
    for child in (leader, member):
        os.kill(child.pid, signal.SIGKILL)
        os.close(child.stdout)
        os.close(child.stderr)


# -- how the watchdog is started ----------------------------------------------------------------


class _Launcher:
    def __init__(self, argv: list[str], **options: object) -> None:
        self.argv = argv
        self.options = options
        self.waited_on: list[tuple[str, bool]] = []
        self.done = threading.Event()

    def wait(self) -> int:
        current = threading.current_thread()
        self.waited_on.append((current.name, current.daemon))
        self.done.set()
        return 0


def test_the_watchdog_runs_the_reaper_isolated_in_a_session_of_its_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    launched: list[_Launcher] = []

    def popen(argv: list[str], **options: object) -> _Launcher:
        launched.append(_Launcher(argv, **options))
        return launched[-1]

    monkeypatch.setattr(subprocess, "Popen", popen)
    fresh = process._Watchdog()  # pyright: ignore[reportPrivateUsage]
    write = fresh._start()  # pyright: ignore[reportPrivateUsage]
    assert write is not None
    try:
        (launcher,) = launched
        assert launcher.argv == [sys.executable, "-I", "-S", reaper.__file__]
        stdin = launcher.options.pop("stdin")
        assert launcher.options == {
            "stdout": subprocess.DEVNULL,
            "stderr": subprocess.DEVNULL,
            "cwd": "/",
            "start_new_session": True,
            "close_fds": True,
        }
        assert isinstance(stdin, int)
        with pytest.raises(OSError, match="Bad file descriptor"):
            os.fstat(stdin)  # the read end is the watchdog's alone: closed here
        assert launcher.done.wait(10)
        assert launcher.waited_on == [("yoagent-watchdog-start", True)]
        assert not fresh._failed  # pyright: ignore[reportPrivateUsage]
    finally:
        os.close(write)


@pytest.mark.parametrize("missing", ["killpg", "interpreter", "script"])
def test_the_watchdog_is_not_started_without_what_it_needs(
    monkeypatch: pytest.MonkeyPatch, missing: str
) -> None:
    monkeypatch.setattr(subprocess, "Popen", lambda *a, **k: pytest.fail("started"))  # pyright: ignore[reportUnknownLambdaType]
    if missing == "killpg":
        monkeypatch.delattr(os, "killpg")
    elif missing == "interpreter":
        monkeypatch.setattr(sys, "executable", "")
    else:
        monkeypatch.setattr(reaper, "__file__", "/nonexistent/reaper.py")
    fresh = process._Watchdog()  # pyright: ignore[reportPrivateUsage]
    assert fresh._start() is None  # pyright: ignore[reportPrivateUsage]
    assert fresh._failed is True  # pyright: ignore[reportPrivateUsage]


def test_a_watchdog_that_cannot_start_is_logged_and_leaves_no_descriptor(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def popen(*args: object, **options: object) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(subprocess, "Popen", popen)
    fresh = process._Watchdog()  # pyright: ignore[reportPrivateUsage]
    before = _open_fds()
    with caplog.at_level(logging.WARNING, logger="yoagent.core"):
        assert fresh._start() is None  # pyright: ignore[reportPrivateUsage]
    assert _open_fds() <= before  # none left open (another thread may close one meanwhile)
    assert fresh._failed is True  # pyright: ignore[reportPrivateUsage]
    assert [r.getMessage() for r in caplog.records] == [
        "could not start the child-process watchdog (Permission denied); children are "
        "killed when this program exits, not when it is killed"
    ]


# -- a forked copy of the program ---------------------------------------------------------------


def test_a_forked_copy_forgets_the_parents_children_and_watchdog(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    read, write = os.pipe()
    fresh = process._Watchdog()  # pyright: ignore[reportPrivateUsage]
    fresh._pipe = write  # pyright: ignore[reportPrivateUsage]
    monkeypatch.setattr(process, "_watchdog", fresh)
    pid = os.fork()
    if pid == 0:  # the copy: report through the exit status, never return into pytest
        code = 1
        try:
            forgot = fresh._pipe is None  # pyright: ignore[reportPrivateUsage]
            try:
                os.fstat(write)
                closed = False
            except OSError:
                closed = True
            none_left = process.kill_children() == 0
            code = 0 if (forgot and closed and none_left) else 2
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    os.close(read)
    os.close(write)
    assert os.waitstatus_to_exitcode(status) == 0


# -- a child found exited -----------------------------------------------------------------------


class _Signals:
    """``os.killpg`` and ``os.kill`` recorded, not sent; a target in :attr:`refuse` raises
    the error given."""

    def __init__(self) -> None:
        self.killpg: list[tuple[int, int]] = []
        self.kill: list[tuple[int, int]] = []
        self.refuse: dict[int, BaseException] = {}

    def sender(self, calls: list[tuple[int, int]]) -> Callable[[int, int], None]:
        def send(target: int, number: int) -> None:
            calls.append((target, number))
            if target in self.refuse:
                raise self.refuse[target]

        return send


@pytest.fixture
def recorded(monkeypatch: pytest.MonkeyPatch) -> _Signals:
    signals = _Signals()
    monkeypatch.setattr(os, "killpg", signals.sender(signals.killpg))
    monkeypatch.setattr(os, "kill", signals.sender(signals.kill))
    return signals


def _end(popen: subprocess.Popen[bytes]) -> None:
    _REAL_KILL(popen.pid, signal.SIGKILL)
    popen.wait()


def _exited_child(*, own_group: bool, kill_group_on_exit: bool) -> process._Child:  # pyright: ignore[reportPrivateUsage]
    """A real child that has exited (status 3), not yet reaped, watched the polling way."""
    popen = subprocess.Popen(["sh", "-c", "exit 3"], start_new_session=own_group)
    os.waitid(os.P_PID, popen.pid, os.WEXITED | os.WNOWAIT)
    child = process._Child(  # pyright: ignore[reportPrivateUsage]
        popen, own_group=own_group, run_id=None, kill_group_on_exit=kill_group_on_exit, wakeup=None
    )
    child._waitid = False  # pyright: ignore[reportPrivateUsage]
    return child


def test_a_child_found_exited_by_a_kill_is_reaped_and_never_signalled(
    recorded: _Signals,
) -> None:
    child = _exited_child(own_group=True, kill_group_on_exit=False)
    child.kill()
    assert recorded.killpg == [] and recorded.kill == []
    assert child.reaped.is_set() and child.returncode == 3
    assert child.popen.returncode == 3


def test_a_group_is_killed_on_reaping_only_when_asked_to(
    recorded: _Signals,
) -> None:
    kept = _exited_child(own_group=True, kill_group_on_exit=False)
    kept.kill_group()
    assert recorded.killpg == []
    assert kept.reaped.is_set()
    for error in (ProcessLookupError(), PermissionError()):  # an empty group, or not ours
        ended = _exited_child(own_group=True, kill_group_on_exit=True)
        recorded.refuse[ended.pid] = error
        ended.kill_group()
        assert recorded.killpg[-1] == (ended.pid, signal.SIGKILL)
        assert ended.reaped.is_set() and ended.returncode == 3


def test_a_child_in_the_callers_group_is_never_killed_as_a_group(
    recorded: _Signals,
) -> None:
    popen = subprocess.Popen(["sleep", "30"])
    child = process._Child(  # pyright: ignore[reportPrivateUsage]
        popen, own_group=False, run_id=None, kill_group_on_exit=True, wakeup=None
    )
    try:
        child.kill_group()
        assert recorded.killpg == []
    finally:
        _end(popen)


def test_killing_a_live_group_it_may_not_signal_or_that_just_emptied_is_no_error(
    recorded: _Signals,
) -> None:
    popen = subprocess.Popen(["sleep", "30"], start_new_session=True)
    child = process._Child(  # pyright: ignore[reportPrivateUsage]
        popen, own_group=True, run_id=None, kill_group_on_exit=True, wakeup=None
    )
    try:
        for error in (ProcessLookupError(), PermissionError()):
            recorded.refuse[popen.pid] = error
            child.kill_group()
        assert recorded.killpg == [(popen.pid, signal.SIGKILL)] * 2
    finally:
        _end(popen)


def test_an_exit_status_seen_before_someone_else_reaped_the_child_is_kept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    child = spawn_process(Command(["sh", "-c", "exit 3"]))
    os.close(child.stdout)
    os.close(child.stderr)
    assert child.exited.wait(10)
    real_waitpid = os.waitpid

    def waitpid(pid: int, options: int) -> tuple[int, int]:
        if pid == child.pid and options == 0:  # another part of the program got there first
            real_waitpid(pid, 0)
            raise ChildProcessError(10, "No child processes")
        return real_waitpid(pid, options)

    monkeypatch.setattr(os, "waitpid", waitpid)
    child.release()
    assert child.reaped.wait(10)
    assert child.returncode == 3
    assert child._child.popen.returncode == 3  # Popen's own record  # pyright: ignore[reportPrivateUsage]


def test_the_polling_watcher_looks_again_after_pauses_doubling_up_to_50_ms(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    pauses: list[float] = []
    monkeypatch.setattr(process, "time", types.SimpleNamespace(sleep=pauses.append))
    looks = iter([True] * 8 + [False])
    fake = types.SimpleNamespace(lock=threading.Lock(), _still_ours=lambda: next(looks))
    process._Child._poll(fake)  # type: ignore[arg-type]  # pyright: ignore[reportPrivateUsage, reportArgumentType]
    assert pauses == [0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.05, 0.05]
