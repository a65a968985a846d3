"""Shared state: the key-value store agents and their tools share, its backends, its
errors, and the sinks that write a run's outputs into it.

``SharedState`` and ``SharedStateTool`` are also exported by :mod:`yoagent.core`.
"""

import typing

from ._namespace import Namespace as _Namespace
from ._shared_state.store import (
    FileBackend,
    InvalidKeyError,
    MemoryBackend,
    SharedState,
    SharedStateBackend,
    SharedStateError,
    SharedStateFullError,
    SharedStateSink,
    ToolOutputSink,
)

if typing.TYPE_CHECKING:
    from ._shared_state.tool import SharedStateTool

__all__ = [  # noqa: RUF022
    "SharedState",
    "SharedStateTool",
    "SharedStateBackend",
    "MemoryBackend",
    "FileBackend",
    "SharedStateSink",
    "ToolOutputSink",
    "SharedStateError",
    "SharedStateFullError",
    "InvalidKeyError",
]

_names = _Namespace(__name__, globals(), lazy={"SharedStateTool": "._shared_state.tool"})
__getattr__ = _names.getattr
__dir__ = _names.dir
