"""What the user asked: the request a tool call or a turn serves, for approval policies.

A gate that judges "did the user ask for this?" needs the user's words, not the loop's own
markers or a summary compaction wrote. :func:`user_request_parts` finds them in a history.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum

from yoagent.core._types.markers import is_compaction_message, is_loop_injected
from yoagent.core._types.messages import AgentMessage, AssistantMessage, UserMessage

SHORT_REPLY_CHARS = 40
"""A user message shorter than this, answering a question, is read with that question."""

_FENCED_CODE = re.compile(r"```.*?(```|\Z)", re.DOTALL)
_INLINE_CODE = re.compile(r"`[^`\n]*`")


class UserRequestSource(StrEnum):
    """Where :class:`UserRequestParts` found the request."""

    CONVERSATION = "conversation"
    """The latest real user message of the history."""
    RUN_PROMPTS = "run_prompts"
    """The run's own prompts (the history no longer shows a real user message)."""


@dataclass(slots=True, kw_only=True, frozen=True)
class ReplyContext:
    """A short user reply read with what it answers: the assistant's question and the
    request before it."""

    question: str
    earlier_request: str


@dataclass(slots=True, kw_only=True, frozen=True)
class UserRequestParts:
    """The user's request in parts (read these; :meth:`prose` is for people and may change).

    ``latest`` is the latest real user message's text (or the run's prompts, see
    ``source``); ``reply`` is set when that message is a short answer to a question the
    assistant asked; ``run_prompts`` are the texts the run was given (prompts, steering,
    follow-ups), which compaction cannot remove.
    """

    latest: str
    reply: ReplyContext | None = None
    source: UserRequestSource = UserRequestSource.CONVERSATION
    run_prompts: tuple[str, ...] = ()

    def prose(self) -> str:
        """The request as one text. Its wording is not stable: policies read the parts."""
        if self.reply is None:
            return self.latest
        return (
            f"{self.reply.earlier_request}\n\n"
            f"[The assistant asked: {self.reply.question}]\n"
            f"[The user answered: {self.latest}]"
        )


def _real_user(message: AgentMessage) -> bool:
    """A user message the user wrote (not a marker, summary or note of the loop)."""
    return isinstance(message, UserMessage) and not is_loop_injected(message)


def _asks_a_question(text: str) -> bool:
    """True when ``text`` ends with a question mark outside code."""
    prose = _INLINE_CODE.sub("", _FENCED_CODE.sub("", text)).rstrip()
    return prose.endswith("?")


def user_request_parts(
    messages: Sequence[AgentMessage], run_prompts: Sequence[str] = ()
) -> UserRequestParts | None:
    """The request the end of ``messages`` serves, or ``None`` when nothing says.

    Walks back to the latest real user message, never past a compaction summary or marker
    and skipping the loop's own markers. Its text is the request; when it has none (an
    image only) or there is none, the run's prompts are; else ``None``. A reply shorter
    than :data:`SHORT_REPLY_CHARS` to an assistant message ending in a question comes with
    that question and the request before it.
    """
    prompts = tuple(text for text in run_prompts if text)
    latest_index: int | None = None
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if is_compaction_message(message):
            break
        if _real_user(message):
            latest_index = index
            break
    latest = messages[latest_index] if latest_index is not None else None
    text = latest.text.strip() if isinstance(latest, UserMessage) else ""
    if not text:
        if not prompts:
            return None
        return UserRequestParts(
            latest="\n\n".join(prompts), source=UserRequestSource.RUN_PROMPTS, run_prompts=prompts
        )
    assert latest_index is not None
    reply = None
    if len(text) < SHORT_REPLY_CHARS:
        reply = _reply_context(messages, latest_index)
    return UserRequestParts(latest=text, reply=reply, run_prompts=prompts)


def _reply_context(messages: Sequence[AgentMessage], reply_index: int) -> ReplyContext | None:
    """The question a short reply at ``reply_index`` answers, and the request before it."""
    index = reply_index - 1
    while index >= 0 and not isinstance(messages[index], AssistantMessage):
        if is_compaction_message(messages[index]) or _real_user(messages[index]):
            return None
        index -= 1
    if index < 0:
        return None
    question = messages[index]
    assert isinstance(question, AssistantMessage)
    asked = question.text.strip()
    if not _asks_a_question(asked):
        return None
    for earlier in range(index - 1, -1, -1):
        message = messages[earlier]
        if is_compaction_message(message):
            return None
        if isinstance(message, UserMessage) and _real_user(message) and message.text.strip():
            return ReplyContext(question=asked, earlier_request=message.text.strip())
    return None
