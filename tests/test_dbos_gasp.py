"""A durable run killed and recovered, recorded with GASP from its durable event stream:
the recording and the cost count each model request and tool call once."""

from __future__ import annotations

from pathlib import Path

from dbos_helpers import result, watching, workers
from scripted_server import ModelServer

from yoagent.dbos import get_run
from yoagent.gasp import NewGoal, Recorder

PROMPT = "effects 2 recorded"


async def test_a_recovered_run_recorded_from_its_stream_counts_each_step_once(
    tmp_path: Path,
) -> None:
    database = f"sqlite:///{tmp_path / 'system.sqlite'}"
    with ModelServer() as server, workers(database, server, tmp_path) as group:
        hold = server.hold(PROMPT, turn=1, chunks=2)  # after the first tool call
        worker = group.spawn("w1", "start", str(tmp_path), f"r1={PROMPT}")
        await group.held(hold)
        group.kill(worker)
        await group.finish(group.spawn("w1", "wait", str(tmp_path), "r1"))

        recorder = Recorder.init(tmp_path / "agent", "durable-agent", NewGoal("record"))
        with watching(database):
            async with recorder.recording(PROMPT) as recording:
                async for item in (await get_run("r1")).events():
                    recording(item.event)

    graph = recorder.graph()
    assert len(graph.of_kind("model_call")) == 3
    assert len(graph.of_kind("tool_call")) == 2
    assert recording.outcome == "completed"
    stats = result(tmp_path / "r1.json")["stats"]
    assert stats["turns"] == 3
    assert stats["cost_usd"] == 3 * (11 * 3.0 + 7 * 15.0) / 1e6  # each reply priced once
