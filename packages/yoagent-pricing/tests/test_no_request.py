"""No pricing call makes a request unless its name says it fetches.

respx answers every httpx request in these tests and counts them (there must be none);
a socket guard catches any other client; and a fresh interpreter shows httpx is not even
imported until a live fetch.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import respx
from pricing_helpers import FIXTURES, config, table, text_reply

from yoagent.core import Agent, MockProvider, Usage, resolve_cost
from yoagent.pricing import (
    PRICES_ENV_VAR,
    InstallPolicy,
    PriceFetchError,
    PriceTable,
    audit,
    clear_bundled,
    clear_fetched,
    clear_override,
    enable_bundled,
    env_override_status,
    fetch_prices,
    install_fetched,
    install_override,
    load_env_override,
    parse_models_dev,
    pricing_enabled,
    reprice,
    resolved,
    with_prices,
)


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> Iterator[respx.Router]:
    def refuse(self: socket.socket, address: object) -> None:
        raise AssertionError(f"a pricing call opened a connection to {address!r}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    with respx.mock(assert_all_mocked=True, assert_all_called=False) as router:
        yield router


async def test_every_non_live_pricing_call_makes_no_request(
    no_network: respx.Router, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    anything = no_network.route()
    path = tmp_path / "prices.json"
    path.write_text(table({"anthropic": {"claude-opus-5": {"input": 4, "output": 20}}}).to_json())
    monkeypatch.setenv(PRICES_ENV_VAR, str(path))

    assert env_override_status().state == "loaded"
    assert load_env_override() is not None
    bundled = PriceTable.bundled()
    PriceTable.from_path(path)
    PriceTable.from_json(bundled.to_json())
    enable_bundled()
    install_override(table({"openai": {"gpt-5.5": {"input": 1, "output": 2}}}))
    install_fetched(bundled, InstallPolicy.ADD_ONLY)
    install_fetched(table({"meta": {"muse-spark-1.2": {"input": 1, "output": 1}}}))
    sonnet = config("anthropic", "claude-sonnet-5")
    assert resolve_cost(sonnet) is not None and pricing_enabled()
    assert reprice(sonnet).cost is not None
    with_prices(config("openrouter", "x"), resolved())
    upstream = parse_models_dev((FIXTURES / "models_dev_small.json").read_text())
    audit(bundled, upstream.table, upstream.skipped)
    agent = Agent.from_provider(MockProvider([text_reply("hi", Usage(input=10, output=5))]), sonnet)
    await agent.prompt("hello")
    assert agent.last_run_stats.cost_usd is not None
    clear_override()
    clear_fetched()
    clear_bundled()

    assert anything.call_count == 0
    assert no_network.calls.call_count == 0


async def test_the_guard_counts_a_live_fetch(no_network: respx.Router) -> None:
    """Positive control: the same guard sees the one request a live call makes."""
    anything = no_network.route()
    with pytest.raises(PriceFetchError):
        await fetch_prices()  # the catch-all answers 200 with no body: not price data
    assert anything.call_count == 1


def test_httpx_is_not_imported_until_a_live_fetch() -> None:
    script = (
        "import sys, json\n"
        "import yoagent.pricing as p\n"
        "from yoagent.core import resolve_cost, ModelConfig\n"
        "p.enable_bundled()\n"
        "p.install_override(p.PriceTable.bundled())\n"
        "p.reprice(ModelConfig(api='anthropic_messages', provider='anthropic', id='claude-x'))\n"
        "print(json.dumps('httpx' in sys.modules))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={"PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) is False
