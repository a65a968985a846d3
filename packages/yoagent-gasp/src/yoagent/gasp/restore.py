"""Restore: ``git clone`` an agent repository, then replay it — check the manifest and the
identity hash, load ``identity/``, ``skills/`` and ``.agent/config.toml``, and fold the
committed log into the typed graph.

Restore reads only regular files inside the repository. Git commits symlinks, and a clone
recreates them pointing wherever they point on the restoring machine, so a symlink is
never followed: one inside ``identity/`` is left out with a note (the identity hash does
not cover it, so its text is unverified), and any other file or folder restore would read
that is a symlink refuses the restore.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import git

from yoagent.core import SkillSet, load_skills
from yoagent.core.support import Scrubber

from ._errors import GaspError
from ._git import git_errors
from .fold import LOG_PATH, Fold, fold_log
from .graph import Graph
from .identity import (
    IDENTITY_DIR,
    MANIFEST,
    SPEC_VERSION,
    Manifest,
    ManifestError,
    identity_hash,
    read_manifest,
    walk_identity,
)

CONFIG_PATH = ".agent/config.toml"
SKILLS_DIR = "skills"
SKILL_FILE = "SKILL.md"


class RestoreError(GaspError, RuntimeError):
    """The repository cannot be restored as it is (no manifest, another spec version, an
    identity that does not match its hash, a clone that failed, an unknown ``at``)."""


@dataclass(slots=True, kw_only=True)
class RestoredAgent:
    """An agent brought back from its repository."""

    root: Path
    manifest: Manifest
    identity: dict[str, str]
    """``identity/`` files by relative path (``identity/IDENTITY.md``), as text."""
    skills: SkillSet
    config: dict[str, Any] | None
    """``.agent/config.toml`` (the executor binding), when present."""
    fold: Fold
    notes: list[str] = field(default_factory=list[str])
    """What restore noticed but could live with (no identity hash declared, ...)."""

    @property
    def graph(self) -> Graph:
        """The folded graph."""
        return self.fold.graph

    @property
    def agent_id(self) -> str:
        return self.manifest.agent_id


def load(root: str | Path, *, at: str | None = None) -> RestoredAgent:
    """Replay the agent repository at ``root`` (already cloned): the graph as of the event
    ``at`` (inclusive) when given, else of the whole log."""
    base = Path(root)
    for path in (MANIFEST, IDENTITY_DIR, "IDENTITY.md", CONFIG_PATH, LOG_PATH, SKILLS_DIR):
        _refuse_symlink(base, path)
    try:
        manifest = read_manifest(base)
    except ManifestError as error:
        raise RestoreError(str(error)) from None
    if manifest.spec_version != SPEC_VERSION:
        raise RestoreError(
            f"AGENT.md declares GASP spec_version {manifest.spec_version}; "
            f"this reads {SPEC_VERSION}"
        )
    notes: list[str] = []
    identity = _load_identity(base, manifest, notes)
    config: dict[str, Any] | None = None
    config_path = base / CONFIG_PATH
    if config_path.is_file():
        try:
            config = tomllib.loads(config_path.read_text("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            raise RestoreError(f"{CONFIG_PATH} does not parse: {error}") from None
    fold = fold_log(base / LOG_PATH, until=at)
    if at is not None and (not fold.events or fold.events[-1].id != at):
        raise RestoreError(f"no event {at} in the log")
    skills = _load_skills(base)
    notes += fold.diagnostics()
    return RestoredAgent(
        root=base,
        manifest=manifest,
        identity=identity,
        skills=skills,
        config=config,
        fold=fold,
        notes=notes,
    )


def _refuse_symlink(base: Path, relative: str) -> None:
    """:class:`RestoreError` when ``relative`` or a folder on its way is a symlink."""
    parts = Path(relative).parts
    for depth in range(1, len(parts) + 1):
        step = "/".join(parts[:depth])
        if (base / step).is_symlink():
            raise RestoreError(
                f"{step} is a symlink; restore reads only regular files inside the "
                "repository (a symlink would load whatever it points to on this machine)"
            )


def _load_identity(base: Path, manifest: Manifest, notes: list[str]) -> dict[str, str]:
    """``identity/``'s files — exactly those the identity hash covers — checked against the
    manifest's hash; or the root ``IDENTITY.md`` of a repository without the folder."""
    identity: dict[str, str] = {}
    if (base / IDENTITY_DIR).is_dir():
        files, others = walk_identity(base)
        for relative in files:
            identity[relative] = (base / relative).read_text("utf-8", "replace")
        notes += [
            f"{relative}: not loaded — a symlink or not a regular file, which the identity "
            "hash does not cover"
            for relative in others
        ]
        actual = identity_hash(base)
        if manifest.identity_hash is None:
            notes.append("AGENT.md declares no identity_hash; the identity is unverified")
        elif manifest.identity_hash != actual:
            raise RestoreError(
                f"identity/ does not match AGENT.md's identity_hash "
                f"({manifest.identity_hash[:12]}… declared, {actual[:12]}… found)"
            )
    elif (base / "IDENTITY.md").is_file():
        identity["IDENTITY.md"] = (base / "IDENTITY.md").read_text("utf-8", "replace")
    else:
        raise RestoreError("the repository has no identity/ directory nor IDENTITY.md")
    return identity


def _load_skills(base: Path) -> SkillSet:
    """``skills/`` through core's loader, once no skill folder or ``SKILL.md`` it would read
    is a symlink (the loader follows them, and skills go into the model's prompt)."""
    folder = base / SKILLS_DIR
    if not folder.is_dir():
        return SkillSet()
    for skill in sorted(folder.iterdir()):
        if skill.name.startswith("."):
            continue  # the loader skips hidden folders
        _refuse_symlink(base, f"{SKILLS_DIR}/{skill.name}/{SKILL_FILE}")
    return load_skills(folder)


def restore(source: str | Path, destination: str | Path, *, at: str | None = None) -> RestoredAgent:
    """``git clone source destination``, then :func:`load` the clone."""
    # A clone error quotes the URL, whose user, password or token must not show.
    url = str(source)
    scrubber = Scrubber(urls=[url] if "://" in url else ())
    with git_errors(RestoreError, "git clone", shown=scrubber.scrub):
        git.Repo.clone_from(url, str(destination))
    return load(destination, at=at)
