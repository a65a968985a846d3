"""Approvals that wait durably: what a waiting run announces, and the decisions sent to it.

A run that pauses (a hook deferred tool calls) sets the workflow event
:data:`PENDING_EVENT` to its round and held calls, then waits for one message on that
round's topic (DBOS ``recv``: the wait survives restarts, and nothing runs meanwhile).
A decision is delivered by a tiny workflow whose id names the run and the round, started
with the "reject" reuse policy: a second answer to the same wait is refused, whichever
process sends it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, cast

from dbos import DBOS, SetWorkflowID
from dbos import error as dbos_error
from yoagent.core import Allow, ApprovalDecision, Deny, Modify, PendingApproval, ResumeError

from ._errors import RunNotWaitingError

PENDING_EVENT = "yoagent.pending"
"""The workflow event a waiting run sets: ``{"round": n, "pending": <PendingApproval JSON>}``,
and ``None`` once the wait is answered."""

Decisions = Mapping[str, ApprovalDecision] | Allow | Deny
"""Decisions per held call id, or one ``Allow`` / ``Deny`` for every held call (as for
``Agent.resume``)."""


@dataclass(slots=True, frozen=True)
class Waiting:
    """What a run waits on: its approval round and the held calls."""

    round: int
    pending: PendingApproval


def topic(round_: int) -> str:
    """The message topic of one approval round."""
    return f"yoagent.approval.{round_}"


def announcement(round_: int, pending: PendingApproval) -> dict[str, Any]:
    return {"round": round_, "pending": pending.to_json()}


def read_announcement(value: object) -> Waiting | None:
    if value is None:
        return None
    data = cast("dict[str, Any]", value)
    return Waiting(round=int(data["round"]), pending=PendingApproval.from_json(data["pending"]))


def check_fit(pending: PendingApproval, decisions: Decisions) -> None:
    """:class:`ResumeError` when ``decisions`` do not answer ``pending`` (checked before
    sending, so the sender hears it, not the run)."""
    if isinstance(decisions, Allow | Deny):
        return
    if not isinstance(cast(object, decisions), Mapping):
        raise ResumeError(
            "decisions must map held call ids to Allow, Deny or Modify, or be one Allow or "
            f"Deny for every held call; got {type(decisions).__name__}"
        )
    held = ", ".join(pending.call_ids)
    for call_id, decision in decisions.items():
        if pending.get(call_id) is None:
            raise ResumeError(f"no held tool call has the id {call_id!r} (held: {held})")
        if not isinstance(cast(object, decision), Allow | Deny | Modify):
            raise ResumeError(
                f"the decision for {call_id!r} must be Allow, Deny or Modify, "
                f"not {type(decision).__name__}"
            )
    missing = [
        c.tool_call_id
        for c in pending.calls
        if c.needs_decision and c.tool_call_id not in decisions
    ]
    if missing:
        raise ResumeError(f"no decision for the held tool calls {missing} (held: {held})")


def encode(decisions: Decisions) -> dict[str, Any]:
    """``decisions`` as message data."""
    if isinstance(decisions, Allow | Deny):
        return {"all": _encode_one(decisions)}
    return {"calls": {call_id: _encode_one(d) for call_id, d in decisions.items()}}


def decode(data: object) -> Decisions:
    """Decisions written by :func:`encode`."""
    message = cast("dict[str, Any]", data)
    if "all" in message:
        one = _decode_one(message["all"])
        assert isinstance(one, Allow | Deny)
        return one
    return {call_id: _decode_one(d) for call_id, d in message["calls"].items()}


def _encode_one(decision: ApprovalDecision) -> dict[str, Any]:
    if isinstance(decision, Deny):
        return {"kind": "deny", "reason": decision.reason}
    if isinstance(decision, Modify):
        return {"kind": "modify", "arguments": decision.arguments}
    return {"kind": "allow"}


def _decode_one(data: dict[str, Any]) -> ApprovalDecision:
    if data["kind"] == "deny":
        return Deny(data["reason"])
    if data["kind"] == "modify":
        return Modify(data["arguments"])
    return Allow()


@DBOS.workflow(name="yoagent.dbos.deliver_approval")
async def _deliver(run_id: str, round_: int, message: dict[str, Any]) -> None:
    await DBOS.send_async(run_id, message, topic(round_))


async def deliver(run_id: str, round_: int, decisions: Decisions, *, polling: float) -> None:
    """Send ``decisions`` to the wait ``round_`` of run ``run_id``, once:
    :class:`RunNotWaitingError` when that wait has an answer already."""
    try:
        with SetWorkflowID(f"{run_id}:approval:{round_}", workflow_id_reuse_policy="reject"):
            handle = await DBOS.start_workflow_async(_deliver, run_id, round_, encode(decisions))
    except dbos_error.DBOSWorkflowIDInUseError:
        raise RunNotWaitingError(
            run_id, f"its approval (round {round_}) was answered already"
        ) from None
    await handle.get_result(polling_interval_sec=polling)
