"""``--record <repo>``: the session's runs recorded into a GASP agent repository.

The repository is opened (or created) at start-up, so a path that cannot be used is a
configuration error before anything runs (exit code 2), never a surprise after the first
answer. Each run is recorded through yoagent-gasp's :class:`RecordingExtension` (the
terminal is served first); a recording that fails is reported on stderr as it happens
(yoagent-gasp logs it, and :mod:`.logs` shows the ``yoagent`` loggers' errors) and the
session goes on without that run's record. One goal per session: ``yoagent session <id>``.

A folder that exists, is not empty and holds no ``AGENT.md`` is refused rather than
scaffolded: ``--record .`` in a project must not turn the project's own git repository
into an agent's log.
"""

from __future__ import annotations

from pathlib import Path

from yoagent.gasp import NewGoal, Recorder, RecordingExtension
from yoagent.gasp.identity import MANIFEST

from ._errors import CliError

AGENT_ID = "yoagent"


class RecordError(CliError):
    """The ``--record`` repository cannot be used (exit code 2)."""


def open_recording(path: Path, session_id: str) -> RecordingExtension:
    """The extension recording this session's runs into the agent repository at ``path``
    (created when ``path`` does not exist or is an empty folder).

    Raises :class:`RecordError` with what is wrong and where.
    """
    where = f"--record {path}"
    if path.exists() and not path.is_dir():
        raise RecordError(f"{where}: not a folder")
    fresh = not path.exists() or not any(path.iterdir())
    if not fresh and not (path / MANIFEST).is_file():
        raise RecordError(
            f"{where}: not an agent repository (no {MANIFEST}); give a new or empty "
            "folder to create one"
        )
    goal = NewGoal(f"yoagent session {session_id}")
    try:
        recorder = Recorder.init(path, AGENT_ID, goal) if fresh else Recorder.open(path, goal)
    except Exception as error:  # unwritable, a live writer's lease, a broken repository, git
        raise RecordError(f"{where}: {error}") from None
    return RecordingExtension(recorder)
