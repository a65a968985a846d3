"""CommandSandbox: the OS sandbox ``bash`` runs its commands in (a policy, enforced by the
kernel, on every process the command starts).

A :class:`CommandSandbox` maps a :class:`~yoagent.core.support.Command` to the command that
runs it confined (:meth:`CommandSandbox.wrap`), so the process-group runner starts,
watches, caps and kills it as any other. The policies (:class:`SandboxPolicy`):

* ``read-only``: the command reads the whole file system and writes nothing (device files
  such as ``/dev/null`` aside);
* ``workspace-write``: it also writes under the writable folders and a private temporary
  folder of its own (``TMPDIR``); in each writable folder's ``.git`` what a later ``git``
  reads config and hooks through stays read-only (:data:`GIT_KEPT`), and ``.git`` cannot
  be renamed or removed;
* ``full-access``: no sandbox (the command can reach whatever this process can).

The network is off under the first two unless ``network=True``. The mechanisms, tried in
order: Landlock with namespaces, then bubblewrap (Linux); Seatbelt (macOS). A policy that
no mechanism can enforce here raises :class:`SandboxUnavailableError`: a command is never
run unconfined instead. docs/sandbox.md says what each policy cannot stop.
"""

from __future__ import annotations

import contextlib
import enum
import logging
import os
import shutil
import stat
import subprocess
import tempfile
import threading
import weakref
from collections.abc import Iterable
from typing import Final

from yoagent.core import ToolError
from yoagent.core.support import Command

from ._errors import ToolsError
from ._mechanisms import (
    MECHANISMS,
    Mechanism,
    Plan,
    Unavailable,
    default_mechanisms,
    describe,
    launcher,
    render,
)
from .sandbox import StrPath

logger = logging.getLogger("yoagent.tools")

PROBE_TIMEOUT: Final = 15.0
"""Seconds a mechanism's first confined run (``true``) may take before it counts as broken."""
DENIAL_MARKERS: Final = (
    "Permission denied",
    "Operation not permitted",
    "Read-only file system",
    "Device or resource busy",
    "Invalid cross-device link",
    "Network is unreachable",
    "Temporary failure in name resolution",
    "Could not resolve host",
    "Name or service not known",
)
"""What a refused system call looks like in a command's output (EACCES, EPERM, EROFS,
EBUSY for the pinned ``.git``, EXDEV, ENETUNREACH, and failed name lookups)."""


class SandboxPolicy(enum.StrEnum):
    """What a sandboxed command may do (see the module docstring)."""

    READ_ONLY = "read-only"
    WORKSPACE_WRITE = "workspace-write"
    FULL_ACCESS = "full-access"


class SandboxUnavailableError(ToolsError, ToolError):
    """The policy cannot be enforced here (no mechanism works); the command was not run."""


class CommandSandbox:
    """A sandbox policy for commands, and the mechanism that enforces it here.

    ``writable_paths`` are the folders ``workspace-write`` lets commands change (resolved
    now; a missing one is left out). ``network`` lets sandboxed commands use the network.
    ``mechanisms`` are tried in order the first time a command is wrapped (default: Landlock
    then bubblewrap on Linux, Seatbelt on macOS): each is probed by running ``true`` under
    the policy, and the first that works is used from then on (:meth:`resolve`).
    """

    def __init__(
        self,
        policy: SandboxPolicy | str = SandboxPolicy.WORKSPACE_WRITE,
        *,
        writable_paths: Iterable[StrPath] = (),
        network: bool = False,
        mechanisms: Iterable[Mechanism] | None = None,
    ) -> None:
        try:
            self.policy = SandboxPolicy(policy)
        except ValueError:
            choices = ", ".join(member.value for member in SandboxPolicy)
            raise ValueError(f"unknown sandbox policy {policy!r}; one of {choices}") from None
        self.writable_paths = tuple(
            dict.fromkeys(os.path.realpath(os.fspath(path)) for path in writable_paths)
        )
        self.network = network or self.policy is SandboxPolicy.FULL_ACCESS
        chosen = tuple(mechanisms) if mechanisms is not None else default_mechanisms()
        for mechanism in chosen:
            if mechanism not in MECHANISMS:
                raise ValueError(f"unknown sandbox mechanism {mechanism!r}; one of {MECHANISMS}")
        self.mechanisms: tuple[Mechanism, ...] = chosen
        self._lock = threading.Lock()  # the probe's result
        self._temp_lock = threading.Lock()
        self._resolved = False
        self._mechanism: Mechanism | None = None
        self._launcher = ""
        self._failure: str | None = None
        self._temp: str | None = None

    @property
    def restricted(self) -> bool:
        """Whether commands are confined at all (every policy but ``full-access``)."""
        return self.policy is not SandboxPolicy.FULL_ACCESS

    @property
    def temp_folder(self) -> str | None:
        """The private temporary folder of ``workspace-write`` (made on first use, and again
        if something outside the sandbox removed it)."""
        if self.policy is not SandboxPolicy.WORKSPACE_WRITE:
            return None
        with self._temp_lock:
            if self._temp is None or not os.path.isdir(self._temp):
                temp = os.path.realpath(tempfile.mkdtemp(prefix="yoagent-sandbox-"))
                weakref.finalize(self, shutil.rmtree, temp, ignore_errors=True)
                self._temp = temp
            return self._temp

    def summary(self) -> str:
        """What the policy allows, in one sentence (for the model and for people)."""
        if not self.restricted:
            return "full-access: no sandbox; commands can reach whatever this process can"
        network = "the network is on" if self.network else "the network is off"
        if self.policy is SandboxPolicy.READ_ONLY:
            return f"read-only: commands read the whole file system and write nothing; {network}"
        where = ", ".join(self.writable_paths)
        where = f"{where} and " if where else ""
        return (
            f"workspace-write: commands read the whole file system and write only under "
            f"{where}their own temporary folder ($TMPDIR), .git hooks and config excepted; "
            f"{network}"
        )

    def resolve(self) -> Mechanism | None:
        """The mechanism that enforces the policy here (``None`` for ``full-access``),
        probed on the first call. Raises :class:`SandboxUnavailableError` when none works.

        Blocks while probing (one short process per mechanism tried): call it from a thread
        in async code.
        """
        if not self.restricted:
            return None
        with self._lock:
            if not self._resolved:
                self._mechanism, self._launcher, self._failure = self._probe_all()
                self._resolved = True
            mechanism, failure = self._mechanism, self._failure
        if mechanism is None:
            raise SandboxUnavailableError(failure or "no sandbox mechanism")
        return mechanism

    def describe(self) -> str:
        """The policy and what enforces it, e.g. ``workspace-write via landlock (ABI 7),
        network off``. Raises :class:`SandboxUnavailableError` like :meth:`resolve`."""
        mechanism = self.resolve()
        if mechanism is None:
            return f"{self.policy.value} (no sandbox)"
        return self._described(mechanism)

    def wrap(self, command: Command) -> Command:
        """``command`` as it runs in the sandbox: the same command under ``full-access``.

        Raises :class:`SandboxUnavailableError` when the policy cannot be enforced, and
        :class:`OSError` when the ``.git`` folders cannot be prepared.
        """
        mechanism = self.resolve()
        if mechanism is None:
            return command
        env = dict(command.env) if command.env is not None else dict(os.environ)
        temp = self.temp_folder
        if temp is not None:
            for name in ("TMPDIR", "TMP", "TEMP"):
                env[name] = temp
        argv = render(mechanism, self.plan(), command.argv, command.cwd, launcher=self._launcher)
        return Command(argv, cwd=command.cwd, env=env, pass_fds=command.pass_fds)

    def plan(self) -> Plan:
        """What the policy lets a command write, worked out now (each writable folder's
        ``.git`` is looked at again for every command: a ``git init`` is seen).

        Creates ``.git/hooks``, ``.git/info``, an empty ``.git/config`` and
        ``config.worktree``, and a ``commondir`` naming ``.git`` itself, where a ``.git``
        folder lacks them, so that a command cannot add them. A writable folder that a
        command replaced with a link (one writable folder inside another) is left out.
        """
        if self.policy is SandboxPolicy.READ_ONLY:
            return Plan(write=(), read_only=(), pin=(), network=self.network)
        roots: list[str] = []
        for path in self.writable_paths:
            if os.path.realpath(path) != path:
                logger.warning("bash sandbox: %s is now a link; it is not writable", path)
            elif os.path.exists(path):
                roots.append(path)
        pins: list[str] = []
        read_only: list[str] = []
        for root in roots:
            _protect_git(root, pins, read_only)
        temp = self.temp_folder
        write = [*roots, temp] if temp is not None else roots
        return Plan(
            write=tuple(write), read_only=tuple(read_only), pin=tuple(pins), network=self.network
        )

    def explain_denial(self, output: str) -> str | None:
        """A note saying the sandbox refused part of a failed command, when ``output``
        (its stdout and stderr) shows a refused system call; ``None`` otherwise."""
        if not self.restricted or not any(marker in output for marker in DENIAL_MARKERS):
            return None
        with self._lock:
            mechanism = self._mechanism
        how = f", enforced by {describe(mechanism)}" if mechanism is not None else ""
        return (
            f"NOTE: the sandbox refused part of this command ({self.summary()}{how}). "
            f"'Permission denied', 'Read-only file system', 'Operation not permitted' or an "
            f"unreachable network above most likely come from the sandbox, not from file "
            f"permissions."
        )

    def _probe_all(self) -> tuple[Mechanism | None, str, str | None]:
        reasons: list[str] = []
        writable = [*self.writable_paths]
        temp = self.temp_folder
        if temp is not None:
            writable.append(temp)
        for mechanism in self.mechanisms:
            try:
                program = launcher(mechanism, writable)
            except Unavailable as why:
                reasons.append(f"{mechanism}: {why}")
                continue
            reason = self._probe(mechanism, program)
            if reason is None:
                logger.info("bash sandbox: %s", self._described(mechanism))
                return mechanism, program, None
            reasons.append(f"{mechanism}: {reason}")
        tried = "; ".join(reasons) if reasons else "no mechanism for this platform"
        failure = (
            f"the sandbox policy {self.policy.value!r} cannot be enforced here ({tried}); "
            f"commands are refused rather than run unsandboxed"
        )
        logger.warning("bash sandbox: %s", failure)
        return None, "", failure

    def _described(self, mechanism: Mechanism) -> str:
        network = "network on" if self.network else "network off"
        return f"{self.policy.value} via {describe(mechanism)}, {network}"

    def _probe(self, mechanism: Mechanism, program: str) -> str | None:
        """Why a confined ``true`` fails under ``mechanism`` started by ``program``, or
        ``None`` when it runs."""
        try:
            argv = render(mechanism, self.plan(), ["true"], None, launcher=program)
            done = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=PROBE_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as error:
            return f"could not run it: {error}"
        if done.returncode == 0:
            return None
        said = done.stderr.decode(errors="replace").strip().splitlines()
        return said[-1] if said else f"exit status {done.returncode}"


GIT_PLACEHOLDERS: Final = (("config", ""), ("commondir", ".\n"), ("config.worktree", ""))
"""The files of ``.git`` a later ``git`` reads its config and hooks through, made where
missing (so that a command cannot add them) with what means nothing new: an empty config,
and a ``commondir`` naming ``.git`` itself (git reads it as the folder it is in)."""
GIT_KEPT: Final = ("hooks", "info", "worktrees", *(name for name, _ in GIT_PLACEHOLDERS))
"""What stays read-only in ``.git`` (each linked worktree's ``commondir``, ``gitdir`` and
``config.worktree`` are in ``worktrees``)."""


def _protect_git(root: str, pins: list[str], read_only: list[str]) -> None:
    """Add ``root``'s ``.git`` protections: a real folder is pinned with :data:`GIT_KEPT`
    read-only; a ``.git`` file (a worktree's or submodule's pointer) is read-only. A
    ``.git`` that is a link (or lies elsewhere through one) is not followed: this runs
    unsandboxed, and a command may have made it."""
    dot_git = os.path.join(root, ".git")
    try:
        mode = os.lstat(dot_git).st_mode
    except FileNotFoundError:
        return
    if os.path.realpath(dot_git) != dot_git:
        logger.warning("bash sandbox: %s is a link; it is not protected", dot_git)
        return
    if stat.S_ISREG(mode):
        read_only.append(dot_git)
        return
    if not stat.S_ISDIR(mode):
        return
    _make_git_files(dot_git)
    pins.append(dot_git)
    for name in GIT_KEPT:
        path = os.path.realpath(os.path.join(dot_git, name))
        if os.path.exists(path):
            read_only.append(path)


def _make_git_files(dot_git: str) -> None:
    """Create ``hooks``, ``info`` and :data:`GIT_PLACEHOLDERS` in ``dot_git`` where missing,
    through a descriptor of the folder and never through a link."""
    folder = os.open(dot_git, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    try:
        for name in ("hooks", "info"):
            with contextlib.suppress(FileExistsError):
                os.mkdir(name, 0o777, dir_fd=folder)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        for name, text in GIT_PLACEHOLDERS:
            try:
                fd = os.open(name, flags, 0o666, dir_fd=folder)
            except FileExistsError:
                continue
            try:
                os.write(fd, text.encode())
            finally:
                os.close(fd)
    finally:
        os.close(folder)
