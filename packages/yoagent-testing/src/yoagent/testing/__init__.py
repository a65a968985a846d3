"""yoagent.testing: record model calls to cassettes, replay them offline, fork recorded runs."""

from ._cassette import FORMAT_VERSION, Cassette, RecordedCall, RecordedTool
from ._codec import CassetteError, request_json
from ._fork import fork, fork_point, fork_provider
from ._match import Difference, Match, RequestMismatch, first_difference
from ._record import RecordingProvider
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
    "ToolResultMismatch",
    "UseCassette",
    "first_difference",
    "fork",
    "fork_point",
    "fork_provider",
    "request_json",
]

# Public names read as yoagent.testing.X in reprs and tracebacks, wherever they are defined.
for _name in __all__:
    _value = globals()[_name]
    if isinstance(_value, type):
        _value.__module__ = __name__
del _name, _value
