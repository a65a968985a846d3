"""``run_once`` in-process, on a scripted provider: the answer on stdout (inert on a
terminal), ``--json``'s lines, and each failure's exit code and message on stderr."""

from __future__ import annotations

import io
import json

from yoagent.cli.oneshot import EXIT_FAILED, EXIT_OK, run_once
from yoagent.core import Agent, AssistantMessage, MockProvider, StopReason, TextContent
from yoagent.providers import models

CONFIG = next(p for p in models.presets() if p.provider == "openai")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


async def test_the_answer_goes_to_stdout_and_nothing_to_stderr() -> None:
    stdout, stderr = io.StringIO(), io.StringIO()
    agent = Agent(MockProvider.text("the answer\n\n"), CONFIG)
    assert await run_once(agent, "task", stdout=stdout, stderr=stderr) == EXIT_OK
    assert stdout.getvalue() == "the answer\n"
    assert stderr.getvalue() == ""


async def test_an_answer_on_a_terminal_is_inert_and_in_a_pipe_is_exact() -> None:
    text = "red \x1b[31mtext"
    piped, shown = io.StringIO(), Terminal()
    await run_once(Agent(MockProvider.text(text), CONFIG), "t", stdout=piped, stderr=io.StringIO())
    await run_once(Agent(MockProvider.text(text), CONFIG), "t", stdout=shown, stderr=io.StringIO())
    assert piped.getvalue() == "red \x1b[31mtext\n"
    assert shown.getvalue() == "red \\x1b[31mtext\n"


async def test_a_failed_call_exits_1_and_says_why_on_stderr_only() -> None:
    stdout, stderr = io.StringIO(), io.StringIO()
    agent = Agent(MockProvider(), CONFIG)  # no reply scripted: the call fails
    assert await run_once(agent, "task", stdout=stdout, stderr=stderr) == EXIT_FAILED
    assert stdout.getvalue() == ""
    message = stderr.getvalue()
    assert message.startswith("yoagent: ") and message.endswith("\n")
    assert message.count("\n") == 1 and CONFIG.id in message


async def test_a_refusal_prints_no_answer_and_exits_1() -> None:
    refusal = AssistantMessage(content=[TextContent(text="no")], stop_reason=StopReason.REFUSAL)
    stdout, stderr = io.StringIO(), io.StringIO()
    code = await run_once(Agent(MockProvider([refusal]), CONFIG), "t", stdout=stdout, stderr=stderr)
    assert code == EXIT_FAILED
    assert stdout.getvalue() == ""
    assert stderr.getvalue() == "yoagent: the model refused\n"


async def test_json_lines_end_with_the_summary() -> None:
    stdout, stderr = io.StringIO(), io.StringIO()
    agent = Agent(MockProvider.text("done"), CONFIG)
    assert await run_once(agent, "task", stdout=stdout, stderr=stderr, json_lines=True) == EXIT_OK
    lines = [json.loads(line) for line in stdout.getvalue().splitlines()]
    assert lines[0]["type"] == "agent_start"
    assert [line["type"] for line in lines[-2:]] == ["agent_end", "result"]
    summary = lines[-1]
    assert (summary["subtype"], summary["exit_code"], summary["result"]) == ("success", 0, "done")
    assert summary["is_error"] is False and summary["error"] is None
    assert summary["session_id"] is None and summary["num_turns"] == 1
    assert stderr.getvalue() == ""


async def test_a_failed_runs_json_summary_names_the_problem() -> None:
    stdout, stderr = io.StringIO(), io.StringIO()
    await run_once(Agent(MockProvider(), CONFIG), "task", stdout=stdout, stderr=stderr,
                   json_lines=True)  # fmt: skip
    summary = json.loads(stdout.getvalue().splitlines()[-1])
    assert (summary["subtype"], summary["exit_code"], summary["is_error"]) == ("error", 1, True)
    assert summary["result"] == ""
    assert stderr.getvalue() == f"yoagent: {summary['error']}\n"
