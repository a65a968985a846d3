"""The watchdog: a small process that kills a program's children when the program dies,
however it dies, and the marked-process search it shares with the runner.

Exit handlers do not run when a program is stopped by a signal it does not handle
(SIGTERM by default) or by SIGKILL, so the runner's own clean-up cannot be all there is.
``PR_SET_PDEATHSIG`` reaches only a direct child, and the children the runner starts
lead groups of their own. So the runner starts this file as a program of its own
(``python -I -S reaper.py``: the standard library only, nothing of yoagent imported) in a
session of its own, with the read end of a pipe on its stdin; only the runner's program
holds the write end (it is not inherited across ``exec``, and a forked copy of the
program closes its own). The runner writes one line per change::

    +g<pgid>   a process group that is the program's (a child leading its own group)
    +p<pid>    a child in the program's own group: only it is to be killed
    +r<run id> a tracked child's ``YOAGENT_RUN_ID``: whatever carries it
    -g<pgid>   (and -p, -r) no longer: it is about to be reaped, or was released
    x          stand down: the program killed its children itself

When the pipe reaches end of file — the program has exited, or was killed, and the
kernel closed its descriptors — the watchdog SIGKILLs every group, child and marked
process still listed, then exits. Each ``-`` line is written before its child is reaped,
so a group id is never listed once it could belong to someone else.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

RUN_ID_VARIABLE = "YOAGENT_RUN_ID"
"""Set in a tracked child's environment (a random id per child); its descendants inherit it."""

_KILL_ROUNDS = 5


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
        # Not mutated: "not in" lists every other process, which the caller then kills.
        if needle in environ.split(b"\0"):  # pragma: no mutate
            found.append(int(name))
    return found


def watch(stream: int) -> None:
    """Follow the lines on ``stream`` until end of file, then kill what is still listed."""
    listed: dict[bytes, None] = {}  # b"g123", b"p123", b"rabc…", in the order they came
    pending = b""
    while True:
        try:
            chunk = os.read(stream, 65536)
        except InterruptedError:  # pragma: no cover - retried by Python itself since 3.5
            continue
        if not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            if line.startswith(b"+"):
                listed[line[1:]] = None
            elif line.startswith(b"-"):
                listed.pop(line[1:], None)
            elif line == b"x":
                listed.clear()
    _kill(list(listed))


def _kill(entries: list[bytes]) -> None:
    for entry in entries:
        kind, value = entry[:1], entry[1:].decode("ascii", "replace")
        with contextlib.suppress(ProcessLookupError, PermissionError, ValueError):
            if kind == b"g":
                os.killpg(int(value), signal.SIGKILL)
            elif kind == b"p":
                os.kill(int(value), signal.SIGKILL)
    for entry in entries:
        if entry.startswith(b"r"):
            kill_marked(entry[1:].decode("ascii", "replace"))


def main() -> None:
    """The watchdog program: its stdin is the pipe. It forks and the started process
    exits at once, so the watchdog is not the program's child (never its zombie)."""
    for name in ("SIGINT", "SIGHUP", "SIGPIPE"):  # only the pipe's end stops it
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    if os.fork() != 0:
        os._exit(0)
    watch(sys.stdin.fileno())


if __name__ == "__main__":
    main()
