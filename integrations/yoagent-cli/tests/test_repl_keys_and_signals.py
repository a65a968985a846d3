"""The REPL's loop in this process, on core's ``MockProvider`` and scripted lines: Ctrl+C
at the prompt (once: the hint; twice: leave), a line between disarming it, Ctrl+C and
SIGTERM during a run and at the prompt, a broken run, a failed turn dropped, a session
that cannot be saved, and the confirmation question's Ctrl+C."""

from __future__ import annotations

import io
import re
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest
from cli_testing import saved_messages

from yoagent.cli.app import Options, build_tools, confirmation
from yoagent.cli.confirm import Answer
from yoagent.cli.conversation import Conversation
from yoagent.cli.render import PlainRenderer
from yoagent.cli.repl import PROMPT, QUESTION, QUIT_HINT, WHY_NOT, Repl
from yoagent.cli.session_store import SessionStore
from yoagent.core import (
    Agent,
    AssistantMessage,
    ErrorKind,
    MockProvider,
    MockReply,
    ModelConfig,
    ProviderError,
    StopReason,
    TextContent,
    ToolCall,
    ToolCallRequest,
    ToolExecutionStart,
)

INTERRUPTED = KeyboardInterrupt
"""Ctrl+C typed at the prompt: what a :class:`LineInput` raises."""


class Raise:
    """A scripted line that raises ``signum`` at the process, then waits for what the
    handler does: a read cancelled (SIGTERM) or interrupted (SIGINT)."""

    def __init__(self, signum: signal.Signals) -> None:
        self.signum = signum


class ScriptedLines:
    """A :class:`~yoagent.cli.line_input.LineInput` playing ``items`` in order (a string is
    a line, ``KeyboardInterrupt`` Ctrl+C, a :class:`Raise` a signal); then the end of
    input. ``prompts`` keeps each prompt and question asked."""

    def __init__(self, *items: str | type[KeyboardInterrupt] | Raise) -> None:
        self.items = list(items)
        self.prompts: list[str] = []
        self.interrupts = 0
        self._interrupted = anyio.Event()

    def interrupt(self) -> None:
        self.interrupts += 1
        self._interrupted.set()

    async def _next(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.items:
            raise EOFError
        item = self.items.pop(0)
        if isinstance(item, str):
            return item
        if isinstance(item, Raise):
            self._interrupted = anyio.Event()
            signal.raise_signal(item.signum)
            with anyio.fail_after(2):
                await self._interrupted.wait()  # SIGTERM cancels this instead
            raise KeyboardInterrupt
        raise item()

    async def read(self, prompt: str) -> str:
        return await self._next(prompt)

    async def ask(self, question: str) -> str:
        return await self._next(question)


def repl(
    tmp_path: Path, lines: ScriptedLines, *replies: AssistantMessage | MockReply | ProviderError
) -> tuple[Repl, io.StringIO]:
    """A REPL as :func:`~yoagent.cli.interactive.interactive` makes it, on ``replies``."""
    out = io.StringIO()
    options = Options(cwd=tmp_path)
    confirm = confirmation(options)
    agent = Agent.from_provider(
        MockProvider(list(replies)),
        ModelConfig.mock(),
        tools=build_tools(options),
        tool_middleware=[confirm],
    )
    store = SessionStore(tmp_path / "sessions")
    conversation = Conversation(
        agent=agent,
        store=store,
        session=store.create(cwd=tmp_path, model="mock-model"),
        options=options,
        renderer=PlainRenderer(out),
        confirm=confirm,
    )
    made = Repl(conversation, lines)
    confirm.ask = made.ask
    confirm.on_abort = agent.abort
    return made, out


def saved(made: Repl) -> list[str]:
    """The roles of the messages saved in the session file (none when it was not written)."""
    path = made.conversation.session.path
    return [m.role for m in saved_messages(path)] if path.exists() else []


def shown_request(made: Repl, command: str) -> ToolCallRequest:
    """A bash call whose tool line is already drawn (the question waits for it)."""
    arguments = {"command": command}
    start = ToolExecutionStart(tool_call_id="c1", tool_name="bash", arguments=arguments)
    made.conversation.renderer.handle(start)
    return ToolCallRequest(tool_call_id="c1", tool_name="bash", arguments=arguments)


def answer(text: str) -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)])


def write_call() -> AssistantMessage:
    call = ToolCall(id="c1", name="write_file", arguments={"path": "f.txt", "content": "x"})
    return AssistantMessage(content=[call], stop_reason=StopReason.TOOL_USE)


def slow_reply() -> MockReply:
    """Forty deltas 0.1 s apart: four seconds unless the run is stopped."""
    return MockReply(message=answer("x" * 640), delay=0.1)


async def test_ctrl_c_at_the_prompt_once_shows_the_hint_twice_leaves(tmp_path: Path) -> None:
    lines = ScriptedLines("one", INTERRUPTED, INTERRUPTED, "never read")
    made, out = repl(tmp_path, lines, answer("reply"))
    assert await made.run() == 0
    assert out.getvalue().split("\n")[2:] == [QUIT_HINT, ""]
    assert lines.items == ["never read"]
    assert saved(made) == ["user", "assistant"]


async def test_a_line_between_two_ctrl_c_disarms_the_first(tmp_path: Path) -> None:
    lines = ScriptedLines(INTERRUPTED, "  ", INTERRUPTED, "hello", INTERRUPTED, "/help")
    made, out = repl(tmp_path, lines, answer("hi there"))
    assert await made.run() == 0
    assert lines.items == []  # read to the end of input
    assert out.getvalue().count(QUIT_HINT) == 3
    assert lines.prompts == [PROMPT] * 7


async def test_empty_lines_are_skipped_and_a_prompt_is_stripped(tmp_path: Path) -> None:
    made, _ = repl(tmp_path, ScriptedLines("", "   ", "  hello \t"), answer("hi"))
    assert await made.run() == 0
    [prompt, reply] = made.conversation.agent.messages
    assert prompt.content == [TextContent(text="hello")]
    assert reply.content == [TextContent(text="hi")]
    assert made.conversation.last_prompt == "hello"


async def test_quit_leaves_with_0_without_reading_further(tmp_path: Path) -> None:
    lines = ScriptedLines("/quit", "never read")
    made, _ = repl(tmp_path, lines)
    assert await made.run() == 0
    assert lines.items == ["never read"]


async def test_each_run_ends_with_its_status_line_and_is_saved(tmp_path: Path) -> None:
    made, out = repl(tmp_path, ScriptedLines("one"), answer("reply"))
    assert await made.run() == 0
    shown = out.getvalue().split("\n")
    assert shown[0] == "reply"
    assert re.fullmatch(r"tokens in 0 \(cache hit 0%\) · out 0 · \d+\.\ds", shown[1])
    assert shown[2:] == [""]
    assert saved(made) == ["user", "assistant"]


async def test_a_run_that_raises_is_one_error_line_and_the_session_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made, out = repl(tmp_path, ScriptedLines("one", "two"))
    calls: list[str] = []

    async def broken(text: str) -> AsyncIterator[object]:
        calls.append(text)
        raise ValueError("the stream broke")
        yield  # pragma: no cover - an async generator

    monkeypatch.setattr(made.conversation.agent, "stream", broken)
    assert await made.run() == 0
    assert calls == ["one", "two"]
    assert out.getvalue().split("\n")[0] == "error: ValueError: the stream broke"


async def test_a_failed_turn_is_dropped_with_a_notice(tmp_path: Path) -> None:
    failure = ProviderError(ErrorKind.API, "overloaded", status=529)
    made, out = repl(tmp_path, ScriptedLines("one"), failure)
    assert await made.run() == 0
    assert "(nothing of this turn was kept; /retry sends the prompt again)\n" in out.getvalue()
    assert made.conversation.agent.messages == []


async def test_a_session_that_cannot_be_saved_is_an_error_line_each_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made, out = repl(tmp_path, ScriptedLines("one"), answer("reply"))

    def cannot(messages: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(made.conversation.session, "save", cannot)
    assert await made.run() == 0
    errors = [line for line in out.getvalue().split("\n") if line.startswith("error:")]
    assert errors == ["error: could not save the session: disk full"] * 2  # run, then leaving


async def test_sigterm_at_the_prompt_saves_and_exits_143(tmp_path: Path) -> None:
    lines = ScriptedLines("one", Raise(signal.SIGTERM), "never read")
    made, _ = repl(tmp_path, lines, answer("reply"))
    before = signal.getsignal(signal.SIGTERM)
    assert await made.run() == 143
    assert lines.items == ["never read"]
    assert saved(made) == ["user", "assistant"]
    assert signal.getsignal(signal.SIGTERM) is before  # the handler is given back


async def test_ctrl_c_as_a_signal_at_the_prompt_interrupts_the_read(tmp_path: Path) -> None:
    lines = ScriptedLines(Raise(signal.SIGINT), "hello")
    made, out = repl(tmp_path, lines, answer("hi"))
    before = signal.getsignal(signal.SIGINT)
    assert await made.run() == 0
    assert lines.interrupts == 1
    assert out.getvalue().startswith(f"{QUIT_HINT}\nhi\n")
    assert signal.getsignal(signal.SIGINT) is before


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 0), (signal.SIGTERM, 143)])
async def test_a_signal_during_a_run_stops_it(
    tmp_path: Path, signum: signal.Signals, code: int
) -> None:
    lines = ScriptedLines("task")
    made, out = repl(tmp_path, lines, slow_reply())
    agent = made.conversation.agent
    began = time.monotonic()
    result: list[int] = []
    async with anyio.create_task_group() as group:

        async def run() -> None:
            result.append(await made.run())

        group.start_soon(run)
        with anyio.fail_after(5):
            while not agent.is_running:  # noqa: ASYNC110 - no event to wait on
                await anyio.sleep(0.01)
        await anyio.sleep(0.05)  # streaming by then
        signal.raise_signal(signum)
    assert result == [code]
    assert time.monotonic() - began < 2
    assert lines.interrupts == 0  # the run took it, not the prompt
    assert "tokens in" in out.getvalue()  # the run's status line still drawn
    assert out.getvalue().startswith(
        "⏹ interrupted\n(nothing of this turn was kept; /retry sends the prompt again)\n"
    )
    assert agent.messages == []
    assert made.conversation.last_prompt == "task"  # for /retry


async def test_ctrl_c_at_the_question_aborts_the_run(tmp_path: Path) -> None:
    lines = ScriptedLines("write it", INTERRUPTED)
    made, out = repl(tmp_path, lines, write_call(), answer("not reached"))
    assert await made.run() == 0
    assert lines.prompts == [PROMPT, QUESTION, PROMPT]
    assert not (tmp_path / "f.txt").exists()
    assert "    Tool call denied: the user declined\n" in out.getvalue()
    assert "not reached" not in out.getvalue()  # aborted: the model is not asked again


@pytest.mark.parametrize("after_no", [INTERRUPTED, None])
async def test_ctrl_c_or_the_end_at_why_not_gives_no_reason(
    tmp_path: Path, after_no: type[KeyboardInterrupt] | None
) -> None:
    lines = ScriptedLines("n") if after_no is None else ScriptedLines("n", after_no)
    made, _ = repl(tmp_path, lines)
    with anyio.fail_after(1):
        reply = await made.ask(shown_request(made, "ls"), "run ls")
    assert (reply.answer, reply.reason) == (Answer.NO, "")
    assert lines.prompts == [QUESTION, WHY_NOT]


@pytest.mark.parametrize(("typed", "expected"), [("y", Answer.YES), ("a", Answer.ALWAYS)])
async def test_yes_and_always_are_asked_no_reason(
    tmp_path: Path, typed: str, expected: Answer
) -> None:
    lines = ScriptedLines(typed)
    made, out = repl(tmp_path, lines)
    request = shown_request(made, "ls -l")
    drawn = out.getvalue()
    with anyio.fail_after(1):
        reply = await made.ask(request, "run ls -l\nin the folder")
    assert (reply.answer, reply.reason) == (expected, "")
    assert lines.prompts == [QUESTION]
    assert out.getvalue() == drawn + "  run ls -l\n  in the folder\n"


async def test_no_with_a_reason_passes_it_on_stripped(tmp_path: Path) -> None:
    lines = ScriptedLines("n", "  not today  ")
    made, _ = repl(tmp_path, lines)
    with anyio.fail_after(1):
        reply = await made.ask(shown_request(made, "ls"), "run ls")
    assert (reply.answer, reply.reason) == (Answer.NO, "not today")


async def test_the_end_of_input_at_the_question_is_a_no(tmp_path: Path) -> None:
    lines = ScriptedLines()
    made, _ = repl(tmp_path, lines)
    with anyio.fail_after(1):
        reply = await made.ask(shown_request(made, "ls"), "run ls")
    assert (reply.answer, reply.reason) == (Answer.NO, "")
    assert lines.prompts == [QUESTION]


async def test_ctrl_c_at_the_question_is_an_abort(tmp_path: Path) -> None:
    made, _ = repl(tmp_path, ScriptedLines(INTERRUPTED))
    with anyio.fail_after(1):
        reply = await made.ask(shown_request(made, "ls"), "run ls")
    assert reply.answer is Answer.ABORT
