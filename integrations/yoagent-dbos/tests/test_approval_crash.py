"""Approvals that wait durably: runs paused for approval survive their worker's death and
are resumed by decisions sent from another process (this one): allow, deny and modify."""

from __future__ import annotations

from pathlib import Path

from dbos_helpers import pairs, result, wait_until_waiting, watching, workers
from scripted_server import ModelServer

from yoagent.core import Allow, Deny, Modify
from yoagent.dbos import Decisions, get_run

DECISIONS: dict[str, Decisions] = {
    "allowed": Allow(),
    "denied": Deny("not today"),
    "modified": {"call_0": Modify({"n": 2})},
}


async def test_waiting_runs_survive_a_restart_and_take_decisions_from_another_process(
    database_url: str, server: ModelServer, tmp_path: Path
) -> None:
    runs = {run_id: f"approve {run_id}" for run_id in DECISIONS}
    with workers(database_url, server, tmp_path) as group, watching(database_url):
        worker = group.spawn("w1", "start", str(tmp_path), *pairs(runs))
        for run_id in runs:
            await wait_until_waiting(run_id)
        group.kill(worker)
        restarted = group.spawn("w1", "wait", str(tmp_path), *runs)
        for run_id, decision in DECISIONS.items():
            run = await get_run(run_id)
            pending = await run.pending()
            assert pending is not None
            assert pending.call_ids == ["call_0"]
            await run.resume(decision)
        await group.finish(restarted)

    assert sorted(group.effect_lines()) == ["allowed:call_0 1", "modified:call_0 2"]
    expected = {"allowed": "guarded 1", "denied": "not today", "modified": "guarded 2"}
    for run_id, text in expected.items():
        messages = result(tmp_path / f"{run_id}.json")["messages"]
        roles = [m["role"] for m in messages]
        assert roles == ["user", "assistant", "tool_result", "assistant"]
        assert text in messages[2]["content"][0]["text"]
        assert messages[2]["is_error"] is (run_id == "denied")
        assert messages[-1]["content"][0]["text"] == "done"
    assert all(n == 1 for n in server.completed.values())
    assert len(server.completed) == 6  # each run's two replies, each once
