"""The process-wide layers: user override > fetched > bundled, whole entries, one lock."""

from __future__ import annotations

import logging
import threading

import pytest
from pricing_helpers import config, table

from yoagent.core import CostConfig, resolve_cost
from yoagent.core.provider import price_resolver, set_price_resolver
from yoagent.pricing import (
    InstallPolicy,
    PriceTable,
    clear_bundled,
    clear_fetched,
    clear_override,
    enable_bundled,
    genai_prices,
    install_fetched,
    install_override,
    is_bundled_enabled,
    pricing_enabled,
    resolved,
)

SONNET = config("anthropic", "claude-sonnet-5")
SONNET_BUNDLED = CostConfig(input=2.0, output=10.0, cache_read=0.2, cache_write=2.5)


def cost_now() -> CostConfig | None:
    return resolve_cost(SONNET)


def test_nothing_is_priced_by_default() -> None:
    assert price_resolver() is None
    assert cost_now() is None
    assert not pricing_enabled() and not is_bundled_enabled()
    assert len(resolved()) == 0


def test_enable_bundled_prices_listed_models_and_is_idempotent() -> None:
    changes = enable_bundled()
    assert cost_now() == SONNET_BUNDLED
    # The snapshot over genai-prices's table (issue 27: the snapshot alone left most models
    # people use unpriced).
    assert len(changes) == len(genai_prices().table.layered(PriceTable.bundled()))
    assert all(c.before is None and c.after is not None for c in changes)
    assert enable_bundled() == []
    assert is_bundled_enabled() and pricing_enabled()
    assert resolve_cost(config("anthropic", "claude-not-listed")) is None


def test_override_beats_fetched_beats_bundled() -> None:
    enable_bundled()
    assert cost_now() == SONNET_BUNDLED
    install_fetched(table({"anthropic": {"claude-sonnet-5": {"input": 2.2, "output": 11}}}))
    assert cost_now() == CostConfig(input=2.2, output=11.0)
    install_override(table({"anthropic": {"claude-sonnet-5": {"input": 1.8, "output": 9}}}))
    assert cost_now() == CostConfig(input=1.8, output=9.0)
    clear_override()
    assert cost_now() == CostConfig(input=2.2, output=11.0)
    clear_fetched()
    assert cost_now() == SONNET_BUNDLED
    clear_bundled()
    assert cost_now() is None and not pricing_enabled()


def test_each_layer_alone_prices_exactly_what_it_lists() -> None:
    install_override(table({"anthropic": {"claude-sonnet-5": {"input": 1, "output": 2}}}))
    assert cost_now() == CostConfig(input=1.0, output=2.0)
    assert resolve_cost(config("anthropic", "claude-haiku-4-5")) is None  # the snapshot is off
    clear_override()
    install_fetched(table({"openai": {"gpt-5.5": {"input": 3, "output": 4}}}))
    assert cost_now() is None
    assert resolve_cost(config("openai", "gpt-5.5")) == CostConfig(input=3.0, output=4.0)


def test_a_layer_replaces_whole_entries_never_field_by_field() -> None:
    enable_bundled()
    report = install_override(table({"anthropic": {"claude-sonnet-5": {"input": 3, "output": 15}}}))
    assert cost_now() == CostConfig(input=3.0, output=15.0)  # cache rates not inherited
    assert report.warnings == (
        "anthropic/claude-sonnet-5 leaves cache_read unset, so it bills at the input rate (3); "
        "the entry it replaces set 0.2",
        "anthropic/claude-sonnet-5 leaves cache_write unset, so it bills at the input rate (3); "
        "the entry it replaces set 2.5",
    )


def test_install_override_reports_changes_reverted_inert_and_warnings(
    caplog: pytest.LogCaptureFixture,
) -> None:
    enable_bundled()
    first = install_override(
        table(
            {
                "anthropic": {
                    "claude-sonnet-5": {
                        "input": 1.8,
                        "output": 9,
                        "cache_read": 0.18,
                        "cache_write": 2.25,
                    }
                },
                "openai": {"gpt-5.5": {"input": 5, "output": 30}},
                "openrouter": {"some/model": {"input": 1, "output": 1}},
            }
        )
    )
    assert [(c.provider, c.model) for c in first.changes] == [
        ("anthropic", "claude-sonnet-5"),
        ("openai", "gpt-5.5"),
    ]
    assert first.changes[0].before == SONNET_BUNDLED
    assert first.reverted == ()
    assert first.inert == ("openrouter/some/model",)
    assert any(w.startswith("openrouter/some/model: no lookup reads these") for w in first.warnings)
    assert any("drops the 1 context tier(s)" in w for w in first.warnings)  # gpt-5.5's band

    with caplog.at_level(logging.WARNING, logger="yoagent.pricing"):
        second = install_override(table({"openai": {"gpt-5.5": {"input": 6, "output": 30}}}))
    assert [(c.provider, c.model) for c in second.reverted] == [
        ("anthropic", "claude-sonnet-5"),
        ("openrouter", "some/model"),
    ]
    assert second.reverted[0].after == SONNET_BUNDLED
    assert second.reverted[1].after is None
    assert second.warnings[-1] == "replaces the override installed, of 3 entries"
    assert "replaces the override installed" in caplog.text
    assert cost_now() == SONNET_BUNDLED


def test_an_override_reports_the_fields_it_ignored() -> None:
    report = install_override(
        PriceTable.from_json(
            '{"schema": 1, "providers": {"anthropic": {"claude-sonnet-5":'
            ' {"input": 1, "output": 2, "cache_reed": 0.1}}}}'
        )
    )
    assert report.warnings == (
        "ignored field(s) the price format does not define: "
        "providers.anthropic.claude-sonnet-5.cache_reed (a typo, or a field from a newer release?)",
    )


def test_install_fetched_marks_changes_the_override_hides_as_shadowed() -> None:
    install_override(table({"anthropic": {"claude-sonnet-5": {"input": 1, "output": 2}}}))
    changes = install_fetched(
        table(
            {
                "anthropic": {"claude-sonnet-5": {"input": 2.2, "output": 11}},
                "openai": {"gpt-5.5": {"input": 5, "output": 30}},
            }
        )
    )
    assert [(c.model, c.shadowed) for c in changes] == [
        ("claude-sonnet-5", True),
        ("gpt-5.5", False),
    ]
    assert str(changes[0]).endswith("[shadowed by the user layer]")
    assert cost_now() == CostConfig(input=1.0, output=2.0)


def test_install_fetched_add_only_never_changes_a_price_in_effect() -> None:
    enable_bundled()
    added = install_fetched(
        table(
            {
                "anthropic": {
                    "claude-sonnet-5": {"input": 99, "output": 99},
                    "claude-new": {"input": 1, "output": 1},
                }
            }
        ),
        InstallPolicy.ADD_ONLY,
    )
    assert [(c.model, c.before) for c in added] == [("claude-new", None)]
    assert cost_now() == SONNET_BUNDLED


def test_fetched_prices_that_disagree_with_the_snapshot_are_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    enable_bundled()
    with caplog.at_level(logging.WARNING, logger="yoagent.pricing"):
        install_fetched(table({"anthropic": {"claude-sonnet-5": {"input": 2.2, "output": 11}}}))
    assert (
        "disagree with the bundled snapshot on 1 model(s) and win: anthropic/claude-sonnet-5:"
        in caplog.text
    )
    assert "input 2 -> 2.2" in caplog.text


def test_decision_keys_are_answered_and_gateways_are_never_looked_up() -> None:
    enable_bundled()
    install_override(
        table({"openrouter": {"anthropic/claude-sonnet-5": {"input": 1, "output": 1}}})
    )
    assert resolve_cost(config("openrouter", "anthropic/claude-sonnet-5")) is None
    resolver = price_resolver()
    assert resolver is not None
    assert resolver("typesafe", "jev-1.13.0") == CostConfig(input=0.042, output=0.0)
    assert resolve_cost(config("openai_responses", "gpt-5.5")) == resolve_cost(
        config("openai", "gpt-5.5")
    )


def test_a_miss_while_only_an_override_prices_warns_once(caplog: pytest.LogCaptureFixture) -> None:
    install_override(table({"anthropic": {"claude-opus-5": {"input": 1, "output": 1}}}))
    with caplog.at_level(logging.WARNING, logger="yoagent.pricing"):
        assert cost_now() is None
        assert cost_now() is None
    assert caplog.text.count("no price for anthropic/claude-sonnet-5") == 1
    caplog.clear()
    enable_bundled()
    with caplog.at_level(logging.WARNING, logger="yoagent.pricing"):
        assert resolve_cost(config("anthropic", "claude-unlisted")) is None
    assert caplog.text == ""  # with the snapshot on, unlisted models are expected


def test_installing_replaces_a_hand_installed_resolver_and_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    set_price_resolver(lambda provider, id: CostConfig(input=7.0))
    with caplog.at_level(logging.WARNING, logger="yoagent.pricing"):
        enable_bundled()
    assert "replaced the price resolver" in caplog.text
    assert cost_now() == SONNET_BUNDLED


def test_concurrent_installs_leave_one_consistent_table() -> None:
    tables = [
        table({"anthropic": {"claude-sonnet-5": {"input": float(i), "output": float(i)}}})
        for i in range(1, 9)
    ]
    barrier = threading.Barrier(len(tables) + 1)
    seen: list[CostConfig | None] = []

    def install(prices: PriceTable) -> None:
        barrier.wait()
        install_override(prices)

    def read() -> None:
        barrier.wait()
        for _ in range(200):
            seen.append(cost_now())

    threads = [threading.Thread(target=install, args=(t,)) for t in tables]
    threads.append(threading.Thread(target=read))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    final = cost_now()
    assert final is not None and final.input == final.output
    assert all(c is None or c.input == c.output for c in seen)
