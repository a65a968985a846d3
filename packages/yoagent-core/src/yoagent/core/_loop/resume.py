"""Resuming a paused run: the caller's decisions on its held calls, checked before it runs.

A run that paused left its history whole, each held call answered by a placeholder. A
resume — in this process or another, from the history stored as JSON — runs the calls
the caller allowed (with their arguments, or the caller's), answers the denied ones with
the caller's reason, puts the results in place of the placeholders, and goes on with
the loop. Nothing that ran before the pause runs again, and a history already resumed
has nothing left to resume.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import cast

from yoagent.core._hooks.basic import Allow, ApprovalDecision, Deny, Modify
from yoagent.core._types.approval import PendingApproval
from yoagent.core._types.errors import YoagentError
from yoagent.core._types.messages import AgentMessage, last_assistant

Decisions = Mapping[str, ApprovalDecision] | Allow | Deny
"""Decisions per held call id, or one ``Allow`` / ``Deny`` for every held call."""


class ResumeError(YoagentError, ValueError):
    """A resume that cannot be done: nothing is held, or the decisions do not fit the
    held calls (an unknown id, a missing decision, something not a decision)."""


def check_decisions(
    messages: Sequence[AgentMessage], decisions: Decisions
) -> dict[str, ApprovalDecision]:
    """The caller's decision per held call of ``messages``; :class:`ResumeError` when
    nothing is held or the decisions do not fit.

    Every deferred call needs a decision; a queued one (not judged yet) may have one,
    else the run judges it as usual when its turn comes. A call an earlier resume allowed
    that had to wait again keeps that decision unless given a new one.
    """
    try:
        pending = PendingApproval.from_messages(messages)
    except ValueError as error:
        raise ResumeError(f"the history cannot be resumed: {error}") from None
    if pending is None:
        raise ResumeError(
            "nothing to resume: no tool call of the latest reply is held for approval "
            "(the run did not pause, or it was resumed already)"
        )
    _check_ids_unique(messages, pending)
    if isinstance(decisions, Deny):
        return {call.tool_call_id: decisions for call in pending.calls}
    if isinstance(decisions, Allow):
        # A blanket Allow answers what still waits for a decision; a call an earlier
        # resume rewrote keeps its rewrite (allowing it as the model wrote it would undo
        # the person's restriction without their seeing it again).
        return {
            call.tool_call_id: decisions
            if call.decided_arguments is None
            else Modify(call.decided_arguments)
            for call in pending.calls
        }
    if not isinstance(cast(object, decisions), Mapping):
        raise ResumeError(
            "decisions must map held call ids to Allow, Deny or Modify, or be one Allow or "
            f"Deny for every held call; got {type(decisions).__name__}"
        )
    held = ", ".join(pending.call_ids)
    checked: dict[str, ApprovalDecision] = {}
    for call_id, decision in decisions.items():
        if pending.get(call_id) is None:
            raise ResumeError(f"no held tool call has the id {call_id!r} (held: {held})")
        if not isinstance(cast(object, decision), Allow | Deny | Modify):
            raise ResumeError(
                f"the decision for {call_id!r} must be Allow, Deny or Modify, "
                f"not {type(decision).__name__}"
            )
        checked[call_id] = decision
    missing = [
        call.tool_call_id
        for call in pending.calls
        if call.needs_decision and call.tool_call_id not in checked
    ]
    if missing:
        raise ResumeError(f"no decision for the held tool calls {missing} (held: {held})")
    for call in pending.calls:
        if call.decided_arguments is not None and call.tool_call_id not in checked:
            checked[call.tool_call_id] = Modify(call.decided_arguments)
    return checked


def _check_ids_unique(messages: Sequence[AgentMessage], pending: PendingApproval) -> None:
    """Refuse a held id that more than one call of the reply has (a history stored before
    the loop made ids unique): one decision would answer calls nobody saw."""
    reply = last_assistant(messages)
    if reply is None:  # pragma: no cover - a pending call answers a reply
        return
    counts = Counter(call.id for call in reply.tool_calls)
    for call_id in pending.call_ids:
        if counts[call_id] > 1:
            raise ResumeError(
                f"the history cannot be resumed: the latest reply repeats the held tool "
                f"call id {call_id!r} ({counts[call_id]} calls), so one decision would "
                "answer more than one call (a new prompt goes on past the held calls)"
            )
