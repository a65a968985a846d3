"""Judging a tool call before it runs: one ``before_tool`` chain (tool middleware first).

The chain's answer is the arguments to run the call with, why it may not run, or the
call held for approval (a hook deferred it). On a resume the caller's decision answers
a deferral; every other verdict stands, so a hook may still deny or rewrite the call.
"""

from __future__ import annotations

from typing import Any

from yoagent.core._hooks.active import Held
from yoagent.core._hooks.basic import ApprovalDecision, Deny, Modify, ToolCallRequest
from yoagent.core._types.approval import PendingCall
from yoagent.core._types.content import ToolCall

from .state import RunState

NO_WAITING_IN_DELEGATED_RUN = (
    "Tool call denied: {reason} (a delegated run cannot wait for approval)"
)


class ApprovalChain:
    """One run's ``before_tool`` chain (tool middleware first: see ``_hooks.knobs``)."""

    __slots__ = ("state",)

    def __init__(self, state: RunState) -> None:
        self.state = state

    def request(self, call: ToolCall, arguments: dict[str, Any]) -> ToolCallRequest:
        """``call`` with ``arguments`` as a hook sees it, with the history it was made in."""
        state = self.state
        return ToolCallRequest(
            tool_call_id=call.id,
            tool_name=call.name,
            arguments=arguments,
            messages=tuple(state.context.messages),
            run_prompts=tuple(state.run_prompts),
        )

    async def approve(
        self, call: ToolCall, answer: ApprovalDecision | None = None
    ) -> dict[str, Any] | str | PendingCall:
        """The arguments to run ``call`` with, why it may not run, or the call held for
        approval. ``answer`` is the caller's decision on a resume (``Allow`` or
        ``Modify``): a deferral then counts as approval."""
        arguments = answer.arguments if isinstance(answer, Modify) else call.arguments
        extensions = self.state.extensions
        if not extensions.takes("before_tool"):
            return arguments
        request = self.request(call, arguments)
        verdict = await extensions.before_tool(request, answered=answer is not None)
        if isinstance(verdict, Deny):
            return f"Tool call denied: {verdict.reason}"
        if isinstance(verdict, Modify):
            return verdict.arguments
        if isinstance(verdict, Held):
            return self._hold(call, verdict.arguments, verdict.reason)
        return arguments

    def _hold(self, call: ToolCall, arguments: dict[str, Any], reason: str) -> PendingCall | str:
        """``call`` held for approval; a denial in a delegated run, which cannot wait."""
        if self.state.delegation_depth > 0:
            return NO_WAITING_IN_DELEGATED_RUN.format(reason=reason)
        return PendingCall(
            tool_call_id=call.id, tool_name=call.name, arguments=arguments, reason=reason
        )
