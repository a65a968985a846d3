"""``--sandbox``: the OS sandbox the bash tool's commands run in (yoagent-tools'
``CommandSandbox``), ``workspace-write`` with the network off unless told otherwise.

Under ``workspace-write`` a command writes only in the working folder, the
``--allow-path`` folders and a temporary folder of its own; ``read-only`` writes nothing;
``full-access`` is no sandbox. ``--sandbox-network`` (the user file's ``sandbox_network``)
turns the network on inside. A command may ask to run outside the sandbox (the model sets
``outside_sandbox`` after the sandbox refused it): the user is asked every time, whatever
``--yes`` or an "always" grant says, and a non-interactive run refuses (:mod:`.confirm`).

The config files' ``sandbox`` key takes the same values. A project file (which comes with
the code you cloned) may make the sandbox stricter, never looser (:func:`project_refusal`);
``sandbox_network`` is read from the user file only.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from yoagent.core import ToolCallRequest
from yoagent.tools import CommandSandbox, SandboxPolicy

DEFAULT = SandboxPolicy.WORKSPACE_WRITE
STRICTNESS: tuple[SandboxPolicy, ...] = (
    SandboxPolicy.READ_ONLY,
    SandboxPolicy.WORKSPACE_WRITE,
    SandboxPolicy.FULL_ACCESS,
)
"""The policies from the strictest to the loosest."""
OUTSIDE_SANDBOX = "outside_sandbox"
"""The bash argument by which a call asks to run outside the sandbox."""

_BOOL: TypeAdapter[bool] = TypeAdapter(bool)


def project_refusal(value: SandboxPolicy, current: SandboxPolicy) -> str | None:
    """Why a project config file's ``sandbox`` is ignored (it would loosen ``current``, the
    user file's or the default), or ``None`` when it is used."""
    if STRICTNESS.index(value) <= STRICTNESS.index(current):
        return None
    return f"a project config can make the sandbox stricter than {current.value}, not looser"


def build_sandbox(policy: SandboxPolicy, roots: Sequence[Path], network: bool) -> CommandSandbox:
    """The sandbox of the bash tool: writes under ``roots`` (the working folder first)."""
    return CommandSandbox(policy, writable_paths=roots, network=network)


def asks_outside(request: ToolCallRequest) -> bool:
    """Whether ``request`` is a bash call asking to run outside the sandbox (read the way
    the tool reads it: ``"true"`` and ``1`` count)."""
    if request.tool_name != "bash":
        return False
    arguments: dict[str, Any] = request.arguments
    try:
        return _BOOL.validate_python(arguments.get(OUTSIDE_SANDBOX, False))
    except ValidationError:
        return False  # the tool refuses the call as invalid


def summary(policy: SandboxPolicy, network: bool) -> str:
    """The banner's line: the policy and the network."""
    if policy is SandboxPolicy.FULL_ACCESS:
        return "sandbox: off (full-access): commands run with your permissions"
    return f"sandbox: {policy.value}, network {'on' if network else 'off'}"
