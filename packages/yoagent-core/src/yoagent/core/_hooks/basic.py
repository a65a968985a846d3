"""Hooks into a run: tool middleware, input filters and turn hooks (sync or async)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

from yoagent.core._provider.protocol import ToolDefinition
from yoagent.core._types.messages import AgentMessage

from .user_request import UserRequestParts, user_request_parts

T = TypeVar("T")


async def resolve(value: T | Awaitable[T]) -> T:
    """Await ``value`` if it is awaitable: lets every hook be sync or async."""
    if inspect.isawaitable(value):
        return await value
    return value


# --- tool middleware ------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True, frozen=True)
class ToolCallRequest:
    """One tool call as middleware sees it, with the history it was made in.

    ``run_prompts`` are the texts the run was given (its prompts, steering and follow-ups):
    compaction cannot remove them from here. Build one yourself to unit-test a middleware.
    """

    tool_call_id: str
    tool_name: str
    arguments: dict[str, Any]
    messages: Sequence[AgentMessage] = ()
    run_prompts: Sequence[str] = ()

    def user_request_parts(self) -> UserRequestParts | None:
        """What the user asked, in parts (see :func:`user_request_parts`)."""
        return user_request_parts(self.messages, self.run_prompts)

    def user_request(self) -> str | None:
        """What the user asked, as one text (wording not stable: policies read the parts)."""
        parts = self.user_request_parts()
        return parts.prose() if parts is not None else None


@dataclass(slots=True, frozen=True)
class Allow:
    """Run the call as it is."""

    kind: Literal["allow"] = "allow"


@dataclass(slots=True, frozen=True)
class Deny:
    """Do not run the call; the model gets ``reason`` as an error result."""

    reason: str
    kind: Literal["deny"] = "deny"


@dataclass(slots=True, frozen=True)
class Modify:
    """Run the call with these arguments instead."""

    arguments: dict[str, Any]
    kind: Literal["modify"] = "modify"


@dataclass(slots=True, frozen=True)
class Defer:
    """Do not decide now: pause the run until a caller decides (see ``Agent.resume``).

    The call is held, ``reason`` saying why; the other calls of the reply run as they
    are judged, then the run stops with a ``RunPaused`` event. In a delegated run,
    which cannot wait, a deferral is a denial.
    """

    reason: str
    kind: Literal["defer"] = "defer"


ToolDecision = Allow | Deny | Modify | Defer
"""What tool middleware and an extension's ``before_tool`` answer."""

ApprovalDecision = Allow | Deny | Modify
"""A caller's answer to a deferred call when resuming: run it, refuse it (the model reads
the reason as the call's error result), or run it with other arguments."""


@runtime_checkable
class ToolMiddleware(Protocol):
    """Approves, denies, rewrites or defers every tool call before it runs.

    Middleware runs in a chain, in installation order, before every extension's
    ``before_tool`` (each is a link of that one chain); a ``Modify`` is what the next one
    sees; a ``Deny`` or a ``Defer`` ends the chain. A middleware that raises is a denial
    carrying its error.
    """

    def before_tool(self, request: ToolCallRequest) -> ToolDecision | Awaitable[ToolDecision]: ...


MiddlewareLike = (
    ToolMiddleware | Callable[[ToolCallRequest], ToolDecision | Awaitable[ToolDecision]]
)


def middleware_callable(
    middleware: MiddlewareLike,
) -> Callable[[ToolCallRequest], ToolDecision | Awaitable[ToolDecision]]:
    """The function to call for ``middleware`` (an object with ``before_tool`` or a callable)."""
    if isinstance(middleware, ToolMiddleware):
        return middleware.before_tool
    return middleware


# --- input filters ----------------------------------------------------------------------------


@dataclass(slots=True, frozen=True)
class Pass:
    """The input is fine."""

    kind: Literal["pass"] = "pass"


@dataclass(slots=True, frozen=True)
class Warn:
    """The input may go on; ``message`` is appended to it for the model to read."""

    message: str
    kind: Literal["warn"] = "warn"


@dataclass(slots=True, frozen=True)
class Reject:
    """The input is refused; the model is not called."""

    reason: str
    kind: Literal["reject"] = "reject"


FilterResult = Pass | Warn | Reject

InputFilter = Callable[[str], FilterResult | Awaitable[FilterResult]]
"""Judges the text of a run's prompt before anything is sent. Sync or async."""


# --- turn hooks -------------------------------------------------------------------------------


@dataclass(slots=True, kw_only=True, frozen=True)
class TurnContext:
    """What a turn hook sees: the turn number (from 1), the history so far, the texts the
    run was given (``run_prompts``: prompts, steering, follow-ups) and the tools offered on
    this turn's request (``tools``: name, description and schema, as the model sees them)."""

    turn: int
    messages: Sequence[AgentMessage] = field(default_factory=tuple[AgentMessage, ...])
    run_prompts: Sequence[str] = ()
    tools: Sequence[ToolDefinition] = ()

    def user_request_parts(self) -> UserRequestParts | None:
        """What the user asked, in parts (see :func:`user_request_parts`)."""
        return user_request_parts(self.messages, self.run_prompts)

    def user_request(self) -> str | None:
        """What the user asked, as one text (wording not stable: policies read the parts)."""
        parts = self.user_request_parts()
        return parts.prose() if parts is not None else None


TurnHook = Callable[[TurnContext], Sequence[str] | Awaitable[Sequence[str]]]
"""Returns notes added to this turn's request only (on its latest user turn). Sync or async."""
