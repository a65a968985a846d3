"""The recorder writes only inside its repository: a path it writes through that is a
symbolic link — committed to a shared repository, made by a clone — is refused before
anything is written, locked or deleted through it (issue 27)."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import git
import pytest

from yoagent.gasp import (
    Lease,
    LeaseCorruptError,
    LeaseError,
    NewGoal,
    Recorder,
    RepositoryError,
)

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="symbolic links need privileges")

SECRET = "PRIVATE KEY MATERIAL\n"


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder outside the repository, holding one file the recorder must never touch."""
    folder = tmp_path / "home"
    folder.mkdir()
    (folder / "secret.txt").write_text(SECRET)
    return folder


def _commit(root: Path, message: str) -> None:
    repo = git.Repo(root)
    repo.git.add("--all", "--force")
    repo.git.commit("-q", "-m", message)


def _untouched(folder: Path) -> None:
    assert sorted(p.name for p in folder.iterdir()) == ["secret.txt"]
    assert (folder / "secret.txt").read_text() == SECRET


def test_opening_refuses_an_agent_folder_that_is_a_committed_symlink(
    repo_dir: Path, outside: Path
) -> None:
    """A clone whose ``.agent/`` links elsewhere: the recorder created, locked and
    deleted its lease file there."""
    Recorder.init(repo_dir, "agent", NewGoal("g"))
    shutil.rmtree(repo_dir / ".agent", ignore_errors=True)
    (repo_dir / ".agent").symlink_to(outside, target_is_directory=True)
    _commit(repo_dir, "share")
    with pytest.raises(RepositoryError, match=r"\.agent is a symbolic link"):
        Recorder.open(repo_dir, NewGoal("next"))
    _untouched(outside)


def test_creating_refuses_an_agent_folder_that_is_a_symlink(repo_dir: Path, outside: Path) -> None:
    repo_dir.mkdir()
    (repo_dir / ".agent").symlink_to(outside, target_is_directory=True)
    with pytest.raises(RepositoryError, match=r"\.agent is a symbolic link"):
        Recorder.init(repo_dir, "agent", NewGoal("g"))
    _untouched(outside)


def test_opening_refuses_a_lease_file_that_is_a_symlink(repo_dir: Path, outside: Path) -> None:
    Recorder.init(repo_dir, "agent", NewGoal("g"))
    (repo_dir / ".agent" / "lease").symlink_to(outside / "secret.txt")
    with pytest.raises(RepositoryError, match=r"\.agent/lease is a symbolic link"):
        Recorder.open(repo_dir, NewGoal("next"))
    _untouched(outside)


def test_opening_refuses_a_gitignore_that_is_a_symlink(repo_dir: Path, outside: Path) -> None:
    """The recorder rewrites ``.gitignore`` from what it reads and commits it: through a
    link, a file from outside would be copied into the repository's history."""
    Recorder.init(repo_dir, "agent", NewGoal("g"))
    (repo_dir / ".gitignore").unlink()
    (repo_dir / ".gitignore").symlink_to(outside / "secret.txt")
    _commit(repo_dir, "share")
    with pytest.raises(RepositoryError, match=r"\.gitignore is a symbolic link"):
        Recorder.open(repo_dir, NewGoal("next"))
    _untouched(outside)
    assert SECRET not in git.Repo(repo_dir).git.log("-p")


@pytest.mark.parametrize("name", ["AGENT.md", "identity"])
def test_creating_refuses_a_manifest_or_identity_that_is_a_dangling_symlink(
    repo_dir: Path, outside: Path, name: str
) -> None:
    """``init`` writes ``AGENT.md`` and ``identity/`` when they do not exist, and a link
    to a missing file does not exist: the file would be created where it points."""
    repo_dir.mkdir()
    (repo_dir / name).symlink_to(outside / "made-by-the-recorder")
    with pytest.raises(RepositoryError, match=f"{name} is a symbolic link"):
        Recorder.init(repo_dir, "agent", NewGoal("g"))
    _untouched(outside)


def test_a_lease_refuses_an_agent_folder_that_is_a_symlink(repo_dir: Path, outside: Path) -> None:
    """The lease used on its own takes the same care (and a link swapped in after the
    repository was opened is refused the same way)."""
    repo_dir.mkdir()
    (repo_dir / ".agent").symlink_to(outside, target_is_directory=True)
    lease = Lease(repo_dir, "worker")
    with pytest.raises(LeaseError, match=r"\.agent is a symbolic link"):
        lease.acquire()
    with pytest.raises(LeaseError, match=r"\.agent is a symbolic link"):
        lease.release()
    _untouched(outside)


def test_a_lease_refuses_a_lease_file_that_is_a_symlink(repo_dir: Path, outside: Path) -> None:
    (repo_dir / ".agent").mkdir(parents=True)
    os.symlink(outside / "secret.txt", repo_dir / ".agent" / "lease")
    lease = Lease(repo_dir, "worker")
    with pytest.raises(LeaseCorruptError, match="symbolic link"):
        lease.acquire()
    with pytest.raises(LeaseCorruptError, match="symbolic link"):
        lease.release()
    assert (repo_dir / ".agent" / "lease").is_symlink()  # left for a human to look at
    _untouched(outside)
