"""What ``compact_messages`` costs as a session grows, down to level 3.

    uv run python benchmarks/compaction.py [--repeat 7] [--json]

Each session is a realistic coding run: a task, then turns of an assistant message with
1-2 tool calls (bash / read_file / edit_file with JSON arguments) and their results of
2-4 KB each, and a new user request every 25 turns. Sessions of 1k, 2k, 5k and 10k
messages are compacted with a budget that forces level 3 (``budget_tokens=4_000``,
``keep_recent=20``; the rest default). Reported per size: the median wall time of the
whole call, of levels 1 and 2 run alone, of ``compact_messages`` on the level-2 output
(levels 1-2 find nothing left to do there, so it is about level 3's own cost), and of
estimating the history (``estimate_messages``), after one warm-up call; plus time per
message, and growth against the 1k session.
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

from yoagent.core._context.budget import ContextConfig
from yoagent.core._context.compaction import (
    compact_messages,
    summarize_old_turns,
    truncate_old_tool_outputs,
)
from yoagent.core._context.estimate import estimate_messages
from yoagent.core._types.content import TextContent, ToolCall
from yoagent.core._types.messages import (
    AgentMessage,
    AssistantMessage,
    StopReason,
    ToolResultMessage,
    UserMessage,
)

SIZES = (1_000, 2_000, 5_000, 10_000)
CONFIG = ContextConfig(budget_tokens=4_000, keep_recent=20)
_TOOLS = ("bash", "read_file", "edit_file")


def build_session(size: int, seed: int = 7) -> list[AgentMessage]:
    """A well-formed session of exactly ``size`` messages."""
    rng = random.Random(seed)
    messages: list[AgentMessage] = [UserMessage.from_text("Fix the failing parser tests in src/")]
    call = 0
    turn = 0
    while len(messages) < size:
        turn += 1
        if turn % 25 == 0:
            messages.append(UserMessage.from_text(f"Also check case {turn}."))
            continue
        room = size - len(messages)
        calls = min(rng.choice((1, 1, 2)), max(0, room - 1))
        tool_calls: list[ToolCall] = []
        for _ in range(calls):
            call += 1
            name = rng.choice(_TOOLS)
            arguments: dict[str, Any] = {"path": f"src/module_{call % 40}.py"}
            if name == "bash":
                arguments = {"command": f"pytest tests/test_parser.py -k case_{call} -x"}
            elif name == "edit_file":
                arguments |= {"old": "return None", "new": f"return value_{call}"}
            tool_calls.append(ToolCall(id=f"call_{call}", name=name, arguments=arguments))
        messages.append(
            AssistantMessage(
                content=[TextContent(text=f"Looking at step {turn}.\nDetails..."), *tool_calls],
                stop_reason=StopReason.TOOL_USE if tool_calls else StopReason.STOP,
            )
        )
        for tc in tool_calls:
            lines = rng.randint(40, 80)  # 2-4 KB
            output = "\n".join(f"{tc.name} output line {i}: " + "x" * 30 for i in range(lines))
            messages.append(
                ToolResultMessage(
                    tool_call_id=tc.id, tool_name=tc.name, content=[TextContent(text=output)]
                )
            )
    return messages[:size]


def median_ms(function: Callable[[], object], repeat: int) -> float:
    function()  # warm-up
    times: list[float] = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def measure(size: int, repeat: int) -> dict[str, Any]:
    messages = build_session(size)
    result = compact_messages(messages, CONFIG)
    level1 = truncate_old_tool_outputs(messages, CONFIG)
    level2 = summarize_old_turns(level1, CONFIG)
    return {
        "messages": size,
        "tokens_before": result.tokens_before,
        "level": result.level,
        "tokens_after": result.tokens_after,
        "kept": len(result.messages),
        "total_ms": median_ms(lambda: compact_messages(messages, CONFIG), repeat),
        "estimate_ms": median_ms(lambda: estimate_messages(messages), repeat),
        "level1_ms": median_ms(lambda: truncate_old_tool_outputs(messages, CONFIG), repeat),
        "level2_ms": median_ms(lambda: summarize_old_turns(level1, CONFIG), repeat),
        "level3_ms": median_ms(lambda: compact_messages(level2, CONFIG), repeat),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [measure(size, args.repeat) for size in SIZES]
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"CPython {platform.python_version()} on {platform.machine()}, median of {args.repeat}")
    print(
        "| messages | est. tokens before | level | tokens after | kept | compact_messages | "
        "µs/message | growth vs 1k | estimate | level 1 | level 2 | on level-2 output |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    base = rows[0]["total_ms"] / rows[0]["messages"]
    for row in rows:
        per_message = row["total_ms"] / row["messages"]
        print(
            f"| {row['messages']:,} | {row['tokens_before']:,} | {row['level']} "
            f"| {row['tokens_after']:,} | {row['kept']} | {row['total_ms']:.1f} ms "
            f"| {per_message * 1000:.1f} | {per_message / base:.2f}× "
            f"| {row['estimate_ms']:.1f} ms | {row['level1_ms']:.1f} ms "
            f"| {row['level2_ms']:.1f} ms | {row['level3_ms']:.1f} ms |"
        )


if __name__ == "__main__":
    main()
