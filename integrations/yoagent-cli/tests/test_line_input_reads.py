"""The two line readers in this process: ``StreamInput`` on a pipe (the prompt written and
flushed, the newline taken off, the end of input, Ctrl+C as a signal between two reads) and
``TerminalInput`` on prompt-toolkit's pipe input (a line, Ctrl+C and Ctrl+D typed, Ctrl+C as
a signal during and before a read, the history file and where it cannot be)."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.completion import ThreadedCompleter, WordCompleter
from prompt_toolkit.history import FileHistory, InMemoryHistory
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from yoagent.cli.line_input import StreamInput, TerminalInput


class CountingOut(io.StringIO):
    """An output that counts its flushes."""

    def __init__(self) -> None:
        super().__init__()
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1
        super().flush()


async def test_a_stream_line_comes_without_its_newline_after_the_prompt() -> None:
    out = CountingOut()
    lines = StreamInput(io.StringIO("  first  \nsecond\r\nlast"), out)
    assert await lines.read("❯ ") == "  first  "
    assert out.getvalue() == "❯ "
    assert out.flushes == 1  # shown before the read waits
    assert await lines.ask("? ") == "second\r"  # only the newline is taken
    assert await lines.read("❯ ") == "last"
    with pytest.raises(EOFError):
        await lines.read("❯ ")
    assert out.getvalue() == "❯ ? ❯ ❯ "


async def test_an_empty_line_is_not_the_end_of_input() -> None:
    lines = StreamInput(io.StringIO("\n"), io.StringIO())
    assert await lines.read("") == ""
    with pytest.raises(EOFError):
        await lines.ask("")


@pytest.mark.parametrize("method", ["read", "ask"])
async def test_ctrl_c_as_a_signal_interrupts_the_next_read_once(method: str) -> None:
    out = io.StringIO()
    lines = StreamInput(io.StringIO("kept\n"), out)
    lines.interrupt()
    with pytest.raises(KeyboardInterrupt):
        await getattr(lines, method)("❯ ")
    assert out.getvalue() == ""  # no prompt, no line consumed
    assert await getattr(lines, method)("❯ ") == "kept"


async def test_a_stream_input_reads_stdin_and_writes_stdout_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stdout = io.StringIO()
    monkeypatch.setattr("sys.stdin", io.StringIO("typed\n"))
    monkeypatch.setattr("sys.stdout", stdout)
    assert await StreamInput().read("> ") == "typed"
    assert stdout.getvalue() == "> "


@pytest.fixture
def terminal() -> Iterator[PipeInput]:
    """prompt-toolkit reading from a pipe and drawing nowhere."""
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        yield pipe


async def test_a_terminal_line_is_read_and_kept_in_the_history_file(
    terminal: PipeInput, tmp_path: Path
) -> None:
    history = tmp_path / "data" / "history"
    lines = TerminalInput(history)
    terminal.send_text("hello\r")
    with anyio.fail_after(2):
        assert await lines.read("❯ ") == "hello"
    assert history.parent.is_dir()
    assert "+hello" in history.read_text()
    terminal.send_text("y\r")
    with anyio.fail_after(2):
        assert await lines.ask("? ") == "y"
    assert "+y" not in history.read_text()  # an answer is not a prompt to recall


@pytest.mark.parametrize(("key", "error"), [("\x03", KeyboardInterrupt), ("\x04", EOFError)])
async def test_ctrl_c_and_ctrl_d_typed_at_the_prompt(
    terminal: PipeInput, key: str, error: type[BaseException]
) -> None:
    lines = TerminalInput()
    terminal.send_text(key)
    with anyio.fail_after(2), pytest.raises(error):
        await lines.read("❯ ")


async def test_ctrl_c_as_a_signal_before_a_read_interrupts_it_once(terminal: PipeInput) -> None:
    lines = TerminalInput()
    lines.interrupt()
    with pytest.raises(KeyboardInterrupt):
        await lines.read("❯ ")
    terminal.send_text("next\r")
    with anyio.fail_after(2):
        assert await lines.read("❯ ") == "next"


async def test_ctrl_c_as_a_signal_during_a_read_ends_it(terminal: PipeInput) -> None:
    lines = TerminalInput()
    raised: list[type[BaseException]] = []

    async def read() -> None:
        try:
            await lines.read("❯ ")
        except KeyboardInterrupt:
            raised.append(KeyboardInterrupt)

    with anyio.fail_after(2):
        async with anyio.create_task_group() as group:
            group.start_soon(read)
            while not lines._session.app.is_running:  # noqa: ASYNC110 - no event to wait on
                await anyio.sleep(0.005)
            lines.interrupt()
    assert raised == [KeyboardInterrupt]
    terminal.send_text("after\r")
    with anyio.fail_after(2):
        assert await lines.read("❯ ") == "after"  # nothing left pending


def test_a_history_file_that_cannot_be_made_is_kept_in_memory(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("")
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        assert isinstance(TerminalInput(blocker / "history")._session.history, InMemoryHistory)
        assert isinstance(TerminalInput()._session.history, InMemoryHistory)
        kept = TerminalInput(tmp_path / "history")._session.history
        assert isinstance(kept, FileHistory)
        assert kept.filename == str(tmp_path / "history")


def test_tab_completes_and_typing_never_pops_a_menu(tmp_path: Path) -> None:
    completer = WordCompleter(["/help"])
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        session = TerminalInput(None, completer)._session
        assert isinstance(session.completer, ThreadedCompleter)
        assert session.completer.completer is completer
        assert session.complete_while_typing is False
        assert TerminalInput()._session.completer is None
