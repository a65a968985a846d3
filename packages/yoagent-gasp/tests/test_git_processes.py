"""The git processes a recorder keeps: out of the terminal's way, and a helper that died is
never taken for a failed commit (issue 27: ``yoagent --record`` after one Ctrl+C)."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from yoagent.gasp import AgentRepo

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="process groups are POSIX")


def _helpers(repo: AgentRepo) -> list[int]:
    """The pids of gitpython's persistent ``cat-file`` processes for this repository."""
    wrapper = repo.git.git
    running = (wrapper.cat_file_header, wrapper.cat_file_all)
    return [command.proc.pid for command in running if command is not None]


def _append(repo: AgentRepo, line: str) -> None:
    with repo.log_path.open("a", encoding="utf-8") as log:
        log.write(line + "\n")


def _recording_repo(root: Path) -> AgentRepo:
    repo = AgentRepo.init(root, "agent")
    _append(repo, "{}")
    repo.commit_scaffolding()
    _append(repo, '{"n": 1}')
    repo.commit_run("run_1", "goal_1", "completed")  # reads HEAD's log: starts the helpers
    return repo


def test_git_helpers_run_in_a_session_of_their_own(repo_dir: Path) -> None:
    """A Ctrl+C at the terminal signals its whole foreground process group; git helpers
    in ours died with it."""
    repo = _recording_repo(repo_dir)
    helpers = _helpers(repo)
    assert helpers, "the persistent cat-file helper was expected to be running"
    for pid in helpers:
        assert os.getpgid(pid) != os.getpgrp()
        assert os.getsid(pid) != os.getsid(0)


def test_a_commit_made_after_the_object_helper_died_is_reported_made(repo_dir: Path) -> None:
    """The commit was written, then reading its sha through the dead helper raised a
    Broken pipe, reported as a failed recording; every later run failed the same way."""
    repo = _recording_repo(repo_dir)
    for pid in _helpers(repo):
        os.kill(pid, signal.SIGKILL)
    time.sleep(0.1)
    _append(repo, '{"n": 2}')
    sha = repo.commit_run("run_2", "goal_1", "completed")
    assert sha == repo.git.git.rev_parse("HEAD")
    _append(repo, '{"n": 3}')
    third = repo.commit_run("run_3", "goal_1", "completed")
    assert third == repo.git.git.rev_parse("HEAD") != sha
    subjects = repo.git.git.log("--format=%s").splitlines()
    assert subjects[:3] == ["run run_3: completed", "run run_2: completed", "run run_1: completed"]


def test_a_dead_object_helper_never_sweeps_a_tracked_identity_into_a_commit(
    repo_dir: Path,
) -> None:
    """Asking "is it in HEAD" through a dead helper answered "no" (gitpython's ``is_valid``
    takes the broken pipe for an unborn branch), so the scaffolding commit would take an
    edit of the human-gated manifest with it."""
    repo = _recording_repo(repo_dir)
    for pid in _helpers(repo):
        os.kill(pid, signal.SIGKILL)
    time.sleep(0.1)
    manifest = repo_dir / "AGENT.md"
    manifest.write_text(manifest.read_text(encoding="utf-8") + "\nan edit\n", encoding="utf-8")
    _append(repo, '{"n": 2}')
    repo.commit_scaffolding()
    changed = repo.git.git.show("--name-only", "--format=", "HEAD").splitlines()
    assert changed == ["state/events.jsonl"]
