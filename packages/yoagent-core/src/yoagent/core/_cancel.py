"""A cancellation token: one run's "stop now", observable by polling or awaiting."""

from __future__ import annotations

import weakref
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

T = TypeVar("T")


class CancelToken:
    """Set once, never reset. Cancel scopes opened with :meth:`scope` are cancelled with it.

    ``cancel`` must be called from the event loop's thread (use
    ``anyio.from_thread.run_sync`` elsewhere).
    """

    __slots__ = ("__weakref__", "_children", "_event", "_scopes")

    def __init__(self) -> None:
        self._event = anyio.Event()
        self._scopes: set[anyio.CancelScope] = set()
        self._children: weakref.WeakSet[CancelToken] = weakref.WeakSet()

    @property
    def cancelled(self) -> bool:
        """True once :meth:`cancel` was called (here or on a parent)."""
        return self._event.is_set()

    def cancel(self) -> None:
        """Cancel the token, every scope opened with it, and every child token."""
        if self._event.is_set():
            return
        self._event.set()
        for scope in list(self._scopes):
            scope.cancel()
        for child in list(self._children):
            child.cancel()

    async def wait(self) -> None:
        """Return once the token is cancelled."""
        await self._event.wait()

    def child(self) -> CancelToken:
        """A token cancelled whenever this one is, and cancellable on its own."""
        token = CancelToken()
        self._children.add(token)
        if self.cancelled:
            token.cancel()
        return token

    def scope(self) -> _TokenScope:
        """A cancel scope that this token cancels (at once, if it already is cancelled)."""
        return _TokenScope(self)


class _TokenScope:
    """``with token.scope() as scope:`` — an anyio cancel scope registered with a token."""

    __slots__ = ("_scope", "_token")

    def __init__(self, token: CancelToken) -> None:
        self._token = token
        self._scope = anyio.CancelScope()

    def __enter__(self) -> anyio.CancelScope:
        scope = self._scope.__enter__()
        self._token._scopes.add(scope)  # pyright: ignore[reportPrivateUsage]
        if self._token.cancelled:
            scope.cancel()
        return scope

    def __exit__(self, *exc_info: Any) -> bool:
        self._token._scopes.discard(self._scope)  # pyright: ignore[reportPrivateUsage]
        return bool(self._scope.__exit__(*exc_info))


async def unless_cancelled(cancel: CancelToken, work: Callable[[], Awaitable[T]]) -> T | None:
    """``await work()``, or ``None`` when ``cancel`` fires first (the work is cancelled)."""
    with cancel.scope():
        return await work()
    return None
