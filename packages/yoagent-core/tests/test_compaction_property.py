"""Property test of compact_messages over random well-formed coding sessions."""

from __future__ import annotations

from dataclasses import dataclass

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from yoagent.core._context.budget import ContextConfig
from yoagent.core._context.compaction import (
    compact_messages,
    summarize_old_turns,
    truncate_old_tool_outputs,
)
from yoagent.core._types.content import TextContent, ToolCall
from yoagent.core._types.markers import COMPACTION_MARKER
from yoagent.core._types.markers import is_loop_injected as is_injected
from yoagent.core._types.messages import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    StopReason,
    ToolResultMessage,
    UserMessage,
)

# One step of a session: (kind, calls, size). kind 0-5 = assistant turn, 6-7 = user ask,
# 8 = stop marker, 9 = custom message. ``calls`` tool calls (0-3) each get a result of
# ``size`` characters scaled per call, so a few results are long.
_step = st.tuples(st.integers(0, 9), st.integers(0, 3), st.integers(0, 6_000))


@dataclass(slots=True)
class Case:
    messages: list[AgentMessage]
    config: ContextConfig


def _build(steps: list[tuple[int, int, int]]) -> list[AgentMessage]:
    messages: list[AgentMessage] = [
        UserMessage.from_text("task: fix the failing test\n" + "t" * 40)
    ]
    call_number = 0
    for kind, calls, size in steps:
        if kind <= 5:
            tool_calls = []
            for c in range(calls):
                call_number += 1
                tool_calls.append(
                    ToolCall(id=f"c{call_number}", name=("bash", "read_file", "edit_file")[c % 3])
                )
            content = [TextContent(text=f"step {call_number}\n" + "a" * (size // 20)), *tool_calls]
            messages.append(
                AssistantMessage(
                    content=content,
                    stop_reason=StopReason.TOOL_USE if tool_calls else StopReason.STOP,
                )
            )
            for c, tc in enumerate(tool_calls):
                messages.append(
                    ToolResultMessage(
                        tool_call_id=tc.id,
                        tool_name=tc.name,
                        content=[TextContent(text="o" * (size // (c + 1)))],
                        is_error=size % 7 == 0,
                    )
                )
        elif kind <= 7:
            messages.append(UserMessage.from_text(f"ask {len(messages)}: " + "u" * (size // 30)))
        elif kind == 8:
            messages.append(UserMessage.from_text("[Agent stopped: turn limit reached]"))
        else:
            messages.append(CustomMessage(kind="note", data=size))
    return messages


@st.composite
def cases(draw: st.DrawFn) -> Case:
    steps = draw(st.lists(_step, max_size=24))
    budget = draw(st.integers(50, 12_000))
    config = ContextConfig(
        budget_tokens=budget,
        keep_first=draw(st.integers(0, 4)),
        keep_recent=draw(st.integers(0, 12)),
        target_fraction=draw(st.sampled_from([0.3, 0.6, 1.0])),
        tool_output_max_chars=draw(st.sampled_from([200, 2_000])),
        summary_max_lines=draw(st.sampled_from([3, 200])),
    )
    return Case(_build(steps), config)


def _well_formed(messages: list[AgentMessage]) -> None:
    """Every tool result has its call in the assistant message before it; every call its result."""
    open_calls: set[str] = set()
    current: AssistantMessage | None = None
    for message in messages:
        if isinstance(message, ToolResultMessage):
            assert current is not None, "a tool result with no assistant message before it"
            assert message.tool_call_id in open_calls, (
                f"result {message.tool_call_id} lost its call"
            )
            open_calls.discard(message.tool_call_id)
        elif isinstance(message, CustomMessage):
            continue
        else:
            assert not open_calls, f"calls without results: {sorted(open_calls)}"
            current = message if isinstance(message, AssistantMessage) else None
            open_calls = {c.id for c in current.tool_calls} if current else set()
    assert not open_calls, f"calls without results: {sorted(open_calls)}"


def _head_end(messages: list[AgentMessage], keep_first: int) -> int:
    end = min(keep_first, len(messages))
    if end < len(messages) and isinstance(messages[end], ToolResultMessage):
        while not isinstance(messages[end], AssistantMessage):
            end -= 1
    return end


def _contains(haystack: list[AgentMessage], needles: list[AgentMessage]) -> bool:
    """``needles`` appear in ``haystack`` in order (by equality)."""
    it = iter(haystack)
    return all(any(item == needle for item in it) for needle in needles)


@settings(
    max_examples=3000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(cases())
def test_compaction_is_well_formed_within_budget_and_keeps_what_fits(case: Case) -> None:
    """For any well-formed session and config, ``compact_messages``:

    - returns a well-formed history (each tool result follows the assistant message that
      called it, no call loses its result) that starts with a user message;
    - never returns a bare marker: something besides compaction markers survives;
    - fits the budget whenever marker + latest real request fit it (the last resort);
    - keeps the task (the first message, when ``keep_first`` >= 1), the latest real user
      request and the newest turn (from the last assistant message after the head to the
      end, when ``keep_recent`` >= 1) whenever they fit the budget together with the marker
      after levels 1-2; the newest turn stays the history's suffix.
    """
    messages, config = case.messages, case.config
    budget = config.budget()
    result = compact_messages(messages, config)
    out = result.messages

    _well_formed(out)
    assert isinstance(out[0], UserMessage)
    assert any(
        not (isinstance(m, UserMessage) and m.text.startswith(COMPACTION_MARKER)) for m in out
    ), "collapsed to a bare marker"
    assert result.tokens_after == config.tokens(out)
    if result.level < 3:
        assert result.tokens_after <= budget or result.level == 0

    # What level 3 worked on, and what it must protect.
    after_12 = summarize_old_turns(truncate_old_tool_outputs(messages, config), config)
    head_end = _head_end(after_12, config.keep_first)
    asks = [i for i, m in enumerate(after_12) if isinstance(m, UserMessage) and not is_injected(m)]
    ask = asks[-1] if asks else None
    last_assistant = max(
        (i for i, m in enumerate(after_12) if isinstance(m, AssistantMessage)), default=None
    )
    newest = (
        last_assistant
        if config.keep_recent > 0 and last_assistant is not None and last_assistant >= head_end
        else None
    )
    marker_cost = config.cost(
        UserMessage.from_text(f"{COMPACTION_MARKER}{len(after_12)}" + "x" * 60)
    )
    ask_cost = config.cost(after_12[ask]) if ask is not None else 0
    if result.level == 3 and marker_cost + ask_cost <= budget:
        assert result.tokens_after <= budget

    protected: list[int] = []
    if config.keep_first >= 1:
        protected.append(0)
    if ask is not None:
        protected.append(ask)
    if newest is not None:
        protected.extend(range(newest, len(after_12)))
    protected = sorted(set(protected))
    cost = sum(config.cost(after_12[i]) for i in protected)
    if result.level < 3 or cost + marker_cost <= budget:
        assert _contains(out, [after_12[i] for i in protected]), "a protected message was lost"
        if newest is not None:
            turn = after_12[newest:]
            assert out[len(out) - len(turn) :] == turn, "the newest turn is not the suffix"
