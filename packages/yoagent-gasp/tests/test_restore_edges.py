"""Restore's :func:`load` at its edges: a root ``IDENTITY.md`` instead of ``identity/``,
text that is not UTF-8, skills, an executor binding that does not parse, an ``at`` the log
lacks, and each refusal word for word (pinned from a mutation run of yoagent-gasp,
docs/mutation.md)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from yoagent.gasp import Actor, Event, RestoreError, identity_hash, load

MANIFEST = "# AGENT\n\n```yaml\nspec_version: {version}\nagent_id: edge-agent\n{extra}```\n"
SKILL = "---\nname: {name}\ndescription: A skill named {name}.\n---\nDo {name} things.\n"
posix_only = pytest.mark.skipif(sys.platform == "win32", reason="symbolic links")


def _agent(root: Path, *, version: int = 1, extra: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "AGENT.md").write_text(MANIFEST.format(version=version, extra=extra))
    return root


def _with_identity(root: Path, text: bytes = b"# Identity\n") -> Path:
    (root / "identity").mkdir(parents=True)
    (root / "identity" / "IDENTITY.md").write_bytes(text)
    return _agent(root, extra=f"identity_hash: {identity_hash(root)}\n")


def test_a_root_identity_file_is_loaded_when_there_is_no_identity_folder(tmp_path: Path) -> None:
    root = _agent(tmp_path / "agent")
    (root / "IDENTITY.md").write_bytes(b"# Me\n\xff\n")
    agent = load(root)
    assert agent.identity == {"IDENTITY.md": "# Me\n\ufffd\n"}
    assert agent.notes == []
    assert agent.config is None


@posix_only
def test_a_root_identity_file_that_is_a_link_is_refused(tmp_path: Path) -> None:
    root = _agent(tmp_path / "agent")
    outside = tmp_path / "outside.md"
    outside.write_text("someone else\n")
    os.symlink(outside, root / "IDENTITY.md")
    with pytest.raises(RestoreError) as refused:
        load(root)
    assert str(refused.value).startswith("IDENTITY.md is a symlink; restore reads only regular")


def test_identity_text_that_is_not_utf8_is_loaded_with_replacements(tmp_path: Path) -> None:
    root = _with_identity(tmp_path / "agent", b"caf\xe9\n")
    assert load(root).identity == {"identity/IDENTITY.md": "caf\ufffd\n"}


def test_no_identity_at_all_is_refused_in_words(tmp_path: Path) -> None:
    with pytest.raises(RestoreError) as refused:
        load(_agent(tmp_path / "agent"))
    assert str(refused.value) == "the repository has no identity/ directory nor IDENTITY.md"


def test_an_undeclared_identity_hash_is_noted(tmp_path: Path) -> None:
    root = _agent(tmp_path / "agent")
    (root / "identity").mkdir()
    (root / "identity" / "IDENTITY.md").write_text("# Identity\n")
    assert load(root).notes == ["AGENT.md declares no identity_hash; the identity is unverified"]


def test_an_identity_that_does_not_match_names_both_hashes_cut_to_twelve(tmp_path: Path) -> None:
    root = _with_identity(tmp_path / "agent")
    declared = identity_hash(root)
    (root / "identity" / "IDENTITY.md").write_text("# Someone else\n")
    actual = identity_hash(root)
    with pytest.raises(RestoreError) as refused:
        load(root)
    assert str(refused.value) == (
        f"identity/ does not match AGENT.md's identity_hash ({declared[:12]}… declared, "
        f"{actual[:12]}… found)"
    )


def test_another_spec_version_and_a_broken_manifest_are_refused_in_words(tmp_path: Path) -> None:
    with pytest.raises(RestoreError) as refused:
        load(_agent(tmp_path / "two", version=2))
    assert str(refused.value) == "AGENT.md declares GASP spec_version 2; this reads 1"
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "AGENT.md").write_text("# AGENT\n\nno yaml here\n")
    with pytest.raises(RestoreError) as refused:
        load(broken)
    assert str(refused.value) == "AGENT.md has no ```yaml block"


def test_the_executor_binding_is_read_and_one_that_does_not_parse_is_refused(
    tmp_path: Path,
) -> None:
    root = _with_identity(tmp_path / "agent")
    (root / ".agent").mkdir()
    (root / ".agent" / "config.toml").write_text('model = "m\u00e9"\n', encoding="utf-8")
    assert load(root).config == {"model": "m\u00e9"}
    (root / ".agent" / "config.toml").write_text("model = \n")
    with pytest.raises(RestoreError) as refused:
        load(root)
    assert str(refused.value).startswith(".agent/config.toml does not parse: ")


@posix_only
def test_skills_are_loaded_past_a_hidden_link_and_a_skill_link_is_refused(tmp_path: Path) -> None:
    root = _with_identity(tmp_path / "agent")
    skills = root / "skills"
    (skills / "fix").mkdir(parents=True)
    (skills / "fix" / "SKILL.md").write_text(SKILL.format(name="fix"))
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "SKILL.md").write_text(SKILL.format(name="lent"))
    os.symlink(outside, skills / ".cache")  # hidden: the loader never reads it
    assert load(root).skills.names == ["fix"]
    os.symlink(outside, skills / "lent")
    with pytest.raises(RestoreError, match="skills/lent is a symlink"):
        load(root)


def test_an_at_the_log_does_not_hold_is_refused(tmp_path: Path) -> None:
    root = _with_identity(tmp_path / "agent")
    (root / "state").mkdir()
    event = Event.new(Actor("agent", "edge-agent"), "goal.created", {"id": "goal_1"})
    (root / "state" / "events.jsonl").write_text(event.to_line())
    assert [e.id for e in load(root, at=event.id).fold.events] == [event.id]
    with pytest.raises(RestoreError) as refused:
        load(root, at="event_missing")
    assert str(refused.value) == "no event event_missing in the log"


@posix_only
def test_an_identity_file_that_is_a_link_is_left_out_with_a_note(tmp_path: Path) -> None:
    root = tmp_path / "agent"
    (root / "identity").mkdir(parents=True)
    (root / "identity" / "IDENTITY.md").write_text("# Identity\n")
    outside = tmp_path / "outside.md"
    outside.write_text("someone else\n")
    os.symlink(outside, root / "identity" / "PERSONALITY.md")
    _agent(root, extra=f"identity_hash: {identity_hash(root)}\n")
    agent = load(root)
    assert list(agent.identity) == ["identity/IDENTITY.md"]
    assert agent.notes == [
        "identity/PERSONALITY.md: not loaded — a symlink or not a regular file, which the "
        "identity hash does not cover"
    ]
