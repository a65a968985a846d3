"""A recorded tool runs with its call's whole context: the run's id and depth, its spend
ledger and tree extensions, and the events of a run it delegates to (from the mutation
triage: ``RecordingTool`` passed a context of its own that kept only the call's id, name,
cancellation and reports, so a sub-agent tool being recorded started again at depth 0,
spent into a ledger nobody read and sent its events nowhere)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from yoagent.core import (
    AgentEvent,
    SessionStats,
    SubAgentEvent,
    ToolContext,
    ToolResult,
    TurnStart,
)
from yoagent.core.extension import RunSpend
from yoagent.testing import CassetteWriter, RecordingTool


class Delegating:
    """A tool that reads its context and forwards an event of a run it delegated to."""

    name = "delegate"
    description = "Delegate."
    parameters: dict[str, Any] = {"type": "object"}  # noqa: RUF012 - the AgentTool protocol reads it

    def __init__(self) -> None:
        self.seen: dict[str, Any] = {}

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.seen = {
            "run_id": ctx.run_id,
            "depth": ctx.depth,
            "spend": ctx.spend,
            "tree_extensions": ctx.tree_extensions,
            "delegation_depth": ctx.child_delegation().depth,
        }
        ctx.report_event(TurnStart(turn=1))
        return ToolResult.from_text("done")


async def test_a_recorded_tool_runs_with_its_calls_whole_context(tmp_path: Path) -> None:
    spend = RunSpend(SessionStats())
    extension = object()
    events: list[AgentEvent] = []
    ctx = ToolContext(
        tool_call_id="c1",
        tool_name="delegate",
        on_event=events.append,
        run_id="run-7",
        depth=2,
        spend=spend,
        tree_extensions=(extension,),
    )
    tool = Delegating()

    await RecordingTool(tool, CassetteWriter(tmp_path / "run.jsonl")).execute({}, ctx)

    assert tool.seen == {
        "run_id": "run-7",
        "depth": 2,
        "spend": spend,
        "tree_extensions": (extension,),
        "delegation_depth": 3,
    }
    assert tool.seen["spend"] is spend
    assert events == [
        SubAgentEvent(tool_call_id="c1", tool_name="delegate", depth=3, event=TurnStart(turn=1))
    ]
