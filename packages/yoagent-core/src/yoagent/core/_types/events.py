"""Streaming deltas (provider → loop) and agent events (loop → caller)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Any, Literal

from .adapters import LazyTypeAdapter
from .approval import PendingApproval
from .content import UserContent
from .errors import ErrorKind
from .messages import AgentMessage, AssistantMessage, ToolResultMessage
from .outcome import RunEnd, RunOutcome
from .stats import SessionStats
from .tagged import Tagged

# --- deltas: what a provider reports while a reply streams ---------------------------------


@dataclass(slots=True, kw_only=True)
class TextDelta:
    """More text for the block at ``content_index``."""

    content_index: int
    delta: str
    type: Literal["text_delta"] = "text_delta"


@dataclass(slots=True, kw_only=True)
class ThinkingDelta:
    """More reasoning for the block at ``content_index``."""

    content_index: int
    delta: str
    type: Literal["thinking_delta"] = "thinking_delta"


@dataclass(slots=True, kw_only=True)
class ToolCallDelta:
    """More raw JSON arguments for the tool call at ``content_index``."""

    content_index: int
    id: str
    name: str
    delta: str
    type: Literal["tool_call_delta"] = "tool_call_delta"


StreamDelta = Annotated[TextDelta | ThinkingDelta | ToolCallDelta, Tagged("type")]
"""A piece of a streaming reply."""

# --- events: what the loop reports to its caller ---------------------------------------------


@dataclass(slots=True, kw_only=True)
class AgentStart:
    """A run began."""

    type: Literal["agent_start"] = "agent_start"


@dataclass(slots=True, kw_only=True)
class TurnStart:
    """A turn (one model request and its tools) began. ``turn`` counts from 1 per run."""

    turn: int
    type: Literal["turn_start"] = "turn_start"


@dataclass(slots=True, kw_only=True)
class MessageStart:
    """A message entered the history, or an assistant reply started streaming."""

    message: AgentMessage
    type: Literal["message_start"] = "message_start"


@dataclass(slots=True, kw_only=True)
class MessageUpdate:
    """An assistant reply streamed a delta."""

    delta: StreamDelta
    type: Literal["message_update"] = "message_update"


@dataclass(slots=True, kw_only=True)
class MessageEnd:
    """A message is complete and in the history."""

    message: AgentMessage
    type: Literal["message_end"] = "message_end"


@dataclass(slots=True, kw_only=True)
class ToolExecutionStart:
    """A tool call started running."""

    tool_call_id: str
    tool_name: str
    arguments: dict[str, Any] = field(default_factory=dict[str, Any])
    type: Literal["tool_execution_start"] = "tool_execution_start"


@dataclass(slots=True, kw_only=True)
class ToolExecutionUpdate:
    """A running tool reported partial output."""

    tool_call_id: str
    tool_name: str
    content: list[UserContent] = field(default_factory=list[Any])
    details: Any = None
    type: Literal["tool_execution_update"] = "tool_execution_update"


@dataclass(slots=True, kw_only=True)
class ToolExecutionEnd:
    """A tool call finished; ``result`` is what the model will see."""

    result: ToolResultMessage
    type: Literal["tool_execution_end"] = "tool_execution_end"


@dataclass(slots=True, kw_only=True)
class ProgressMessage:
    """A running tool said what it is doing (for people, not for the model)."""

    tool_call_id: str
    tool_name: str
    text: str
    type: Literal["progress_message"] = "progress_message"


@dataclass(slots=True, kw_only=True)
class InputRejected:
    """An input filter refused the prompt; the model was not called."""

    reason: str
    type: Literal["input_rejected"] = "input_rejected"


@dataclass(slots=True, kw_only=True)
class ProviderRetry:
    """A model call failed in a retryable way and will be tried again after ``delay_seconds``.

    An assistant reply that had started streaming was closed with an error just before.
    """

    attempt: int
    max_retries: int
    delay_seconds: float
    kind: ErrorKind
    error: str
    type: Literal["provider_retry"] = "provider_retry"


@dataclass(slots=True, kw_only=True)
class SubAgentEvent:
    """An event of a run this run delegated to, forwarded to this run's stream.

    ``tool_call_id`` is the delegating call (in the run one level up) and ``depth`` the
    delegated run's depth (1: delegated by a top-level run), so a UI can nest the
    activity under the call. Never stored in the history.
    """

    tool_call_id: str
    tool_name: str
    depth: int
    event: AgentEvent
    type: Literal["sub_agent_event"] = "sub_agent_event"


@dataclass(slots=True, kw_only=True)
class TurnEnd:
    """A turn finished: its reply and the results of the tools it ran.

    ``message`` is ``None`` for a turn that ended before the model was asked: an
    extension's ``before_model`` stopped the run (a budget reached), or the run was torn
    down before a reply came (an outer cancellation, a crash).
    """

    turn: int
    message: AssistantMessage | None
    tool_results: list[ToolResultMessage] = field(default_factory=list[ToolResultMessage])
    type: Literal["turn_end"] = "turn_end"


def _completed() -> RunOutcome:
    return RunOutcome(end=RunEnd.COMPLETED)


@dataclass(slots=True, kw_only=True)
class AgentEnd:
    """A run ended. ``messages`` are the ones it added; ``stats`` what it spent;
    ``outcome`` how it ended (its ``messages`` left empty: they are this event's).

    An ``AgentEnd`` built by hand, or read from JSON written before the field existed,
    says ``COMPLETED``."""

    messages: list[AgentMessage] = field(default_factory=list[AgentMessage])
    stats: SessionStats = field(default_factory=SessionStats)
    outcome: RunOutcome = field(default_factory=_completed)
    type: Literal["agent_end"] = "agent_end"


@dataclass(slots=True, kw_only=True)
class RunPaused:
    """The run stopped to wait for approval of ``pending`` (just before its ``AgentEnd``).

    The history is whole: each held call is answered by a placeholder result. Store the
    history and resume it later with decisions (``Agent.resume``).
    """

    pending: PendingApproval
    type: Literal["run_paused"] = "run_paused"


AgentEvent = Annotated[
    AgentStart
    | TurnStart
    | MessageStart
    | MessageUpdate
    | MessageEnd
    | ToolExecutionStart
    | ToolExecutionUpdate
    | ToolExecutionEnd
    | ProgressMessage
    | InputRejected
    | ProviderRetry
    | SubAgentEvent
    | TurnEnd
    | RunPaused
    | AgentEnd,
    Tagged("type"),
]
"""Every event the loop emits."""

event_adapter: LazyTypeAdapter[AgentEvent] = LazyTypeAdapter(AgentEvent)
"""JSON (de)serialization of one :data:`AgentEvent`."""
