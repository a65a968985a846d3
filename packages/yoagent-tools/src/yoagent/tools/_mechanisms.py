"""The three ways a sandbox plan becomes a command line: Landlock (through the confinement
step, :mod:`._confine`), bubblewrap, Seatbelt.

A :class:`Plan` says what the command may write and whether it has the network; each
mechanism renders it. Each starts from a program, its launcher (:func:`launcher`: the
Python interpreter, ``bwrap``, ``sandbox-exec``), found once, by an absolute path that lies
outside every writable folder: a command that could replace the program that confines the
next one would leave the sandbox. Which mechanism runs is
:class:`~.command_sandbox.CommandSandbox`'s choice.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from ._confine import Spec, arguments, landlock_abi
from ._confine import __file__ as confinement_file
from ._errors import ToolsError

Mechanism = Literal["landlock", "bubblewrap", "seatbelt"]
"""How a sandbox is enforced: Landlock and namespaces (Linux, no helper program), Debian's
``bubblewrap`` (Linux), ``sandbox-exec`` with a Seatbelt profile (macOS)."""
MECHANISMS: Final[tuple[Mechanism, ...]] = ("landlock", "bubblewrap", "seatbelt")
SEATBELT: Final = "/usr/bin/sandbox-exec"
CONFINEMENT_SOURCE: Final = Path(confinement_file).read_text(encoding="utf-8")
"""The confinement step's source, read once, at import, and run as ``python -I -S -c``: never
read again from where yoagent is installed, which may be inside the workspace."""
DEVICES: Final = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
"""Device files every sandboxed command may write (``> /dev/null``)."""


@dataclass(frozen=True, slots=True)
class Plan:
    """What a sandboxed command may do besides reading: every path absolute and resolved."""

    write: tuple[str, ...]
    """Folders (or files) the command may change, with everything beneath them."""
    read_only: tuple[str, ...]
    """Paths inside ``write`` that stay read-only (``.git/hooks``, ``.git/config``)."""
    pin: tuple[str, ...]
    """Folders inside ``write`` that cannot be renamed or removed (``.git``), so a
    read-only path inside cannot be moved aside and replaced."""
    network: bool


def default_mechanisms() -> tuple[Mechanism, ...]:
    """The mechanisms tried on this platform, in order."""
    if sys.platform.startswith("linux"):
        return ("landlock", "bubblewrap")
    if sys.platform == "darwin":
        return ("seatbelt",)
    return ()


class Unavailable(ToolsError):
    """Why a mechanism cannot run here (the message says it); caught by the sandbox, which
    names every mechanism's reason in :class:`SandboxUnavailableError`."""


def launcher(mechanism: Mechanism, writable: Sequence[str]) -> str:
    """The absolute path of the program that starts ``mechanism``, checked to lie outside
    every folder of ``writable`` (resolved paths). Raises :class:`Unavailable` saying why
    there is none."""
    if mechanism == "landlock":
        return _python(writable)
    if mechanism == "bubblewrap":
        return _bwrap(writable)
    if sys.platform != "darwin" or not os.path.exists(SEATBELT):
        raise Unavailable(f"Seatbelt needs macOS ({SEATBELT})")
    return SEATBELT


def _python(writable: Sequence[str]) -> str:
    """The interpreter by its real path (a ``.venv/bin/python`` link may be replaced), with
    the standard library it runs the step with, outside ``writable``."""
    if not sys.platform.startswith("linux"):
        raise Unavailable("Landlock is Linux only")
    if not sys.executable:
        raise Unavailable("no Python interpreter to run the confinement step")
    if landlock_abi() < 1:
        raise Unavailable("the kernel has no Landlock (or it is disabled)")
    python = os.path.realpath(sys.executable)
    library = os.path.dirname(os.path.realpath(os.__file__))
    for what, path in (("the Python interpreter", python), ("its standard library", library)):
        holder = _holder(path, writable)
        if holder is not None:
            raise Unavailable(
                f"{what} {path} lies in the writable folder {holder}: a command could "
                f"replace it and run the next command unconfined (run yoagent with a Python "
                f"installed outside the writable folders)"
            )
    return python


def _bwrap(writable: Sequence[str]) -> str:
    """``bwrap`` from the PATH folders that lie outside ``writable`` (an activated
    ``.venv/bin`` or a ``node_modules/.bin`` on PATH could hold a planted one)."""
    if not sys.platform.startswith("linux"):
        raise Unavailable("bubblewrap is Linux only")
    folders = os.environ.get("PATH", os.defpath).split(os.pathsep)
    safe = [
        folder
        for folder in folders
        if os.path.isabs(folder) and _holder(os.path.realpath(folder), writable) is None
    ]
    found = shutil.which("bwrap", path=os.pathsep.join(safe))
    if found is not None:
        real = os.path.realpath(found)
        if _holder(real, writable) is None:
            return real
    anywhere = shutil.which("bwrap")
    if anywhere is not None:
        raise Unavailable(
            f"the bwrap on PATH ({os.path.realpath(anywhere)}) lies in the writable folders "
            f"or links into them: a command could replace it; install bubblewrap system-wide "
            f"(Debian/Ubuntu: apt-get install bubblewrap)"
        )
    raise Unavailable("bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)")


def _holder(path: str, writable: Sequence[str]) -> str | None:
    """The folder of ``writable`` that ``path`` (resolved) lies in, or ``None``."""
    for folder in writable:
        if path == folder or path.startswith(folder.rstrip(os.sep) + os.sep):
            return folder
    return None


def describe(mechanism: Mechanism) -> str:
    """The mechanism's name as logs and results show it (Landlock with its ABI version)."""
    if mechanism == "landlock":
        return f"landlock (ABI {landlock_abi()})"
    return mechanism


def render(
    mechanism: Mechanism,
    plan: Plan,
    argv: Sequence[str],
    cwd: str | None,
    *,
    launcher: str,
) -> list[str]:
    """The command line that runs ``argv`` under ``mechanism`` with ``plan`` enforced,
    started by ``launcher`` (see :func:`launcher`)."""
    if mechanism == "landlock":
        return _landlock(launcher, plan, argv)
    if mechanism == "bubblewrap":
        return _bubblewrap(launcher, plan, argv, cwd)
    return _seatbelt(launcher, plan, argv)


def _landlock(python: str, plan: Plan, argv: Sequence[str]) -> list[str]:
    spec = Spec()
    spec.write, spec.devices = list(plan.write), list(DEVICES)
    spec.pin, spec.read_only, spec.network = list(plan.pin), list(plan.read_only), plan.network
    # -I: no PYTHON* variables, no user site, no script folder on sys.path; -S: no site.
    line = [python, "-I", "-S", "-c", CONFINEMENT_SOURCE, *arguments(spec)]
    return [*line, "--", *argv]


def _bubblewrap(bwrap: str, plan: Plan, argv: Sequence[str], cwd: str | None) -> list[str]:
    line = [bwrap, "--ro-bind", "/", "/", "--dev", "/dev"]
    for path in (*plan.write, *plan.pin):
        line += ["--bind", path, path]
    for path in plan.read_only:
        line += ["--ro-bind", path, path]
    if not plan.network:
        line.append("--unshare-net")
    if os.geteuid() == 0:  # elsewhere bwrap makes one itself (or is set-uid without one)
        line.append("--unshare-user")
    # root would keep every capability: remount / read-write, set the clock, load modules
    line += ["--cap-drop", "ALL", "--die-with-parent"]
    if cwd is not None:
        line += ["--chdir", cwd]
    return [*line, "--", *argv]


def seatbelt_profile(plan: Plan) -> tuple[str, dict[str, str]]:
    """The Seatbelt profile for ``plan`` and its parameters (paths never inside the text)."""
    params: dict[str, str] = {}

    def param(kind: str, path: str) -> str:
        name = f"P{len(params)}"
        params[name] = path
        return f'({kind} (param "{name}"))'

    writable = [param("subpath", path) for path in plan.write]
    writable += [param("literal", path) for path in DEVICES]
    lines = [
        "(version 1)",
        "(allow default)",
        f"(deny file-write* (require-not (require-any {' '.join(writable)})))",
    ]
    kept = [param("subpath" if os.path.isdir(path) else "literal", path) for path in plan.read_only]
    kept += [param("literal", path) for path in plan.pin]
    if kept:
        lines.append(f"(deny file-write* {' '.join(kept)})")
    if not plan.network:
        lines.append('(deny network-outbound (remote ip "*:*"))')
        lines.append('(deny network-inbound (local ip "*:*"))')
    return "\n".join(lines), params


def _seatbelt(sandbox_exec: str, plan: Plan, argv: Sequence[str]) -> list[str]:
    profile, params = seatbelt_profile(plan)
    line = [sandbox_exec, "-p", profile]
    for name, value in params.items():
        line += ["-D", f"{name}={value}"]
    return [*line, "--", *argv]
