"""ProviderRegistry finds providers through the yoagent.providers entry points, lazily."""

from __future__ import annotations

from importlib.metadata import EntryPoint, PackageNotFoundError

import pytest

from yoagent.core import ApiProtocol, MockProvider, ModelConfig
from yoagent.core._provider import registry as registry_module
from yoagent.core.provider import ProviderNotFoundError, ProviderRegistry


def test_entry_points_are_read_once_on_first_use(monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[str] = []

    def fake_entry_points(*, group: str) -> list[EntryPoint]:
        reads.append(group)
        return [
            # copy.copy stands in for a provider class: called with the config, returns an object.
            EntryPoint(name="google_vertex", value="copy:copy", group=group),
            EntryPoint(name="not_a_protocol", value="yoagent.core:MockProvider", group=group),
        ]

    monkeypatch.setattr(registry_module, "entry_points", fake_entry_points)
    registry = ProviderRegistry()
    assert reads == []
    config = ModelConfig(api=ApiProtocol.GOOGLE_VERTEX, provider="vertex", id="g")
    created = registry.create(config)
    assert created == config and created is not config
    assert registry.protocols() == [ApiProtocol.GOOGLE_VERTEX]
    registry.create(config)
    assert reads == ["yoagent.providers"]


def test_a_registered_factory_wins_over_entry_points(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        registry_module,
        "entry_points",
        lambda *, group: [
            EntryPoint(name="openai_completions", value="nowhere:Nothing", group=group)
        ],
    )
    registry = ProviderRegistry()
    mine = MockProvider()
    registry.register(ApiProtocol.OPENAI_COMPLETIONS, lambda config: mine)
    assert (
        registry.create(ModelConfig(api=ApiProtocol.OPENAI_COMPLETIONS, provider="openai", id="x"))
        is mine
    )


def test_a_missing_protocol_says_to_install_the_package_when_it_is_absent(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def absent(name: str) -> str:
        raise PackageNotFoundError(name)

    monkeypatch.setattr("yoagent.core._provider.registry.version", absent)
    registry = ProviderRegistry(load_entry_points=False)
    with pytest.raises(
        ProviderNotFoundError, match="no provider for 'bedrock_converse_stream' is installed"
    ):
        registry.factory(ApiProtocol.BEDROCK_CONVERSE_STREAM)


def test_a_missing_protocol_says_it_is_not_implemented_when_the_package_is_there(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("yoagent.core._provider.registry.version", lambda name: "0.1.0")
    registry = ProviderRegistry(load_entry_points=False)
    with pytest.raises(ProviderNotFoundError) as caught:
        registry.factory(ApiProtocol.BEDROCK_CONVERSE_STREAM)
    message = str(caught.value)
    assert "yoagent-providers 0.1.0 is installed but does not implement" in message
    assert "pip install" not in message
