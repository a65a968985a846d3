"""The interactive session at a terminal, through ``main.run`` in this process: with stdin
and stdout terminals it reads through ``TerminalInput`` (replaced here by scripted lines),
its history file in the data folder and Tab's completions for each command; thinking shown
or hidden; a failed call explained; ``--pricing off``; a standing grant on the status line;
``/undo`` of a write; Ctrl+C at the question stopping the run."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any, ClassVar

import pytest
from in_process_cli import InProcess, Terminal
from prompt_toolkit.completion import CompleteEvent
from prompt_toolkit.document import Document
from sse_server import Call, Reply, ScriptedServer, Text, Think, call, text

from yoagent.cli.completion import PromptCompleter

INTERACTIVE = sys.modules["yoagent.cli.interactive"]
THINKING_LEVELS = ["show", "hide", "off", "minimal", "low", "medium", "high"]


class FakeTerminalInput:
    """Stands in for ``TerminalInput``: keeps how it was made, plays ``script`` (a line, or
    ``KeyboardInterrupt`` for Ctrl+C), then the end of input."""

    made: ClassVar[list[FakeTerminalInput]] = []
    script: ClassVar[list[str | type[KeyboardInterrupt]]] = []

    def __init__(self, history_file: Path | None = None, completer: Any = None) -> None:
        self.history_file = history_file
        self.completer = completer
        self.asked: list[str] = []
        FakeTerminalInput.made.append(self)

    async def _next(self, prompt: str) -> str:
        self.asked.append(prompt)
        if not FakeTerminalInput.script:
            raise EOFError
        item = FakeTerminalInput.script.pop(0)
        if isinstance(item, str):
            return item
        raise item()

    async def read(self, prompt: str) -> str:
        return await self._next(prompt)

    async def ask(self, question: str) -> str:
        return await self._next(question)

    def interrupt(self) -> None:
        raise AssertionError("no signal is sent in these tests")


@pytest.fixture
def terminal(monkeypatch: pytest.MonkeyPatch) -> type[FakeTerminalInput]:
    """stdin and stdout are terminals; the line editor is scripted."""
    FakeTerminalInput.made = []
    FakeTerminalInput.script = []
    monkeypatch.setattr(INTERACTIVE, "TerminalInput", FakeTerminalInput)
    return FakeTerminalInput


def at_terminal(monkeypatch: pytest.MonkeyPatch) -> Terminal:
    """stdout a terminal (stdin is made one by ``run(..., stdin=Terminal())``)."""
    stdout = Terminal()
    monkeypatch.setattr("sys.stdout", stdout)
    return stdout


def completions(completer: PromptCompleter, typed: str) -> list[str]:
    return [c.text for c in completer.get_completions(Document(typed), CompleteEvent())]


def test_a_terminal_reads_through_the_line_editor_with_its_history_file(
    yoagent: InProcess,
    server: ScriptedServer,
    terminal: type[FakeTerminalInput],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stdout = at_terminal(monkeypatch)
    terminal.script = ["hello"]
    server.add(text("hi"))
    assert yoagent.run("--plain", served=server, stdin=Terminal()).code == 0
    [lines] = terminal.made
    assert lines.history_file == Path(yoagent.env["XDG_DATA_HOME"]) / "yoagent" / "history"
    assert lines.asked == ["❯ ", "❯ "]
    assert "hi\n" in stdout.getvalue()
    assert "❯" not in stdout.getvalue()  # the line editor draws its own prompt


def test_tab_completes_each_command_s_argument(
    yoagent: InProcess,
    server: ScriptedServer,
    terminal: type[FakeTerminalInput],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    at_terminal(monkeypatch)
    terminal.script = ["write it", "a"]
    server.add(call("write_file", path="f.txt", content="x"), text("done"))
    assert yoagent.run("--plain", served=server, stdin=Terminal()).code == 0
    completer = terminal.made[0].completer
    assert isinstance(completer, PromptCompleter)
    assert completer.cwd == yoagent.work.resolve()
    assert "/help" in completions(completer, "/he")
    assert completions(completer, "/thinking ") == THINKING_LEVELS
    assert completions(completer, "/sessions ") == ["delete", "prune"]
    assert completions(completer, "/revoke ") == ["write_file"]
    assert completions(completer, "/model ") == ["scripted-model"]
    session_ids = completions(completer, "/resume ")
    assert len(session_ids) == 1
    assert session_ids[0].startswith("20")


def test_a_pipe_reads_plain_lines_instead(
    yoagent: InProcess,
    server: ScriptedServer,
    terminal: type[FakeTerminalInput],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr("sys.stdout", Terminal())  # stdin stays a pipe
    assert yoagent.run("--plain", served=server, input="").code == 0
    assert terminal.made == []


def test_ctrl_c_at_the_question_stops_the_run(
    yoagent: InProcess,
    server: ScriptedServer,
    terminal: type[FakeTerminalInput],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    stdout = at_terminal(monkeypatch)
    terminal.script = ["write it", KeyboardInterrupt]
    server.add(call("write_file", path="f.txt", content="x"), text("not asked for"))
    assert yoagent.run("--plain", served=server, stdin=Terminal()).code == 0
    assert len(server.requests) == 1  # the run stopped: the model was not asked again
    assert "Tool call denied: the user declined" in stdout.getvalue()
    assert not (yoagent.work / "f.txt").exists()


def test_thinking_is_shown_unless_hidden(yoagent: InProcess, server: ScriptedServer) -> None:
    def thinking() -> Reply:
        return Reply([Think("pondering deeply"), Text("the answer")])

    server.add(thinking(), thinking())
    shown = yoagent.run(input="q\n", served=server)
    assert "pondering deeply" in shown.out
    hidden = yoagent.run("--hide-thinking", input="q\n", served=server)
    assert "pondering deeply" not in hidden.out
    assert "the answer" in hidden.out


def test_a_failed_call_is_explained(yoagent: InProcess, server: ScriptedServer) -> None:
    server.add(Reply(status=400, error="model not found"))
    result = yoagent.run(input="q\n", served=server)
    where = server.url.removesuffix("/v1")
    assert f"❯ error: {where} rejected the request for scripted-model: " in result.out
    assert "model not found" in result.out


def test_pricing_off_leaves_cost_out_of_the_status_line(
    yoagent: InProcess, server: ScriptedServer
) -> None:
    server.add(text("ok"))
    result = yoagent.run("--pricing", "off", input="q\n", served=server)
    status = result.out.split("\n")[4]
    assert status.startswith("tokens in 100 (cache hit 0%) · out 20 · context 0% of 200k · ")
    assert "cost" not in status


def test_a_standing_grant_is_on_the_status_line(yoagent: InProcess, server: ScriptedServer) -> None:
    server.add(call("write_file", path="f.txt", content="x"), text("done"))
    result = yoagent.run(input="write it\na\n", served=server)
    status = next(line for line in result.out.split("\n") if line.startswith("tokens in 200"))
    assert "always allowed: write_file" in status


def test_undo_takes_back_the_run_s_write(yoagent: InProcess, server: ScriptedServer) -> None:
    server.add(Reply([Call("write_file", {"path": "f.txt", "content": "x"})]), text("done"))
    result = yoagent.run("--yes", input="write it\n/undo\n", served=server)
    assert result.code == 0
    assert not (yoagent.work / "f.txt").exists()
