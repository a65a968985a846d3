"""A run read from a cassette (yoagent-testing's record of a run's model calls).

A cassette holds one run: each recorded model call is a turn (a failed or cancelled
attempt too), with the tokens of its reply and their cost at the prices the process
knows (core's price resolver, for the call's provider and model; a cassette records no
price). A call's reply ends at its message's time; its start is that time less the
recorded ``elapsed`` when timing was recorded, else the end of what came before. The tool
calls of a reply are answered by the next request's tool results (or the cassette's tool
records), which also say when they ended.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from yoagent.core import AssistantMessage, CostConfig, ToolCall, Usage
from yoagent.core.provider import cost_of, price_resolver
from yoagent.gasp.summary import outcome_for
from yoagent.testing import Cassette, RecordedCall

from ._runs import FILE_TOOLS, RunRecord, Tokens, ToolSpan, Turn, sum_costs, total_tokens


def _fields(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}  # pyright: ignore[reportUnknownVariableType]


def _list(value: object) -> list[Any]:
    return value if isinstance(value, list) else []  # pyright: ignore[reportUnknownVariableType]


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    return " ".join(
        str(_fields(part).get("text", ""))
        for part in _list(content)
        if _fields(part).get("type") == "text"
    )


def _price(call: RecordedCall, usage: Usage) -> float | None:
    model = _fields(call.request.get("model"))
    resolver = price_resolver()
    cost: CostConfig | None = None
    if resolver is not None:
        cost = resolver(str(model.get("provider", "")), str(model.get("id", "")))
    return cost_of(usage, cost)


def _results(messages: list[Any]) -> dict[str, tuple[bool, int | None, str]]:
    """The tool results among ``messages``: by call id, (failed, time, text)."""
    found: dict[str, tuple[bool, int | None, str]] = {}
    for raw in messages:
        message = _fields(raw)
        if message.get("role") == "tool_result":
            stamp = message.get("timestamp")
            found[str(message.get("tool_call_id"))] = (
                message.get("is_error") is True,
                stamp if isinstance(stamp, int) else None,
                _text_of(message)[:200],
            )
    return found


def _span(call: ToolCall) -> ToolSpan:
    path = call.arguments.get("path") if call.name in FILE_TOOLS else None
    shown = ", ".join(f"{key}={value!r}" for key, value in call.arguments.items())
    return ToolSpan(
        name=call.name, arguments=shown[:200], path=path if isinstance(path, str) else None
    )


def read_cassette(path: Path) -> RunRecord:
    """The run the cassette at ``path`` recorded. Raises ``CassetteError`` naming the file
    and line of a record that cannot be read."""
    cassette = Cassette.load(path)
    run = RunRecord(id=path.stem)
    recorded = {tool.tool_call_id: tool for tool in cassette.tools}
    previous_end: int | None = None
    pending: dict[str, ToolSpan] = {}
    seen = 0
    last: AssistantMessage | None = None
    for call in cassette.calls:
        messages = _list(call.request.get("messages"))
        if not run.task:
            users = [_fields(m) for m in messages if _fields(m).get("role") == "user"]
            run.task = _text_of(users[0]) if users else ""
        answered = _results(messages[seen:])
        seen = len(messages)
        for call_id, (failed, stamp, text) in answered.items():
            span = pending.pop(call_id, None)
            if span is not None:
                span.ok, span.end_ms, span.output = not failed, stamp, text
                previous_end = max(previous_end or 0, stamp or 0) or previous_end
        reply = call.reply_message()
        model = str(_fields(call.request.get("model")).get("id", ""))
        turn = Turn(index=len(run.turns) + 1, model=model, ok=reply is not None)
        if reply is not None:
            last = reply
            usage = reply.usage
            turn.tokens = Tokens(
                input=usage.input,
                output=usage.output,
                cache_read=usage.cache_read,
                cache_write=usage.cache_write,
            )
            turn.cost_usd = _price(call, usage)
            turn.end_ms = reply.timestamp
            turn.output = reply.text[:200]
            for tool_call in reply.tool_calls:
                span = _span(tool_call)
                span.start_ms = reply.timestamp
                kept = recorded.get(tool_call.id)
                if kept is not None:
                    span.ok = not kept.is_error
                pending[tool_call.id] = span
                turn.tools.append(span)
        else:
            turn.output = str(_fields(call.error).get("message", "")) or "cancelled"
            turn.end_ms = previous_end
        if call.elapsed is not None and turn.end_ms is not None:
            turn.start_ms = turn.end_ms - round(call.elapsed * 1000)
        else:
            turn.start_ms = previous_end if previous_end is not None else turn.end_ms
        previous_end = turn.end_ms if turn.end_ms is not None else previous_end
        run.turns.append(turn)
    run.start_ms = run.turns[0].start_ms if run.turns else None
    run.end_ms = previous_end
    run.tokens = total_tokens(run.turns)
    run.cost_usd = sum_costs(run.turns)
    final = cassette.calls[-1] if cassette.calls else None
    if final is None:
        run.outcome = "open"
    elif final.cancelled:
        run.outcome = "aborted"
    elif final.error is not None:
        run.outcome = "error"
    elif last is not None:
        run.outcome = outcome_for(last.stop_reason)  # in the words GASP records
    return run
