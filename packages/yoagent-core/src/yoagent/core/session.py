"""Sessions: a conversation saved to a file and loaded again, its entries, and what
loading it may report.

``Session`` and ``SessionError`` are also exported by :mod:`yoagent.core`.
"""

import typing

from ._namespace import Namespace as _Namespace

if typing.TYPE_CHECKING:
    from ._session import LoadWarning, Session, SessionCorruptError, SessionEntry, SessionError

__all__ = [  # noqa: RUF022
    "Session",
    "SessionEntry",
    "LoadWarning",
    "SessionError",
    "SessionCorruptError",
]

# Made on first use: the module defines pydantic models at import.
_names = _Namespace(__name__, globals(), lazy=dict.fromkeys(__all__, "._session"))
__getattr__ = _names.getattr
__dir__ = _names.dir
