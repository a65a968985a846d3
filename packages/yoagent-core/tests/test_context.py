"""Token estimates, the context tracker, the budget, and each compaction level."""

from __future__ import annotations

import pytest

from yoagent.core._context.budget import ContextConfig
from yoagent.core._context.compaction import (
    compact_after_overflow,
    compact_messages,
    truncate_old_tool_outputs,
)
from yoagent.core._context.estimate import (
    IMAGE_TOKENS,
    estimate_messages,
    estimate_text,
    estimate_tokens,
)
from yoagent.core._context.tracker import ContextTracker
from yoagent.core._context.units import latest_ask, safe_head_end
from yoagent.core._types import markers as loop
from yoagent.core._types.config import ModelConfig
from yoagent.core._types.content import ImageContent, TextContent, ToolCall
from yoagent.core._types.markers import COMPACTION_MARKER, SUMMARY_PREFIX
from yoagent.core._types.markers import is_loop_injected as is_injected
from yoagent.core._types.messages import (
    AgentMessage,
    AssistantMessage,
    CustomMessage,
    StopReason,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from yoagent.core.context import is_compaction_message


def user(text: str) -> UserMessage:
    return UserMessage.from_text(text)


def turn(
    call_id: str, output: str, *, text: str = "working", name: str = "bash"
) -> list[AgentMessage]:
    """An assistant message calling one tool, and its result."""
    return [
        AssistantMessage(
            content=[TextContent(text=text), ToolCall(id=call_id, name=name, arguments={"n": 1})],
            stop_reason=StopReason.TOOL_USE,
        ),
        ToolResultMessage(tool_call_id=call_id, tool_name=name, content=[TextContent(text=output)]),
    ]


def answer(text: str) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)])


def session(turns: int, output_chars: int) -> list[AgentMessage]:
    messages: list[AgentMessage] = [user("task: fix the failing test")]
    for i in range(turns):
        messages.extend(turn(f"c{i}", f"line {i}\n" + "o" * output_chars, text=f"step {i}"))
    return messages


def texts(messages: list[AgentMessage]) -> list[str]:
    out: list[str] = []
    for m in messages:
        if isinstance(m, UserMessage | ToolResultMessage | AssistantMessage):
            out.append(m.text)
    return out


# -- estimation ---------------------------------------------------------------


def test_text_estimate_is_bytes_over_four_rounded_up() -> None:
    assert estimate_text("") == 0
    assert estimate_text("abcd") == 1
    assert estimate_text("abcde") == 2
    assert estimate_text("é" * 4) == 2  # 8 UTF-8 bytes


def test_message_estimates_count_images_calls_and_framing() -> None:
    image = UserMessage(content=[ImageContent(data="x" * 100_000, mime_type="image/png")])
    assert estimate_tokens(image) == IMAGE_TOKENS + 4
    call = AssistantMessage(
        content=[ToolCall(id="1", name="bash", arguments={"command": "ls -la"})]
    )
    assert (
        estimate_tokens(call)
        == 4 + estimate_text("bash") + estimate_text('{"command":"ls -la"}') + 8
    )
    result = ToolResultMessage(
        tool_call_id="1", tool_name="bash", content=[TextContent(text="x" * 40)]
    )
    assert estimate_tokens(result) == 4 + 10 + 1 + 8
    assert estimate_tokens(CustomMessage(kind="note", data="x" * 1000)) == 0
    assert estimate_messages([image, call]) == estimate_tokens(image) + estimate_tokens(call)


# -- tracker ------------------------------------------------------------------


def test_tracker_without_usage_is_a_pure_estimate() -> None:
    messages = session(3, 400)
    assert ContextTracker().estimate(messages) == estimate_messages(messages)


def test_tracker_adds_the_estimate_of_new_messages_to_the_real_figure() -> None:
    tracker = ContextTracker(ContextConfig(system_prompt_tokens=100))
    messages = session(1, 40)
    tracker.record_usage(Usage(input=500, cache_read=300, cache_write=200, output=9), len(messages))
    assert tracker.last_real_tokens == 1000
    added = turn("new", "x" * 400)
    messages.extend(added)
    assert tracker.estimate(messages) == 900 + estimate_messages(added)


def test_tracker_falls_back_when_the_history_was_replaced_or_reset() -> None:
    tracker = ContextTracker()
    messages = session(2, 40)
    tracker.record_usage(Usage(input=50_000), len(messages))
    assert tracker.estimate(messages) == 50_000
    replaced = [user("a"), *messages[1:]]
    replaced[len(messages) - 1] = answer("different")
    assert tracker.estimate(replaced) == estimate_messages(replaced)
    tracker.record_usage(Usage(input=50_000), len(messages))
    tracker.reset()
    assert tracker.last_real_tokens is None
    assert tracker.estimate(messages) == estimate_messages(messages)


def test_tracker_ignores_a_reply_without_usage() -> None:
    tracker = ContextTracker()
    tracker.record_usage(Usage(), 3)
    assert tracker.last_real_tokens is None


def test_tracker_learns_a_bounded_calibration() -> None:
    messages = session(4, 4_000)  # ~4k estimated tokens
    estimated = estimate_messages(messages)
    tracker = ContextTracker()
    tracker.record_usage(Usage(input=int(estimated * 1.3)), len(messages))
    tracker.estimate(messages)
    assert tracker.calibration == pytest.approx(1.3, rel=0.01)
    assert tracker.calibrated_config().calibration == tracker.calibration
    tracker.record_usage(Usage(input=estimated * 10), len(messages))
    tracker.estimate(messages)
    # Capped at 4: dense scripts run near one token per character, 4x the heuristic.
    assert tracker.calibration == tracker.max_calibration == 4.0
    tracker.reset()
    assert tracker.calibration == 4.0  # the tokenizer did not change


def test_tracker_says_when_to_compact() -> None:
    tracker = ContextTracker(ContextConfig(budget_tokens=1_000))
    assert not tracker.needs_compaction([user("small")])
    assert tracker.needs_compaction([user("x" * 8_000)])


# -- budget -------------------------------------------------------------------


def test_budget_is_window_minus_reserve_and_system_prompt() -> None:
    config = ContextConfig(
        context_window=100_000, reserve_output_tokens=8_000, system_prompt_tokens=2_000
    )
    assert config.budget() == 80_000 - 2_000  # the 20% floor binds, not the 8k reserve
    config = ContextConfig(
        context_window=100_000, reserve_output_tokens=30_000, min_free_fraction=0.1
    )
    assert config.budget() == 70_000
    assert config.target() == 42_000
    assert ContextConfig(context_window=1_000, reserve_output_tokens=5_000).budget() == 0
    assert ContextConfig(budget_tokens=123).budget() == 123


def test_config_for_model_uses_its_window_and_max_tokens() -> None:
    model = ModelConfig.mock()
    model.context_window, model.max_tokens = 128_000, 32_000
    config = ContextConfig.for_model(model, keep_recent=4)
    assert (config.context_window, config.reserve_output_tokens, config.keep_recent) == (
        128_000,
        32_000,
        4,
    )
    assert config.budget() == 96_000


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("keep_first", -1),
        ("min_free_fraction", 1.0),
        ("target_fraction", 0.0),
        ("calibration", 0.0),
    ],
)
def test_config_refuses_nonsense(field: str, value: float) -> None:
    with pytest.raises(ValueError, match=field):
        ContextConfig(**{field: value})


# -- markers ------------------------------------------------------------------


def test_stop_prefix_matches_the_loops() -> None:
    assert loop.AGENT_STOPPED_PREFIX == "[Agent stopped: "
    assert is_injected(user(loop.CANCELLED_MARKER))
    assert is_injected(user(f"{SUMMARY_PREFIX}\n- x"))
    assert is_injected(user(f"{COMPACTION_MARKER}3 earlier messages removed]"))
    assert not is_injected(user("please continue"))
    assert is_compaction_message(user(f"{SUMMARY_PREFIX}\n- x"))
    assert not is_compaction_message(user(loop.CANCELLED_MARKER))


def test_latest_ask_skips_loop_injected_messages() -> None:
    messages: list[AgentMessage] = [user("task"), answer("ok"), user("[Agent stopped: cancelled]")]
    assert latest_ask(messages) == 0
    assert latest_ask([answer("x")]) is None


def test_safe_head_end_steps_back_off_a_head_ending_mid_results() -> None:
    messages: list[AgentMessage] = [user("task"), *turn("a", "x"), answer("done")]
    assert safe_head_end(messages, 2) == 1
    assert safe_head_end(messages, 3) == 3
    assert safe_head_end(messages, 10) == 4


# -- compaction levels --------------------------------------------------------


def test_a_history_that_fits_is_returned_unchanged() -> None:
    messages = session(2, 100)
    result = compact_messages(messages, ContextConfig())
    assert result.level == 0
    assert not result.compacted
    assert result.messages == messages
    assert result.tokens_before == result.tokens_after


def test_empty_history() -> None:
    result = compact_messages([], ContextConfig(budget_tokens=0))
    assert (result.level, result.messages) == (0, [])


def test_one_oversized_message_is_kept_not_replaced_by_a_marker() -> None:
    big = user("x" * 40_000)
    result = compact_messages([big], ContextConfig(budget_tokens=100))
    assert result.messages == [big]
    assert result.level == 3
    assert result.dropped == 0


def test_level1_truncates_old_tool_outputs_but_not_the_newest_turn() -> None:
    messages = session(3, 10_000)
    config = ContextConfig(budget_tokens=4_000, tool_output_max_chars=300)
    result = compact_messages(messages, config)
    assert result.level == 1
    assert len(result.messages) == len(messages)
    old = result.messages[2]
    assert isinstance(old, ToolResultMessage)
    assert old.text.startswith("line 0\n")
    assert "characters of tool output truncated" in old.text
    assert old.text.endswith("o" * 50)
    assert len(old.text) <= 300
    assert result.messages[-1] is messages[-1]  # the newest result, untouched
    assert result.tokens_after <= 4_000 < result.tokens_before


def test_level1_is_idempotent_so_repeated_compaction_keeps_the_cache_prefix() -> None:
    messages = session(4, 10_000)
    config = ContextConfig(tool_output_max_chars=500)
    once = truncate_old_tool_outputs(messages, config)
    old = once[2]
    assert isinstance(old, ToolResultMessage)
    assert len(old.text) <= 500
    twice = truncate_old_tool_outputs(once, config)
    assert all(a is b for a, b in zip(once, twice, strict=True))


def test_level1_replaces_old_tool_images() -> None:
    image = ImageContent(data="x" * 10, mime_type="image/png")
    messages: list[AgentMessage] = [user("task"), *turn("a", "x"), *turn("b", "y")]
    old = messages[2]
    assert isinstance(old, ToolResultMessage)
    old.content.append(image)
    result = compact_messages(messages, ContextConfig(budget_tokens=200))
    first = result.messages[2]
    assert isinstance(first, ToolResultMessage)
    assert "[image omitted" in first.text


def test_level2_summarizes_old_turns_one_line_each() -> None:
    messages = session(12, 50)
    config = ContextConfig(budget_tokens=300, keep_first=1, keep_recent=4)
    result = compact_messages(messages, config)
    assert result.level == 2
    summary = result.messages[1]
    assert isinstance(summary, UserMessage)
    lines = summary.text.split("\n")
    assert lines[0] == SUMMARY_PREFIX
    assert lines[1] == "- assistant: step 0 [tools: bash]"
    assert len(lines) == 1 + 10  # turns 0-9 summarized; 10 and 11 kept in full
    assert result.messages[0] is messages[0]
    assert result.messages[2:] == messages[-4:]


def test_level2_keeps_the_latest_request_verbatim_and_folds_earlier_summaries() -> None:
    messages: list[AgentMessage] = [user("task"), *turn("a", "x"), user("now also the docs")]
    for i in range(8):
        messages.extend(turn(f"d{i}", "y" * 100))
    config = ContextConfig(budget_tokens=300, keep_first=1, keep_recent=2)
    once = compact_messages(messages, config)
    assert once.level == 2
    assert texts(once.messages)[2] == "now also the docs"
    assert once.messages[-2:] == messages[-2:]
    more = [*once.messages]
    for i in range(6):
        more.extend(turn(f"e{i}", "z" * 100))
    twice = compact_messages(more, config)
    summary = twice.messages[1]
    assert isinstance(summary, UserMessage)
    assert summary.text.count(SUMMARY_PREFIX) == 1
    # The first summary's 8 lines (a, d0-d6) carried over, then d7 and e0-e4: e5 is the tail.
    assert summary.text.count("- assistant:") == 8 + 1 + 5
    assert "now also the docs" in texts(twice.messages)


def test_level3_drops_the_middle_behind_a_marker_keeping_head_ask_and_newest_turn() -> None:
    messages: list[AgentMessage] = [user("task"), answer("plan"), user("fix the parser first")]
    for i in range(30):
        messages.extend(turn(f"c{i}", "o" * 3_000))
    config = ContextConfig(budget_tokens=1_000, keep_first=2, keep_recent=4)
    result = compact_messages(messages, config)
    assert result.level == 3
    out = result.messages
    assert out[:2] == messages[:2]
    marker = out[2]
    assert isinstance(marker, UserMessage)
    assert marker.text.startswith(COMPACTION_MARKER)
    assert f"{result.dropped} earlier messages removed" in marker.text
    assert texts(out)[3] == "fix the parser first"
    assert out[-2:] == messages[-2:]
    assert len(out) == 6
    assert result.tokens_after <= config.budget()


def test_level3_keeps_the_newest_turn_and_as_much_tail_as_fits_the_target() -> None:
    """keep_recent asks for more than the target holds: the newest turn plus what fits."""
    messages: list[AgentMessage] = [user("task")]
    for i in range(40):
        messages.extend(turn(f"c{i}", "o" * 400))
    config = ContextConfig(budget_tokens=1_000, keep_first=1, keep_recent=20, target_fraction=0.8)
    result = compact_messages(messages, config)
    assert result.level == 3
    assert result.tokens_after <= config.target()
    kept_turns = sum(isinstance(m, AssistantMessage) for m in result.messages)
    assert 1 < kept_turns < 10  # more than the newest turn, less than keep_recent
    assert result.messages[-2 * kept_turns :] == messages[-2 * kept_turns :]
    one_more = config.cost(messages[-20]) + config.cost(messages[-19])
    assert result.tokens_after + one_more > config.target()


def test_level3_keeps_an_ask_inside_the_head_when_the_head_goes() -> None:
    messages: list[AgentMessage] = [
        user("t" * 2_000),
        answer("a" * 2_000),
        user("the real request"),
        *turn("c1", "o" * 1_000),
        *turn("c2", "o" * 1_000),
    ]
    config = ContextConfig(
        budget_tokens=900, keep_first=3, keep_recent=2, tool_output_max_chars=100
    )
    result = compact_messages(messages, config)
    assert result.level == 3
    assert "the real request" in texts(result.messages)
    assert result.messages[-2:] == messages[-2:]
    assert result.tokens_after <= 900
    assert isinstance(result.messages[0], UserMessage)


def test_level3_last_resort_is_marker_and_request_never_a_bare_marker() -> None:
    messages: list[AgentMessage] = [user("do it"), *turn("c1", "o" * 40_000)]
    result = compact_messages(messages, ContextConfig(budget_tokens=200, keep_first=1))
    assert result.level == 3
    assert len(result.messages) == 2
    assert result.messages[0].text.startswith(COMPACTION_MARKER)  # type: ignore[union-attr]
    assert texts(result.messages)[1] == "do it"


def test_keep_recent_zero_protects_no_turn() -> None:
    messages = session(6, 2_000)
    config = ContextConfig(budget_tokens=700, keep_first=1, keep_recent=0, target_fraction=1.0)
    result = compact_messages(messages, config)
    assert result.tokens_after <= 700
    assert result.messages[0] is messages[0]
    newest = messages[-1]
    assert isinstance(newest, ToolResultMessage)
    kept = [m for m in result.messages if isinstance(m, ToolResultMessage)]
    assert all(len(m.text) <= 2_100 for m in kept)  # level 1 cut even the newest output


def test_custom_messages_cost_nothing_and_go_with_the_middle() -> None:
    messages: list[AgentMessage] = [user("task"), CustomMessage(kind="note", data=1)]
    for i in range(10):
        messages.extend(turn(f"c{i}", "o" * 4_000))
    messages.append(CustomMessage(kind="note", data=2))
    result = compact_messages(
        messages, ContextConfig(budget_tokens=1_500, keep_first=1, keep_recent=3)
    )
    assert result.level == 2
    customs = [m for m in result.messages if isinstance(m, CustomMessage)]
    assert [c.data for c in customs] == [2]


def test_compaction_is_deterministic_and_pure() -> None:
    messages = session(20, 3_000)
    before = list(messages)
    config = ContextConfig(budget_tokens=2_000)
    first = compact_messages(messages, config)
    second = compact_messages(messages, config)
    assert first.messages == second.messages
    assert messages == before


def test_compaction_after_overflow_halves_the_estimate() -> None:
    messages = session(10, 400)
    config = ContextConfig()
    assert compact_messages(messages, config).level == 0
    result = compact_after_overflow(messages, config)
    assert result.compacted
    assert result.tokens_after <= result.tokens_before // 2
    assert result.budget == result.tokens_before // 2


def test_the_tracker_estimates_a_growing_history_incrementally_and_exactly() -> None:
    """The cached prefix figure plus the new messages equals a full estimate, every step."""
    tracker = ContextTracker()
    history: list[AgentMessage] = []
    for i in range(30):
        history.append(UserMessage.from_text(f"message {i} " * (i + 1)))
        assert tracker.estimate(history) == estimate_messages(history)
    # A replaced history (compaction) is announced with reset(): the cache goes too.
    history[:] = history[-3:]
    tracker.reset()
    assert tracker.estimate(history) == estimate_messages(history)


def test_arguments_too_deep_for_json_still_get_an_estimate() -> None:
    nested: object = 1
    for _ in range(5_000):
        nested = [nested]
    message = AssistantMessage(content=[ToolCall(id="a", name="t", arguments={"x": nested})])
    assert estimate_tokens(message) > 5_000 // 4
