"""ProvidersError: the base of the errors this package defines.

A model call that fails raises core's :class:`~yoagent.core.ProviderError` (the loop
classifies and retries it); what else the package refuses (an unknown preset) derives
from :class:`ProvidersError`. Both are :class:`~yoagent.core.YoagentError`.
"""

from __future__ import annotations

from yoagent.core import YoagentError


class ProvidersError(YoagentError):
    """The base of yoagent-providers' own errors (a failed model call is a
    :class:`~yoagent.core.ProviderError` instead)."""
