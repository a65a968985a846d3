"""Tool calls held for approval: what a paused run waits on, written into its history.

A run pauses when tool middleware or an extension answers a call with ``Defer``. Its
history stays a transcript every API accepts: each held call is answered by a
placeholder result (an error reading :data:`HELD_RESULT`) whose ``details`` carry the
:class:`PendingCall`. So the history alone, stored as plain JSON anywhere, says what is
pending (:meth:`PendingApproval.from_messages`), and a resume that replaced the
placeholders leaves nothing to resume twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from .adapters import LazyTypeAdapter, is_validation_error
from .content import TextContent
from .messages import AgentMessage, AssistantMessage, ToolResultMessage

HELD_RESULT = "Not run: this call is held for approval."
"""The text of a held call's placeholder result (what a model reads if the run goes on
without a resume)."""
PENDING_KEY = "pending_approval"
"""Where a placeholder result's ``details`` hold its :class:`PendingCall`."""


@dataclass(slots=True, kw_only=True, frozen=True)
class PendingCall:
    """One tool call a paused run waits on.

    ``arguments`` are the ones the deferring hook judged (after any rewrite by the hooks
    before it); ``reason`` is why it was deferred. A ``queued`` call was not judged yet:
    it comes after a deferred call in a reply whose calls run in order (sequential or
    batched execution), so it waits its turn; a resume judges it like any call, and a
    decision for it is optional.

    ``decided_arguments`` is set when a resume allowed the call but it had to wait again
    (queued behind a call deferred on that resume, or not begun before a cancel): the
    caller's ``Allow`` (the call's own arguments) or ``Modify`` (theirs), which the next
    resume applies unless given a new decision. A caller's ``Deny`` never waits: it
    answers the call at once.
    """

    tool_call_id: str
    tool_name: str
    arguments: dict[str, Any]
    reason: str
    queued: bool = False
    decided_arguments: dict[str, Any] | None = None

    @property
    def needs_decision(self) -> bool:
        """Whether a resume must decide this call: it was deferred and not decided yet."""
        return not self.queued and self.decided_arguments is None


_pending_call_adapter: LazyTypeAdapter[PendingCall] = LazyTypeAdapter(PendingCall)


@dataclass(slots=True, kw_only=True, frozen=True)
class PendingApproval:
    """The tool calls a paused run waits on, in call order. Plain, serializable data:
    :meth:`to_json` / :meth:`from_json`, or recover it from the stored history with
    :meth:`from_messages`."""

    calls: tuple[PendingCall, ...]

    @property
    def call_ids(self) -> list[str]:
        """The ids of the pending calls, in call order."""
        return [call.tool_call_id for call in self.calls]

    def get(self, tool_call_id: str) -> PendingCall | None:
        """The pending call with this id, if there is one."""
        for call in self.calls:
            if call.tool_call_id == tool_call_id:
                return call
        return None

    def to_json(self) -> str:
        """This record as JSON text."""
        return _pending_adapter.dump_json(self).decode()

    @classmethod
    def from_json(cls, text: str | bytes) -> PendingApproval:
        """A record written by :meth:`to_json`."""
        return _pending_adapter.validate_json(text)

    @classmethod
    def from_messages(cls, messages: Sequence[AgentMessage]) -> PendingApproval | None:
        """What the history's latest reply waits on, or ``None`` when nothing is held.

        Reads the placeholder results after the newest assistant message; a history that
        was resumed, or that went on past the pause, holds none. Raises ``ValueError``
        when a placeholder was edited into something unreadable.
        """
        for index in range(len(messages) - 1, -1, -1):
            reply = messages[index]
            if isinstance(reply, AssistantMessage):
                break
        else:
            return None
        found: dict[str, PendingCall] = {}
        for message in messages[index + 1 :]:
            if isinstance(message, ToolResultMessage):
                call = pending_call_of(message)
                if call is not None:
                    found[call.tool_call_id] = call
        if not found:
            return None
        # One entry per id, even when a reply repeats an id (a provider may; the calls
        # then share their held result).
        ordered = tuple(
            found[call_id]
            for call_id in dict.fromkeys(c.id for c in reply.tool_calls)
            if call_id in found
        )
        if len(ordered) != len(found):
            stray = sorted(set(found) - {call.tool_call_id for call in ordered})
            raise ValueError(f"held results {stray} answer no call of the latest reply")
        return cls(calls=ordered)


_pending_adapter: LazyTypeAdapter[PendingApproval] = LazyTypeAdapter(PendingApproval)


def held_result(call: PendingCall) -> ToolResultMessage:
    """The placeholder result answering a held call until a resume replaces it."""
    return ToolResultMessage(
        tool_call_id=call.tool_call_id,
        tool_name=call.tool_name,
        content=[TextContent(text=HELD_RESULT)],
        is_error=True,
        details={PENDING_KEY: _pending_call_adapter.dump_python(call, mode="json")},
    )


def pending_call_of(result: ToolResultMessage) -> PendingCall | None:
    """The pending call a placeholder result holds; ``None`` for any other result."""
    details = cast(object, result.details)
    if not result.is_error or not isinstance(details, dict):
        return None
    record = cast("dict[str, Any]", details).get(PENDING_KEY)
    if record is None:
        return None
    try:
        call = _pending_call_adapter.validate_python(record)
    except ValueError as error:  # pydantic's ValidationError is one
        if not is_validation_error(error):
            raise
        raise ValueError(
            f"the held result of tool call {result.tool_call_id!r} is unreadable: {error}"
        ) from None
    if call.tool_call_id != result.tool_call_id:
        raise ValueError(
            f"the held result of tool call {result.tool_call_id!r} names call {call.tool_call_id!r}"
        )
    return call
