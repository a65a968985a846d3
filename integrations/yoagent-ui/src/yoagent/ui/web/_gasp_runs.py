"""Runs read from a GASP repository's log (``state/events.jsonl``), by its domain events.

Each ``run.started`` opens a run (a delegated one names its ``parent_run_id``); the
events correlated to it follow. A turn is a ``model.called`` (logged when the reply
ended: the call's span runs from the run's event before it) with the usage and cost of
its ``model.finished``; a tool call spans ``tool.called`` to ``tool.finished`` (matched
in order per tool name: the log names no call id on the finish); ``run.finished`` gives
the outcome and the run's spend (when it holds none, as a recording extension's, the
run's cost is its replies' added up). The fold is lenient: a line that is not an event is
left out and reported with its line number, and the runs the rest holds are shown.
"""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path
from typing import Any

from yoagent.gasp import Event, fold_log

from ._runs import FILE_TOOLS, RunRecord, Tokens, ToolSpan, Turn, sum_costs, total_tokens

LOG = Path("state") / "events.jsonl"


def log_path(path: Path) -> Path:
    """The log of the repository at ``path`` (or ``path`` itself, when it is the log)."""
    return path if path.is_file() else path / LOG


def _fields(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}  # pyright: ignore[reportUnknownVariableType]


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _cost(metadata: dict[str, Any]) -> float | None:
    cost = metadata.get("cost_usd")
    if isinstance(cost, int | float) and not isinstance(cost, bool):
        return float(cost)
    return None


def _path(tool: str, payload: dict[str, Any]) -> str | None:
    """The file a write or an edit names: its recorded ``path``, else read from its
    arguments' summary when that is whole JSON."""
    if tool not in FILE_TOOLS:
        return None
    recorded = _fields(payload.get("metadata")).get("path")
    if isinstance(recorded, str) and recorded:
        return recorded
    try:
        arguments = json.loads(_text(payload.get("input_summary")))
    except ValueError:
        return None
    found = _fields(arguments).get("path")
    return found if isinstance(found, str) and found else None


class _Reader:
    """Turns the log's events into runs, one event at a time."""

    def __init__(self) -> None:
        self.runs: dict[str, RunRecord] = {}
        self.last_ts: dict[str, int] = {}
        self.open_tools: dict[tuple[str, str], deque[ToolSpan]] = {}
        self.calls: dict[str, ToolSpan] = {}
        """Each ``tool.called`` event's span, by event id (a delegated run's cause)."""

    def take(self, event: Event) -> None:
        payload = _fields(event.payload)
        kind = event.kind
        if kind == "run.started":
            self._started(event, payload)
            return
        run = self.runs.get(event.correlation_id or "")
        if run is None:
            return
        before = self.last_ts.get(run.id, event.ts_ms)
        self.last_ts[run.id] = event.ts_ms
        if kind == "model.called":
            run.turns.append(
                Turn(
                    index=len(run.turns) + 1,
                    model=_text(payload.get("model")),
                    start_ms=before,
                    end_ms=event.ts_ms,
                )
            )
        elif kind == "model.finished" and run.turns:
            turn = run.turns[-1]
            metadata = _fields(payload.get("metadata"))
            turn.tokens = Tokens.from_json(metadata.get("usage"))
            turn.cost_usd = _cost(metadata)
            turn.output = _text(payload.get("output_summary"))
        elif kind == "tool.called":
            self._tool_called(event, run, payload)
        elif kind == "tool.finished":
            tool = _text(payload.get("tool"))
            waiting = self.open_tools.get((run.id, tool))
            if waiting:
                span = waiting.popleft()
                span.end_ms = event.ts_ms
                span.ok = payload.get("success") is True
                span.output = _text(payload.get("output_summary"))
        elif kind == "run.finished":
            metadata = _fields(payload.get("metadata"))
            run.outcome = _text(payload.get("outcome")) or "finished"
            run.end_ms = event.ts_ms
            run.cost_usd = _cost(metadata)
            run.tokens = (
                Tokens.from_json(metadata["usage"])
                if "usage" in metadata
                else total_tokens(run.turns)
            )

    def _started(self, event: Event, payload: dict[str, Any]) -> None:
        run_id = _text(payload.get("run_id")) or event.correlation_id or event.id
        parent = _text(payload.get("parent_run_id")) or None
        run = RunRecord(id=run_id, task=_text(payload.get("task")), start_ms=event.ts_ms)
        run.parent = parent
        self.runs[run_id] = run
        self.last_ts[run_id] = event.ts_ms
        if parent is not None and parent in self.runs:
            self.runs[parent].children.append(run_id)
        delegating = self.calls.get(event.causation_id or "")
        if delegating is not None:
            delegating.run_id = run_id

    def _tool_called(self, event: Event, run: RunRecord, payload: dict[str, Any]) -> None:
        tool = _text(payload.get("tool"))
        span = ToolSpan(
            name=tool,
            start_ms=event.ts_ms,
            arguments=_text(payload.get("input_summary")),
            path=_path(tool, payload),
        )
        if not run.turns:  # a call before any model call: a turn of its own
            run.turns.append(Turn(index=1, start_ms=event.ts_ms, end_ms=event.ts_ms))
        run.turns[-1].tools.append(span)
        self.open_tools.setdefault((run.id, tool), deque()).append(span)
        self.calls[event.id] = span


def read_gasp(path: Path) -> tuple[list[RunRecord], list[str]]:
    """The runs of the GASP repository (or log) at ``path``, and the problems of its log,
    each naming the file and the line. Raises ``FileNotFoundError`` when there is no log."""
    log = log_path(path)
    if not log.is_file():
        raise FileNotFoundError(f"{log} does not exist: not a GASP repository")
    fold = fold_log(log)
    reader = _Reader()
    for event in fold.events:
        reader.take(event)
    problems = [f"{log}: line {problem.line}: {problem.message}" for problem in fold.problems]
    runs = list(reader.runs.values())
    for run in runs:
        if run.outcome == "open":
            run.tokens = total_tokens(run.turns)
        if run.cost_usd is None:  # a recording extension's run.finished holds no spend
            run.cost_usd = sum_costs(run.turns)
    return runs, problems
