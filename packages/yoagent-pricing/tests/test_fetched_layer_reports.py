"""What installing a fetched table reports and logs: each change whole (a shadowed one
too), the disagreements with the snapshot only while the snapshot is on (five shown, the
rest counted), a fetched layer replaced; and what ``YOAGENT_PRICES`` says when read."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
from pricing_helpers import config, table

from yoagent.core import CostConfig, resolve_cost
from yoagent.pricing import (
    PRICES_ENV_VAR,
    PriceTable,
    enable_bundled,
    env_override_status,
    install_fetched,
    install_override,
)


def messages(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [record.getMessage() for record in caplog.records]


def test_a_shadowed_change_keeps_its_model_and_both_prices() -> None:
    install_override(table({"openai": {"m": {"input": 1, "output": 2}}}))
    install_fetched(table({"openai": {"m": {"input": 3, "output": 4}}}))
    [change] = install_fetched(table({"openai": {"m": {"input": 5, "output": 6}}}))
    assert (change.provider, change.model, change.shadowed) == ("openai", "m", True)
    assert change.before == CostConfig(input=3, output=4)
    assert change.after == CostConfig(input=5, output=6)


def test_with_the_snapshot_off_no_disagreement_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    snapshot_model = next(iter(PriceTable.bundled()))
    provider, model = snapshot_model
    with caplog.at_level(logging.INFO, logger="yoagent.pricing"):
        install_fetched(table({provider: {model: {"input": 9999, "output": 9999}}}))
    assert messages(caplog) == ["installed fetched prices: 1 model(s) changed"]


def disagreeing(count: int) -> PriceTable:
    """A table pricing the snapshot's first ``count`` models differently."""
    fetched: dict[str, dict[str, dict[str, float]]] = {}
    for provider, model in list(PriceTable.bundled())[:count]:
        fetched.setdefault(provider, {})[model] = {"input": 9999, "output": 9999}
    return table(fetched)


@pytest.mark.parametrize(("count", "tail"), [(5, ""), (6, "; and 1 more"), (8, "; and 3 more")])
def test_five_disagreements_are_shown_and_the_rest_counted(
    count: int, tail: str, caplog: pytest.LogCaptureFixture
) -> None:
    enable_bundled(genai_prices=False)
    with caplog.at_level(logging.WARNING, logger="yoagent.pricing"):
        changes = install_fetched(disagreeing(count))
    assert len(changes) == count and all(c.before is not None for c in changes)
    shown = "; ".join(str(c) for c in changes[:5])
    assert messages(caplog) == [
        f"the fetched prices disagree with the bundled snapshot on {count} model(s) and win: "
        f"{shown}{tail}"
    ]


def test_replacing_a_fetched_layer_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    install_fetched(table({"openai": {"a": {"input": 1, "output": 2}}}))
    with caplog.at_level(logging.WARNING, logger="yoagent.pricing"):
        install_fetched(table({"openai": {"b": {"input": 1, "output": 2}}}))
    assert messages(caplog) == [
        "install_fetched: replaces a fetched layer of 1 entries; models only it listed revert"
    ]


def test_a_rejected_inline_variable_is_named_and_logged(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(PRICES_ENV_VAR, "{broken")
    with caplog.at_level(logging.WARNING, logger="yoagent.pricing"):
        status = env_override_status()
    assert (status.state, status.source) == ("rejected", "inline JSON")
    [logged] = messages(caplog)
    assert logged.startswith(f"ignoring {PRICES_ENV_VAR} (inline JSON): invalid price data from ")
    assert logged.endswith("; no user layer installed")


def test_a_loaded_variable_says_where_from_and_how_many_entries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "prices.json"
    path.write_text(
        json.dumps({"schema": 1, "providers": {"gateway": {"m": {"input": 1, "output": 2}}}})
    )
    monkeypatch.setenv(PRICES_ENV_VAR, str(path))
    with caplog.at_level(logging.INFO, logger="yoagent.pricing"):
        status = env_override_status()
    assert (status.state, status.source, status.entries) == ("loaded", str(path), 1)
    logged = messages(caplog)
    assert logged[0] == f"loaded {PRICES_ENV_VAR} ({path}): 1 entries"
    assert logged[1].startswith(f"{PRICES_ENV_VAR}: gateway/m: no lookup reads these")


def test_each_unpriced_model_is_warned_about_once(caplog: pytest.LogCaptureFixture) -> None:
    install_fetched(table({"anthropic": {"listed": {"input": 1, "output": 2}}}))
    with caplog.at_level(logging.WARNING, logger="yoagent.pricing"):
        for model in ("first-missing", "second-missing", "first-missing"):
            assert resolve_cost(config("anthropic", model)) is None
    assert messages(caplog) == [
        f"no price for anthropic/{model}: pricing is on but only for the models a layer lists "
        "(the bundled snapshot is off); its usage is unpriced"
        for model in ("first-missing", "second-missing")
    ]
