"""``--sandbox`` in-process: which project policies are refused, how a call asking to leave
the sandbox is read, and the banner's line."""

from __future__ import annotations

from typing import Any

import pytest

from yoagent.cli.sandbox import asks_outside, project_refusal, summary
from yoagent.core import ToolCallRequest
from yoagent.tools import SandboxPolicy


@pytest.mark.parametrize("policy", list(SandboxPolicy))
def test_a_project_config_may_repeat_the_current_policy(policy: SandboxPolicy) -> None:
    assert project_refusal(policy, policy) is None


def test_a_project_config_may_tighten_but_not_loosen() -> None:
    assert project_refusal(SandboxPolicy.READ_ONLY, SandboxPolicy.WORKSPACE_WRITE) is None
    assert project_refusal(SandboxPolicy.FULL_ACCESS, SandboxPolicy.WORKSPACE_WRITE) == (
        "a project config can make the sandbox stricter than workspace-write, not looser"
    )


def bash(**arguments: Any) -> ToolCallRequest:
    return ToolCallRequest(tool_call_id="c1", tool_name="bash", arguments=arguments)


@pytest.mark.parametrize(
    ("value", "expected"),
    [(True, True), ("true", True), (1, True), (False, False), ("maybe", False), ([1], False)],
)
def test_a_call_asks_to_leave_the_sandbox_only_with_a_true_value(
    value: Any, expected: bool
) -> None:
    assert asks_outside(bash(command="ls", outside_sandbox=value)) is expected


def test_a_call_without_the_argument_stays_inside() -> None:
    assert asks_outside(bash(command="ls")) is False


@pytest.mark.parametrize(
    ("policy", "network", "line"),
    [
        (SandboxPolicy.WORKSPACE_WRITE, False, "sandbox: workspace-write, network off"),
        (SandboxPolicy.WORKSPACE_WRITE, True, "sandbox: workspace-write, network on"),
        (SandboxPolicy.READ_ONLY, False, "sandbox: read-only, network off"),
        (SandboxPolicy.FULL_ACCESS, True,
         "sandbox: off (full-access): commands run with your permissions"),
    ],
)  # fmt: skip
def test_the_banner_line_names_the_policy_and_the_network(
    policy: SandboxPolicy, network: bool, line: str
) -> None:
    assert summary(policy, network) == line
