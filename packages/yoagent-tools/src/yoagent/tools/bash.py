"""BashTool: run a shell command in its own process group, with a timeout and capped output."""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

import anyio
from pydantic import Field

from yoagent.core import ToolArguments, ToolContext, ToolError, ToolResult
from yoagent.core.support import ChildProcess, Command, PipeCapture, Wakeup, is_secret_variable

from ._base import BuiltinTool
from ._process import READ_GRACE, decode_capture, spawn_group
from .command_sandbox import CommandSandbox, SandboxUnavailableError

DEFAULT_TIMEOUT: Final = 120.0
DEFAULT_MAX_TIMEOUT: Final = 600.0
DEFAULT_MAX_OUTPUT_BYTES: Final = 256 * 1024
_POLL: Final = 0.25
_UPDATE_INTERVAL: Final = 0.2

_DESCRIPTION = """\
Run a bash command and return its exit code, stdout and stderr.

Use it to run tests, build, run scripts, use git, or inspect the system. Each call
starts a fresh `bash -c` in the working folder (state such as `cd` or variables does
not carry over between calls; chain commands with `&&`). Stdin is empty and there is
no terminal, so interactive programs get end-of-file at once (and `/dev/tty` cannot
be opened): pass flags such as `--yes` / `-y` instead. API keys are not in the
environment.

A command that runs longer than `timeout` seconds is killed together with every
process it started, and the output so far is returned. Each of stdout and stderr
keeps at most the first and last part of its output; the middle of a very long
output is dropped, so prefer commands with focused output (`| tail -50`, `grep`).
A non-zero exit code is reported as an error, with the output. Bytes that are not
UTF-8 are shown as \\xNN.
Background jobs (`cmd &`) are left running; redirect their output to a file
(`cmd > log 2>&1 &`), or the call returns after a 1 s grace with a NOTE."""


class BashArguments(ToolArguments):
    """The arguments of ``bash``."""

    command: str = Field(description="The bash command to run, e.g. `python -m pytest -x -q`.")
    timeout: int = Field(
        math.ceil(DEFAULT_TIMEOUT),
        ge=1,
        le=math.ceil(DEFAULT_MAX_TIMEOUT),
        description="Seconds before the command is killed.",
    )


def _arguments_for(default: float, maximum: float, outside: bool) -> type[BashArguments]:
    """The argument model with this tool's own default and maximum ``timeout``, and with
    ``outside_sandbox`` when a call may ask to run outside the sandbox."""

    class Bash(BashArguments):
        timeout: int = Field(
            math.ceil(default),
            ge=1,
            le=int(maximum),
            description=(
                f"Seconds before the command is killed (default {default:g}, at most {maximum:g})."
            ),
        )

    if not outside:
        return Bash

    class BashOutside(Bash):
        outside_sandbox: bool = Field(
            False,
            description=(
                "Run this command outside the sandbox. Only after the sandbox refused it and "
                "it cannot be done inside; the user is asked first and may refuse."
            ),
        )

    return BashOutside


def _sandbox_description(sandbox: CommandSandbox, outside: bool) -> str:
    """The paragraph of the tool's description that tells the model about its sandbox."""
    text = (
        f"\n\nCommands run in an OS sandbox ({sandbox.summary()}). A write elsewhere fails "
        f"with 'Permission denied' or 'Read-only file system'"
    )
    text += "." if sandbox.network else "; network connections fail (no network but a loopback)."
    if outside:
        text += (
            " If a command the sandbox refused must run, call bash again with "
            "`outside_sandbox: true`: the user is asked first."
        )
    return text


class BashTool(BuiltinTool[BashArguments]):
    """The ``bash`` tool: ``bash -c COMMAND`` in a new session and process group.

    ``cwd`` is where commands start (default: the process's working folder).
    ``timeout`` is the default limit in seconds; a call may ask for another one
    up to ``max_timeout``. ``max_output_bytes`` caps each of stdout and stderr.
    ``deny_patterns`` are regular expressions: a command matching one is refused
    before it runs (a guard against accidents, not a security boundary). ``env``
    entries are added to (or, with value ``None``, removed from) the inherited
    environment. Variables named like credentials (API keys, tokens, passwords:
    :data:`yoagent.core.support.SECRET_VARIABLE_PATTERNS`, the floor's one rule) are
    removed from the inherited environment unless ``keep_secrets`` is true; a variable
    set explicitly in ``env`` is always passed.

    ``sandbox`` confines every command (:class:`~yoagent.tools.CommandSandbox`; ``None``
    is today's behaviour, no sandbox). When the policy cannot be enforced here, the call
    fails with :class:`~yoagent.tools.SandboxUnavailableError` and nothing runs. With
    ``allow_outside_sandbox``, a call may pass ``outside_sandbox: true`` to run without
    the sandbox: give it only with an approval step that asks the user for each such call
    (the CLI's does). The result's ``details["sandbox"]`` says which policy and mechanism
    ran; a failed command whose output shows a refused system call gets a note saying
    the sandbox refused it (``details["sandbox_denied"]``).

    A non-zero exit, a timeout and a cancellation fail the call with a
    :class:`~yoagent.core.ToolError` whose text carries the exit code (or the
    reason) and the output so far, so the model always sees stdout and stderr. A
    timeout or a cancellation kills the command's process group and every process
    that left it (``setsid``) but still carries the run's id in its environment.
    """

    def __init__(
        self,
        *,
        cwd: str | os.PathLike[str] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        max_timeout: float = DEFAULT_MAX_TIMEOUT,
        max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
        deny_patterns: Iterable[str | re.Pattern[str]] = (),
        env: Mapping[str, str | None] | None = None,
        shell: str = "bash",
        keep_secrets: bool = False,
        sandbox: CommandSandbox | None = None,
        allow_outside_sandbox: bool = False,
    ) -> None:
        if timeout <= 0 or max_timeout <= 0:
            raise ValueError("timeouts must be positive")
        if max_output_bytes < 1024:
            raise ValueError("max_output_bytes must be at least 1024")
        self.cwd = os.fspath(cwd) if cwd is not None else None
        self.timeout = float(timeout)
        self.max_timeout = max(float(max_timeout), self.timeout)
        self.max_output_bytes = max_output_bytes
        self.deny_patterns: tuple[re.Pattern[str], ...] = tuple(
            re.compile(pattern) if isinstance(pattern, str) else pattern
            for pattern in deny_patterns
        )
        self.env: dict[str, str | None] = dict(env or {})
        self.shell = shell
        self.keep_secrets = keep_secrets
        self.sandbox = sandbox if sandbox is not None and sandbox.restricted else None
        self.allow_outside_sandbox = allow_outside_sandbox and self.sandbox is not None
        description = _DESCRIPTION
        if self.sandbox is not None:
            description += _sandbox_description(self.sandbox, self.allow_outside_sandbox)
        super().__init__(
            name="bash",
            description=description,
            arguments=_arguments_for(
                self.timeout, max(self.max_timeout, 1.0), self.allow_outside_sandbox
            ),
        )

    def _environment(self) -> dict[str, str]:
        env = {
            key: value
            for key, value in os.environ.items()
            if self.keep_secrets or not is_secret_variable(key)
        }
        for key, value in self.env.items():
            if value is None:
                env.pop(key, None)
            else:
                env[key] = value
        return env

    def _refused_by(self, command: str) -> re.Pattern[str] | None:
        for pattern in self.deny_patterns:
            if pattern.search(command):
                return pattern
        return None

    async def run(self, arguments: BashArguments, ctx: ToolContext) -> ToolResult:
        """Run the command; see the class docs for how failures are reported."""
        command = arguments.command
        if not command.strip():
            raise ToolError("bash: the command is empty")
        timeout = (
            float(arguments.timeout) if "timeout" in arguments.model_fields_set else self.timeout
        )
        refused = self._refused_by(command)
        if refused is not None:
            raise ToolError(
                f"bash: the command was refused: it matches the deny pattern "
                f"{refused.pattern!r}; not run"
            )
        cwd = _working_folder(self.cwd)
        outside = bool(getattr(arguments, "outside_sandbox", False))
        sandbox = None if outside else self.sandbox
        if sandbox is not None:
            # the first call probes the mechanisms: a short process each, off the event loop
            await anyio.to_thread.run_sync(_resolve, sandbox)
        if ctx.cancelled:
            raise ToolError("bash: cancelled before the command started")

        # Announced before the spawn: a failing callback must not leave a command running.
        ctx.progress(f"$ {command if len(command) <= 200 else command[:200] + '…'}")
        wakeup = Wakeup()
        started = time.monotonic()
        try:
            group, out, err = spawn_group(
                [self.shell, "-c", command],
                cwd=cwd,
                env=self._environment(),
                wakeup=wakeup,
                stdout_limit=self.max_output_bytes,
                stderr_limit=self.max_output_bytes,
                tail=self.max_output_bytes // 4,
                track_descendants=True,
                wrap=_wrapper(sandbox),
            )
        except OSError as error:
            wakeup.close()
            raise ToolError(f"bash: could not start {self.shell}: {error}") from None
        run = _Run(group, out, err, wakeup, ctx)
        await run.supervise(timeout)
        return run.result(
            command, timeout, time.monotonic() - started, self._sandbox_details(sandbox, outside)
        )

    def _sandbox_details(
        self, sandbox: CommandSandbox | None, outside: bool
    ) -> _SandboxReport | None:
        if outside:
            return _SandboxReport(None, {"policy": "full-access", "outside_sandbox": True})
        if sandbox is None:
            return None
        details = {
            "policy": sandbox.policy.value,
            "mechanism": sandbox.resolve(),
            "network": sandbox.network,
        }
        return _SandboxReport(sandbox, details, hint=self.allow_outside_sandbox)


class _SandboxReport:
    """What a result says about the sandbox a command ran in: ``details["sandbox"]``, and
    the note for a failed command whose output shows a refusal."""

    def __init__(
        self, sandbox: CommandSandbox | None, details: dict[str, Any], *, hint: bool = False
    ) -> None:
        self.sandbox = sandbox
        self.details = details
        self.hint = hint

    def denial(self, output: str, code: int | None) -> str | None:
        """The note for a command that failed with ``output``, or ``None``."""
        if self.sandbox is None or code == 0:
            return None
        note = self.sandbox.explain_denial(output)
        if note is not None and self.hint:
            note += (
                " If the command must run outside the sandbox, call bash again with "
                "`outside_sandbox: true`; the user is asked first."
            )
        return note


def _resolve(sandbox: CommandSandbox) -> None:
    try:
        sandbox.resolve()
    except SandboxUnavailableError as error:
        raise SandboxUnavailableError(f"bash: {error}; the command was not run") from None


def _wrapper(sandbox: CommandSandbox | None) -> Callable[[Command], Command] | None:
    return sandbox.wrap if sandbox is not None else None


class _Run:
    """One command's lifetime: wait, stream updates, kill or disarm, clean up."""

    def __init__(
        self,
        group: ChildProcess,
        out: PipeCapture,
        err: PipeCapture,
        wakeup: Wakeup,
        ctx: ToolContext,
    ) -> None:
        self.group = group
        self.out = out
        self.err = err
        self.wakeup = wakeup
        self.ctx = ctx
        self.state = "running"  # -> exited | timeout | cancelled | cancelled_after_exit
        self.still_open = False
        self._published = (0, 0)
        self._last_update = 0.0

    def _pipes_done(self) -> bool:
        return self.out.eof and self.err.eof

    def _publish(self) -> None:
        versions = (self.out.version, self.err.version)
        now = time.monotonic()
        if versions == self._published or now - self._last_update < _UPDATE_INTERVAL:
            return
        self._published = versions
        self._last_update = now
        out_text, _ = decode_capture(self.out, "stdout")
        err_text, _ = decode_capture(self.err, "stderr")
        self.ctx.update(
            ToolResult.from_text(_render(out_text, err_text, None, []), {"partial": True})
        )

    async def supervise(self, limit_s: float) -> None:
        """Wait for the command (or the timeout, or a cancel), then for its pipes."""
        group = self.group
        try:
            with self.ctx.cancel.scope(), anyio.move_on_after(limit_s):
                while not group.exited.is_set():
                    await self.wakeup.wait(_POLL)
                    self._publish()
            if group.exited.is_set():
                # finished, even if the timeout fired in the same instant
                self.state = "exited"
                with self.ctx.cancel.scope(), anyio.move_on_after(READ_GRACE):
                    while not self._pipes_done():
                        await self.wakeup.wait(_POLL)
                        self._publish()
                if self.ctx.cancelled:
                    self.state = "cancelled_after_exit"
            else:
                self.state = "cancelled" if self.ctx.cancelled else "timeout"
                group.kill()
                with anyio.move_on_after(READ_GRACE):
                    while not self._pipes_done():
                        await self.wakeup.wait(_POLL)
            self.still_open = not self._pipes_done()
        finally:
            if self.state == "running":
                # abandoned: cancelled from outside, or the coroutine was dropped
                group.kill()
            group.release()
            if not self._pipes_done():
                # a job outside our control holds the pipes: drain them, never close
                self.out.detach()
                self.err.detach()
            self.wakeup.close()

    def result(
        self, command: str, timeout: float, elapsed: float, sandbox: _SandboxReport | None
    ) -> ToolResult:
        """The tool result, or the ToolError carrying the output."""
        out_text, out_cut = decode_capture(self.out, "stdout")
        err_text, err_cut = decode_capture(self.err, "stderr")
        code = self.group.returncode
        notes: list[str] = []
        denied = sandbox.denial(f"{out_text}\n{err_text}", code) if sandbox is not None else None
        if denied is not None:
            notes.append(denied)
        for label, capture in (("stdout", self.out), ("stderr", self.err)):
            if capture.error is not None:
                notes.append(f"NOTE: reading {label} failed: {capture.error}")
        if self.still_open and self.state == "exited":
            notes.append(
                f"NOTE: the command finished, but a background process it started still "
                f"holds its output open after {READ_GRACE:g} s; that process was left "
                f"running and its further output is discarded. Redirect a background "
                f"job's output (`cmd > log 2>&1 &`) to keep it."
            )
        details: dict[str, Any] = {
            "exit_code": code,
            "duration_ms": round(elapsed * 1000),
            "stdout_bytes": self.out.total,
            "stderr_bytes": self.err.total,
            "stdout_cut": out_cut,
            "stderr_cut": err_cut,
            "output_still_open": self.still_open,
            "timed_out": self.state == "timeout",
            "pgid": self.group.pgid,
        }
        if sandbox is not None:
            details["sandbox"] = sandbox.details
            details["sandbox_denied"] = denied is not None
        if self.state == "timeout":
            text = _render(out_text, err_text, None, notes)
            raise ToolError(
                f"bash: the command timed out after {timeout:g} s and was killed "
                f"(with every process it started). Output so far:\n{text}",
                details=details,
            )
        if self.state == "cancelled":
            text = _render(out_text, err_text, None, notes)
            raise ToolError(
                f"bash: cancelled; the command was killed (with every process it "
                f"started). Output so far:\n{text}",
                details=details,
            )
        text = _render(out_text, err_text, code, notes)
        if self.state == "cancelled_after_exit":
            raise ToolError(f"bash: cancelled after the command finished.\n{text}", details=details)
        if code != 0:
            raise ToolError(text, details=details)
        return ToolResult.from_text(text, details)


def _working_folder(configured: str | None) -> str:
    cwd = configured if configured is not None else os.getcwd()
    if not os.path.isdir(cwd):
        raise ToolError(f"bash: the working folder {cwd} does not exist")
    return cwd


def _render(out_text: str, err_text: str, code: int | None, notes: list[str]) -> str:
    parts: list[str] = []
    if code is not None:
        if code < 0:
            parts.append(f"Exit code: {code} (killed by signal {-code})")
        else:
            parts.append(f"Exit code: {code}")
    if err_text:
        parts.append("STDOUT:\n" + out_text if out_text else "STDOUT: (empty)")
        parts.append("STDERR:\n" + err_text)
    else:
        parts.append(out_text if out_text else "(no output)")
    parts.extend(notes)
    return "\n".join(part.rstrip("\n") for part in parts)
