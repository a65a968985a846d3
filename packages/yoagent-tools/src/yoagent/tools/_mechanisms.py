"""The three ways a sandbox plan becomes a command line: Landlock (through the confinement
step, :mod:`._confine`), bubblewrap, Seatbelt.

A :class:`Plan` says what the command may write and whether it has the network; each
mechanism renders it, and says why it cannot run here (:func:`unavailable`). Which one runs
is :class:`~.command_sandbox.CommandSandbox`'s choice.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

from ._confine import Spec, arguments, landlock_abi

Mechanism = Literal["landlock", "bubblewrap", "seatbelt"]
"""How a sandbox is enforced: Landlock and namespaces (Linux, no helper program), Debian's
``bubblewrap`` (Linux), ``sandbox-exec`` with a Seatbelt profile (macOS)."""
MECHANISMS: Final[tuple[Mechanism, ...]] = ("landlock", "bubblewrap", "seatbelt")
SEATBELT: Final = "/usr/bin/sandbox-exec"
CONFINEMENT_STEP: Final = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_confine.py")
"""The confinement step, run by path (see :mod:`._confine`)."""
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


def unavailable(mechanism: Mechanism) -> str | None:
    """Why ``mechanism`` cannot run here (a quick look, before a probe), or ``None``."""
    if mechanism == "landlock":
        if not sys.platform.startswith("linux"):
            return "Landlock is Linux only"
        if not sys.executable:
            return "no Python interpreter to run the confinement step"
        if landlock_abi() < 1:
            return "the kernel has no Landlock (or it is disabled)"
        return None
    if mechanism == "bubblewrap":
        if not sys.platform.startswith("linux"):
            return "bubblewrap is Linux only"
        if shutil.which("bwrap") is None:
            return "bwrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
        return None
    if sys.platform != "darwin" or not os.path.exists(SEATBELT):
        return f"Seatbelt needs macOS ({SEATBELT})"
    return None


def describe(mechanism: Mechanism) -> str:
    """The mechanism's name as logs and results show it (Landlock with its ABI version)."""
    if mechanism == "landlock":
        return f"landlock (ABI {landlock_abi()})"
    return mechanism


def render(mechanism: Mechanism, plan: Plan, argv: Sequence[str], cwd: str | None) -> list[str]:
    """The command line that runs ``argv`` under ``mechanism`` with ``plan`` enforced."""
    if mechanism == "landlock":
        return _landlock(plan, argv)
    if mechanism == "bubblewrap":
        return _bubblewrap(plan, argv, cwd)
    return _seatbelt(plan, argv)


def _landlock(plan: Plan, argv: Sequence[str]) -> list[str]:
    spec = Spec()
    spec.write, spec.devices = list(plan.write), list(DEVICES)
    spec.pin, spec.read_only, spec.network = list(plan.pin), list(plan.read_only), plan.network
    # -I: no PYTHON* variables, no user site, no script folder on sys.path; -S: no site.
    line = [sys.executable, "-I", "-S", CONFINEMENT_STEP, *arguments(spec)]
    return [*line, "--", *argv]


def _bubblewrap(plan: Plan, argv: Sequence[str], cwd: str | None) -> list[str]:
    line = ["bwrap", "--ro-bind", "/", "/", "--dev", "/dev"]
    for path in (*plan.write, *plan.pin):
        line += ["--bind", path, path]
    for path in plan.read_only:
        line += ["--ro-bind", path, path]
    if not plan.network:
        line.append("--unshare-net")
    line.append("--die-with-parent")
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


def _seatbelt(plan: Plan, argv: Sequence[str]) -> list[str]:
    profile, params = seatbelt_profile(plan)
    line = [SEATBELT, "-p", profile]
    for name, value in params.items():
        line += ["-D", f"{name}={value}"]
    return [*line, "--", *argv]
