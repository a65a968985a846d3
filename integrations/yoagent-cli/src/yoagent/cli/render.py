"""Agent events on the terminal: streamed Markdown, dimmed thinking, one line per tool call.

:class:`RichRenderer` draws for a person at a terminal (rich: Markdown, colours, tool lines
marked ✓/✗ in place). :class:`PlainRenderer` writes plain text for pipes, logs and dumb
terminals. Both print a status line after each run.
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Mapping
from typing import Any, TextIO

import anyio
from rich.console import Console
from rich.live import Live
from rich.markdown import Markdown
from rich.text import Text

from yoagent.core import (
    CANCELLED_MARKER,
    AgentEnd,
    AgentEvent,
    AssistantMessage,
    InputRejected,
    MessageEnd,
    MessageUpdate,
    ProgressMessage,
    ProviderRetry,
    SessionStats,
    StopReason,
    TextDelta,
    ThinkingDelta,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolResultMessage,
    UserMessage,
    is_loop_injected,
)

FOLD_LINES = 6
"""Tool output longer than this many lines (plus two) is folded to its first lines."""

START_MARK = "•"
OK_MARK = "✓"
FAIL_MARK = "✗"


# --- formatting shared by both renderers ---------------------------------------------------


def shorten(text: str, limit: int) -> str:
    """``text`` cut to ``limit`` characters, ending in an ellipsis when cut."""
    if limit <= 1:
        return text[:limit]
    return text if len(text) <= limit else text[: limit - 1] + "…"


def format_arguments(arguments: Mapping[str, Any], limit: int, per_value: int = 60) -> str:
    """``key=value, …`` on one line, every value and the whole shortened."""
    parts: list[str] = []
    for key, value in arguments.items():
        shown = json.dumps(value, ensure_ascii=False, default=str)
        parts.append(f"{key}={shorten(shown, per_value)}")
    return shorten(", ".join(parts), limit)


def tool_line(name: str, arguments: Mapping[str, Any], width: int) -> str:
    """``name(arguments)`` fitted to ``width`` characters (one terminal line)."""
    room = max(width - len(name) - 2, 8)
    return shorten(f"{name}({format_arguments(arguments, room)})", width)


def fold(text: str, max_lines: int = FOLD_LINES) -> tuple[list[str], int]:
    """The lines of ``text`` to show and how many are folded away."""
    lines = text.rstrip("\n").splitlines()
    if len(lines) <= max_lines + 2:
        return lines, 0
    return lines[:max_lines], len(lines) - max_lines


def status_line(stats: SessionStats) -> str:
    """``tokens in N (cache hit P%) · out M · compactions C · $X.XXXX`` (cost when priced)."""
    usage = stats.usage
    prompt = usage.input + usage.cache_read + usage.cache_write
    hit = round(100 * usage.cache_read / prompt) if prompt else 0
    parts = [
        f"tokens in {prompt:,} (cache hit {hit}%)",
        f"out {usage.output:,}",
        f"compactions {stats.compactions}",
    ]
    if stats.cost_usd is not None and not usage.is_zero():
        parts.append(f"${stats.cost_usd:.4f}")
    return " · ".join(parts)


def error_text(message: AssistantMessage) -> str:
    """What went wrong with a reply that ended in error."""
    return message.error_message or "the model call failed"


# --- the renderers -------------------------------------------------------------------------


class Renderer:
    """Turns agent events into terminal output. Subclasses draw; this class decides what.

    ``show_text=False`` leaves the assistant's text out (``-p`` mode prints only the final
    answer, on stdout).
    """

    def __init__(self, *, show_thinking: bool = True, show_text: bool = True) -> None:
        self.show_thinking = show_thinking
        self.show_text = show_text
        self.width = 100
        self._shown: dict[str, anyio.Event] = {}
        self._block: str | None = None  # "text" | "thinking" while one streams

    # --- what subclasses draw ---------------------------------------------------------------

    def _write_text(self, delta: str) -> None:
        raise NotImplementedError

    def _write_thinking(self, delta: str) -> None:
        raise NotImplementedError

    def _end_text(self) -> None:
        raise NotImplementedError

    def _end_thinking(self) -> None:
        raise NotImplementedError

    def _tool_started(self, call_id: str, line: str) -> None:
        raise NotImplementedError

    def _tool_ended(self, call_id: str, line: str, ok: bool, output: list[str], more: int) -> None:
        raise NotImplementedError

    def line(self, text: str, style: str = "") -> None:
        """One line of the CLI's own output (``style``: a rich style, ignored when plain)."""
        raise NotImplementedError

    # --- shared logic -------------------------------------------------------------------------

    def finish_block(self) -> None:
        """End the text or thinking block that is streaming, if any (before other output)."""
        if self._block == "text":
            self._end_text()
        elif self._block == "thinking":
            self._end_thinking()
        self._block = None

    def error(self, text: str) -> None:
        """An error line."""
        self.finish_block()
        self.line(f"error: {text}", "bold red")

    def notice(self, text: str) -> None:
        """A dim informational line."""
        self.finish_block()
        self.line(text, "dim")

    async def wait_tool_shown(self, call_id: str) -> None:
        """Return once the tool line of ``call_id`` is on screen (so a question can follow)."""
        with anyio.move_on_after(2.0):
            await self._shown.setdefault(call_id, anyio.Event()).wait()

    def handle(self, event: AgentEvent) -> None:
        """Draw one event."""
        if isinstance(event, MessageUpdate):
            delta = event.delta
            if isinstance(delta, TextDelta) and self.show_text:
                if self._block != "text":
                    self.finish_block()
                    self._block = "text"
                self._write_text(delta.delta)
            elif isinstance(delta, ThinkingDelta) and self.show_thinking and self.show_text:
                if self._block != "thinking":
                    self.finish_block()
                    self._block = "thinking"
                self._write_thinking(delta.delta)
        elif isinstance(event, MessageEnd):
            self._message_end(event)
        elif isinstance(event, ToolExecutionStart):
            self.finish_block()
            line = tool_line(event.tool_name, event.arguments, self.width - 2)
            self._tool_started(event.tool_call_id, line)
            self._shown.setdefault(event.tool_call_id, anyio.Event()).set()
        elif isinstance(event, ToolExecutionEnd):
            self._tool_end(event.result)
        elif isinstance(event, ProgressMessage):
            self.notice(f"  {event.tool_name}: {event.text}")
        elif isinstance(event, ProviderRetry):
            self.finish_block()
            self.line(
                f"retrying in {event.delay_seconds:.1f}s "
                f"(attempt {event.attempt} of {event.max_retries}): {event.error}",
                "yellow",
            )
        elif isinstance(event, InputRejected):
            self.error(f"the prompt was rejected: {event.reason}")
        elif isinstance(event, AgentEnd):
            self.finish_block()
            self.notice(status_line(event.stats))

    def _message_end(self, event: MessageEnd) -> None:
        message = event.message
        if isinstance(message, AssistantMessage):
            self.finish_block()
            if message.stop_reason is StopReason.ERROR:
                self.error(error_text(message))
            elif message.stop_reason is StopReason.ABORTED:
                self.line("⏹ interrupted", "yellow")
            elif message.stop_reason is StopReason.LENGTH:
                self.notice("(the reply hit the output token limit)")
        elif (
            isinstance(message, UserMessage)
            and is_loop_injected(message)
            and message.text != CANCELLED_MARKER
        ):
            self.finish_block()
            self.line(message.text, "yellow")

    def _tool_end(self, result: ToolResultMessage) -> None:
        self.finish_block()
        ok = not result.is_error
        shown, more = fold(result.text, FOLD_LINES if ok else FOLD_LINES * 2)
        self._tool_ended(result.tool_call_id, result.tool_name, ok, shown, more)


class PlainRenderer(Renderer):
    """Plain text on ``out``: no colours, no cursor movement."""

    def __init__(
        self,
        out: TextIO,
        *,
        show_thinking: bool = True,
        show_text: bool = True,
        width: int = 100,
    ) -> None:
        super().__init__(show_thinking=show_thinking, show_text=show_text)
        self.out = out
        self.width = width
        self._lines: dict[str, str] = {}
        self._at_line_start = True

    def _emit(self, text: str) -> None:
        self.out.write(text)
        if text:
            self._at_line_start = text.endswith("\n")
        self.out.flush()

    def _write_text(self, delta: str) -> None:
        self._emit(delta)

    def _write_thinking(self, delta: str) -> None:
        self._emit(delta)

    def _end_text(self) -> None:
        if not self._at_line_start:
            self._emit("\n")

    def _end_thinking(self) -> None:
        self._end_text()

    def _tool_started(self, call_id: str, line: str) -> None:
        self._lines[call_id] = line
        self._emit(f"{START_MARK} {line}\n")

    def _tool_ended(self, call_id: str, line: str, ok: bool, output: list[str], more: int) -> None:
        full = self._lines.pop(call_id, line)
        self._emit(f"{OK_MARK if ok else FAIL_MARK} {full}\n")
        for text in output:
            self._emit(f"    {shorten(text, self.width - 4)}\n")
        if more:
            self._emit(f"    … {more} more lines\n")

    def line(self, text: str, style: str = "") -> None:
        self._end_text()
        self._emit(text + "\n")


class _MarkdownStream:
    """Markdown that grows as it streams: settled lines are printed once, above a small live
    region holding the last few (which may still change as more text arrives)."""

    LIVE_LINES = 8
    INTERVAL = 0.05

    def __init__(self, console: Console) -> None:
        self.console = console
        self.text = ""
        self.printed = 0
        self.live: Live | None = None
        self.last = 0.0

    def add(self, delta: str) -> None:
        self.text += delta
        now = time.monotonic()
        if now - self.last >= self.INTERVAL:
            self.last = now
            self._render(final=False)

    def _lines(self) -> list[str]:
        # A console of its own: capturing on the live one would capture the live region too.
        main = self.console
        buffer = io.StringIO()
        scratch = Console(
            file=buffer,
            width=max(main.width - 1, 20),  # never the exact width: no pending wraps
            color_system=main.color_system,  # pyright: ignore[reportArgumentType]
            force_terminal=main.is_terminal,
            no_color=main.no_color,
            highlight=False,
        )
        scratch.print(Markdown(self.text))
        return buffer.getvalue().splitlines(keepends=True)

    def _render(self, final: bool) -> None:
        lines = self._lines()
        settled = len(lines) if final else max(len(lines) - self.LIVE_LINES, 0)
        if self.live is None:
            self.live = Live(
                Text(""),
                console=self.console,
                auto_refresh=False,
                transient=True,  # everything settles above it by the end
                redirect_stdout=False,
                redirect_stderr=False,
            )
            self.live.start()
        if settled > self.printed:
            chunk = "".join(lines[self.printed : settled]).removesuffix("\n")
            self.live.console.print(Text.from_ansi(chunk), soft_wrap=True)
            self.printed = settled
        rest = "".join(lines[settled:]).removesuffix("\n")
        self.live.update(Text.from_ansi(rest), refresh=True)

    def close(self) -> None:
        if self.text.strip():
            self._render(final=True)
        if self.live is not None:
            self.live.stop()
            self.live = None


class RichRenderer(Renderer):
    """Colours and Markdown for a terminal."""

    def __init__(
        self,
        console: Console,
        *,
        show_thinking: bool = True,
        show_text: bool = True,
    ) -> None:
        super().__init__(show_thinking=show_thinking, show_text=show_text)
        self.console = console
        self.width = console.width
        self._markdown: _MarkdownStream | None = None
        self._lines: dict[str, str] = {}
        self._last_tool: str | None = None  # the call whose start line is the last line out
        self._thinking_open = False

    def _write_text(self, delta: str) -> None:
        self._last_tool = None
        if self._markdown is None:
            self._markdown = _MarkdownStream(self.console)
        self._markdown.add(delta)

    def _write_thinking(self, delta: str) -> None:
        self._last_tool = None
        self._thinking_open = True
        self.console.out(delta, style="dim italic", end="", highlight=False)

    def _end_text(self) -> None:
        if self._markdown is not None:
            self._markdown.close()
            self._markdown = None

    def _end_thinking(self) -> None:
        if self._thinking_open:
            self.console.out("", end="\n")
            self._thinking_open = False

    def _tool_started(self, call_id: str, line: str) -> None:
        self.width = self.console.width
        self._lines[call_id] = line
        self.console.print(Text.assemble((START_MARK, "cyan"), " ", (line, "bold")))
        self._last_tool = call_id

    def _tool_ended(self, call_id: str, line: str, ok: bool, output: list[str], more: int) -> None:
        full = self._lines.pop(call_id, line)
        if self._last_tool == call_id and self.console.is_terminal:
            # The start line is the last one out: mark it in place.
            self.console.file.write("\x1b[1A\r\x1b[2K")
        mark = (OK_MARK, "green") if ok else (FAIL_MARK, "red")
        self.console.print(Text.assemble(mark, " ", (full, "bold")))
        self._last_tool = None
        for text in output:
            self.console.print(
                Text("    " + shorten(text, self.width - 4), style="dim" if ok else "red"),
                soft_wrap=True,
            )
        if more:
            self.console.print(Text(f"    … {more} more lines", style="dim"))

    def line(self, text: str, style: str = "") -> None:
        self._last_tool = None
        self._end_thinking()
        self.console.print(Text(text, style=style), soft_wrap=True)
