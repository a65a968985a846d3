"""ToolsError: the base of the errors this package defines."""

from __future__ import annotations

from yoagent.core import YoagentError


class ToolsError(YoagentError):
    """The base of yoagent-tools' own errors.

    A tool's failure is also a :class:`~yoagent.core.ToolError` (the model reads it as the
    call's result, and the run goes on), so a sandbox refusal is both.
    """
