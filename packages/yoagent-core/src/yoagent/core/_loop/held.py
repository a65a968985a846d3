"""The calls of a reply that a batch never began, and what a resume carries forward.

A call not begun is answered by why: the caller's denial (on a resume), "cancelled",
"skipped" for steering, or held — queued behind a call a hook deferred. A resume that
cannot begin a held call the caller allowed keeps it held, carrying the caller's
``Allow`` / ``Modify`` to the next resume.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from yoagent.core._hooks.basic import Allow, ApprovalDecision, Deny, Modify
from yoagent.core._types.approval import PendingCall
from yoagent.core._types.content import ToolCall
from yoagent.core._types.messages import ToolResultMessage

from .tool_call import CANCELLED_RESULT, SKIPPED_FOR_STEERING, ToolCalls, denied

QUEUED_BEHIND = "queued behind {ids}, held for approval: the calls of this reply run in order"


def decided_arguments(call: ToolCall, answer: ApprovalDecision | None) -> dict[str, Any] | None:
    """The arguments a caller's ``Allow`` / ``Modify`` runs ``call`` with, to carry to the
    next resume when the call has to wait again."""
    if isinstance(answer, Modify):
        return answer.arguments
    if isinstance(answer, Allow):
        return call.arguments
    return None


def unbegun(
    calls: ToolCalls,
    call: ToolCall,
    answer: ApprovalDecision | None,
    *,
    resuming: bool,
    steered: bool,
) -> ToolResultMessage | None:
    """The answer to ``call``, which its batch never began (``answer``: the caller's
    decision on a resume). ``None`` keeps a resumed call's placeholder as it is."""
    if isinstance(answer, Deny):
        return calls.answer(call, denied(answer))
    if calls.state.cancel.cancelled:
        if resuming:
            return unbegun_on_resume(calls, call, answer)
        return calls.answer(call, CANCELLED_RESULT)
    if steered:
        return calls.answer(call, SKIPPED_FOR_STEERING)
    queued = PendingCall(
        tool_call_id=call.id,
        tool_name=call.name,
        arguments=call.arguments,
        reason=QUEUED_BEHIND.format(ids=", ".join(calls.deferred)),
        queued=True,
        decided_arguments=decided_arguments(call, answer),
    )
    return calls.hold(call, queued)


def unbegun_on_resume(
    calls: ToolCalls, call: ToolCall, answer: ApprovalDecision | None
) -> ToolResultMessage | None:
    """A held call a dying or cancelled resume never began: the caller's denial, or held
    still (``None`` keeps its placeholder; an ``Allow`` / ``Modify`` is carried)."""
    if isinstance(answer, Deny):
        return calls.answer(call, denied(answer))
    decided = decided_arguments(call, answer)
    if decided is None:
        return None
    held = calls.state.held_call(call.id)
    return calls.hold(call, replace(held, decided_arguments=decided))
