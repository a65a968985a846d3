"""``yoagent -p TASK --json``: every event as one JSON line, then a summary line.

Each event line parses with ``yoagent.core.event_adapter``. A ``message_start`` for a reply
that is about to stream carries no ``stop_reason`` (the reply has not stopped yet; the
``message_end`` line says how it did), which the adapter reads back as its default.

The last line is the run's summary, ``{"type": "result", ...}``, as in Claude Code's JSON
output: ``subtype`` (``success``, ``error``, ``refusal``, ``limit``, ``interrupted``),
``is_error``, ``exit_code``, ``result`` (the final answer), ``error`` (what went wrong, or
null), ``usage`` (tokens: ``input``, ``output``, ``cache_read``, ``cache_write``) and
``cost_usd`` (null when any part of it is not priced) of the run with its sub-agents,
compaction summaries and tool-gate decisions, ``session_id`` (null when nothing was saved),
``num_turns`` and ``duration_ms``.

The lines are written with DEL, C1 and bidi controls and the line separators escaped as
``\\uXXXX`` (JSON escapes only C0 controls itself): the same JSON, safe on a terminal.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from yoagent.core import AgentEvent, AssistantMessage, MessageStart, SessionStats, event_adapter

from .safe_text import json_inert
from .status import cost_usd


class JsonLines:
    """Writes the event lines and the summary line to ``out``."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def _write(self, line: str) -> None:
        self.out.write(json_inert(line) + "\n")
        self.out.flush()

    def event(self, event: AgentEvent) -> None:
        """One event as a JSON line."""
        if isinstance(event, MessageStart) and isinstance(event.message, AssistantMessage):
            payload: dict[str, Any] = event_adapter.dump_python(event, mode="json")
            payload["message"].pop("stop_reason", None)
            self._write(json.dumps(payload, ensure_ascii=False))
            return
        self._write(event_adapter.dump_json(event).decode())

    def summary(
        self,
        exit_code: int,
        result: str,
        reason: str,
        *,
        stats: SessionStats,
        session_id: str | None,
        duration: float,
        problem: str = "",
    ) -> None:
        """The final ``{"type": "result", ...}`` line."""
        usage = stats.total_usage()
        self._write(
            json.dumps(
                {
                    "type": "result",
                    "subtype": reason,
                    "is_error": exit_code != 0,
                    "exit_code": exit_code,
                    "result": result,
                    "error": problem or None,
                    "usage": {
                        "input": usage.input,
                        "output": usage.output,
                        "cache_read": usage.cache_read,
                        "cache_write": usage.cache_write,
                    },
                    "cost_usd": cost_usd(stats),
                    "session_id": session_id,
                    "num_turns": stats.turns,
                    "duration_ms": round(duration * 1000),
                },
                ensure_ascii=False,
            )
        )
