"""GaspError: the base of this package's errors (git's are translated into them in
``_git``)."""

from __future__ import annotations

from yoagent.core import YoagentError


class GaspError(YoagentError):
    """The base of every error yoagent-gasp raises: a log, manifest, lease, recording,
    repository or restore that cannot be used (each keeps its built-in base as well:
    ``ValueError`` for data that does not validate, ``RuntimeError`` for an operation
    refused)."""
