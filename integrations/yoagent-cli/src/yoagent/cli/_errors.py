"""CliError: the base of the errors the ``yoagent`` command raises and reports itself."""

from __future__ import annotations

from yoagent.core import YoagentError


class CliError(YoagentError):
    """The base of yoagent-cli's own errors: bad flags or settings, a ``--record``
    repository or an MCP server that cannot be used (``main`` reports each and exits 2),
    a file a command cannot read."""
