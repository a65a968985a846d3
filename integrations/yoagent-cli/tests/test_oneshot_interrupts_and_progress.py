"""``run_once`` in-process: SIGINT and SIGTERM stop a reply that is still streaming, the
progress renderer draws the reply, an unpriced run says "cost unknown" unless told not to,
and only newlines leave the end of the answer."""

from __future__ import annotations

import io
import signal
import time

import anyio
import pytest

from yoagent.cli.oneshot import EXIT_INTERRUPTED, EXIT_OK, run_once
from yoagent.cli.render import PlainRenderer
from yoagent.core import Agent, AssistantMessage, MockProvider, MockReply, TextContent, Usage
from yoagent.providers import models

CONFIG = next(p for p in models.presets() if p.provider == "openai")


def slow_reply() -> MockReply:
    """A reply of 40 deltas, 0.1 s apart: four seconds unless the run is stopped."""
    return MockReply(message=AssistantMessage(content=[TextContent(text="x" * 640)]), delay=0.1)


@pytest.mark.parametrize(
    ("number", "code"), [(signal.SIGINT, EXIT_INTERRUPTED), (signal.SIGTERM, 143)]
)
async def test_a_signal_stops_a_reply_still_streaming(number: signal.Signals, code: int) -> None:
    agent = Agent(MockProvider([slow_reply()]), CONFIG)
    stdout, stderr = io.StringIO(), io.StringIO()
    began = time.monotonic()
    before = signal.getsignal(number)
    async with anyio.create_task_group() as group:

        async def send() -> None:
            # Only once run_once has its handler: raised before, SIGTERM's default action
            # would end the test process itself (a loaded machine can delay the start).
            with anyio.fail_after(5):
                while signal.getsignal(number) is before:  # noqa: ASYNC110 - no event to wait on
                    await anyio.sleep(0.01)
            await anyio.sleep(0.2)  # the reply is streaming by then
            signal.raise_signal(number)

        group.start_soon(send)
        assert await run_once(agent, "task", stdout=stdout, stderr=stderr) == code
    assert time.monotonic() - began < 2.5
    assert stderr.getvalue() == "yoagent: interrupted\n"


async def test_the_progress_renderer_draws_the_reply_and_says_cost_unknown() -> None:
    reply = AssistantMessage(content=[TextContent(text="drawn")], usage=Usage(input=10, output=2))
    shown = io.StringIO()
    code = await run_once(
        Agent(MockProvider([reply]), CONFIG),
        "task",
        stdout=io.StringIO(),
        stderr=io.StringIO(),
        progress=PlainRenderer(shown),
    )
    assert code == EXIT_OK
    drawn = shown.getvalue()
    assert drawn.startswith("drawn")
    assert drawn.rstrip("\n").endswith("· cost unknown")


async def test_only_newlines_are_taken_off_the_answer() -> None:
    stdout = io.StringIO()
    await run_once(Agent(MockProvider.text("ends in X\n"), CONFIG), "t", stdout=stdout,
                   stderr=io.StringIO())  # fmt: skip
    assert stdout.getvalue() == "ends in X\n"
