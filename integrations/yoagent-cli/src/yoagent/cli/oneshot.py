"""``yoagent -p TASK``: one run, the final answer on stdout, an exit code that says how it went.

Exit codes: 0 the run finished with an answer; 1 it failed (the model call errored, the
model refused, a limit stopped it); 130 it was interrupted (143 or 129 when SIGTERM or
SIGHUP stopped it). With ``--json`` stdout carries every event as one JSON line instead of
the answer, then a final summary line (see :mod:`.json_output`).

A run that failed before the model produced anything is not saved (see :mod:`.turns`): a
server that cannot be reached leaves no session behind.
"""

from __future__ import annotations

import time
from contextlib import aclosing
from dataclasses import dataclass
from typing import TextIO

from yoagent.core import Agent, AgentEnd, RunEnd, RunFailedError, StopReason, UserMessage
from yoagent.core.loop import last_assistant

from .interrupt import exit_signals_call, sigint_calls
from .json_output import JsonLines
from .problems import explain_failure
from .render import Renderer
from .safe_text import inert, write_inert
from .session_store import SavedSession, moved_notice
from .status import Status, context_used
from .turns import settle

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


@dataclass(slots=True, frozen=True)
class Outcome:
    """How a run ended: its exit code, the answer, what went wrong (if anything), and a
    short word for it (``success``, ``error``, ``refusal``, ``limit``, ``interrupted``)."""

    code: int
    answer: str = ""
    problem: str = ""
    reason: str = "success"


def judge(end: AgentEnd, agent: Agent | None = None) -> Outcome:
    """The outcome of a run from its ``AgentEnd`` (``agent`` names the model in a failure's
    explanation)."""
    last_reply = last_assistant(end.messages)
    if last_reply is None:
        return Outcome(EXIT_FAILED, problem="the model was not called", reason="error")
    stop = last_reply.stop_reason
    if stop is StopReason.ABORTED:
        return Outcome(EXIT_INTERRUPTED, problem="interrupted", reason="interrupted")
    if stop is StopReason.ERROR:
        problem = (
            explain_failure(last_reply.error_message, agent.model)
            if agent is not None
            else last_reply.error_message or "the model call failed"
        )
        return Outcome(EXIT_FAILED, problem=problem, reason="error")
    if stop is StopReason.REFUSAL:
        return Outcome(
            EXIT_FAILED, answer=last_reply.text, problem="the model refused", reason="refusal"
        )
    ending = end.outcome
    if ending.end is RunEnd.CANCELLED:
        return Outcome(EXIT_INTERRUPTED, problem="interrupted", reason="interrupted")
    if ending.end is RunEnd.STOPPED:
        # What the model read of it, the stop marker closing the history, says it best.
        final = end.messages[-1]
        problem = final.text if isinstance(final, UserMessage) else ending.reason or "stopped"
        return Outcome(EXIT_FAILED, answer=last_reply.text, problem=problem, reason="limit")
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
    show_unknown_cost: bool = True,
) -> int:
    """Run ``task`` once; returns the exit code.

    ``progress`` (if given) draws tool calls and the status line, on stderr (saying "cost
    unknown" for an unpriced run unless ``show_unknown_cost`` is false: pricing is off).
    """
    end: AgentEnd | None = None
    failure: str | None = None
    began = time.monotonic()
    start = len(agent.messages)
    output = JsonLines(stdout) if json_lines else None

    def on_exit_signal(signum: int) -> None:
        agent.abort()

    with sigint_calls(agent.abort) as interrupts, exit_signals_call(on_exit_signal) as signals:
        try:
            async with aclosing(agent.stream(task)) as events:
                async for event in events:
                    if output is not None:
                        output.event(event)
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
        status = Status(
            stats=agent.last_run_stats,
            total=agent.stats,
            context_tokens=context_used(agent.messages),
            context_window=agent.model.context_window,
            elapsed=time.monotonic() - began,
            show_unknown=show_unknown_cost,
        )
        progress.notice(status.line())
    settled = settle(agent.messages, start)
    if settled.dropped:
        agent.replace_messages(settled.messages)
    if session is not None:
        moved = session.save(agent.messages)
        if moved is not None:
            write_inert(stderr, f"yoagent: {moved_notice(moved, session)}")
    if failure is not None:
        outcome = Outcome(EXIT_FAILED, problem=failure, reason="error")
    elif end is None:
        outcome = Outcome(
            EXIT_INTERRUPTED if interrupts.count else EXIT_FAILED,
            problem="the run ended without a result",
            reason="interrupted" if interrupts.count else "error",
        )
    else:
        outcome = judge(end, agent)
    if (interrupts.count or signals.signal is not None) and outcome.code != EXIT_OK:
        code = signals.exit_code if signals.signal is not None else EXIT_INTERRUPTED
        outcome = Outcome(code, problem="interrupted", reason="interrupted")
    if output is not None:
        output.summary(
            outcome.code,
            outcome.answer,
            outcome.reason,
            stats=agent.last_run_stats,
            session_id=session.id if session is not None and session.path.exists() else None,
            duration=time.monotonic() - began,
            problem=outcome.problem,
        )
    elif outcome.answer and outcome.code == EXIT_OK:
        answer = outcome.answer.rstrip("\n")
        stdout.write((inert(answer) if stdout.isatty() else answer) + "\n")
        stdout.flush()
    if outcome.code != EXIT_OK:
        write_inert(stderr, f"yoagent: {outcome.problem}")
    return outcome.code
