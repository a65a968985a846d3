"""Crash tests: real worker processes killed with SIGKILL, on SQLite and on PostgreSQL.

A killed run is recovered by the restarted worker (or, on PostgreSQL, by another one); it
finishes with each tool's side effect counted once, the scripted server counting each
completed request once, and the same messages as a run nobody interrupted.
"""

from __future__ import annotations

from pathlib import Path

from dbos_helpers import held, result, uncrashed, workers
from scripted_server import ModelServer


async def test_worker_killed_after_a_tool_call_is_recovered_without_repeating_it(
    database_url: str, server: ModelServer, tmp_path: Path
) -> None:
    prompt = "effects 2 after-tool"
    with (
        uncrashed(database_url, prompt, tmp_path / "control") as control,
        workers(database_url, server, tmp_path) as group,
    ):
        hold = server.hold(prompt, turn=1, chunks=2)  # the request after the first tool call
        out = tmp_path / "run.json"
        worker = group.spawn("w1", "start", "r1", prompt, str(out))
        await held(hold)
        assert group.effect_lines() == ["r1:call_0"]  # the tool ran and its step was written
        group.kill(worker)

        await group.finish(group.spawn("w1", "wait", "r1", str(out)))
        expected = await control()

    assert group.effect_lines() == ["r1:call_0", "r1:call_1"]  # each once
    assert dict(server.completed) == {(prompt, 0): 1, (prompt, 1): 1, (prompt, 2): 1}
    assert result(out) == expected


async def test_worker_killed_mid_stream_is_recovered_with_the_reply_asked_again(
    database_url: str, server: ModelServer, tmp_path: Path
) -> None:
    prompt = "effects 1 mid-stream"
    with (
        uncrashed(database_url, prompt, tmp_path / "control") as control,
        workers(database_url, server, tmp_path) as group,
    ):
        hold = server.hold(prompt, turn=0, chunks=3)  # the first reply, half streamed
        out = tmp_path / "run.json"
        worker = group.spawn("w1", "start", "r1", prompt, str(out))
        await held(hold)
        group.kill(worker)
        assert group.effect_lines() == []
        assert not server.completed

        await group.finish(group.spawn("w1", "wait", "r1", str(out)))
        expected = await control()

    assert group.effect_lines() == ["r1:call_0"]
    assert dict(server.completed) == {(prompt, 0): 1, (prompt, 1): 1}
    assert result(out) == expected
