"""Cost arithmetic (context tiers, cache rates, exact decimals) and the price-resolver slot."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import pytest

from yoagent.core import (
    ApiProtocol,
    ContextTier,
    CostConfig,
    ModelConfig,
    SessionStats,
    Usage,
    cost_of,
    resolve_cost,
)
from yoagent.core._provider import pricing as slot
from yoagent.core.provider import add_usd, price_resolver, set_price_resolver

# gpt-5.5's shape: a band above 272K prompt tokens prices the whole request.
TIERED = CostConfig(
    input=5.0,
    output=30.0,
    cache_read=0.5,
    tiers=(ContextTier(above_prompt_tokens=272_000, input=10.0, output=45.0, cache_read=1.0),),
)


@pytest.fixture(autouse=True)
def empty_slot() -> Iterator[None]:
    previous = set_price_resolver(None)
    yield
    set_price_resolver(previous)


def test_each_kind_of_token_bills_at_its_own_rate_exactly() -> None:
    cost = CostConfig(input=3.0, output=15.0, cache_read=0.3, cache_write=3.75)
    usage = Usage(input=1_234, output=567, cache_read=10_000, cache_write=2_000)
    # 1234*3 + 567*15 + 10000*0.3 + 2000*3.75 = 3702 + 8505 + 3000 + 7500 = 22707 micro-dollars
    assert cost_of(usage, cost) == 0.022707


def test_a_zero_cache_rate_bills_at_the_input_rate() -> None:
    no_cache_rates = CostConfig(input=2.0, output=10.0)
    assert cost_of(Usage(cache_read=1_000, cache_write=500), no_cache_rates) == 0.003
    free = CostConfig()
    assert cost_of(Usage(input=10, cache_read=10, cache_write=10), free) == 0.0


def test_the_tier_applies_strictly_above_its_threshold_to_the_whole_request() -> None:
    at_threshold = Usage(input=2_000, cache_read=270_000, output=1_000)  # 272,000: base
    assert cost_of(at_threshold, TIERED) == (2_000 * 5 + 270_000 * 0.5 + 1_000 * 30) / 1e6
    above = Usage(input=2_001, cache_read=270_000, output=1_000)  # 272,001: the tier
    assert cost_of(above, TIERED) == 0.335010  # 20010 + 270000 + 45000


def test_cache_writes_count_toward_the_threshold_and_output_does_not() -> None:
    tier = CostConfig(
        input=1.0, output=1.0, tiers=(ContextTier(above_prompt_tokens=100, input=2.0, output=2.0),)
    )
    assert cost_of(Usage(input=50, cache_write=51), tier) == 101 * 2.0 / 1e6
    assert cost_of(Usage(input=50, output=1_000), tier) == 1_050 * 1.0 / 1e6


def test_a_tier_zero_cache_rate_falls_back_to_the_tier_input_rate() -> None:
    tiered = CostConfig(
        input=1.0,
        output=1.0,
        cache_read=0.1,
        tiers=(ContextTier(above_prompt_tokens=10, input=4.0, output=4.0),),
    )
    assert cost_of(Usage(cache_read=100), tiered) == 100 * 4.0 / 1e6  # never the base 0.1


def test_the_highest_tier_cleared_wins() -> None:
    tiers = (
        ContextTier(above_prompt_tokens=100, input=2.0, output=0.0),
        ContextTier(above_prompt_tokens=1_000, input=3.0, output=0.0),
    )
    cost = CostConfig(input=1.0, tiers=tiers)
    assert [cost.band(n).input for n in (100, 101, 1_000, 1_001)] == [1.0, 2.0, 2.0, 3.0]


def test_unpriced_usage_is_none_and_nothing_used_is_free() -> None:
    assert cost_of(Usage(input=1), None) is None
    assert cost_of(Usage(), None) == 0.0


def test_costs_add_up_in_decimal() -> None:
    assert add_usd(0.1, 0.2) == 0.3
    stats = SessionStats()
    for _ in range(10):
        stats.record_turn(Usage(input=100_000), 0.1)
    assert stats.cost_usd == 1.0


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda: CostConfig(input=-1.0), "CostConfig.input is -1.0"),
        (lambda: CostConfig(output=math.nan), "CostConfig.output is nan"),
        (lambda: CostConfig(cache_write=math.inf), "CostConfig.cache_write is inf"),
        (
            lambda: ContextTier(above_prompt_tokens=0, input=1.0, output=1.0),
            "above_prompt_tokens is 0",
        ),
        (
            lambda: ContextTier(above_prompt_tokens=10, input=1.0, output=-2.0),
            "ContextTier.output is -2.0",
        ),
        (
            lambda: CostConfig(
                tiers=(
                    ContextTier(above_prompt_tokens=20, input=1.0, output=1.0),
                    ContextTier(above_prompt_tokens=20, input=2.0, output=2.0),
                )
            ),
            r"ascend strictly by above_prompt_tokens, got \[20, 20\]",
        ),
    ],
)
def test_invalid_rates_are_refused_when_the_config_is_built(make: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        make()  # type: ignore[operator]


def test_tiers_given_as_a_list_are_kept_as_a_tuple() -> None:
    tiers = [ContextTier(above_prompt_tokens=5, input=1.0, output=1.0)]
    cost = CostConfig(tiers=tiers)  # type: ignore[arg-type]
    tiers.clear()
    assert len(cost.tiers) == 1


def config() -> ModelConfig:
    return ModelConfig(api=ApiProtocol.ANTHROPIC_MESSAGES, provider="acme", id="m1")


def test_a_config_cost_wins_over_the_resolver() -> None:
    asked: list[tuple[str, str]] = []

    def resolver(provider: str, id: str) -> CostConfig:
        asked.append((provider, id))
        return CostConfig(input=9.0)

    set_price_resolver(resolver)
    assert resolve_cost(config()) == CostConfig(input=9.0)
    assert asked == [("acme", "m1")]
    own = config()
    own.cost = CostConfig(input=1.0)
    assert resolve_cost(own) == CostConfig(input=1.0)
    assert len(asked) == 1


@dataclass
class FakeEntryPoint:
    name: str
    value: str
    action: object

    def load(self) -> object:
        return self.action


def test_autoload_entry_points_run_once_on_the_first_lookup(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    calls: list[str] = []

    def install() -> None:
        calls.append("install")
        assert price_resolver() is None  # a lookup from inside the entry point does not recurse
        set_price_resolver(lambda provider, id: CostConfig(input=1.0))

    def broken() -> None:
        calls.append("broken")
        raise RuntimeError("a broken plugin")

    points = [FakeEntryPoint("broken", "x:broken", broken), FakeEntryPoint("env", "x:env", install)]
    monkeypatch.setattr(
        slot, "entry_points", lambda group: points if group == slot.AUTOLOAD_GROUP else []
    )
    monkeypatch.setattr(slot, "_resolver", None)
    monkeypatch.setattr(slot, "_autoloaded", False)

    assert resolve_cost(config()) == CostConfig(input=1.0)  # the broken one is logged, not raised
    assert resolve_cost(config()) == CostConfig(input=1.0)
    assert calls == ["broken", "install"]


def test_an_explicit_resolver_settles_the_slot_and_autoload_never_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ran: list[str] = []
    points = [FakeEntryPoint("env", "x:env", lambda: ran.append("env"))]
    monkeypatch.setattr(slot, "entry_points", lambda group: points)
    monkeypatch.setattr(slot, "_autoloaded", False)
    set_price_resolver(None)
    assert resolve_cost(config()) is None
    assert ran == []


def test_unreadable_entry_point_metadata_leaves_the_slot_empty(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def broken(group: str) -> list[FakeEntryPoint]:
        raise OSError("corrupt metadata")

    monkeypatch.setattr(slot, "entry_points", broken)
    monkeypatch.setattr(slot, "_resolver", None)
    monkeypatch.setattr(slot, "_autoloaded", False)
    assert resolve_cost(config()) is None
