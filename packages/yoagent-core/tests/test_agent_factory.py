"""Building an agent from a factory, the one way every server does it (``agent_from``),
and the bound of the in-memory stores (``BoundedMap``)."""

from __future__ import annotations

from typing import Any, cast

import pytest

from yoagent.core import Agent, MockProvider, ModelConfig
from yoagent.core.loop import AgentFactory, agent_from
from yoagent.core.support import BoundedMap


def _agent() -> Agent:
    return Agent.from_provider(MockProvider.text("hi"), ModelConfig.mock())


async def test_a_plain_or_async_factory_gives_its_agent() -> None:
    made = _agent()

    async def build() -> Agent:
        return made

    assert await agent_from(lambda: made) is made
    assert await agent_from(build) is made


async def test_a_factory_that_builds_something_else_is_a_type_error_naming_it() -> None:
    async def wrong() -> Any:
        return "an agent"

    with pytest.raises(TypeError, match="the agent factory returned str, not an Agent"):
        await agent_from(cast(AgentFactory, wrong))
    with pytest.raises(TypeError, match="returned NoneType"):
        await agent_from(cast(AgentFactory, lambda: None))


def test_a_bounded_map_forgets_the_entry_set_longest_ago() -> None:
    kept: BoundedMap[str, int] = BoundedMap(2)
    kept["a"], kept["b"] = 1, 2
    assert kept["a"] == 1  # reading does not make an entry newer
    kept["c"] = 3
    assert list(kept) == ["b", "c"] and "a" not in kept and len(kept) == 2
    kept["b"] = 20  # setting does
    kept["d"] = 4
    assert dict(kept) == {"b": 20, "d": 4}
    assert kept.pop("b") == 20 and kept.get("b") is None and len(kept) == 1


def test_a_bounded_map_holds_at_least_one_entry() -> None:
    with pytest.raises(ValueError, match="at least one entry, got max_items=0"):
        BoundedMap[str, int](0)
