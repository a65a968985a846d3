"""Crash tests: real worker processes killed with SIGKILL, on SQLite and on PostgreSQL.

One worker runs two runs: one is killed after a tool call completed (while the next
request is under way), the other in the middle of a streamed reply. The restarted worker
recovers both; they finish with each tool's side effect counted once, the scripted server
counting each completed request once, and the same messages, turns and cost as runs
nobody interrupted. The durable event stream holds each event once.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from dbos_helpers import pairs, result, uncrashed, watching, workers
from scripted_server import ModelServer

from yoagent.dbos import get_run

RUNS = {"after-tool": "effects 2 after-tool", "mid-stream": "effects 1 mid-stream"}


async def test_killed_runs_are_recovered_without_repeating_a_completed_step(
    database_url: str, server: ModelServer, tmp_path: Path
) -> None:
    after_tool = server.hold(RUNS["after-tool"], turn=1, chunks=2)  # the request after a tool
    mid_stream = server.hold(RUNS["mid-stream"], turn=0, chunks=3)  # the first reply, half sent
    with (
        uncrashed(database_url, RUNS, tmp_path / "control") as control,
        workers(database_url, server, tmp_path) as group,
    ):
        worker = group.spawn("w1", "start", str(tmp_path), *pairs(RUNS))
        await group.held(after_tool)
        await group.held(mid_stream)
        assert group.effect_lines() == ["after-tool:call_0"]  # ran, and its step was written
        group.kill(worker)
        assert not server.completed[(RUNS["mid-stream"], 0)]

        await group.finish(group.spawn("w1", "wait", str(tmp_path), *RUNS))
        expected = await control()
        with watching(database_url):
            streams = {
                run_id: [e async for e in (await get_run(run_id)).events()] for run_id in RUNS
            }

    assert sorted(group.effect_lines()) == [
        "after-tool:call_0",
        "after-tool:call_1",
        "mid-stream:call_0",
    ]
    counts = {
        prompt: {turn: n for (p, turn), n in server.completed.items() if p == prompt}
        for prompt in RUNS.values()
    }
    assert counts == {RUNS["after-tool"]: {0: 1, 1: 1, 2: 1}, RUNS["mid-stream"]: {0: 1, 1: 1}}
    for run_id in RUNS:
        assert result(tmp_path / f"{run_id}.json") == expected[run_id]
        assert expected[run_id]["stats"]["cost_usd"] > 0
        types = Counter(item.event.type for item in streams[run_id])
        assert types["agent_start"] == types["agent_end"] == 1
        assert types["tool_execution_end"] == types["tool_execution_start"] >= 1
        assert [item.offset for item in streams[run_id]] == list(range(len(streams[run_id])))
