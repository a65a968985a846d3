"""What the terminal shows for a run's events."""

from __future__ import annotations

import io

from rich.console import Console

from yoagent.cli.render import PlainRenderer, fold, format_arguments, tool_line
from yoagent.cli.rich_render import RichRenderer
from yoagent.cli.status import Status, status_line
from yoagent.core import (
    AgentEnd,
    AgentEvent,
    AssistantMessage,
    ErrorKind,
    MessageEnd,
    MessageUpdate,
    ProviderRetry,
    SessionStats,
    StopReason,
    TextContent,
    TextDelta,
    ThinkingDelta,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolResultMessage,
    Usage,
    UserMessage,
)
from yoagent.core.extension import CANCELLED_MARKER


def result(text: str, *, error: bool = False) -> ToolResultMessage:
    return ToolResultMessage(
        tool_call_id="c1", tool_name="bash", content=[TextContent(text=text)], is_error=error
    )


def run_events(tool_output: str, *, error: bool = False) -> list[AgentEvent]:
    return [
        MessageUpdate(delta=ThinkingDelta(content_index=0, delta="let me think")),
        MessageUpdate(delta=TextDelta(content_index=1, delta="Running ")),
        MessageUpdate(delta=TextDelta(content_index=1, delta="it.")),
        MessageEnd(message=AssistantMessage(stop_reason=StopReason.TOOL_USE)),
        ToolExecutionStart(tool_call_id="c1", tool_name="bash", arguments={"command": "ls"}),
        ToolExecutionEnd(result=result(tool_output, error=error)),
        AgentEnd(stats=SessionStats(usage=Usage(input=80, output=7, cache_read=20), turns=1)),
    ]


def plain(events: list[AgentEvent], **options: bool) -> str:
    out = io.StringIO()
    renderer = PlainRenderer(out, **options)
    for event in events:
        renderer.handle(event)
    return out.getvalue()


def test_plain_output_of_a_run() -> None:
    assert plain(run_events("a\nb")) == (
        'let me think\nRunning it.\n• bash(command="ls")\n✓ bash(command="ls")\n    a\n    b\n'
    )


def test_thinking_can_be_hidden_and_text_left_out() -> None:
    assert "let me think" not in plain(run_events("a"), show_thinking=False)
    quiet = plain(run_events("a"), show_text=False)
    assert "Running" not in quiet
    assert "let me think" not in quiet
    assert '✓ bash(command="ls")' in quiet


def test_long_tool_output_is_folded_and_errors_are_marked() -> None:
    output = "\n".join(f"line {n}" for n in range(40))
    shown = plain(run_events(output))
    assert "    line 5\n" in shown
    assert "line 6\n" not in shown
    assert "… 34 more lines" in shown
    failed = plain(run_events("boom", error=True))
    assert '✗ bash(command="ls")\n    boom\n' in failed


def test_errors_interruptions_retries_and_stop_markers() -> None:
    events: list[AgentEvent] = [
        MessageEnd(
            message=AssistantMessage(stop_reason=StopReason.ERROR, error_message="AUTH: 401")
        ),
        ProviderRetry(
            attempt=1, max_retries=3, delay_seconds=2.0, kind=ErrorKind.NETWORK, error="reset"
        ),
        MessageEnd(message=AssistantMessage(stop_reason=StopReason.ABORTED)),
        MessageEnd(message=UserMessage.from_text(CANCELLED_MARKER)),
        MessageEnd(message=UserMessage.from_text("[Agent stopped: turn limit reached (1 turns)]")),
    ]
    shown = plain(events)
    assert "error: AUTH: 401\n" in shown
    assert "retrying in 2.0s (attempt 1 of 3): reset\n" in shown
    assert "⏹ interrupted\n" in shown
    assert CANCELLED_MARKER not in shown
    assert "[Agent stopped: turn limit reached (1 turns)]\n" in shown


def test_status_line_shows_the_cost_or_that_it_is_unknown() -> None:
    stats = SessionStats(usage=Usage(input=900, output=50, cache_read=100), turns=2)
    assert status_line(stats) == "tokens in 1,000 (cache hit 10%) · out 50 · cost unknown"
    stats.cost_usd = 0.01234
    assert status_line(stats) == "tokens in 1,000 (cache hit 10%) · out 50 · $0.0123"
    assert status_line(SessionStats()) == "tokens in 0 (cache hit 0%) · out 0"


def test_status_line_shows_context_fill_elapsed_time_compactions_and_grants() -> None:
    stats = SessionStats(usage=Usage(input=900, output=50, cache_read=100), compactions=2)
    status = Status(
        stats=stats,
        context_tokens=50_000,
        context_window=200_000,
        elapsed=75.4,
        grants=["bash", "edit_file"],
        show_unknown=False,  # pricing is off: nothing said about the cost
    )
    assert status.line() == (
        "tokens in 1,000 (cache hit 10%) · out 50 · context 25% of 200k · 1m15s"
        " · compacted 2× · always allowed: bash, edit_file"
    )
    assert Status(stats=SessionStats(), elapsed=3.21).line().endswith(" · 3.2s")


def test_tool_lines_are_one_shortened_line() -> None:
    line = tool_line("write_file", {"path": "a.txt", "content": "x" * 500 + "\nmore"}, 80)
    assert len(line) <= 80
    assert "\n" not in line
    assert line.startswith('write_file(path="a.txt", content="xxx')
    assert format_arguments({"n": 3, "flag": True}, 100) == "n=3, flag=true"
    assert fold("a\nb\nc", 6) == (["a", "b", "c"], 0)


def test_rich_renderer_draws_markdown_and_marks_the_tool_line() -> None:
    out = io.StringIO()
    console = Console(file=out, width=80, force_terminal=True, color_system=None)
    renderer = RichRenderer(console)
    events: list[AgentEvent] = [
        MessageUpdate(delta=TextDelta(content_index=0, delta="# Title\n\nSome **bold** text")),
        MessageEnd(message=AssistantMessage()),
        ToolExecutionStart(tool_call_id="c1", tool_name="bash", arguments={"command": "ls"}),
        ToolExecutionEnd(result=result("ok")),
    ]
    for event in events:
        renderer.handle(event)
    shown = out.getvalue()
    assert "Title" in shown
    assert "# Title" not in shown  # rendered, not raw
    assert "Some bold text" in shown
    assert '✓ bash(command="ls")' in shown
    assert "\x1b[1A" in shown  # the start line was marked in place
