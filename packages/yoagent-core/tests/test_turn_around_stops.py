"""A turn surrounds its ``before_model`` chain: a stop there (a budget reached) ends a turn
that was opened for it, with ``TurnEnd.message`` ``None`` — the model was never asked."""

from __future__ import annotations

from core_helpers import Recorder, call, text_reply, tool_reply

from yoagent.core import (
    Agent,
    AgentEvent,
    Budget,
    CostConfig,
    MockProvider,
    ModelConfig,
    RunEnd,
    StopCause,
    TurnEnd,
    TurnStart,
    Usage,
    UserMessage,
    event_adapter,
    tool,
)
from yoagent.core.extension import (
    ModelVerdict,
    Proceed,
    RunContext,
    RunHooks,
    StopRun,
    TurnContext,
)


@tool
async def noop() -> str:
    """Does nothing."""
    return "done"


def shape(events: list[AgentEvent]) -> list[str]:
    """The events' types, a message event shown with its role."""
    out: list[str] = []
    for event in events:
        if event.type in ("message_start", "message_end"):
            out.append(f"{event.type}:{event.message.role}")  # type: ignore[union-attr]
        else:
            out.append(event.type)
    return out


async def test_a_budget_stop_ends_a_turn_of_its_own() -> None:
    model = ModelConfig.mock()
    model.cost = CostConfig(input=1_000_000.0)  # a dollar a token
    events = Recorder()
    agent = Agent.from_provider(
        MockProvider([tool_reply(call("noop"), usage=Usage(input=2)), text_reply("never")]),
        model,
        tools=[noop],
    ).with_extension(Budget(1.0, model.cost))
    await agent.prompt("go", on_event=events)

    outcome = agent.last_outcome
    assert outcome is not None and outcome.end is RunEnd.STOPPED
    assert outcome.cause is StopCause.BUDGET
    tail = shape(events.events)[-6:]
    assert tail == [
        "turn_end",  # the first turn: the reply and its tool
        "turn_start",  # the second, opened before the budget is asked
        "message_start:user",  # [Agent stopped: budget reached ...]
        "message_end:user",
        "turn_end",
        "agent_end",
    ]
    turns = events.of(TurnStart)
    ends = events.of(TurnEnd)
    assert [t.turn for t in turns] == [e.turn for e in ends] == [1, 2]
    assert ends[1].message is None and ends[1].tool_results == []
    marker = agent.messages[-1]
    assert isinstance(marker, UserMessage) and marker.text.startswith("[Agent stopped: budget")


async def test_a_turn_that_never_asked_the_model_round_trips_as_json() -> None:
    end = TurnEnd(turn=3, message=None)
    again = event_adapter.validate_json(event_adapter.dump_json(end))
    assert isinstance(again, TurnEnd) and again.message is None and again.turn == 3


async def test_before_model_sees_its_turn_already_open() -> None:
    log: list[str] = []

    class Watches(RunHooks):
        async def before_model(self, turn: TurnContext) -> ModelVerdict:
            log.append(f"before_model {turn.turn}")
            return StopRun("enough") if turn.turn == 2 else Proceed()

        def on_event(self, event: AgentEvent) -> None:
            if isinstance(event, TurnStart | TurnEnd):
                log.append(f"{event.type} {event.turn}")

    class Watcher:
        name = "watcher"

        def start_run(self, run: RunContext) -> RunHooks:
            return Watches()

    agent = Agent.from_provider(
        MockProvider([tool_reply(call("noop")), text_reply("never")]),
        ModelConfig.mock(),
        tools=[noop],
    ).with_extension(Watcher())
    await agent.prompt("go")
    assert log == [
        "turn_start 1",
        "before_model 1",
        "turn_end 1",
        "turn_start 2",
        "before_model 2",
        "turn_end 2",
    ]
