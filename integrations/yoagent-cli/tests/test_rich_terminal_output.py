"""What the Rich renderer sends a terminal, byte for byte: the colours of tool lines, their
output, thinking, notices, errors and diffs; a tool line marked in place only when it is
the last line out; streamed Markdown settling above a live region that leaves nothing
behind. (Rich's own escape sequences, at the version the lock file pins.)"""

from __future__ import annotations

import io
import re
import sys
import threading
import types
from collections.abc import Callable

import pytest
from rich.console import Console

from yoagent.cli import rich_render
from yoagent.cli.rich_render import RichRenderer
from yoagent.core import (
    AgentEvent,
    AssistantMessage,
    MessageEnd,
    MessageUpdate,
    TextContent,
    TextDelta,
    ThinkingDelta,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolResultMessage,
)

Step = AgentEvent | Callable[[RichRenderer], None]

END = MessageEnd(message=AssistantMessage())
HIDE, SHOW = "\x1b[?25l", "\x1b[?25h"  # the cursor, hidden while a live region is up
UP = "\x1b[1A\r\x1b[2K"  # up one line, erased: a start line marked in place
STARTED = '\x1b[36m•\x1b[0m \x1b[1mbash(command="ls")\x1b[0m\n'
DONE = '\x1b[32m✓\x1b[0m \x1b[1mbash(command="ls")\x1b[0m\n'


@pytest.fixture(autouse=True)
def colour_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    """A terminal that shows colours: under ``TERM=dumb`` Rich writes none (a test that
    needs that says so itself)."""
    monkeypatch.setenv("TERM", "xterm-256color")


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The stream's clock, still unless a test moves it (the first text always draws)."""
    now = [100.0]
    monkeypatch.setattr(rich_render, "time", types.SimpleNamespace(monotonic=lambda: now[0]))
    return now


def start(call_id: str = "c1") -> ToolExecutionStart:
    return ToolExecutionStart(tool_call_id=call_id, tool_name="bash", arguments={"command": "ls"})


def end(
    text: str = "", *, call_id: str = "c1", error: bool = False, name: str = "bash"
) -> ToolExecutionEnd:
    return ToolExecutionEnd(
        result=ToolResultMessage(
            tool_call_id=call_id, tool_name=name, content=[TextContent(text=text)], is_error=error
        )
    )


def text(delta: str) -> MessageUpdate:
    return MessageUpdate(delta=TextDelta(content_index=0, delta=delta))


def thinking(delta: str) -> MessageUpdate:
    return MessageUpdate(delta=ThinkingDelta(content_index=0, delta=delta))


def console(out: io.StringIO, width: int = 40, **options: bool) -> Console:
    return Console(file=out, width=width, color_system="standard", **options)  # pyright: ignore[reportArgumentType]


def draw(
    steps: list[Step], *, width: int = 40, terminal: bool = True, no_color: bool = False, **kw: bool
) -> str:
    out = io.StringIO()
    renderer = RichRenderer(
        console(out, width, force_terminal=terminal, no_color=no_color),
        **kw,
    )
    for step in steps:
        if isinstance(step, Callable):
            step(renderer)
        else:
            renderer.handle(step)
    return out.getvalue()


def reply(shown: str, width: int = 40) -> str:
    """A one-line reply streamed in one delta: drawn live, settled, the live region gone."""
    line = shown + " " * (width - 1 - len(re.sub("\x1b\\[[0-9;]*m", "", shown)))
    return f"{HIDE}{line}\r\x1b[2K{line}\n{line}\r\x1b[2K\r\x1b[2K\n{SHOW}\r\x1b[1A\x1b[2K"


def test_a_finished_tool_is_marked_green_in_place_with_its_output_dim() -> None:
    shown = draw([start(), end("a\n" + "x" * 50)])
    assert shown == (f"{STARTED}{UP}{DONE}\x1b[2m    a\x1b[0m\n\x1b[2m    {'x' * 35}…\x1b[0m\n")


def test_a_long_output_is_folded_to_six_lines_and_a_dim_count() -> None:
    shown = draw([start(), end("\n".join(str(n) for n in range(9)))])
    lines = "".join(f"\x1b[2m    {n}\x1b[0m\n" for n in range(6))
    assert shown == f"{STARTED}{UP}{DONE}{lines}\x1b[2m    … 3 more lines\x1b[0m\n"


def test_a_failed_tool_is_marked_red_with_its_output_red_and_twice_as_many_lines() -> None:
    shown = draw([start(), end("\n".join(str(n) for n in range(20)), error=True)])
    lines = "".join(f"\x1b[31m    {n}\x1b[0m\n" for n in range(12))
    assert shown == (
        f'{STARTED}{UP}\x1b[31m✗\x1b[0m \x1b[1mbash(command="ls")\x1b[0m\n{lines}'
        "\x1b[2m    … 8 more lines\x1b[0m\n"
    )


def test_a_tool_that_was_never_started_is_shown_by_its_name() -> None:
    assert draw([end("done", name="grep")]) == (
        "\x1b[32m✓\x1b[0m \x1b[1mgrep\x1b[0m\n\x1b[2m    done\x1b[0m\n"
    )
    assert draw([end(call_id="")]) == "\x1b[32m✓\x1b[0m \x1b[1mbash\x1b[0m\n"


def test_a_start_line_is_marked_in_place_only_when_it_is_the_last_line_out() -> None:
    # Even for a call whose id is empty: only that call's start line, last out, moves.
    assert draw([start(""), start("x"), end(call_id="x"), end(call_id="")]) == (
        f"{STARTED}{STARTED}{UP}{DONE}{DONE}"
    )
    notice = "\x1b[2mn\x1b[0m\n"
    assert draw([start(""), lambda r: r.notice("n"), end(call_id="")]) == (
        f"{STARTED}{notice}{DONE}"
    )
    assert draw([start(""), lambda r: r.exact("n"), end(call_id="")]) == f"{STARTED}n\n{DONE}"
    thought = "\x1b[2;3mhm\x1b[0m\n"
    assert draw([start(""), thinking("hm"), end(call_id="")]) == f"{STARTED}{thought}{DONE}"


def test_a_reply_between_a_start_line_and_its_end_keeps_the_start_line(
    clock: list[float],
) -> None:
    shown = draw([start(""), text("hi"), end(call_id="")])
    assert shown.startswith(STARTED)
    assert shown.endswith(f"{SHOW}\r\x1b[1A\x1b[2K{DONE}")
    assert UP not in shown


def test_a_start_line_is_not_moved_on_a_console_that_is_no_terminal() -> None:
    shown = draw([start(), end("ok")], terminal=False)
    assert shown == f"{STARTED}{DONE}\x1b[2m    ok\x1b[0m\n"


def test_output_lines_fit_the_width_the_tool_started_at_and_are_never_wrapped() -> None:
    out = io.StringIO()
    terminal = console(out, 40, force_terminal=True)
    renderer = RichRenderer(terminal)
    renderer.handle(start())
    terminal.width = 20  # the terminal narrowed while the tool ran
    renderer.handle(end("y" * 50))
    assert out.getvalue().endswith(f"\x1b[2m    {'y' * 35}…\x1b[0m\n")


def test_thinking_is_dim_italic_unhighlighted_and_ends_its_line_before_a_notice() -> None:
    shown = draw(
        [
            thinking('say "hi" 42'),
            thinking(" ok"),
            lambda r: r.notice("a 42"),
            lambda r: r.notice("b"),
        ]
    )
    assert shown == (
        '\x1b[2;3msay "hi" 42\x1b[0m\x1b[2;3m ok\x1b[0m\n\x1b[2ma 42\x1b[0m\n\x1b[2mb\x1b[0m\n'
    )


def test_thinking_is_shown_by_default_and_hidden_when_asked() -> None:
    assert draw([thinking("hm")]) == "\x1b[2;3mhm\x1b[0m"
    assert draw([thinking("secret"), text("shown"), END], show_thinking=False) == reply("shown")
    assert draw([thinking("secret"), text("shown"), END], show_text=False) == ""


def test_an_error_line_is_bold_red_and_not_wrapped() -> None:
    assert draw([lambda r: r.error("e" * 50)]) == f"\x1b[1;31merror: {'e' * 50}\x1b[0m\n"


def test_exact_text_marks_each_escape_in_reverse_and_a_diff_is_coloured() -> None:
    shown = draw([lambda r: r.exact("a\x1bb"), lambda r: r.diff(["+x", "-y", "@@ 1", "--- a"])])
    assert shown == (
        "a\x1b[7m\\x1b\x1b[0mb\n\x1b[32m+x\x1b[0m\n\x1b[31m-y\x1b[0m\n\x1b[36m@@ 1\x1b[0m\n"
        "\x1b[1m--- a\x1b[0m\n"
    )
    long = draw([lambda r: r.exact("z" * 50)])
    assert long == "z" * 50 + "\n"


def test_a_reply_streams_as_markdown_and_leaves_only_its_settled_lines(
    clock: list[float],
) -> None:
    shown = draw([text("Hello "), text("**world**"), END], width=30)
    first = "Hello" + " " * 24
    both = "Hello \x1b[1mworld\x1b[0m" + " " * 18
    assert shown == (
        f"{HIDE}{first}\r\x1b[2K{both}\n{first}\r\x1b[2K\r\x1b[2K\n{SHOW}\r\x1b[1A\x1b[2K"
    )


def test_text_streams_again_once_the_interval_has_passed(clock: list[float]) -> None:
    out = io.StringIO()
    renderer = RichRenderer(console(out, 30, force_terminal=True))
    clock[0] = 0.05  # exactly the interval since the start (0): drawn
    renderer.handle(text("one"))
    assert out.getvalue().endswith("one" + " " * 26)
    drawn = out.getvalue()
    clock[0] = 0.099
    renderer.handle(text(" two"))
    assert out.getvalue() == drawn  # too soon: nothing drawn
    clock[0] = 0.1  # exactly the interval again
    renderer.handle(text(" three"))
    assert out.getvalue().endswith("one two three" + " " * 16)


def test_lines_settle_above_a_live_region_of_eight(clock: list[float]) -> None:
    paragraphs = "".join(f"line {n}\n\n" for n in range(6))
    shown = draw([text(paragraphs), text("more"), END], width=30)
    pad = " " * 23
    live = "".join(f"line {n}{pad}\n\n" for n in range(2, 5)) + f"line 5{pad}"
    up = "\x1b[1A\x1b[2K" * 7
    assert shown == (
        f"{HIDE}line 0{pad}\n\nline 1{pad}\n\r\x1b[2K\n{live}\r\x1b[2K{up}"  # 2 settled
        f"\n{live}\n\nmore{pad}  \n\n{live}\r\x1b[2K{up}"  # "more": 6 lines settle, at the end
        f"\r\x1b[2K\n{SHOW}\r\x1b[1A\x1b[2K"
    )


def test_markdown_wraps_one_column_short_of_the_width_and_never_under_20(
    clock: list[float],
) -> None:
    wide = draw([text("word " * 12), END], width=30)
    assert "word word word word word word\nword word word word word word" in wide
    narrow = draw([text("word " * 6), END], width=10)
    assert "word word word word \nword word" in narrow


def test_markdown_without_colour_keeps_bold_and_underline_and_shows_the_url(
    clock: list[float],
) -> None:
    shown = draw([text("See [docs](https://x.example) and **b**"), END], no_color=True)
    assert shown == reply("See docs (\x1b[4mhttps://x.example\x1b[0m) and \x1b[1mb\x1b[0m")


def test_a_blank_reply_draws_nothing_that_stays_and_the_next_reply_draws_again(
    clock: list[float],
) -> None:
    blank = f"{HIDE}\r\x1b[2K\n{SHOW}\r\x1b[1A\x1b[2K"
    assert draw([text(" "), END, text("next"), END], width=30) == blank + reply("next", 30)
    assert draw([text("one"), END, text("two"), END]) == reply("one") + reply("two")


def test_the_live_region_leaves_stdout_alone(
    clock: list[float], capsys: pytest.CaptureFixture[str]
) -> None:
    before = sys.stdout, sys.stderr
    out = io.StringIO()
    renderer = RichRenderer(console(out, 30, force_terminal=True))
    renderer.handle(text("streaming"))
    assert (sys.stdout, sys.stderr) == before
    renderer.handle(END)


def test_streaming_starts_no_refresh_thread(clock: list[float]) -> None:
    before = set(threading.enumerate())
    out = io.StringIO()
    renderer = RichRenderer(console(out, 30, force_terminal=True))
    renderer.handle(text("streaming"))
    assert set(threading.enumerate()) <= before  # a thread of an earlier test may end
    renderer.handle(END)


def test_markdown_takes_the_terminals_colours_even_where_term_says_dumb(
    clock: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Markdown is drawn with the console's colour system, not one detected afresh."""
    monkeypatch.setenv("TERM", "dumb")
    shown = draw([text("**bold**"), END], width=30)
    assert "\x1b[1mbold\x1b[0m" in shown
