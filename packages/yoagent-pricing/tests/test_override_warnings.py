"""What install_override says an override gets wrong without failing, word for word, for
every entry of it (not only up to the first new model), and what it leaves unsaid; and
``YOAGENT_PRICES`` read strictly."""

from __future__ import annotations

import logging

import pytest
from pricing_helpers import table

from yoagent.pricing import (
    PRICES_ENV_VAR,
    PriceDataError,
    install_fetched,
    install_override,
    load_env_override,
)

LOOKED_UP_UNDER = (
    "anthropic, cloudflare, deepseek, google, groq, meta, minimax, mistral, openai, "
    "openai-decisions, qwen, typesafe, xai, zai"
)


def test_inert_entries_are_listed_with_the_keys_lookups_use() -> None:
    report = install_override(
        table({"gateway": {"a": {"input": 1, "output": 2}, "b": {"input": 1, "output": 2}}})
    )
    assert report.inert == ("gateway/a", "gateway/b")
    assert report.warnings == (
        f"gateway/a, gateway/b: no lookup reads these (prices are looked up under "
        f"{LOOKED_UP_UNDER}); only with_prices() applies them",
    )


def test_ignored_fields_are_listed() -> None:
    odd = table({"openai": {"m": {"input": 1, "output": 2, "cache_reed": 1, "notes": "x"}}})
    assert install_override(odd).warnings == (
        "ignored field(s) the price format does not define: "
        "providers.openai.m.cache_reed, providers.openai.m.notes"
        " (a typo, or a field from a newer release?)",
    )


def test_an_entry_after_a_new_model_is_still_checked() -> None:
    """A model the lower layers lack comes first (sorted); the one after it, which
    replaces an entry, still has its dropped tiers reported."""
    tiered = {
        "input": 1,
        "output": 2,
        "tiers": [{"above_prompt_tokens": 1000, "input": 2, "output": 4}],
    }
    install_fetched(table({"openai": {"b-model": tiered}}))
    report = install_override(
        table(
            {"openai": {"a-new": {"input": 1, "output": 2}, "b-model": {"input": 1, "output": 2}}}
        )
    )
    assert report.warnings == (
        "openai/b-model drops the 1 context tier(s) of the entry it replaces: "
        "every request now bills at the base rates",
    )


def test_cache_rates_kept_or_newly_set_are_not_warned_about() -> None:
    cached = {"input": 1, "output": 2, "cache_read": 0.1, "cache_write": 1.25}
    install_fetched(table({"openai": {"m": cached, "n": {"input": 1, "output": 2}}}))
    report = install_override(
        table({"openai": {"m": {**cached, "input": 2}, "n": {**cached, "output": 3}}})
    )
    assert report.warnings == ()


def test_a_cache_rate_left_unset_is_warned_about(caplog: pytest.LogCaptureFixture) -> None:
    install_fetched(table({"openai": {"m": {"input": 1, "output": 2, "cache_read": 0.1}}}))
    with caplog.at_level(logging.WARNING, logger="yoagent.pricing"):
        report = install_override(table({"openai": {"m": {"input": 3, "output": 2}}}))
    expected = (
        "openai/m leaves cache_read unset, so it bills at the input rate (3); "
        "the entry it replaces set 0.1"
    )
    assert report.warnings == (expected,)
    assert [r.getMessage() for r in caplog.records] == [f"price override: {expected}"]


def test_load_env_override_with_the_variable_unset_is_none(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(PRICES_ENV_VAR, raising=False)
    assert load_env_override() is None


def test_bad_inline_json_is_named_as_the_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(PRICES_ENV_VAR, '{"schema": 1, "providers": 7}')
    with pytest.raises(PriceDataError) as raised:
        load_env_override()
    assert raised.value.origin == f"{PRICES_ENV_VAR} (inline JSON)"
    assert str(raised.value).startswith(f"invalid price data from {PRICES_ENV_VAR} (inline JSON): ")
