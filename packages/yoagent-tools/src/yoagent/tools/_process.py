"""The commands of ``bash`` and ``search``: the floor's process-group runner, with capped output.

The child, its process group and its reaping are :func:`yoagent.core.support.spawn_process`'s
(a new session, so no controlling terminal; stdin from ``/dev/null``). What is the tools'
own: each of stdout and stderr is read by a :class:`~yoagent.core.support.PipeCapture`
that keeps its first and last part (the rest counted and dropped), and the kept bytes
become text with a marker where the middle was cut.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Final

from yoagent.core.support import (
    ChildProcess,
    Command,
    PipeCapture,
    Wakeup,
    spawn_process,
    utf8_decode,
)

READ_GRACE: Final = 1.0
"""Seconds to keep reading after the command exited, before leaving its pipes to a drain."""


def spawn_group(
    argv: Sequence[str],
    *,
    cwd: str | None,
    env: Mapping[str, str] | None,
    wakeup: Wakeup,
    stdout_limit: int,
    stderr_limit: int,
    tail: int = 0,
    stdout_capture: Callable[[int, Wakeup, str], PipeCapture] | None = None,
    pass_fds: tuple[int, ...] = (),
    track_descendants: bool = False,
    wrap: Callable[[Command], Command] | None = None,
) -> tuple[ChildProcess, PipeCapture, PipeCapture]:
    """Start ``argv`` in a new session (and so a new process group) with stdin from ``/dev/null``.

    With ``track_descendants``, :meth:`ChildProcess.kill` also finds processes that left
    the group (``setsid``). ``wrap`` changes the command first (a sandbox runs it confined).
    Returns the child and the two running captures (stdout, stderr): each keeps at most its
    limit, of which the last ``tail`` bytes.
    """
    command = Command(argv, cwd=cwd, env=env, pass_fds=pass_fds)
    process = spawn_process(
        wrap(command) if wrap is not None else command,
        wakeup=wakeup,
        track_descendants=track_descendants,
    )
    pid = process.pid
    if stdout_capture is not None:
        out = stdout_capture(process.stdout, wakeup, f"yoagent-out-{pid}")
    else:
        out = PipeCapture(
            process.stdout, wakeup, limit=stdout_limit, tail=tail, name=f"yoagent-out-{pid}"
        )
    err = PipeCapture(
        process.stderr, wakeup, limit=stderr_limit, tail=tail, name=f"yoagent-err-{pid}"
    )
    out.start()
    err.start()
    return process, out, err


def decode_capture(capture: PipeCapture, what: str) -> tuple[str, bool]:
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
