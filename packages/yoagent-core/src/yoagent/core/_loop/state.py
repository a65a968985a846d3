"""The state of one run, and the only way the loop changes its history."""

from __future__ import annotations

import secrets
from collections.abc import Callable

from yoagent.core._cancel import CancelToken
from yoagent.core._hooks.active import ActiveExtensions
from yoagent.core._logging import logger
from yoagent.core._types.approval import PendingCall, pending_call_of
from yoagent.core._types.events import AgentEvent, MessageEnd, MessageStart, TurnEnd, TurnStart
from yoagent.core._types.limits import ExecutionTracker
from yoagent.core._types.messages import (
    AgentMessage,
    AssistantMessage,
    Message,
    ToolResultMessage,
    UserMessage,
    context_messages,
)
from yoagent.core._types.stats import RunSpend, SessionStats

from .settings import AgentContext, AgentLoopConfig
from .telemetry import tracing_enabled

EventSink = Callable[[AgentEvent], None]


def ignore_event(_: AgentEvent) -> None:
    """An event sink that drops everything."""
    return


def guarded(emit: EventSink) -> EventSink:
    """``emit``, switched off for the rest of the run the first time it raises.

    A consumer's bug must not end the run, nor be blamed on the provider whose delta it
    was reading; it is logged once.
    """
    if emit is ignore_event:
        return emit
    broken = False

    def guarded(event: AgentEvent) -> None:
        nonlocal broken
        if broken:
            return
        try:
            emit(event)
        except Exception:
            broken = True
            logger.exception("the event consumer raised; it gets no more events this run")

    return guarded


def quiet(emit: EventSink) -> EventSink:
    """``emit`` that never raises (used while closing a run an exception is ending)."""

    def quiet(event: AgentEvent) -> None:
        try:
            emit(event)
        except BaseException:  # the run is already ending with an exception of its own
            logger.debug("an event could not be delivered while closing the run", exc_info=True)

    return quiet


def _observed(emit: EventSink, extensions: ActiveExtensions) -> EventSink:
    """``emit``, then every observing extension's ``on_event``."""

    def observed(event: AgentEvent) -> None:
        emit(event)
        extensions.on_event(event)

    return observed


class RunState:
    """What one run works on and has done so far.

    The driver, the model call and the tool runner share it; each reads what it needs
    and changes the history only through :meth:`append` (which also tells the caller).
    """

    __slots__ = (
        "cancel",
        "closing",
        "config",
        "context",
        "delegation_depth",
        "emit",
        "extensions",
        "new_messages",
        "produced_reply",
        "run_id",
        "run_prompts",
        "sendable",
        "settings",
        "spend",
        "stats",
        "timed_out",
        "tracing",
        "tracker",
        "turn",
        "turn_open",
        "turn_reply",
    )

    def __init__(
        self,
        context: AgentContext,
        config: AgentLoopConfig,
        emit: EventSink,
        cancel: CancelToken,
        stats: SessionStats,
    ) -> None:
        self.context = context
        self.config = config
        self.settings = config.settings
        self.cancel = cancel
        self.stats = stats
        self.spend = RunSpend(stats)
        self.run_id = secrets.token_hex(8)
        delegation = config.delegation
        self.delegation_depth = delegation.depth if delegation is not None else 0
        self.extensions = ActiveExtensions(cancel)
        self.emit: EventSink = guarded(emit)
        self.closing = False
        self.new_messages: list[AgentMessage] = []
        self.sendable: list[Message] = context_messages(context.messages)
        self.tracker = ExecutionTracker(self.settings.limits)
        self.turn = 0
        self.turn_open = False
        self.turn_reply: AssistantMessage | None = None
        """The reply of the open turn, once it is in the history."""
        self.produced_reply = False
        self.timed_out = False
        self.run_prompts: list[str] = []
        """The texts this run was given (prompts, steering, follow-ups), kept apart from
        the history so compaction cannot remove them (see ``user_request``)."""
        self.tracing = tracing_enabled()

    def observe(self, extensions: ActiveExtensions) -> None:
        """Route every later event through ``extensions`` as well (when one observes them)."""
        self.extensions = extensions
        if extensions.takes("on_event"):
            self.emit = _observed(self.emit, extensions)

    def quiet(self) -> None:
        """From now on, delivering an event never raises (the run is being torn down)."""
        if not self.closing:
            self.closing = True
            self.emit = quiet(self.emit)

    # --- history ---------------------------------------------------------------------------

    def append(self, message: AgentMessage) -> None:
        """Add a message to the history and tell the caller."""
        self.context.messages.append(message)
        self.new_messages.append(message)
        self.sendable.extend(context_messages((message,)))
        if isinstance(message, AssistantMessage):
            self.turn_reply = message
        else:
            self.emit(MessageStart(message=message))
        self.emit(MessageEnd(message=message))

    def settle(self, result: ToolResultMessage) -> None:
        """Put ``result`` in place of its call's placeholder after the latest reply (a
        resume answering a held call), and tell the caller."""
        messages = self.context.messages
        messages[self._answer_index(result.tool_call_id)] = result
        self.new_messages.append(result)
        self.sendable = context_messages(messages)
        self.emit(MessageStart(message=result))
        self.emit(MessageEnd(message=result))

    def held_call(self, tool_call_id: str) -> PendingCall:
        """The pending call a placeholder after the latest reply holds (a resume's)."""
        answer = self.context.messages[self._answer_index(tool_call_id)]
        held = pending_call_of(answer) if isinstance(answer, ToolResultMessage) else None
        if held is None:
            raise RuntimeError(f"tool call {tool_call_id!r} is not held")
        return held

    def _answer_index(self, tool_call_id: str) -> int:
        """Where the result answering ``tool_call_id`` after the latest reply is."""
        messages = self.context.messages
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if isinstance(message, AssistantMessage):
                break
            if isinstance(message, ToolResultMessage) and message.tool_call_id == tool_call_id:
                return index
        raise RuntimeError(f"tool call {tool_call_id!r} has no held result to replace")

    def replace_history(self, messages: list[AgentMessage]) -> None:
        """Put a compacted history in place of the current one (the same list object)."""
        self.context.messages[:] = messages
        self.sendable = context_messages(self.context.messages)

    def append_marker(self, text: str) -> None:
        """Add a message the loop writes on the user's side (a stop marker, a note)."""
        self.append(UserMessage.from_text(text))

    def remember_prompts(self, messages: list[AgentMessage]) -> None:
        """Keep the texts of messages the user gave this run (prompts, steering, follow-ups)."""
        for message in messages:
            if isinstance(message, UserMessage) and message.text:
                self.run_prompts.append(message.text)

    def open_turn(self) -> None:
        """Start the next turn (its ``TurnStart``); its ``before_model`` chain runs in it."""
        self.turn += 1
        self.turn_open = True
        self.turn_reply = None
        self.emit(TurnStart(turn=self.turn))

    def end_turn(
        self, message: AssistantMessage | None, results: list[ToolResultMessage] | None = None
    ) -> None:
        """Close the open turn with its reply (``None``: it ended before the model was
        asked) and the results of the tools it ran."""
        self.turn_open = False
        self.emit(TurnEnd(turn=self.turn, message=message, tool_results=results or []))

    # --- queues ----------------------------------------------------------------------------

    def take_steering(self) -> list[AgentMessage]:
        """Messages the caller queued while the run went on (they skip calls not begun)."""
        getter = self.config.get_steering_messages
        taken = list(getter()) if getter is not None else []
        self.remember_prompts(taken)
        return taken

    def take_follow_ups(self) -> list[AgentMessage]:
        """Messages the caller queued for when the run would otherwise stop."""
        getter = self.config.get_follow_up_messages
        taken = list(getter()) if getter is not None else []
        self.remember_prompts(taken)
        return taken
