"""Restore loads what the repository commits and the identity hash vouches for: regular
files inside ``identity/`` and ``skills/``, never a symlink's target on this machine."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import git
import pytest

from yoagent.gasp import (
    NewGoal,
    Recorder,
    RepositoryError,
    RestoreError,
    identity_hash,
    read_manifest,
    restore,
)

SECRET = "PRIVATE KEY MATERIAL\n"

SKILL = "---\nname: {name}\ndescription: A skill named {name}.\n---\nDo {name} things.\n"


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "home" / "secret.txt"
    path.parent.mkdir()
    path.write_text(SECRET)
    return path


def _commit(root: Path, message: str) -> None:
    repo = git.Repo(root)
    repo.git.add("--all")
    repo.git.commit("-q", "-m", message)


def test_restore_does_not_load_an_identity_symlink_the_hash_does_not_cover(
    repo_dir: Path, tmp_path: Path, secret: Path
) -> None:
    Recorder.init(repo_dir, "linked", NewGoal("keep secrets home"))
    os.symlink(secret, repo_dir / "identity" / "PERSONALITY.md")
    _commit(repo_dir, "identity: a symlink")  # the hash still matches: it skips symlinks

    agent = restore(repo_dir, tmp_path / "clone")

    assert (tmp_path / "clone" / "identity" / "PERSONALITY.md").is_symlink()
    assert list(agent.identity) == ["identity/IDENTITY.md"]
    assert all(SECRET not in text for text in agent.identity.values())
    assert any("identity/PERSONALITY.md" in note and "symlink" in note for note in agent.notes)


def test_restore_loads_exactly_the_identity_files_the_hash_covers(
    repo_dir: Path, tmp_path: Path, secret: Path
) -> None:
    Recorder.init(repo_dir, "linked", NewGoal("hash what you load"))
    (repo_dir / "identity" / "more").mkdir()
    (repo_dir / "identity" / "more" / "PRINCIPLES.md").write_text("Be exact.\n")
    os.symlink(secret.parent, repo_dir / "identity" / "home")  # a symlinked folder
    manifest = repo_dir / "AGENT.md"
    old = read_manifest(repo_dir).identity_hash
    assert old is not None
    manifest.write_text(manifest.read_text().replace(old, identity_hash(repo_dir)))
    _commit(repo_dir, "identity: principles and a symlinked folder")

    agent = restore(repo_dir, tmp_path / "clone")

    assert sorted(agent.identity) == ["identity/IDENTITY.md", "identity/more/PRINCIPLES.md"]
    assert any("identity/home" in note for note in agent.notes)


def test_restore_refuses_an_identity_folder_that_is_a_symlink(
    repo_dir: Path, tmp_path: Path, secret: Path
) -> None:
    Recorder.init(repo_dir, "linked", NewGoal("no borrowed identity"))
    git.Repo(repo_dir).git.rm("-r", "-q", "identity")
    os.symlink(secret.parent, repo_dir / "identity")
    _commit(repo_dir, "identity: a symlinked folder")

    with pytest.raises(RestoreError, match="identity is a symlink"):
        restore(repo_dir, tmp_path / "clone")


@pytest.mark.parametrize("linked", ["folder", "SKILL.md"])
def test_restore_refuses_a_symlinked_skill(
    repo_dir: Path, tmp_path: Path, secret: Path, linked: str
) -> None:
    Recorder.init(repo_dir, "skilled", NewGoal("load committed skills"))
    skills = repo_dir / "skills"
    (skills / "real").mkdir(parents=True)
    (skills / "real" / "SKILL.md").write_text(SKILL.format(name="real"))
    outside = tmp_path / "home" / "borrowed"
    outside.mkdir()
    (outside / "SKILL.md").write_text(SKILL.format(name="borrowed") + SECRET)
    if linked == "folder":
        os.symlink(outside, skills / "borrowed")
    else:
        (skills / "borrowed").mkdir()
        os.symlink(outside / "SKILL.md", skills / "borrowed" / "SKILL.md")
    _commit(repo_dir, "skills")

    name = "skills/borrowed" if linked == "folder" else "skills/borrowed/SKILL.md"
    with pytest.raises(RestoreError, match=f"{name} is a symlink"):
        restore(repo_dir, tmp_path / "clone")


def test_restore_refuses_a_skills_folder_that_is_a_symlink(repo_dir: Path, tmp_path: Path) -> None:
    Recorder.init(repo_dir, "skilled", NewGoal("no borrowed skills"))
    outside = tmp_path / "home" / "skills"
    (outside / "borrowed").mkdir(parents=True)
    (outside / "borrowed" / "SKILL.md").write_text(SKILL.format(name="borrowed"))
    os.symlink(outside, repo_dir / "skills")
    _commit(repo_dir, "skills: a symlinked folder")

    with pytest.raises(RestoreError, match="skills is a symlink"):
        restore(repo_dir, tmp_path / "clone")


@pytest.mark.parametrize("path", [".agent/config.toml", ".agent", "state"])
def test_restore_refuses_a_config_or_log_reached_through_a_symlink(
    repo_dir: Path, tmp_path: Path, path: str
) -> None:
    Recorder.init(repo_dir, "linked", NewGoal("read only the repository"))
    outside = tmp_path / "home" / "elsewhere"
    outside.mkdir(parents=True)
    (outside / "config.toml").write_text('api_key = "secret"\n')
    (outside / "events.jsonl").write_text("")
    target = repo_dir / path
    if target.exists():
        git.Repo(repo_dir).git.rm("-r", "-q", "--cached", "--ignore-unmatch", path)
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink()
    target.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(outside / "config.toml" if path.endswith(".toml") else outside, target)
    _commit(repo_dir, f"{path}: a symlink")

    with pytest.raises(RestoreError, match=f"{path} is a symlink"):
        restore(repo_dir, tmp_path / "clone")


# --- opening a repository someone else made --------------------------------------------


def test_opening_refuses_a_log_that_is_a_symlink_and_leaves_its_target_alone(
    repo_dir: Path, secret: Path
) -> None:
    """A shared agent repository could commit ``state/events.jsonl`` as a link to a file
    outside it: every append (and a repair's cut) would write there."""
    Recorder.init(repo_dir, "agent", NewGoal("g"))
    log = repo_dir / "state" / "events.jsonl"
    log.unlink()
    log.symlink_to(secret)
    _commit(repo_dir, "share")
    with pytest.raises(RepositoryError, match=r"state/events\.jsonl is a symbolic link"):
        Recorder.open(repo_dir, NewGoal("next"))
    assert secret.read_text() == SECRET


def test_opening_refuses_a_state_folder_that_is_a_symlink(repo_dir: Path, tmp_path: Path) -> None:
    Recorder.init(repo_dir, "agent", NewGoal("g"))
    outside = tmp_path / "outside"
    shutil.move(repo_dir / "state", outside)
    (repo_dir / "state").symlink_to(outside, target_is_directory=True)
    with pytest.raises(RepositoryError, match="state is a symbolic link"):
        Recorder.open(repo_dir, NewGoal("next"))


def test_opening_a_project_with_its_own_agent_md_changes_nothing_before_refusing(
    tmp_path: Path,
) -> None:
    """``AGENT.md`` is a common name for agent instructions: such a project is refused
    as an agent repository before its .gitignore or folders are touched."""
    project = tmp_path / "project"
    project.mkdir()
    git.Repo.init(project)
    (project / "AGENT.md").write_text("# Instructions\n\nRun `make test` first.\n")
    (project / ".gitignore").write_text("node_modules/\n")
    _commit(project, "init")
    with pytest.raises(Exception, match=r"AGENT\.md"):
        Recorder.open(project, NewGoal("g"))
    assert (project / ".gitignore").read_text() == "node_modules/\n"
    assert not (project / "state").exists()


def test_a_failed_clone_never_shows_the_urls_credentials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GIT_TERMINAL_PROMPT", "0")
    token = "ghp-token-0123456789abcdef"
    url = f"https://agent:hunter2-long-pw@127.0.0.1:1/{token}/agent.git"  # nothing listens
    with pytest.raises(RestoreError, match="git clone failed") as caught:
        restore(url, tmp_path / "clone")
    shown = str(caught.value)
    assert token not in shown and "hunter2-long-pw" not in shown
