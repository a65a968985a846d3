"""A run's input check: the ``on_input`` chain (input filters first: see ``_hooks.knobs``)."""

from __future__ import annotations

from yoagent.core._hooks.basic import Reject
from yoagent.core._types.content import TextContent
from yoagent.core._types.messages import AgentMessage, UserMessage

from .state import RunState


async def judge_input(state: RunState, prompts: list[AgentMessage]) -> list[AgentMessage] | str:
    """The prompts the run may take (each warning appended to the last user message), or
    the reason they were refused."""
    extensions = state.extensions
    if not extensions.takes("on_input"):
        return prompts
    text = "\n".join(m.text for m in prompts if isinstance(m, UserMessage))
    verdict = await extensions.on_input(text)
    if isinstance(verdict, Reject):
        return verdict.reason
    if not verdict:
        return prompts
    for index in range(len(prompts) - 1, -1, -1):
        message = prompts[index]
        if isinstance(message, UserMessage):
            notes = [TextContent(text=warning) for warning in verdict]
            prompts[index] = UserMessage(
                content=[*message.content, *notes], timestamp=message.timestamp
            )
            break
    return prompts
