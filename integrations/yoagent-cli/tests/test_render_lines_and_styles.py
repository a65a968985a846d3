"""The renderers' shared decisions, at their edges: how a text, a tool call and its output
are cut to fit, the style each kind of line is drawn in (seen on a Rich console), what a
plain renderer writes by default, and the wait for a tool line to be on screen."""

from __future__ import annotations

import io
import types
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest
from rich.console import Console

from yoagent.cli import render
from yoagent.cli.render import (
    PlainRenderer,
    Renderer,
    diff_style,
    fold,
    format_arguments,
    shorten,
    tool_line,
)
from yoagent.cli.rich_render import RichRenderer
from yoagent.core import (
    AgentEvent,
    AssistantMessage,
    ErrorKind,
    InputRejected,
    MessageEnd,
    MessageUpdate,
    ProviderRetry,
    StopReason,
    TextContent,
    ThinkingDelta,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolResultMessage,
    UserMessage,
)
from yoagent.core.extension import AGENT_STOPPED_PREFIX


def ended(text: str, *, name: str = "bash", call_id: str = "c1", error: bool = False) -> AgentEvent:
    return ToolExecutionEnd(
        result=ToolResultMessage(
            tool_call_id=call_id, tool_name=name, content=[TextContent(text=text)], is_error=error
        )
    )


def rich(*events: AgentEvent) -> str:
    out = io.StringIO()
    renderer = RichRenderer(
        Console(file=out, width=60, force_terminal=True, color_system="standard")
    )
    for event in events:
        renderer.handle(event)
    return out.getvalue()


def plain(*events: AgentEvent, **options: int) -> str:
    out = io.StringIO()
    renderer = PlainRenderer(out, **options)
    for event in events:
        renderer.handle(event)
    return out.getvalue()


def test_shorten_keeps_a_text_that_fits_and_ends_one_cut_in_an_ellipsis() -> None:
    assert shorten("abc", 3) == "abc"
    assert shorten("abcd", 3) == "ab…"
    assert shorten("ab", 2) == "ab"
    assert shorten("abc", 2) == "a…"
    assert shorten("abc", 1) == "a"  # no room for an ellipsis
    assert shorten("abc", 0) == ""


def test_each_argument_is_cut_to_60_characters_as_readable_json() -> None:
    assert format_arguments({"k": "x" * 58}, 200) == f'k="{"x" * 58}"'  # 60 with its quotes
    assert format_arguments({"k": "x" * 59}, 200) == f'k="{"x" * 58}…'
    assert format_arguments({"path": "café"}, 200) == 'path="café"'
    assert format_arguments({"where": Path("/tmp/a")}, 200) == 'where="/tmp/a"'


def test_a_tool_line_gives_the_arguments_the_room_the_name_leaves() -> None:
    assert tool_line("ab", {"k": "v" * 12}, 20) == 'ab(k="vvvvvvvvvvvv")'  # exactly 20
    assert tool_line("ab", {"k": "v" * 13}, 20) == 'ab(k="vvvvvvvvvvvv…)'
    # A long name still leaves the arguments 8 characters.
    assert tool_line("n" * 10, {"k": "v" * 10}, 20) == 'nnnnnnnnnn(k="vvvv…)'


def test_a_tool_line_shows_every_control_character_in_the_name() -> None:
    assert tool_line("a\tb", {}, 40) == "a\\tb()"


def test_fold_drops_only_trailing_newlines_and_folds_past_eight_lines() -> None:
    assert fold("\n\na  \n\n") == (["", "", "a  "], 0)
    assert fold("aX\n") == (["aX"], 0)
    eight = "\n".join("12345678")
    assert fold(eight) == (list("12345678"), 0)
    nine = "\n".join("123456789")
    assert fold(nine) == (list("123456"), 3)
    assert fold("\n".join("12345"), 2) == (["1", "2"], 3)


def test_a_failed_reply_without_a_message_says_the_model_call_failed() -> None:
    failed = MessageEnd(message=AssistantMessage(stop_reason=StopReason.ERROR))
    assert plain(failed) == "error: the model call failed\n"


def test_the_style_of_each_diff_line() -> None:
    assert [diff_style(line) for line in ["+++ b", "--- a", "+x", "-y", "@@ -1 +1 @@", " z"]] == [
        "bold",
        "bold",
        "green",
        "red",
        "cyan",
        "",
    ]


def test_the_style_of_each_kind_of_line_on_a_terminal() -> None:
    interrupted = MessageEnd(message=AssistantMessage(stop_reason=StopReason.ABORTED))
    cut = MessageEnd(message=AssistantMessage(stop_reason=StopReason.LENGTH))
    injected = MessageEnd(message=UserMessage.from_text(f"{AGENT_STOPPED_PREFIX} by a hook"))
    retry = ProviderRetry(
        attempt=1, max_retries=3, delay_seconds=1.5, kind=ErrorKind.RATE_LIMITED, error="busy"
    )
    rejected = InputRejected(reason="too long")
    assert rich(interrupted) == "\x1b[33m⏹ interrupted\x1b[0m\n"
    assert rich(cut) == "\x1b[2m(the reply hit the output token limit)\x1b[0m\n"
    assert rich(injected) == f"\x1b[33m{AGENT_STOPPED_PREFIX} by a hook\x1b[0m\n"
    assert rich(retry) == "\x1b[33mretrying in 1.5s (attempt 1 of 3): busy\x1b[0m\n"
    assert rich(rejected) == "\x1b[1;31merror: the prompt was rejected: too long\x1b[0m\n"


def test_a_line_or_exact_text_without_a_style_is_drawn_unstyled() -> None:
    out = io.StringIO()
    renderer = RichRenderer(
        Console(file=out, width=60, force_terminal=True, color_system="standard")
    )
    renderer.line("plain")
    renderer.exact("exact\nsecond\ta")
    renderer.diff(["+x"])
    assert out.getvalue() == "plain\nexact\nsecond\x1b[7m\\t\x1b[0ma\n\x1b[32m+x\x1b[0m\n"


def test_exact_text_given_a_style_draws_every_line_in_it() -> None:
    out = io.StringIO()
    renderer = RichRenderer(
        Console(file=out, width=60, force_terminal=True, color_system="standard")
    )
    renderer.exact("one\ntwo", "bold")
    assert out.getvalue() == "\x1b[1mone\x1b[0m\n\x1b[1mtwo\x1b[0m\n"


def test_thinking_in_several_deltas_stays_on_one_line() -> None:
    def thought(delta: str) -> AgentEvent:
        return MessageUpdate(delta=ThinkingDelta(content_index=0, delta=delta))

    assert plain(thought("hm"), thought(" ok"), MessageEnd(message=AssistantMessage())) == (
        "hm ok\n"
    )


def test_a_tool_line_fits_the_width_less_two() -> None:
    start = ToolExecutionStart(tool_call_id="c1", tool_name="bash", arguments={"k": "v" * 80})
    shown = plain(start, width=40).rstrip("\n")
    assert shown == "• " + tool_line("bash", {"k": "v" * 80}, 38)
    assert len(shown) == 40


def test_a_plain_renderer_is_100_columns_unless_told() -> None:
    long = "y" * 200
    assert plain(ended(long)) == f"✓ bash\n    {'y' * 95}…\n"
    assert plain(ended(long), width=30) == f"✓ bash\n    {'y' * 25}…\n"


def test_a_tool_never_started_is_shown_by_its_name_every_character_visible() -> None:
    assert plain(ended("", name="a\tb")) == "✓ a\\tb\n"
    assert rich(ended("", name="a\tb")) == "\x1b[32m✓\x1b[0m \x1b[1ma\\tb\x1b[0m\n"


def test_a_failed_tool_shows_twelve_lines_before_folding() -> None:
    shown = plain(ended("\n".join(str(n) for n in range(15)), error=True))
    assert shown == "✗ bash\n" + "".join(f"    {n}\n" for n in range(12)) + "    … 3 more lines\n"


class Recorder(Renderer):
    """A renderer on the base class's defaults that keeps its tool lines."""

    def __init__(self) -> None:
        super().__init__()
        self.started: list[str] = []

    def _tool_started(self, call_id: str, line: str) -> None:
        self.started.append(line)


def test_the_base_renderer_shows_text_and_thinking_in_100_columns() -> None:
    renderer = Recorder()
    assert (renderer.show_text, renderer.show_thinking, renderer.width) == (True, True, 100)
    renderer.handle(
        ToolExecutionStart(tool_call_id="c1", tool_name="bash", arguments={"k": "v" * 200})
    )
    assert renderer.started == [tool_line("bash", {"k": "v" * 200}, 98)]


async def test_waiting_for_a_tool_line_ends_when_it_is_shown_or_after_2_seconds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    delays: list[float] = []
    scopes: list[anyio.CancelScope] = []

    def move_on_after(delay: float) -> anyio.CancelScope:
        delays.append(delay)
        scope = anyio.move_on_after(0.1)
        scopes.append(scope)
        return scope

    monkeypatch.setattr(
        render, "anyio", types.SimpleNamespace(move_on_after=move_on_after, Event=anyio.Event)
    )
    renderer = PlainRenderer(io.StringIO())
    async with anyio.create_task_group() as group:
        group.start_soon(renderer.wait_tool_shown, "c1")
        await anyio.lowlevel.checkpoint()
        renderer.handle(ToolExecutionStart(tool_call_id="c1", tool_name="bash", arguments={}))
    await renderer.wait_tool_shown("c1")  # already shown
    assert delays == [2.0, 2.0]
    assert [scope.cancelled_caught for scope in scopes] == [False, False]
