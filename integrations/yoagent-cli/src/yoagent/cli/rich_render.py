"""The renderer for a person at a terminal: streamed Markdown, colours, tool lines marked
✓/✗ in place (see :class:`~.render.Renderer` for what each event shows)."""

from __future__ import annotations

import io
import time

from rich.console import Console
from rich.live import Live
from rich.markdown import Markdown
from rich.text import Text

from .render import FAIL_MARK, OK_MARK, START_MARK, Renderer, shorten

ESCAPE_STYLE = "reverse"
"""How an escaped control character (``\\x1b``) is marked apart from typed text."""


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
        # No OSC 8 hyperlinks: a link's target is printed after its text, never hidden.
        scratch.print(Markdown(self.text, hyperlinks=False))
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

    def _line(self, text: str, style: str) -> None:
        self._last_tool = None
        self._end_thinking()
        self.console.print(Text(text, style=style), soft_wrap=True)

    def _exact_line(self, parts: list[tuple[str, bool]], style: str) -> None:
        self._last_tool = None
        self._end_thinking()
        text = Text(style=style)
        for part, escaped in parts:
            text.append(part, style=ESCAPE_STYLE if escaped else "")
        self.console.print(text, soft_wrap=True)
