"""Agent events on the terminal: what to draw for each event, and plain-text drawing.

:class:`Renderer` decides what an event shows; :class:`PlainRenderer` writes it as plain
text for pipes, logs and dumb terminals, and :class:`~.rich_render.RichRenderer` draws it
for a person (Markdown, colours, tool lines marked ✓/✗ in place).

Everything drawn passes through :mod:`.safe_text` first: model text, thinking, tool names,
arguments and output, error texts and notices quoting them reach the terminal inert.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TextIO

import anyio

from yoagent.core import (
    AgentEnd,
    AgentEvent,
    AssistantMessage,
    InputRejected,
    MessageEnd,
    MessageUpdate,
    ProgressMessage,
    ProviderRetry,
    StopReason,
    TextDelta,
    ThinkingDelta,
    ToolExecutionEnd,
    ToolExecutionStart,
    ToolResultMessage,
    UserMessage,
)
from yoagent.core.extension import CANCELLED_MARKER, is_loop_injected

from .safe_text import inert, inert_parts

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
    """``name(arguments)`` fitted to ``width`` characters (one terminal line), inert."""
    room = max(width - len(name) - 2, 8)
    return shorten(inert(f"{name}({format_arguments(arguments, room)})", strict=True), width)


def fold(text: str, max_lines: int = FOLD_LINES) -> tuple[list[str], int]:
    """The lines of ``text`` to show and how many are folded away."""
    lines = text.rstrip("\n").splitlines()
    if len(lines) <= max_lines + 2:
        return lines, 0
    return lines[:max_lines], len(lines) - max_lines


def error_text(message: AssistantMessage) -> str:
    """What went wrong with a reply that ended in error."""
    return message.error_message or "the model call failed"


def diff_style(line: str) -> str:
    """The style of one unified-diff line: additions green, removals red, hunks cyan."""
    if line.startswith(("+++", "---")):
        return "bold"
    if line.startswith("+"):
        return "green"
    if line.startswith("-"):
        return "red"
    if line.startswith("@@"):
        return "cyan"
    return ""


# --- the renderers -------------------------------------------------------------------------


class Renderer:
    """Turns agent events into terminal output. Subclasses draw; this class decides what.

    ``show_text=False`` leaves the assistant's text out (``-p`` mode prints only the final
    answer, on stdout). The status line after a run is the caller's to print (it knows the
    model and the clock).
    """

    def __init__(self, *, show_thinking: bool = True, show_text: bool = True) -> None:
        self.show_thinking = show_thinking
        self.show_text = show_text
        self.width = 100
        self._shown: dict[str, anyio.Event] = {}
        self._block: str | None = None  # "text" | "thinking" while one streams
        self.explain: Callable[[AssistantMessage], str] = error_text
        """How a failed reply is put into words (the CLI names the server and what to do)."""

    # --- what subclasses draw (their text is already inert) -----------------------------------

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

    def _line(self, text: str, style: str) -> None:
        raise NotImplementedError

    def _exact_line(self, parts: list[tuple[str, bool]], style: str) -> None:
        raise NotImplementedError

    # --- shared logic -------------------------------------------------------------------------

    def line(self, text: str, style: str = "") -> None:
        """One line of output (``style``: a rich style, ignored when plain); any control
        character in ``text`` is shown, not obeyed."""
        self._line(inert(text), style)

    def exact(self, text: str, style: str = "") -> None:
        """``text`` exactly as it is (for a person to approve): every control, format or
        invisible character shown as a marked escape such as ``\\x1b``."""
        self.finish_block()
        for line in text.split("\n"):
            self._exact_line(inert_parts(line, strict=True), style)

    def diff(self, lines: Sequence[str]) -> None:
        """A unified diff, coloured by :func:`diff_style`, every character shown exactly."""
        self.finish_block()
        for line in lines:
            self._exact_line(inert_parts(line, strict=True), diff_style(line))

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
                self._write_text(inert(delta.delta))
            elif isinstance(delta, ThinkingDelta) and self.show_thinking and self.show_text:
                if self._block != "thinking":
                    self.finish_block()
                    self._block = "thinking"
                self._write_thinking(inert(delta.delta))
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

    def _message_end(self, event: MessageEnd) -> None:
        message = event.message
        if isinstance(message, AssistantMessage):
            self.finish_block()
            if message.stop_reason is StopReason.ERROR:
                self.error(self.explain(message))
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
        shown, more = fold(inert(result.text), FOLD_LINES if ok else FOLD_LINES * 2)
        self._tool_ended(result.tool_call_id, inert(result.tool_name, strict=True), ok, shown, more)


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

    def _line(self, text: str, style: str) -> None:
        self._end_text()
        self._emit(text + "\n")

    def _exact_line(self, parts: list[tuple[str, bool]], style: str) -> None:
        self._line("".join(text for text, _ in parts), style)
