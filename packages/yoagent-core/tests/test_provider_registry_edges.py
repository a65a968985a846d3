"""The provider registry's edges: the error when no provider serves a protocol (the
package missing, or installed without it) word for word, installed entry points that name
no protocol, protocols listed in order, an entry point loaded once and logged, and the
process-wide registry. (Added from mutation testing: each pins a behaviour a surviving
mutant changed.)"""

from __future__ import annotations

import logging
from importlib.metadata import PackageNotFoundError

import pytest

from yoagent.core import ApiProtocol, MockProvider
from yoagent.core._provider import registry as registry_module
from yoagent.core.provider import ProviderNotFoundError, ProviderRegistry


class _EntryPoint:
    """An installed entry point, counting its loads."""

    def __init__(self, name: str, value: str = "somewhere:Provider") -> None:
        self.name = name
        self.value = value
        self.loads = 0

    def load(self) -> object:
        self.loads += 1
        return MockProvider


def _installed(monkeypatch: pytest.MonkeyPatch, *points: _EntryPoint) -> ProviderRegistry:
    monkeypatch.setattr(registry_module, "entry_points", lambda group: list(points))
    return ProviderRegistry()


@pytest.mark.parametrize("installed", [None, "9.9"])
def test_the_missing_provider_error_says_what_to_install_or_upgrade(
    monkeypatch: pytest.MonkeyPatch, installed: str | None
) -> None:
    asked: list[str] = []

    def version(name: str) -> str:
        asked.append(name)
        if installed is None:
            raise PackageNotFoundError(name)
        return installed

    monkeypatch.setattr(registry_module, "version", version)
    with pytest.raises(ProviderNotFoundError) as raised:
        ProviderRegistry(load_entry_points=False).factory(ApiProtocol.GOOGLE_VERTEX)
    assert asked == ["yoagent-providers"]
    if installed is None:
        assert str(raised.value) == (
            "no provider for 'google_vertex' is installed; install yoagent-providers "
            "(pip install yoagent-providers) or register one with ProviderRegistry.register"
        )
    else:
        assert str(raised.value) == (
            "yoagent-providers 9.9 is installed but does not implement 'google_vertex'; "
            "upgrade it if a newer version does, or register one with ProviderRegistry.register"
        )


def test_protocols_lists_every_known_one_in_order_past_names_that_are_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    every = sorted(ApiProtocol, key=lambda api: api.value)
    points = [_EntryPoint("not-a-protocol"), *(_EntryPoint(api.value) for api in reversed(every))]
    assert _installed(monkeypatch, *points).protocols() == every


def test_an_installed_provider_is_loaded_once_and_logged(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    point = _EntryPoint("openai_completions", "vendor.module:OpenAi")
    registry = _installed(monkeypatch, point)
    with caplog.at_level(logging.DEBUG, logger="yoagent.core"):
        first = registry.factory(ApiProtocol.OPENAI_COMPLETIONS)
        second = registry.factory(ApiProtocol.OPENAI_COMPLETIONS)
    assert first is second is MockProvider
    assert point.loads == 1
    assert [r.getMessage() for r in caplog.records if r.name == "yoagent.core"] == [
        "loaded provider openai_completions from vendor.module:OpenAi"
    ]


def test_the_process_wide_registry_is_made_once() -> None:
    first = registry_module.default_registry()
    assert isinstance(first, ProviderRegistry)
    assert registry_module.default_registry() is first
