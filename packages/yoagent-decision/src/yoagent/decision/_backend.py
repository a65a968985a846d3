"""The DecisionBackend protocol every backend implements, and the base of the HTTP ones."""

from __future__ import annotations

import copy
from typing import Any, Protocol, Self, runtime_checkable
from urllib.parse import urlsplit

import httpx

from yoagent.core import RetryConfig
from yoagent.core.support import display_url

from ._answers import Evaluation
from ._errors import DecisionError
from ._http import (
    FixedKey,
    KeySource,
    describe_key,
    name_key_variable,
    post_json,
    resolve_key,
    with_retries,
)
from ._questions import Capabilities, Request


@runtime_checkable
class DecisionBackend(Protocol):
    """What a decision model runs on: evaluates a :class:`Request` into an
    :class:`Evaluation`.

    The model validates each request against :meth:`capabilities` before calling
    :meth:`evaluate`, and validates every answer afterwards, so a backend repeats neither
    check. Report failures as :class:`DecisionError`; report usage whenever known (a priced
    model cannot price an evaluation without it). Set ``cost_usd`` only if the backend
    knows its own price: a priced model replaces it.
    """

    def capabilities(self) -> Capabilities:
        """What this backend can answer."""
        ...

    async def evaluate(self, request: Request) -> Evaluation:
        """Answer ``request``."""
        ...


def host_of(url: str) -> str:
    """The lower-cased host of ``url`` (``""`` when it has none)."""
    try:
        return (urlsplit(url.strip()).hostname or "").lower()
    except ValueError:
        return ""


class HttpBackend:
    """What the HTTP backends share: a key source, a retry policy, capabilities and an
    optional client. Each ``with_*`` returns a changed copy."""

    __slots__ = ("_capabilities", "_client", "_key", "_retry")

    _key_given_in_code = "key given to with_api_key"

    def __init__(self, key: KeySource, capabilities: Capabilities) -> None:
        self._key: KeySource = key
        self._retry = RetryConfig()
        self._capabilities = capabilities
        self._client: httpx.AsyncClient | None = None

    def _copy(self, **changes: Any) -> Self:
        clone = copy.copy(self)
        for name, value in changes.items():
            object.__setattr__(clone, name, value)
        return clone

    def with_api_key(self, key: str) -> Self:
        """Send this key (instead of reading an environment variable)."""
        return self._copy(_key=FixedKey(key))

    def with_retry(self, retry: RetryConfig) -> Self:
        """Retry rate limits, overload and transport failures with ``retry`` (default: 3
        retries, 1 s, ×2, capped at 30 s; a server's retry-after wins, capped the same)."""
        return self._copy(_retry=retry)

    def with_capabilities(self, capabilities: Capabilities) -> Self:
        """Report these capabilities instead of the defaults."""
        return self._copy(_capabilities=capabilities)

    def with_client(self, client: httpx.AsyncClient) -> Self:
        """Send through this client (its pool, proxies and TLS settings); by default each
        call opens its own."""
        return self._copy(_client=client)

    def capabilities(self) -> Capabilities:
        """What this backend can answer."""
        return self._capabilities

    @property
    def retry(self) -> RetryConfig:
        """The retry policy."""
        return self._retry

    def endpoint_url(self) -> str:
        """The URL requests go to, resolved now."""
        raise NotImplementedError

    async def _post(self, body: bytes, read: _Reader) -> Evaluation:
        """POST ``body`` with retries and read the JSON answer with ``read``.

        The key is read first (a missing one fails before anything is sent); a refused key
        (401/403) names the variable it came from.
        """
        key, variable = resolve_key(self._key)
        url = self.endpoint_url()

        async def send() -> Evaluation:
            try:
                data = await post_json(url, body, key=key, client=self._client)
            except DecisionError as error:
                raise name_key_variable(error, variable, self._key_given_in_code) from None
            return read(data)

        return await with_retries(self._retry, send)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(endpoint={display_url(self.endpoint_url())!r}, "
            f"key={describe_key(self._key)}, retry={self._retry!r})"
        )


class _Reader(Protocol):
    def __call__(self, data: Any, /) -> Evaluation: ...
