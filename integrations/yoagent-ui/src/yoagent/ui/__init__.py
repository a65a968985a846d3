"""yoagent.ui: agent runs streamed to web front-ends.

:class:`AgUiEndpoint` speaks AG-UI (CopilotKit and other AG-UI clients) and
:class:`AiSdkEndpoint` the Vercel AI SDK's UI message stream (``useChat``); both are ASGI
apps on Starlette that keep each thread's history in a :class:`ThreadStore`. Front-end
tools and approvals pause the run through yoagent's pause/resume contract.
"""

from yoagent.core.loop import AgentFactory

from ._agui_app import APPROVAL_SCHEMA, AgUiEndpoint
from ._agui_messages import from_agui_messages, to_agui_messages
from ._aisdk_app import UI_MESSAGE_STREAM_HEADERS, AiSdkEndpoint
from ._aisdk_messages import from_ui_messages
from ._errors import BadRunInputError, UiError
from ._http import DEFAULT_MAX_BODY_BYTES
from ._run import FRONTEND_REASON
from ._store import MemoryThreadStore, StoredThread, ThreadStore

__all__ = [
    "APPROVAL_SCHEMA",
    "DEFAULT_MAX_BODY_BYTES",
    "FRONTEND_REASON",
    "UI_MESSAGE_STREAM_HEADERS",
    "AgUiEndpoint",
    "AgentFactory",
    "AiSdkEndpoint",
    "BadRunInputError",
    "MemoryThreadStore",
    "StoredThread",
    "ThreadStore",
    "UiError",
    "from_agui_messages",
    "from_ui_messages",
    "to_agui_messages",
]
