"""YOAGENT_PRICES: a file's path or its JSON, read once, as the user layer."""

from __future__ import annotations

import json
import logging
import os
from importlib.metadata import entry_points
from pathlib import Path

import pytest
from pricing_helpers import config

from yoagent.core import CostConfig, resolve_cost
from yoagent.core._provider import pricing as core_slot
from yoagent.pricing import (
    PRICES_ENV_VAR,
    PriceDataError,
    PriceFileError,
    PriceTable,
    enable_bundled,
    env_override_status,
    install_override,
    load_env_override,
    pricing_enabled,
)
from yoagent.pricing._autoload import apply_env_override

OVERRIDE = {
    "schema": 1,
    "providers": {"anthropic": {"claude-sonnet-5": {"input": 1.8, "output": 9.0}}},
}
SONNET = config("anthropic", "claude-sonnet-5")


def test_a_path_is_read_as_the_user_layer(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(OVERRIDE))
    monkeypatch.setenv(PRICES_ENV_VAR, str(path))
    status = env_override_status()
    assert (status.state, status.source, status.entries, status.error) == (
        "loaded",
        str(path),
        1,
        None,
    )
    assert resolve_cost(SONNET) == CostConfig(input=1.8, output=9.0)
    assert pricing_enabled()


def test_inline_json_is_read_as_the_user_layer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PRICES_ENV_VAR, "  " + json.dumps(OVERRIDE))
    assert env_override_status().source == "inline JSON"
    assert resolve_cost(SONNET) == CostConfig(input=1.8, output=9.0)


def test_the_override_beats_the_bundled_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PRICES_ENV_VAR, json.dumps(OVERRIDE))
    enable_bundled()
    assert resolve_cost(SONNET) == CostConfig(input=1.8, output=9.0)
    assert resolve_cost(config("anthropic", "claude-haiku-4-5")) is not None


def test_the_variable_is_read_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "prices.json"
    path.write_text(json.dumps(OVERRIDE))
    monkeypatch.setenv(PRICES_ENV_VAR, str(path))
    enable_bundled()
    path.write_text(json.dumps({"schema": 1, "providers": {}}))
    monkeypatch.setenv(PRICES_ENV_VAR, "/elsewhere.json")
    assert env_override_status().source == str(path)
    assert resolve_cost(SONNET) == CostConfig(input=1.8, output=9.0)


def test_an_unset_or_blank_variable_installs_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PRICES_ENV_VAR, "   ")
    assert env_override_status().state == "unset"
    assert not pricing_enabled()
    assert load_env_override() is None


@pytest.mark.parametrize(
    ("value", "error"),
    [
        (
            '{"schema": 1, "providers": {"anthropic": {"x": {"input": -1, "output": 1}}}}',
            PriceDataError,
        ),
        ("{broken", PriceDataError),
        ("/no/such/prices.json", PriceFileError),
    ],
)
def test_a_bad_value_is_logged_and_ignored_and_load_raises(
    value: str,
    error: type[Exception],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv(PRICES_ENV_VAR, value)
    with caplog.at_level(logging.WARNING, logger="yoagent.pricing"):
        status = env_override_status()
    assert status.state == "rejected" and isinstance(status.error, error)
    assert f"ignoring {PRICES_ENV_VAR}" in caplog.text and "no user layer installed" in caplog.text
    assert not pricing_enabled()
    enable_bundled()  # a bad variable never takes the rest down
    assert resolve_cost(SONNET) is not None
    with pytest.raises(error):
        load_env_override()


def test_its_warnings_are_kept_and_install_override_replaces_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    odd = {
        "schema": 1,
        "providers": {"anthropic": {"claude-sonnet-5": {"input": 1, "output": 2}}},
    }
    monkeypatch.setenv(PRICES_ENV_VAR, json.dumps(odd))
    status = env_override_status()
    assert any("leaves cache_read unset" in w for w in status.warnings)
    report = install_override(PriceTable.from_json(json.dumps(OVERRIDE)))
    assert (
        report.warnings[-1]
        == "replaces the override loaded from YOAGENT_PRICES (inline JSON), of 1 entries"
    )


def test_the_package_registers_core_autoload() -> None:
    found = [e for e in entry_points(group=core_slot.AUTOLOAD_GROUP) if e.name == "env"]
    assert [e.value for e in found] == ["yoagent.pricing._autoload:apply_env_override"]
    assert found[0].load() is apply_env_override


def test_the_variable_prices_the_first_lookup_without_an_import(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(PRICES_ENV_VAR, json.dumps(OVERRIDE))
    monkeypatch.setattr(core_slot, "_resolver", None)
    monkeypatch.setattr(core_slot, "_autoloaded", False)
    assert resolve_cost(SONNET) == CostConfig(input=1.8, output=9.0)


def test_without_the_variable_autoload_leaves_the_slot_empty(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(core_slot, "_resolver", None)
    monkeypatch.setattr(core_slot, "_autoloaded", False)
    assert resolve_cost(SONNET) is None
    assert core_slot.price_resolver() is None


def test_fresh_prices_hides_the_variable_and_puts_it_back(monkeypatch: pytest.MonkeyPatch) -> None:
    from yoagent.pricing.testing import fresh_prices

    monkeypatch.setenv(PRICES_ENV_VAR, json.dumps(OVERRIDE))
    enable_bundled()
    with fresh_prices():
        assert PRICES_ENV_VAR not in os.environ
        assert not pricing_enabled() and env_override_status().state == "unset"
    assert os.environ[PRICES_ENV_VAR] == json.dumps(OVERRIDE)
    assert env_override_status().state == "loaded"  # read afresh after the reset


def test_a_hostile_value_is_rejected_not_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PRICES_ENV_VAR, "{" + '"a":' * 100_000 + "1" + "}" * 100_000)
    assert env_override_status().state == "rejected"
    enable_bundled()
    assert resolve_cost(SONNET) is not None
