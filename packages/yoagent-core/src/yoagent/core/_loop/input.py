"""A run's input check: the input filters, then the extensions' ``on_input``."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

from yoagent.core._cancel import CancelToken, unless_cancelled
from yoagent.core._hooks.basic import Pass, Reject, Warn, resolve
from yoagent.core._logging import logger
from yoagent.core._types.content import TextContent
from yoagent.core._types.messages import AgentMessage, UserMessage

from .state import RunState

A = TypeVar("A")
R = TypeVar("R")


async def unless_cancelled_or(
    cancel: CancelToken, hook: Callable[[A], R | Awaitable[R]], argument: A, fallback: R
) -> R:
    """A sync or async hook's answer, or ``fallback`` when the run is cancelled meanwhile
    (a cancel is not a verdict: the run then ends at its next check)."""

    async def ask() -> R:
        return await resolve(hook(argument))

    answer = await unless_cancelled(cancel, ask)
    return fallback if answer is None else answer


async def judge_input(state: RunState, prompts: list[AgentMessage]) -> list[AgentMessage] | str:
    """The prompts the run may take (warnings appended to the last user message), or the
    reason they were refused. A filter that raises refuses: it could not vouch for them."""
    filters = state.settings.input_filters
    if not filters and not state.extensions:
        return prompts
    text = "\n".join(m.text for m in prompts if isinstance(m, UserMessage))
    warnings: list[str] = []
    for check in filters:
        try:
            verdict = await unless_cancelled_or(state.cancel, check, text, Pass())
        except Exception as error:
            logger.exception("input filter failed")
            verdict = Reject(f"input filter failed: {type(error).__name__}: {error}")
        if isinstance(verdict, Reject):
            return verdict.reason
        if isinstance(verdict, Warn):
            warnings.append(verdict.message)
    if state.extensions:
        verdict = await state.extensions.on_input(text)
        if isinstance(verdict, Reject):
            return verdict.reason
        if isinstance(verdict, Warn):
            warnings.append(verdict.message)
    if not warnings:
        return prompts
    for index in range(len(prompts) - 1, -1, -1):
        message = prompts[index]
        if isinstance(message, UserMessage):
            notes = [TextContent(text=w) for w in warnings]
            prompts[index] = UserMessage(
                content=[*message.content, *notes], timestamp=message.timestamp
            )
            break
    return prompts
