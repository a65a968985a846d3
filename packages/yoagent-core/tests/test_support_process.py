"""The process-group runner: a child in its own group, watched unreaped, killed whole, reaped.

The bash tool and MCP stdio servers run on it; their own tests pin what they add (output
caps, the SDK plumbing). These pin the shared part: isolation, group kills that never
reach a stranger, descendants that left the group, nothing left running.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import anyio
import pytest

from yoagent.core.support import (
    RUN_ID_VARIABLE,
    ChildProcess,
    Command,
    PipeCapture,
    Wakeup,
    kill_children,
    spawn_process,
)

pytestmark = pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads /proc (Linux)")


def _stat(pid: int) -> list[str] | None:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2 :].split()


def _alive(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] not in ("Z", "X")


def _zombie(pid: int) -> bool:
    fields = _stat(pid)
    return fields is not None and fields[0] == "Z"


def _wait_dead(pid: int, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.02)
    return not _alive(pid)


def _captures(process: ChildProcess, wakeup: Wakeup | None = None) -> tuple[PipeCapture, ...]:
    out = PipeCapture(process.stdout, wakeup, limit=1 << 16, name="test-out")
    err = PipeCapture(process.stderr, wakeup, limit=1 << 16, name="test-err")
    out.start()
    err.start()
    return out, err


def _line(capture: PipeCapture, within: float = 10.0) -> str:
    """The first line the child printed (waits for it)."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        head, _, _ = capture.snapshot()
        if b"\n" in head:
            return head.split(b"\n", 1)[0].decode()
        time.sleep(0.01)
    raise AssertionError("the child printed no line")


def _sh(script: str) -> Command:
    return Command(["sh", "-c", script])


def test_a_child_runs_and_its_exit_status_is_known_once_seen(spawned: list[ChildProcess]) -> None:
    process = spawn_process(_sh("echo out; echo err >&2; exit 3"))
    spawned.append(process)
    out, err = _captures(process)
    assert process.exited.wait(10)
    assert process.returncode == 3
    assert out.done.wait(10) and err.done.wait(10)
    assert out.snapshot()[0] == b"out\n" and err.snapshot()[0] == b"err\n"
    process.release()
    assert process.reaped.wait(10)


def test_a_child_killed_by_a_signal_has_minus_the_signal_as_status(
    spawned: list[ChildProcess],
) -> None:
    process = spawn_process(_sh("kill -TERM $$"))
    spawned.append(process)
    _captures(process)
    assert process.exited.wait(10)
    assert process.returncode == -15


@pytest.mark.parametrize("isolation", ["session", "group", "none"])
def test_isolation_puts_the_child_in_a_new_session_a_new_group_or_ours(
    spawned: list[ChildProcess], isolation: str
) -> None:
    process = spawn_process(_sh("sleep 30"), isolation=isolation)  # pyright: ignore[reportArgumentType]
    spawned.append(process)
    _captures(process)
    pid = process.pid
    expected_group = {"session": pid, "group": pid, "none": os.getpgid(0)}[isolation]
    expected_session = pid if isolation == "session" else os.getsid(0)
    assert os.getpgid(pid) == expected_group
    assert os.getsid(pid) == expected_session
    assert process.pgid == (None if isolation == "none" else pid)


def test_stdin_is_empty_by_default_and_a_pipe_when_asked(spawned: list[ChildProcess]) -> None:
    empty = spawn_process(_sh("cat; echo end"))
    spawned.append(empty)
    assert empty.stdin is None
    out, _ = _captures(empty)
    assert _line(out) == "end"
    piped = spawn_process(Command(["cat"]), stdin="pipe")
    spawned.append(piped)
    assert piped.stdin is not None
    out, _ = _captures(piped)
    os.write(piped.stdin, b"through the pipe\n")
    assert _line(out) == "through the pipe"
    os.close(piped.stdin)  # end of input: cat exits
    assert piped.exited.wait(10) and piped.returncode == 0


def test_kill_takes_the_whole_group_down(spawned: list[ChildProcess]) -> None:
    process = spawn_process(_sh("sleep 300 & echo $!; wait"))
    spawned.append(process)
    out, _ = _captures(process)
    grandchild = int(_line(out))
    assert os.getpgid(grandchild) == process.pgid
    process.kill()
    assert process.exited.wait(10) and process.returncode == -9
    assert _wait_dead(grandchild)


def test_an_exited_child_stays_unreaped_until_released_so_its_group_id_stays_ours(
    spawned: list[ChildProcess],
) -> None:
    """A background job outlives the command; the group id cannot be reused meanwhile, so a
    late kill reaches that job and never a stranger. Released, nothing is signalled."""
    process = spawn_process(_sh("sleep 300 > /dev/null 2>&1 & echo $!"))
    spawned.append(process)
    out, _ = _captures(process)
    job = int(_line(out))
    assert process.exited.wait(10) and process.returncode == 0
    time.sleep(0.1)
    assert _zombie(process.pid) and not process.reaped.is_set()  # exit seen, not reaped
    assert _alive(job)  # background jobs are left running
    process.kill()
    assert _wait_dead(job)

    second = spawn_process(_sh("sleep 300 > /dev/null 2>&1 & echo $!"))
    spawned.append(second)
    out, _ = _captures(second)
    job = int(_line(out))
    assert second.exited.wait(10)
    second.release()
    assert second.reaped.wait(10)
    second.kill()  # released: a no-op
    time.sleep(0.1)
    assert _alive(job)
    os.kill(job, 9)


def test_kill_group_on_exit_takes_a_launchers_background_job_down_with_it(
    spawned: list[ChildProcess],
) -> None:
    process = spawn_process(
        _sh("sleep 300 > /dev/null 2>&1 & echo $!; read _; exit 0"),
        isolation="group",
        stdin="pipe",
        kill_group_on_exit=True,
    )
    spawned.append(process)
    out, _ = _captures(process)
    job = int(_line(out))
    assert process.stdin is not None
    os.close(process.stdin)  # the launcher exits now; its background job still runs
    assert process.reaped.wait(10)  # reaped by the watcher itself, no release needed
    assert process.returncode == 0
    assert _wait_dead(job)


def test_a_tracked_child_takes_down_what_left_its_group(
    spawned: list[ChildProcess], tmp_path: Path
) -> None:
    pid_file = tmp_path / "pid"
    process = spawn_process(
        _sh(f"setsid sh -c 'echo $$ > {pid_file}; exec sleep 300' & sleep 300"),
        track_descendants=True,
    )
    spawned.append(process)
    _captures(process)
    deadline = time.monotonic() + 10
    while not (pid_file.exists() and pid_file.read_text().strip()):
        assert time.monotonic() < deadline, "the setsid child did not start"
        time.sleep(0.02)
    escaped = int(pid_file.read_text())
    assert os.getsid(escaped) == escaped  # out of the group and the session
    environ = Path(f"/proc/{escaped}/environ").read_bytes().split(b"\0")
    assert any(item.startswith(f"{RUN_ID_VARIABLE}=".encode()) for item in environ)
    process.kill()
    assert _wait_dead(escaped)


def test_a_child_whose_handle_is_dropped_is_killed_and_reaped(spawned: list[ChildProcess]) -> None:
    process = spawn_process(_sh("sleep 300"))
    _captures(process)
    pid = process.pid
    reaped = process.reaped
    del process
    gc.collect()
    assert reaped.wait(10)
    assert not _alive(pid) and not _zombie(pid)


def test_the_wakeup_is_notified_when_the_child_exits() -> None:
    async def main() -> float:
        wakeup = Wakeup()
        process = spawn_process(_sh("sleep 0.2"), wakeup=wakeup)
        stdout, stderr = process.stdout, process.stderr
        started = time.monotonic()
        try:
            while not process.exited.is_set():
                await wakeup.wait(30)
            return time.monotonic() - started
        finally:
            process.release()
            wakeup.close()
            os.close(stdout)
            os.close(stderr)

    assert anyio.run(main) < 10
    assert anyio.run(main, backend="trio") < 10


def test_a_program_that_cannot_start_raises_and_leaves_no_descriptor_open() -> None:
    before = set(os.listdir("/proc/self/fd"))
    with pytest.raises(FileNotFoundError):
        spawn_process(Command(["/nonexistent/program"]), stdin="pipe")
    assert set(os.listdir("/proc/self/fd")) == before


def test_a_pipe_that_cannot_be_made_leaves_no_descriptor_open(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real_pipe = os.pipe
    calls = 0

    def pipe() -> tuple[int, int]:
        nonlocal calls
        calls += 1
        if calls == 2:  # stdout's pipe made, stderr's refused
            raise OSError(24, "Too many open files")
        return real_pipe()

    before = set(os.listdir("/proc/self/fd"))
    monkeypatch.setattr(os, "pipe", pipe)
    with pytest.raises(OSError, match="Too many open files"):
        spawn_process(_sh("true"))
    monkeypatch.undo()
    assert set(os.listdir("/proc/self/fd")) == before


def test_a_command_is_a_value_a_wrapper_can_rewrite(spawned: list[ChildProcess]) -> None:
    """The sandbox seam: a wrapper maps one Command to another; the spawn step is unchanged."""

    def under_env(command: Command) -> Command:
        return Command(["env", "WRAPPED=yes", *command.argv], cwd=command.cwd, env=command.env)

    process = spawn_process(under_env(Command(["sh", "-c", "echo $WRAPPED; pwd"], cwd="/")))
    spawned.append(process)
    out, _ = _captures(process)
    assert process.exited.wait(10) and out.done.wait(10)
    assert out.snapshot()[0] == b"yes\n/\n"


def test_children_left_running_are_killed_when_the_interpreter_exits(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        from yoagent.core.support import Command, spawn_process
        process = spawn_process(Command(["sleep", "300"]), isolation="none")
        print(process.pid, flush=True)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert _wait_dead(int(done.stdout.split()[0]))


# -- PipeCapture ----------------------------------------------------------------------------


def test_a_capture_keeps_the_head_and_the_tail_and_counts_the_rest() -> None:
    read, write = os.pipe()
    capture = PipeCapture(read, None, limit=10, tail=4, name="test")
    capture.start()
    os.write(write, b"0123456789abcdefghij")
    os.close(write)
    assert capture.done.wait(10)
    assert capture.snapshot() == (b"012345", b"ghij", 20)
    assert capture.cut and capture.eof and capture.error is None


def test_a_detached_capture_drains_its_pipe_without_keeping_it() -> None:
    read, write = os.pipe()
    capture = PipeCapture(read, None, limit=100, name="test")
    capture.start()
    capture.detach()
    os.write(write, b"x" * 200_000)  # more than a pipe holds: only a drain lets it through
    os.close(write)
    assert capture.done.wait(10)
    assert capture.snapshot() == (b"", b"", 0)


def test_kill_children_ends_every_child_still_ours_and_leaves_released_ones(
    spawned: list[ChildProcess],
) -> None:
    """The clean-up entry point for a program's own signal handler."""
    kept = spawn_process(_sh("sleep 300 & echo $!; wait"))
    released = spawn_process(_sh("sleep 300"))
    spawned += [kept, released]
    out, _ = _captures(kept)
    grandchild = int(_line(out))
    _captures(released)
    released.release()
    assert kill_children() >= 1
    assert kept.exited.wait(10) and _wait_dead(grandchild)
    assert _alive(released.pid)
    os.kill(released.pid, signal.SIGKILL)


# -- a parent that dies without running its exit handlers ------------------------------------

_PARENT = textwrap.dedent(
    """
    import os, signal, sys, time
    from yoagent.core.support import Command, spawn_process

    # Ctrl-C raises KeyboardInterrupt even under a runner that ignores SIGINT (mutmut's
    # workers do, and an ignored signal stays ignored across exec).
    signal.signal(signal.SIGINT, signal.default_int_handler)
    isolation, script, track, release = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
    process = spawn_process(
        Command(["sh", "-c", script]), isolation=isolation, track_descendants=track == "track"
    )
    line = b""
    while not line.endswith(b"\\n"):
        line += os.read(process.stdout, 100)
    if release == "release":
        process.release()
    print(process.pid, line.decode().strip(), flush=True)
    time.sleep(300)
    """
)


def _parent(
    isolation: str, script: str, *, track: bool = False, release: bool = False, marker: str = ""
) -> tuple[subprocess.Popen[str], int, int]:
    """A program that spawns ``script`` (which prints a pid) and sleeps: it, the child's pid,
    and the printed pid."""
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            _PARENT,
            isolation,
            script,
            "track" if track else "-",
            "release" if release else "-",
        ],
        stdout=subprocess.PIPE,
        text=True,
        start_new_session=True,  # the test's own group is never signalled
        env={**os.environ, "YOAGENT_TEST_MARKER": marker},
    )
    assert parent.stdout is not None
    child, printed = parent.stdout.readline().split()
    return parent, int(child), int(printed)


@pytest.mark.parametrize(
    ("isolation", "how"),
    [("session", "SIGTERM"), ("session", "SIGKILL"), ("group", "SIGKILL"), ("none", "SIGTERM")],
)
def test_children_die_with_a_parent_killed_before_its_exit_handlers_run(
    isolation: str, how: str
) -> None:
    """A plain program using the bash tool, stopped by SIGTERM (no exit handler runs) or
    SIGKILL, left its commands running (issue 27): the floor's watchdog notices the
    parent's death through a pipe and kills what was still the parent's."""
    parent, child, grandchild = _parent(isolation, "sleep 300 & echo $!; wait")
    try:
        parent.send_signal(getattr(signal, how))
        parent.wait(30)
        assert _wait_dead(child), "the child outlived its parent"
        if isolation != "none":  # only a group of its own is killed whole
            assert _wait_dead(grandchild), "the child's group outlived the parent"
    finally:
        for pid in (child, grandchild):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_a_tracked_childs_escaped_descendant_dies_with_a_killed_parent(tmp_path: Path) -> None:
    parent, child, escaped = _parent(
        "session", "setsid sh -c 'echo $$; exec sleep 300' & sleep 300", track=True
    )
    try:
        assert os.getsid(escaped) == escaped
        parent.kill()
        parent.wait(30)
        assert _wait_dead(child) and _wait_dead(escaped), "the setsid child outlived its parent"
    finally:
        for pid in (child, escaped):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def test_a_released_child_is_never_signalled_even_when_its_parent_dies() -> None:
    parent, child, _ = _parent("session", "echo $$; exec sleep 300", release=True)
    try:
        parent.kill()
        parent.wait(30)
        time.sleep(0.5)  # the watchdog had its chance
        assert _alive(child)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(child, signal.SIGKILL)


def test_nothing_of_a_parent_is_left_once_it_has_exited_either_way() -> None:
    """Neither the children nor the watchdog outlive the parent."""
    for stop in (signal.SIGTERM, None):
        marker = f"marker-{os.getpid()}-{time.monotonic_ns()}"
        parent, _, _ = _parent("session", "sleep 300 & echo $!; wait", marker=marker)
        if stop is None:
            os.kill(parent.pid, signal.SIGINT)  # KeyboardInterrupt: exit handlers run
        else:
            parent.send_signal(stop)
        parent.wait(30)
        deadline = time.monotonic() + 10
        while _marked(marker) and time.monotonic() < deadline:
            time.sleep(0.05)
        how = "a normal exit" if stop is None else stop.name
        assert _marked(marker) == [], f"left running after {how}"


def _marked(marker: str) -> list[int]:
    """Live processes whose environment carries ``YOAGENT_TEST_MARKER=marker``."""
    needle = f"YOAGENT_TEST_MARKER={marker}".encode()
    found: list[int] = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            environ = Path(f"/proc/{name}/environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0") and _alive(int(name)):
            found.append(int(name))
    return found


# -- without os.waitid (macOS before Python 3.13) -------------------------------------------


def test_without_waitid_kill_returns_at_once_and_the_status_is_the_signal(
    spawned: list[ChildProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The watcher polls instead of blocking in a wait while it holds the child's lock: a
    kill, a release or ``kill_children`` never waits for the child to exit by itself."""
    monkeypatch.delattr(os, "waitid")
    process = spawn_process(_sh("sleep 30"))
    spawned.append(process)
    _captures(process)
    time.sleep(0.2)  # the watcher is polling by now
    started = time.monotonic()
    process.kill()
    assert time.monotonic() - started < 1
    assert process.exited.wait(5) and process.returncode == -9
    assert process.reaped.wait(5) and not _alive(process.pid) and not _zombie(process.pid)

    running = spawn_process(_sh("sleep 30"))
    spawned.append(running)
    _captures(running)
    time.sleep(0.2)
    started = time.monotonic()
    running.release()
    kill_children()
    assert time.monotonic() - started < 1
    assert _alive(running.pid)  # released: no longer the program's to kill
    os.kill(running.pid, signal.SIGKILL)
    assert running.reaped.wait(5) and running.returncode == -9


def test_without_waitid_an_exit_status_is_still_known(
    spawned: list[ChildProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delattr(os, "waitid")
    process = spawn_process(_sh("exit 3"))
    spawned.append(process)
    _captures(process)
    assert process.exited.wait(5) and process.returncode == 3
    assert process.reaped.wait(5)  # seen and reaped in one step: nothing to release


def test_a_child_watched_without_waitid_is_reaped_even_once_waitid_is_back(
    spawned: list[ChildProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The way a child is watched is fixed when it starts: a child polled for (no
    ``os.waitid``) is still reaped by polling after ``os.waitid`` appears, as it does when
    a test that patched it out ends (its watcher once took the waiting branch, which never
    reaps, and the killed child stayed a zombie)."""
    waitid = os.waitid
    monkeypatch.delattr(os, "waitid")
    process = spawn_process(_sh("sleep 30"))
    spawned.append(process)
    _captures(process)
    monkeypatch.setattr(os, "waitid", waitid, raising=False)
    process.kill()
    assert process.reaped.wait(5) and process.returncode == -9
    assert not _zombie(process.pid)


# -- a child reaped by another part of the program ------------------------------------------


def _signals(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """Every ``os.kill`` and ``os.killpg`` from now on, as ``(call, pid)``."""
    sent: list[tuple[str, int]] = []
    real_kill, real_killpg = os.kill, os.killpg

    def kill(pid: int, sig: int) -> None:
        sent.append(("kill", pid))
        real_kill(pid, sig)

    def killpg(pgid: int, sig: int) -> None:
        sent.append(("killpg", pgid))
        real_killpg(pgid, sig)

    monkeypatch.setattr(os, "kill", kill)
    monkeypatch.setattr(os, "killpg", killpg)
    return sent


def test_a_child_reaped_elsewhere_before_its_exit_was_seen_is_disarmed_status_unknown(
    spawned: list[ChildProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Another reaper (a SIGCHLD handler's ``waitpid(-1)``) took the status: the pid and
    its group id may be anyone's now, so nothing is signalled, and the status is unknown
    (``None``), never a made-up 0."""
    real_waitid = os.waitid
    other_reaped = threading.Event()

    def late_waitid(idtype: int, ident: int, options: int) -> os.waitid_result | None:
        if not options & os.WNOHANG:  # the watcher's wait: only once the other has reaped
            other_reaped.wait(10)
        return real_waitid(idtype, ident, options)

    monkeypatch.setattr(os, "waitid", late_waitid)
    process = spawn_process(_sh("exit 3"))
    spawned.append(process)
    _captures(process)
    assert os.waitpid(process.pid, 0)[0] == process.pid  # the other reaper
    other_reaped.set()
    assert process.reaped.wait(5) and process.exited.is_set()
    assert process.returncode is None
    sent = _signals(monkeypatch)
    process.kill()
    assert sent == []
    process.release()
    assert process.returncode is None


def test_a_child_reaped_elsewhere_after_its_exit_was_seen_is_never_signalled(
    spawned: list[ChildProcess], monkeypatch: pytest.MonkeyPatch
) -> None:
    process = spawn_process(_sh("exit 3"))
    spawned.append(process)
    _captures(process)
    assert process.exited.wait(5) and process.returncode == 3
    assert os.waitpid(process.pid, 0)[0] == process.pid  # reaped behind the runner's back
    sent = _signals(monkeypatch)
    process.kill()  # finds it gone first
    assert sent == []
    assert process.reaped.is_set() and process.returncode == 3
    process.release()
    assert process.returncode == 3


# -- a forked copy of the program ------------------------------------------------------------


def test_a_forked_copy_of_the_program_never_touches_the_parents_children() -> None:
    """``os.fork`` copies the list of live children and their finalizers; the copy's exit
    (or its own ``kill_children``, or its ``kill``) must not kill the parent's groups."""
    script = textwrap.dedent(
        """
        import gc, os, sys, time
        from yoagent.core.support import Command, kill_children, spawn_process

        kept = spawn_process(Command(["sleep", "30"]))
        dropped = spawn_process(Command(["sleep", "30"]))
        pid = os.fork()
        if pid == 0:
            kept.kill()
            print(kill_children(), flush=True)
            del dropped
            gc.collect()
            sys.exit(0)  # a normal exit: exit handlers and finalizers run
        os.waitpid(pid, 0)
        time.sleep(0.3)
        print(kept.exited.is_set(), dropped.exited.is_set(), flush=True)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    assert done.stdout.split() == ["0", "False", "False"]
