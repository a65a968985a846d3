"""yoagent.a2a: agents served to other agents, and called from them, over A2A.

:func:`a2a_app` serves a yoagent agent as an A2A agent (its card, ``message/send``,
``message/stream``, task get and cancel; each context's history in a
:class:`HistoryStore`, the tasks in a bounded :class:`MemoryTaskStore`), on the A2A SDK.
:class:`A2AAgentTool` makes a remote A2A agent a tool of a yoagent agent, its streamed
answer the call's progress.
"""

from yoagent.core.loop import AgentFactory

from ._errors import A2AError, RemoteAgentError
from ._server import ANSWER_ARTIFACT, YoagentExecutor, a2a_app, agent_card
from ._store import HistoryStore, MemoryHistoryStore, MemoryTaskStore
from ._tool import A2AAgentTool

__all__ = [
    "ANSWER_ARTIFACT",
    "A2AAgentTool",
    "A2AError",
    "AgentFactory",
    "HistoryStore",
    "MemoryHistoryStore",
    "MemoryTaskStore",
    "RemoteAgentError",
    "YoagentExecutor",
    "a2a_app",
    "agent_card",
]
