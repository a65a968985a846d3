"""What installing yoagent-pricing costs a process that never prices from it: core's
autoload runs at the first model call, and without ``YOAGENT_PRICES`` it loads nothing
but the entry point's own two small modules."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import yoagent.pricing

FIRST_MODEL_CALL = """
import asyncio, json, sys
from dataclasses import replace
from yoagent.core import Agent, MockProvider, ModelConfig, resolve_cost
agent = Agent.from_provider(MockProvider.text("hi"), ModelConfig.mock())
asyncio.run(agent.prompt("go"))
priced = resolve_cost(replace(ModelConfig.mock(), provider="anthropic", id="x"))
print(json.dumps({"modules": sorted(m for m in sys.modules if m.startswith("yoagent.pricing")
                                    or m == "genai_prices"), "priced": priced is not None}))
"""


def _first_model_call(**env: str) -> dict[str, object]:
    clean = {k: v for k, v in os.environ.items() if k != "YOAGENT_PRICES"}
    done = subprocess.run(
        [sys.executable, "-c", FIRST_MODEL_CALL],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(done.stdout.splitlines()[-1])


def test_a_process_that_never_prices_loads_only_the_autoload_module() -> None:
    seen = _first_model_call()
    modules = ["yoagent.pricing", "yoagent.pricing._autoload", "yoagent.pricing._env_var"]
    assert seen == {"modules": modules, "priced": False}


def test_the_variable_still_prices_the_first_lookup() -> None:
    prices = {"schema": 1, "providers": {"anthropic": {"x": {"input": 1.0, "output": 2.0}}}}
    seen = _first_model_call(YOAGENT_PRICES=json.dumps(prices))
    assert seen["priced"] is True
    assert "yoagent.pricing._layers" in seen["modules"]  # type: ignore[operator]


def test_every_public_name_loads_on_first_read_and_unknown_ones_are_refused() -> None:
    for name in yoagent.pricing.__all__:
        assert getattr(yoagent.pricing, name) is not None
    assert set(yoagent.pricing.__all__) <= set(dir(yoagent.pricing))
    with pytest.raises(AttributeError, match="has no attribute 'PriceTabel'"):
        _ = yoagent.pricing.PriceTabel  # type: ignore[attr-defined]
    from yoagent.pricing import PriceTable
    from yoagent.pricing._table import PriceTable as defined

    assert PriceTable is defined
