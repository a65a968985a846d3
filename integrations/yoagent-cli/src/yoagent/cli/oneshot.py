"""``yoagent -p TASK``: one run, the final answer on stdout, an exit code that says how it went.

Exit codes: 0 the run finished with an answer; 1 it failed (the model call errored, the
model refused, a limit stopped it); 130 it was interrupted. With ``--json`` stdout carries
every event as one JSON line instead of the answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import aclosing
from dataclasses import dataclass
from typing import TextIO

from yoagent.core import (
    Agent,
    AgentEnd,
    AgentMessage,
    RunFailedError,
    StopReason,
    UserMessage,
    event_adapter,
    is_loop_injected,
    last_assistant,
)

from .interrupt import sigint_calls
from .render import Renderer
from .session_store import SavedSession, moved_notice

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


@dataclass(slots=True, frozen=True)
class Outcome:
    """How a run ended: its exit code, the answer, and what went wrong (if anything)."""

    code: int
    answer: str = ""
    problem: str = ""


def judge(messages: Sequence[AgentMessage]) -> Outcome:
    """The outcome of a run from the messages it added."""
    last_reply = last_assistant(messages)
    if last_reply is None:
        return Outcome(EXIT_FAILED, problem="the model was not called")
    stop = last_reply.stop_reason
    if stop is StopReason.ABORTED:
        return Outcome(EXIT_INTERRUPTED, problem="interrupted")
    if stop is StopReason.ERROR:
        return Outcome(EXIT_FAILED, problem=last_reply.error_message or "the model call failed")
    if stop is StopReason.REFUSAL:
        return Outcome(EXIT_FAILED, answer=last_reply.text, problem="the model refused")
    final = messages[-1]
    if isinstance(final, UserMessage) and is_loop_injected(final):
        return Outcome(EXIT_FAILED, answer=last_reply.text, problem=final.text)
    return Outcome(EXIT_OK, answer=last_reply.text)


async def run_once(
    agent: Agent,
    task: str,
    *,
    stdout: TextIO,
    stderr: TextIO,
    json_lines: bool = False,
    progress: Renderer | None = None,
    session: SavedSession | None = None,
) -> int:
    """Run ``task`` once; returns the exit code.

    ``progress`` (if given) draws tool calls and the status line, on stderr.
    """
    end: AgentEnd | None = None
    failure: str | None = None
    with sigint_calls(agent.abort) as interrupts:
        try:
            async with aclosing(agent.stream(task)) as events:
                async for event in events:
                    if json_lines:
                        stdout.write(event_adapter.dump_json(event).decode() + "\n")
                        stdout.flush()
                    if progress is not None:
                        progress.handle(event)
                    if isinstance(event, AgentEnd):
                        end = event
        except BrokenPipeError:
            raise
        except RunFailedError:
            pass  # its events (and AgentEnd) were delivered first: judged below
        except Exception as error:  # a broken provider or tool set-up: report, do not trace
            failure = f"{type(error).__name__}: {error}"
    if progress is not None:
        progress.finish_block()
    if session is not None:
        moved = session.save(agent.messages)
        if moved is not None:
            stderr.write(f"yoagent: {moved_notice(moved, session)}\n")
    if failure is not None:
        stderr.write(f"yoagent: {failure}\n")
        return EXIT_FAILED
    if end is None:
        stderr.write("yoagent: the run ended without a result\n")
        return EXIT_INTERRUPTED if interrupts.count else EXIT_FAILED
    outcome = judge(end.messages)
    if interrupts.count and outcome.code != EXIT_OK:
        outcome = Outcome(EXIT_INTERRUPTED, problem="interrupted")
    if not json_lines and outcome.answer and outcome.code == EXIT_OK:
        stdout.write(outcome.answer.rstrip("\n") + "\n")
        stdout.flush()
    if outcome.code != EXIT_OK:
        stderr.write(f"yoagent: {outcome.problem}\n")
    return outcome.code
