"""Costs in the CLI: the status line's and ``/cost``'s figures, the pricing modes at
start-up (the live one against a price file served on loopback), and why a model has no
price. Every test starts from nothing priced (``fresh_prices`` in conftest)."""

from __future__ import annotations

import io
import json
import os
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from yoagent.cli.app import Options
from yoagent.cli.commands import Commands, Conversation
from yoagent.cli.prices import PricingMode, enable_prices, why_unpriced
from yoagent.cli.render import PlainRenderer
from yoagent.cli.session_store import SessionStore
from yoagent.cli.status import Status, cost_lines, cost_text, cost_usd
from yoagent.core import (
    Agent,
    ApiProtocol,
    MockProvider,
    ModelConfig,
    SessionStats,
    Usage,
    resolve_cost,
)
from yoagent.core.extension import CompactionSpend, SubAgentSpend
from yoagent.pricing.testing import reset_prices

GPT = ModelConfig(api=ApiProtocol.OPENAI_COMPLETIONS, provider="openai", id="gpt-5.5")
PRICE_FILE = {"schema": 1, "providers": {"openai": {"gpt-5.5": {"input": 1.0, "output": 2.0}}}}


def spent(
    cost: float | None, *, sub: float | None = 0.0, summaries: float | None = 0.0
) -> SessionStats:
    """A conversation's figures: own calls, one sub-agent run and one summary request."""
    return SessionStats(
        usage=Usage(input=1_000, output=100),
        cost_usd=cost,
        turns=2,
        sub_agents=SubAgentSpend(usage=Usage(input=10), cost_usd=sub, runs=1),
        compaction=CompactionSpend(usage=Usage(input=20), cost_usd=summaries, requests=1),
    )


def test_the_cost_shown_is_the_total_with_sub_agents_and_summaries() -> None:
    stats = spent(0.008, sub=0.001, summaries=0.0005)
    assert cost_usd(stats) == 0.0095
    assert cost_text(stats) == "$0.0095"
    assert Status(stats=stats).line().endswith(" · $0.0095")


def test_any_unpriced_part_makes_the_cost_unknown_never_a_partial_sum() -> None:
    for stats in (spent(None), spent(0.008, sub=None), spent(0.008, summaries=None)):
        assert cost_usd(stats) is None
        assert cost_text(stats) == "cost unknown"
        assert Status(stats=stats).line().endswith(" · cost unknown")
        assert not Status(stats=stats, show_unknown=False).line().endswith("unknown")
    assert cost_text(SessionStats()) == ""  # nothing spent: nothing to say
    assert cost_usd(SessionStats()) is None


def test_the_status_line_shows_the_turns_cost_then_the_conversations() -> None:
    turn = SessionStats(usage=Usage(input=100, output=20), cost_usd=0.0011, turns=1)
    conversation = SessionStats(usage=Usage(input=200, output=40), cost_usd=0.0022, turns=2)
    assert Status(stats=turn, total=turn).line().endswith(" · $0.0011")
    assert Status(stats=turn, total=conversation).line().endswith(" · $0.0011 (total $0.0022)")
    earlier_unpriced = SessionStats(usage=Usage(input=200, output=40), turns=2)
    line = Status(stats=turn, total=earlier_unpriced).line()
    assert line.endswith(" · $0.0011 (total cost unknown)")


def test_cost_lines_break_the_conversation_down() -> None:
    assert cost_lines(spent(0.008, sub=0.001, summaries=0.0005)) == [
        "  own calls     $0.0080  2 model calls",
        "  sub-agents    $0.0010  1 run",
        "  compaction    $0.0005  1 request",
        "  total         $0.0095",
    ]
    assert cost_lines(spent(0.008, summaries=None))[2:] == [
        "  compaction    unknown  1 request",
        "  total         unknown",
    ]


def test_cost_lines_show_the_tool_gates_decisions_when_there_were_any() -> None:
    stats = spent(0.008)
    stats.decision.record(Usage(input=120), 0.0002)
    stats.decision.record(Usage(input=120), 0.0002)
    assert cost_lines(stats)[3:] == [
        "  decisions     $0.0004  2 requests",
        "  total         $0.0084",
    ]
    stats.decision.record(Usage(), None)  # no usage reported, price unknown
    assert cost_lines(stats)[3:] == [
        "  decisions     unknown  3 requests",
        "  total         unknown",  # never a sum shown whole with an unknown part
    ]
    assert cost_usd(stats) is None and cost_text(stats) == "cost unknown"


async def test_pricing_modes_bundled_and_off() -> None:
    assert resolve_cost(GPT) is None
    assert await enable_prices(PricingMode.OFF) == []
    assert resolve_cost(GPT) is None
    assert await enable_prices(PricingMode.BUNDLED) == []
    cost = resolve_cost(GPT)
    assert cost is not None and (cost.input, cost.output) == (5.0, 30.0)


class _PriceServer:
    def __init__(self) -> None:
        self.requests = 0
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                owner.requests += 1
                body = json.dumps(PRICE_FILE).encode()
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/prices.json"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def price_server() -> Iterator[_PriceServer]:
    running = _PriceServer()
    yield running
    running.stop()


async def test_live_prices_are_fetched_then_read_from_the_cache_without_a_request(
    price_server: _PriceServer, tmp_path: Path
) -> None:
    cache = tmp_path / "prices.json"
    warnings = await enable_prices(PricingMode.LIVE, cache_file=cache, prices_url=price_server.url)
    assert warnings == [  # said when fetched: a fetched table that reprices the snapshot's
        "prices: the fetched prices disagree with the bundled snapshot on 1 model(s) and win: "
        "openai/gpt-5.5: input 5 -> 1, output 30 -> 2, cache_read 0.5 -> 1, cache_write 5 -> 1, "
        "tiers [>272000: 10/45/1/10] -> []"
    ]
    cost = resolve_cost(GPT)
    assert cost is not None and cost.input == 1.0  # the fetched table wins over the snapshot
    assert price_server.requests == 1 and cache.is_file()

    reset_prices()  # a new process, as it were: the cache is read, and nothing said again
    assert (
        await enable_prices(PricingMode.LIVE, cache_file=cache, prices_url=price_server.url) == []
    )
    assert price_server.requests == 1  # a cache younger than a day is used, no request
    cost = resolve_cost(GPT)
    assert cost is not None and cost.input == 1.0


async def test_a_failed_live_fetch_uses_an_expired_cache_then_the_snapshot_and_says_why(
    price_server: _PriceServer, tmp_path: Path
) -> None:
    cache = tmp_path / "prices.json"
    url = price_server.url
    await enable_prices(PricingMode.LIVE, cache_file=cache, prices_url=url)
    price_server.stop()  # the source is gone from now on
    two_days_ago = time.time() - 2 * 86_400
    os.utime(cache, (two_days_ago, two_days_ago))

    reset_prices()
    warnings = await enable_prices(PricingMode.LIVE, cache_file=cache, prices_url=url)
    assert len(warnings) == 1, warnings  # said once, not again by yoagent-pricing's log
    assert warnings[0].startswith(
        f"prices: using an expired cached copy of {url}, 2 days old, because the fetch failed: "
    )
    cost = resolve_cost(GPT)
    assert cost is not None and cost.input == 1.0

    ten_days_ago = time.time() - 10 * 86_400
    os.utime(cache, (ten_days_ago, ten_days_ago))
    reset_prices()
    warnings = await enable_prices(PricingMode.LIVE, cache_file=cache, prices_url=url)
    assert len(warnings) == 1, warnings
    assert warnings[0].startswith("prices: using the bundled snapshot, because the fetch failed: ")
    cost = resolve_cost(GPT)
    assert cost is not None and cost.input == 5.0


async def test_a_rejected_yoagent_prices_is_a_warning_in_every_mode(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("YOAGENT_PRICES", '{"schema": 1, "providers": []')
    for mode in (PricingMode.BUNDLED, PricingMode.OFF):
        reset_prices()
        warnings = await enable_prices(mode)
        assert len(warnings) == 1
        assert warnings[0].startswith("YOAGENT_PRICES (inline JSON) was ignored: ")


async def test_why_a_model_is_unpriced_says_what_to_do() -> None:
    gateway = ModelConfig(
        api=ApiProtocol.OPENAI_COMPLETIONS, provider="openai-compatible", id="llama3.2"
    )
    assert why_unpriced(GPT, PricingMode.OFF).startswith("pricing is off")
    assert why_unpriced(GPT, PricingMode.BUNDLED).startswith("no prices are in effect")
    await enable_prices(PricingMode.BUNDLED)
    assert why_unpriced(gateway, PricingMode.BUNDLED).startswith(
        "openai-compatible models are never priced from the price tables"
    )
    unknown = ModelConfig(api=ApiProtocol.OPENAI_COMPLETIONS, provider="openai", id="gpt-0")
    assert why_unpriced(unknown, PricingMode.BUNDLED).startswith(
        "the price tables have no entry for openai/gpt-0; add one with YOAGENT_PRICES"
    )
    assert "part of this conversation ran at no known price" in why_unpriced(
        GPT, PricingMode.BUNDLED
    )


async def test_cost_command_shows_each_part_and_explains_an_unknown_total(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    out = io.StringIO()
    agent = Agent.from_provider(MockProvider.text("hi"), GPT)
    store = SessionStore(tmp_path / "sessions")
    conversation = Conversation(
        agent=agent,
        store=store,
        session=store.create(cwd=tmp_path, model=GPT.id),
        options=Options(cwd=tmp_path),
        renderer=PlainRenderer(out),
    )
    await enable_prices(PricingMode.BUNDLED)
    agent.stats = spent(0.008, summaries=None)
    await Commands(conversation).dispatch("/cost")
    assert out.getvalue() == (
        "tokens in 1,030 · out 100 (this conversation)\n"
        "  own calls     $0.0080  2 model calls\n"
        "  sub-agents    $0.0000  1 run\n"
        "  compaction    unknown  1 request\n"
        "  total         unknown\n"
        "(cost unknown: openai/gpt-5.5 is priced now, but part of this conversation ran at "
        "no known price (another model, a sub-agent or a summary))\n"
    )

    out.truncate(0)
    out.seek(0)
    monkeypatch.setenv("YOAGENT_PRICES", "/no/such/prices.json")
    reset_prices()
    await enable_prices(PricingMode.BUNDLED)
    agent.stats = spent(0.008)
    await Commands(conversation).dispatch("/cost")
    shown = out.getvalue()
    assert "  total         $0.0080\n" in shown
    assert "error: YOAGENT_PRICES (/no/such/prices.json) was ignored: " in shown
