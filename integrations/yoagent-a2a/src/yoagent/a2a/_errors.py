"""The errors yoagent-a2a raises: one base, :class:`A2AError`, under ``YoagentError``; and
the one place the A2A SDK's and httpx's errors are translated."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

import httpx

from a2a.client import A2AClientError
from yoagent.core import ToolError, YoagentError


class A2AError(YoagentError):
    """Something yoagent-a2a refused or could not do; the text says what and why."""


class RemoteAgentError(A2AError, ToolError):
    """A remote A2A agent could not be reached, failed, or cancelled its task. Raised inside
    a tool call, it becomes the call's error result (the run goes on)."""


@contextmanager
def remote_errors(name: str, url: str) -> Generator[None]:
    """Translate the client's failures talking to the agent ``name`` at ``url`` into
    :class:`RemoteAgentError` (a connection refused or cut, a timeout, a protocol error)."""
    try:
        yield
    except httpx.TimeoutException:
        raise RemoteAgentError(f"the remote agent {name} ({url}) did not answer in time") from None
    except (httpx.HTTPError, A2AClientError) as error:
        detail = str(error) or type(error).__name__
        raise RemoteAgentError(f"the remote agent {name} ({url}) failed: {detail}") from None
