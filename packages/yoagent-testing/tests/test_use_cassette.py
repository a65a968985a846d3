"""UseCassette: one cassette under a record mode (what the pytest fixture hands a test)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from replay_helpers import CountingAdd, run_agent, two_turn_script

from yoagent.core import ApiProtocol, MockProvider, ModelConfig
from yoagent.core.provider import ProviderRegistry, StreamProvider
from yoagent.testing import Cassette, CassetteError, RecordMode, UseCassette


class Live:
    """A factory for the "real" provider that counts how often it is asked for one."""

    def __init__(self) -> None:
        self.made = 0

    def __call__(self) -> StreamProvider:
        self.made += 1
        return MockProvider(two_turn_script())


async def _run(use: UseCassette, live: Live) -> CountingAdd:
    tool = CountingAdd()
    await run_agent(use.provider(live), tools=use.tools([tool]))
    return tool


async def test_once_records_a_missing_cassette_then_replays_it(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    live = Live()

    first = UseCassette(path, "once")
    assert first.recording
    assert (await _run(first, live)).runs == 1

    second = UseCassette(path, RecordMode.ONCE)
    assert not second.recording
    assert (await _run(second, live)).runs == 0  # the recorded result served the call
    assert live.made == 1  # the replay never made the live provider
    assert second.mismatches == []


async def test_all_records_again_over_an_existing_cassette(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    live = Live()
    await _run(UseCassette(path, "all"), live)
    await _run(UseCassette(path, "all"), live)
    assert live.made == 2
    assert len(Cassette.load(path).calls) == 2


async def test_new_episodes_records_only_what_the_cassette_lacks(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    live = Live()
    await _run(UseCassette(path, "once"), live)

    use = UseCassette(path, "new_episodes")
    await run_agent(use.provider(live), "what is 2 + 3?", tools=use.tools([CountingAdd()]))
    assert live.made == 1  # all served from the cassette
    await run_agent(use.provider(live), "a new question", tools=use.tools([CountingAdd()]))
    assert live.made == 2

    calls = Cassette.load(path).calls
    assert [c.n for c in calls] == [0, 1, 2, 3]
    assert use.mismatches == []


def test_none_without_a_cassette_says_how_to_record_it(tmp_path: Path) -> None:
    use = UseCassette(tmp_path / "absent.jsonl")
    with pytest.raises(CassetteError, match=r"no cassette at .*absent\.jsonl.*once"):
        use.provider(Live())
    with pytest.raises(CassetteError, match="no cassette"):
        use.tools([CountingAdd()])
    assert not (tmp_path / "absent.jsonl").exists()


def test_recording_needs_the_live_provider(tmp_path: Path) -> None:
    with pytest.raises(CassetteError, match="needs the real provider"):
        UseCassette(tmp_path / "c.jsonl", "all").provider()


def test_an_unknown_mode_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="sometimes"):
        UseCassette(tmp_path / "c.jsonl", "sometimes")


@pytest.fixture
def registered_mock(monkeypatch: pytest.MonkeyPatch) -> ApiProtocol:
    """A registry serving one protocol with MockProvider, in place of the default one."""
    registry = ProviderRegistry(load_entry_points=False)
    registry.register(ApiProtocol.GOOGLE_VERTEX, lambda config: MockProvider(two_turn_script()))
    monkeypatch.setattr("yoagent.testing._use.default_registry", lambda: registry)
    return ApiProtocol.GOOGLE_VERTEX


async def test_a_model_config_makes_the_live_provider_through_the_registry(
    tmp_path: Path, registered_mock: ApiProtocol
) -> None:
    config = replace(ModelConfig.mock(), api=registered_mock)
    use = UseCassette(tmp_path / "c.jsonl", "once")
    agent, _ = await run_agent(use.provider(config), tools=[CountingAdd()], config=config)
    assert agent.messages[-1].text == "It is 5."  # type: ignore[union-attr]
    assert len(Cassette.load(tmp_path / "c.jsonl").calls) == 2
