"""Approvals that wait durably: a run paused for approval survives its worker's death and
is resumed by decisions sent from another process (this one)."""

from __future__ import annotations

from pathlib import Path

import pytest
from dbos_helpers import result, wait_until_waiting, watching, workers
from scripted_server import ModelServer

from yoagent.core import Allow, Deny, Modify
from yoagent.dbos import Decisions, get_run


@pytest.mark.parametrize(
    ("decision", "effects", "tool_text"),
    [
        (Allow(), ["guarded 1"], "guarded 1"),
        (Deny("not today"), [], "not today"),
        ({"call_0": Modify({"n": 2})}, ["guarded 2"], "guarded 2"),
    ],
    ids=["allow", "deny", "modify"],
)
async def test_a_waiting_run_survives_a_restart_and_takes_the_decision_of_another_process(
    database_url: str,
    server: ModelServer,
    tmp_path: Path,
    decision: Decisions,
    effects: list[str],
    tool_text: str,
) -> None:
    out = tmp_path / "run.json"
    with workers(database_url, server, tmp_path) as group, watching(database_url):
        worker = group.spawn("w1", "start", "r1", "approve one", str(out))
        await wait_until_waiting("r1")
        group.kill(worker)
        restarted = group.spawn("w1", "wait", "r1", str(out))
        run = await get_run("r1")
        pending = await run.pending()
        assert pending is not None and pending.call_ids == ["call_0"]

        await run.resume(decision)
        await group.finish(restarted)

    assert group.effect_lines() == effects
    messages = result(out)["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool_result", "assistant"]
    tool_result = messages[2]
    assert tool_text in tool_result["content"][0]["text"]
    assert tool_result["is_error"] is isinstance(decision, Deny)
    assert messages[-1]["content"][0]["text"] == "done"
    assert dict(server.completed) == {("approve one", 0): 1, ("approve one", 1): 1}
