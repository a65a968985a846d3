"""Forking a run at a turn: a new session branch from a recorded or live run, to continue
with another model."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from yoagent.core import AgentMessage, AssistantMessage, Session, StopReason, ToolResultMessage
from yoagent.core.provider import StreamProvider

from ._cassette import Cassette
from ._match import Match
from ._replay import ReplayProvider

_NOT_A_TURN = (StopReason.ERROR, StopReason.ABORTED)


def fork_point(messages: Sequence[AgentMessage], turn: int) -> int:
    """How many of ``messages`` make up the conversation through its ``turn``-th reply
    and that reply's tool results (``turn=0``: what came before the first reply).

    Replies that failed or were cancelled are not turns (no call returned them). Raises
    ``ValueError`` when the conversation has fewer turns.
    """
    if turn < 0:
        raise ValueError(f"turn must be 0 or more, not {turn}")
    replies = [
        index
        for index, message in enumerate(messages)
        if isinstance(message, AssistantMessage) and message.stop_reason not in _NOT_A_TURN
    ]
    if turn == 0:
        return replies[0] if replies else len(messages)
    if turn > len(replies):
        raise ValueError(f"the conversation has {len(replies)} turns; there is no turn {turn}")
    end = replies[turn - 1] + 1
    while end < len(messages) and isinstance(messages[end], ToolResultMessage):
        end += 1
    return end


def fork(source: Session | Cassette | str | Path, *, turn: int) -> Session:
    """A session whose head is the end of ``turn`` in a run, ready for a new branch.

    ``source`` is a live run kept in a :class:`~yoagent.core.Session` (its head's branch
    is forked; the session itself is returned, its head moved) or a recorded one (a
    cassette, or its path: the conversation of its last call that succeeded, as a new
    session). The next message appended starts a branch beside the original, which is
    kept: give an agent ``session.path_messages()``, run it with any model, and
    ``session.append_new(agent.messages)``.
    """
    if isinstance(source, Session):
        session = source
    else:
        cassette = source if isinstance(source, Cassette) else Cassette.load(source)
        session = Session()
        session.extend(cassette.transcript())
    path = session.path()
    point = fork_point([entry.message for entry in path], turn)
    session.seek(path[point - 1].id if point else None)
    return session


def fork_provider(
    cassette: Cassette | str | Path,
    *,
    turn: int,
    then: StreamProvider,
    match: Match | None = None,
) -> ReplayProvider:
    """A provider for re-running a recorded run up to ``turn`` and going on with ``then``.

    The cassette serves the calls of the first ``turn`` turns (matched without the model,
    so the agent may already be configured for the new one); every later call goes to
    ``then``. Unlike :func:`fork`, the run's tools run again, so what they changed (files,
    a database) is back in place when the new model takes over.
    """
    loaded = cassette if isinstance(cassette, Cassette) else Cassette.load(cassette)
    return ReplayProvider(
        loaded,
        match=match or Match(model=False),
        then=then,
        max_calls=loaded.calls_through_turn(turn),
    )
