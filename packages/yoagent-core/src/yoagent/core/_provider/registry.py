"""ProviderRegistry: which provider speaks each protocol, found through entry points."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from yoagent.core._logging import logger
from yoagent.core._types.config import ApiProtocol, ModelConfig
from yoagent.core._types.errors import YoagentError

from .metadata import entry_points, version
from .protocol import StreamProvider

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

ENTRY_POINT_GROUP = "yoagent.providers"
"""Packages register provider classes here, named by :class:`ApiProtocol` value."""

ProviderFactory = Callable[[ModelConfig], StreamProvider]

PROVIDERS_DISTRIBUTION = "yoagent-providers"


def _not_found(api: ApiProtocol) -> str:
    """Why no provider serves ``api``: the package is missing, or it lacks this protocol."""
    from importlib.metadata import PackageNotFoundError

    register = "or register one with ProviderRegistry.register"
    try:
        installed = version(PROVIDERS_DISTRIBUTION)
    except PackageNotFoundError:
        return (
            f"no provider for {api.value!r} is installed; install yoagent-providers "
            f"(pip install yoagent-providers) {register}"
        )
    return (
        f"yoagent-providers {installed} is installed but does not implement {api.value!r}; "
        f"upgrade it if a newer version does, {register}"
    )


class ProviderNotFoundError(YoagentError, LookupError):
    """No provider is registered or installed for a protocol."""


class ProviderRegistry:
    """Maps :class:`ApiProtocol` to a provider factory.

    Factories registered with :meth:`register` win; otherwise the ``yoagent.providers``
    entry-point group is read, once, on first use. A factory is called with the
    :class:`ModelConfig` and returns a new provider instance.
    """

    def __init__(self, *, load_entry_points: bool = True) -> None:
        self._factories: dict[ApiProtocol, ProviderFactory] = {}
        self._entry_points: dict[str, EntryPoint] | None = None if load_entry_points else {}

    def register(self, api: ApiProtocol, factory: ProviderFactory) -> None:
        """Use ``factory`` for ``api`` (replacing any earlier one)."""
        self._factories[api] = factory

    def protocols(self) -> list[ApiProtocol]:
        """Every protocol this registry can serve."""
        known = set(self._factories)
        for name in self._installed():
            try:
                known.add(ApiProtocol(name))
            except ValueError:
                continue
        return sorted(known, key=lambda api: api.value)

    def _installed(self) -> dict[str, EntryPoint]:
        if self._entry_points is None:
            self._entry_points = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
        return self._entry_points

    def factory(self, api: ApiProtocol) -> ProviderFactory:
        """The factory for ``api``, loading its entry point if needed."""
        found = self._factories.get(api)
        if found is not None:
            return found
        entry = self._installed().get(api.value)
        if entry is None:
            raise ProviderNotFoundError(_not_found(api))
        loaded: ProviderFactory = entry.load()
        logger.debug("loaded provider %s from %s", api.value, entry.value)
        self._factories[api] = loaded
        return loaded

    def create(self, config: ModelConfig) -> StreamProvider:
        """A new provider for ``config.api``."""
        return self.factory(config.api)(config)


_default: ProviderRegistry | None = None


def default_registry() -> ProviderRegistry:
    """The process-wide registry ``Agent.from_config`` uses unless given another."""
    global _default
    if _default is None:
        _default = ProviderRegistry()
    return _default
