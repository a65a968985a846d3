"""The loop beneath :class:`~yoagent.core.Agent`: the functions that run one prompt, a
continuation or a resume over a history you hold, their configuration, the delegation
settings of sub-agents, what consumes the events (``EventSink``, and
``RetrySafeEvents`` / ``retry_safe_events`` for a sink that can only append), and the
factory a server builds an agent with per request (``AgentFactory``, ``agent_from``).

Most programs use ``Agent``; this namespace is for those who drive the loop themselves,
or consume its events.
"""

import typing

from ._agent import AgentFactory, PromptInput, agent_from
from ._loop.driver import agent_loop, agent_loop_continue, agent_loop_resume
from ._loop.retry_safe import RetrySafeEvents, retry_safe_events
from ._loop.settings import AgentContext, AgentLoopConfig, RunOptions
from ._loop.state import EventSink
from ._loop.tool_call import SUB_AGENT_STATS_KEY
from ._namespace import Namespace as _Namespace
from ._tools.contract import Delegation
from ._tools.function_tool import FunctionTool
from ._types.messages import last_assistant

if typing.TYPE_CHECKING:
    from ._sub_agent import DEFAULT_MAX_DEPTH, SUB_AGENT_LIMITS, SUB_AGENT_SETTINGS

__all__ = [  # noqa: RUF022
    # --- running the loop
    "agent_loop",
    "agent_loop_continue",
    "agent_loop_resume",
    "AgentLoopConfig",
    "AgentContext",
    "RunOptions",
    "PromptInput",
    "EventSink",
    "RetrySafeEvents",
    "retry_safe_events",
    "last_assistant",
    # --- agents built per request (servers)
    "AgentFactory",
    "agent_from",
    # --- tools and delegation
    "FunctionTool",
    "Delegation",
    "DEFAULT_MAX_DEPTH",
    "SUB_AGENT_LIMITS",
    "SUB_AGENT_SETTINGS",
    "SUB_AGENT_STATS_KEY",
]

_names = _Namespace(
    __name__,
    globals(),
    lazy=dict.fromkeys(
        ("DEFAULT_MAX_DEPTH", "SUB_AGENT_LIMITS", "SUB_AGENT_SETTINGS"), "._sub_agent"
    ),
)
__getattr__ = _names.getattr
__dir__ = _names.dir
