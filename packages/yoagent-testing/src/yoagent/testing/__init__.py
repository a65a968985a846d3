"""yoagent.testing: record model calls to cassettes, replay them offline, fork recorded runs."""

from ._cassette import Cassette
from ._codec import CassetteError, request_json
from ._errors import TestingError
from ._fork import fork, fork_point, fork_provider
from ._lines import FORMAT_VERSION
from ._match import Difference, Match, RequestMismatch, first_difference
from ._ports import free_port
from ._record import RecordingProvider
from ._records import RecordedCall, RecordedTool
from ._replay import ReplayProvider
from ._secrets import REDACTED
from ._tools import RecordingTool, ReplayingTool, ToolResultMismatch
from ._use import RecordMode, UseCassette
from ._writer import CassetteWriter

__all__ = [
    "FORMAT_VERSION",
    "REDACTED",
    "Cassette",
    "CassetteError",
    "CassetteWriter",
    "Difference",
    "Match",
    "RecordMode",
    "RecordedCall",
    "RecordedTool",
    "RecordingProvider",
    "RecordingTool",
    "ReplayProvider",
    "ReplayingTool",
    "RequestMismatch",
    "TestingError",
    "ToolResultMismatch",
    "UseCassette",
    "first_difference",
    "fork",
    "fork_point",
    "fork_provider",
    "free_port",
    "request_json",
]


def _name_public_classes_here() -> None:
    """Public classes read as ``yoagent.testing.X`` in reprs and tracebacks, wherever the
    private module that defines them is."""
    for name in __all__:
        value = globals()[name]
        if isinstance(value, type):
            value.__module__ = __name__


_name_public_classes_here()
