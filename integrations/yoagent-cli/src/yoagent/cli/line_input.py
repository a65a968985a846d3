"""Reading the user's lines: prompt-toolkit at a terminal, plain lines from a pipe.

Both raise :class:`KeyboardInterrupt` for Ctrl+C at the prompt and :class:`EOFError` at the
end of input (Ctrl+D).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Protocol, TextIO

import anyio
from prompt_toolkit import PromptSession
from prompt_toolkit.completion import Completer, ThreadedCompleter
from prompt_toolkit.history import FileHistory, InMemoryHistory


class LineInput(Protocol):
    """Where the REPL reads prompts and confirmation answers from."""

    async def read(self, prompt: str) -> str:
        """One prompt from the user."""
        ...

    async def ask(self, question: str) -> str:
        """One short answer (no history)."""
        ...

    def interrupt(self) -> None:
        """Ctrl+C arrived as a signal (between two prompts): the current or next read raises
        :class:`KeyboardInterrupt`, as if Ctrl+C had been typed at the prompt."""
        ...


class TerminalInput:
    """prompt-toolkit: line editing, history (kept in ``history_file``), Tab completion
    (``completer``), Ctrl+C and Ctrl+D."""

    def __init__(
        self, history_file: Path | None = None, completer: Completer | None = None
    ) -> None:
        if history_file is not None:
            try:
                history_file.parent.mkdir(parents=True, exist_ok=True)
                history: FileHistory | InMemoryHistory = FileHistory(str(history_file))
            except OSError:
                history = InMemoryHistory()
        else:
            history = InMemoryHistory()
        self._session: PromptSession[str] = PromptSession(
            history=history,
            completer=ThreadedCompleter(completer) if completer is not None else None,
            complete_while_typing=False,  # Tab completes; typing never pops a menu up
        )
        self._answers: PromptSession[str] = PromptSession(history=InMemoryHistory())
        self._pending = False

    async def read(self, prompt: str) -> str:
        if self._pending:
            self._pending = False
            raise KeyboardInterrupt
        # SIGINT is the REPL's (see Repl.run); at the prompt Ctrl+C is a key press.
        return await self._session.prompt_async(prompt, handle_sigint=False)

    def interrupt(self) -> None:
        app = self._session.app
        if app.is_running:
            app.exit(exception=KeyboardInterrupt, style="class:aborting")
        else:
            self._pending = True

    async def ask(self, question: str) -> str:
        # A run is in progress and owns SIGINT; Ctrl+C here is a key press.
        return await self._answers.prompt_async(question, handle_sigint=False)


class StreamInput:
    """Lines from a stream (stdin when it is not a terminal); prompts go to ``out``."""

    def __init__(self, stream: TextIO | None = None, out: TextIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stdin
        self._out = out if out is not None else sys.stdout
        self._pending = False

    def interrupt(self) -> None:
        self._pending = True

    async def _line(self, prompt: str) -> str:
        if self._pending:
            self._pending = False
            raise KeyboardInterrupt
        self._out.write(prompt)
        self._out.flush()
        line = await anyio.to_thread.run_sync(self._stream.readline, abandon_on_cancel=True)
        if not line:
            raise EOFError
        return line.rstrip("\n")

    async def read(self, prompt: str) -> str:
        return await self._line(prompt)

    async def ask(self, question: str) -> str:
        return await self._line(question)
