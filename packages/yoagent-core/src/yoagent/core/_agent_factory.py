"""Agents built per request: the factory a server is given, and the one way to call it."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import cast

from ._agent import Agent

AgentFactory = Callable[[], Agent | Awaitable[Agent]]
"""Builds a fresh agent (model, system prompt, tools, settings) for one request or task;
a plain function or a coroutine function."""


async def agent_from(factory: AgentFactory) -> Agent:
    """The agent ``factory`` builds (awaited when it returns an awaitable); ``TypeError``
    naming what it built instead of an :class:`~yoagent.core.Agent`."""
    made = factory()
    agent = await made if inspect.isawaitable(made) else made
    if not isinstance(cast(object, agent), Agent):
        raise TypeError(f"the agent factory returned {type(agent).__name__}, not an Agent")
    return agent
