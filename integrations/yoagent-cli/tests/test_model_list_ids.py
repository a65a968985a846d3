"""``/model``'s completion list in-process: the current provider's presets, and a
``--base-url`` server's own list asked for once per server (a fake ``served_models``)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from yoagent.cli import model_list
from yoagent.cli.model_list import ModelList, preset_ids
from yoagent.cli.served import ServedModels
from yoagent.core import ModelConfig
from yoagent.providers import models


def preset(provider: str) -> ModelConfig:
    return next(p for p in models.presets() if p.provider == provider)


@pytest.fixture
def asked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The base URLs whose model list was asked for; each server serves ``a``, ``b``, ``local``."""
    urls: list[str] = []

    def served(base_url: str) -> ServedModels:
        urls.append(base_url)
        return ServedModels(base_url + "/models", ("a", "b", "local"))

    monkeypatch.setattr(model_list, "served_models", served)
    return urls


def test_preset_ids_are_that_providers_only() -> None:
    ids = preset_ids("openai")
    assert "gpt-6-luna" in ids
    openai = {p.id for p in models.presets() if p.provider == "openai"}
    assert set(ids) == openai
    assert preset_ids("no-such-provider") == []


def test_a_preset_lists_itself_first_then_its_providers_other_presets(asked: list[str]) -> None:
    current = preset("openai")
    ids = ModelList().ids(current)
    assert ids[0] == current.id
    assert sorted(ids) == sorted(preset_ids("openai"))
    assert asked == []  # not a --base-url server, even with a base URL of its own


def test_a_base_url_servers_list_is_asked_once_and_kept(asked: list[str]) -> None:
    current = replace(preset("openai"), provider="openai-compatible", id="local",
                      base_url="http://127.0.0.1:9/v1")  # fmt: skip
    listing = ModelList()
    assert listing.ids(current) == ["local", "a", "b"]
    assert listing.ids(replace(current, id="b")) == ["b", "a", "local"]
    assert asked == ["http://127.0.0.1:9/v1"]
    other = replace(current, base_url="http://127.0.0.1:10/v1")
    assert listing.ids(other) == ["local", "a", "b"]
    assert asked == ["http://127.0.0.1:9/v1", "http://127.0.0.1:10/v1"]


def test_an_openai_compatible_model_without_a_base_url_asks_nobody(asked: list[str]) -> None:
    current = replace(preset("openai"), provider="openai-compatible", id="local", base_url="")
    assert ModelList().ids(current) == ["local"]
    assert asked == []
