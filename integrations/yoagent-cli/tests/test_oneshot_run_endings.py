"""``run_once`` in-process, the endings a scripted reply cannot give: a run whose set-up
raises, a stream that ends without ``AgentEnd``, SIGINT or SIGTERM during the run, the
status line drawn on stderr, and a failed turn dropped from a conversation that had one."""

from __future__ import annotations

import io
import json
import re
import signal
from collections.abc import AsyncIterator
from dataclasses import replace
from typing import Any

import anyio
import pytest

from yoagent.cli.oneshot import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_OK, run_once
from yoagent.cli.render import PlainRenderer
from yoagent.core import (
    Agent,
    AgentEvent,
    AssistantMessage,
    MockProvider,
    TextContent,
    Usage,
)
from yoagent.providers import models

CONFIG = next(p for p in models.presets() if p.provider == "openai")


def agent_streaming(events: Any) -> Agent:
    """An agent whose ``stream`` is ``events`` (an async generator function of the task)."""
    agent = Agent(MockProvider(), CONFIG)
    agent.stream = events  # type: ignore[method-assign]
    return agent


async def _run(agent: Agent, *, json_lines: bool = False) -> tuple[int, str, str]:
    stdout, stderr = io.StringIO(), io.StringIO()
    code = await run_once(agent, "task", stdout=stdout, stderr=stderr, json_lines=json_lines)
    return code, stdout.getvalue(), stderr.getvalue()


async def _broken(task: str) -> AsyncIterator[AgentEvent]:
    raise RuntimeError("no tools")
    yield  # pragma: no cover


async def _silent(task: str) -> AsyncIterator[AgentEvent]:
    return
    yield  # pragma: no cover


def _signalled(number: signal.Signals) -> Any:
    async def events(task: str) -> AsyncIterator[AgentEvent]:
        signal.raise_signal(number)
        await anyio.sleep(0.01)
        return
        yield  # pragma: no cover

    return events


async def test_a_run_whose_set_up_raises_names_the_error() -> None:
    assert await _run(agent_streaming(_broken)) == (
        EXIT_FAILED,
        "",
        "yoagent: RuntimeError: no tools\n",
    )
    code, out, _ = await _run(agent_streaming(_broken), json_lines=True)
    summary = json.loads(out.splitlines()[-1])
    assert (code, summary["subtype"], summary["error"]) == (1, "error", "RuntimeError: no tools")


async def test_a_stream_ending_without_a_result_is_a_failure() -> None:
    assert await _run(agent_streaming(_silent)) == (
        EXIT_FAILED,
        "",
        "yoagent: the run ended without a result\n",
    )
    code, out, _ = await _run(agent_streaming(_silent), json_lines=True)
    summary = json.loads(out.splitlines()[-1])
    assert (code, summary["subtype"], summary["exit_code"]) == (1, "error", 1)
    assert summary["error"] == "the run ended without a result"


@pytest.mark.parametrize(
    ("number", "code"), [(signal.SIGINT, EXIT_INTERRUPTED), (signal.SIGTERM, 143)]
)
async def test_a_signal_during_the_run_is_an_interruption(
    number: signal.Signals, code: int
) -> None:
    before = signal.getsignal(number)
    assert await _run(agent_streaming(_signalled(number))) == (code, "", "yoagent: interrupted\n")
    _, out, _ = await _run(agent_streaming(_signalled(number)), json_lines=True)
    summary = json.loads(out.splitlines()[-1])
    assert (summary["subtype"], summary["exit_code"]) == ("interrupted", code)
    assert summary["error"] == "interrupted"
    assert signal.getsignal(number) == before


async def test_sigint_during_a_run_that_failed_makes_it_an_interruption() -> None:
    agent = Agent(MockProvider(), CONFIG)  # nothing scripted: the call fails
    original = agent.stream

    async def events(task: str) -> AsyncIterator[AgentEvent]:
        signal.raise_signal(signal.SIGINT)
        await anyio.sleep(0.01)
        async for event in original(task):
            yield event

    agent.stream = events  # type: ignore[method-assign]
    assert await _run(agent) == (EXIT_INTERRUPTED, "", "yoagent: interrupted\n")


async def test_a_run_that_answered_keeps_its_answer_after_a_sigint() -> None:
    agent = Agent(MockProvider.text("done"), CONFIG)
    original = agent.stream

    async def events(task: str) -> AsyncIterator[AgentEvent]:
        async for event in original(task):
            yield event
        signal.raise_signal(signal.SIGINT)
        await anyio.sleep(0.01)

    agent.stream = events  # type: ignore[method-assign]
    assert await _run(agent) == (EXIT_OK, "done\n", "")


async def test_only_trailing_newlines_leave_the_answer() -> None:
    assert await _run(Agent(MockProvider.text("  x  \n\n"), CONFIG)) == (EXIT_OK, "  x  \n", "")


async def test_the_json_duration_is_the_runs_own() -> None:
    _, out, _ = await _run(Agent(MockProvider.text("done"), CONFIG), json_lines=True)
    assert 0 <= json.loads(out.splitlines()[-1])["duration_ms"] < 60_000


async def test_a_failed_turn_is_dropped_and_the_earlier_one_kept() -> None:
    agent = Agent(MockProvider.text("first"), CONFIG)
    assert (await _run(agent))[0] == EXIT_OK
    kept = list(agent.messages)
    assert len(kept) == 2
    assert (await _run(agent))[0] == EXIT_FAILED  # nothing more scripted: the call fails
    assert agent.messages == kept


def _status_lines(shown: str) -> list[str]:
    return [line for line in shown.splitlines() if line.startswith("tokens in")]


@pytest.mark.parametrize("show_unknown_cost", [True, False])
async def test_the_status_line_is_drawn_after_the_run(show_unknown_cost: bool) -> None:
    reply = AssistantMessage(content=[TextContent(text="done")], usage=Usage(input=1200, output=30))
    agent = Agent(MockProvider([reply]), replace(CONFIG, context_window=10_000))
    shown = io.StringIO()
    stdout = io.StringIO()
    code = await run_once(
        agent,
        "task",
        stdout=stdout,
        stderr=io.StringIO(),
        progress=PlainRenderer(shown),
        show_unknown_cost=show_unknown_cost,
    )
    assert code == EXIT_OK and stdout.getvalue() == "done\n"
    (line,) = _status_lines(shown.getvalue())
    assert line.startswith("tokens in 1,200 (cache hit 0%) · out 30 · context 12% of 10k · ")
    assert line.endswith("cost unknown") is show_unknown_cost
    seconds = re.search(r"· (\d+\.\d)s", line)
    assert seconds is not None and float(seconds.group(1)) < 60
