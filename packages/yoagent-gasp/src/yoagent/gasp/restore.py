"""Restore: ``git clone`` an agent repository, then replay it — check the manifest and the
identity hash, load ``identity/``, ``skills/`` and ``.agent/config.toml``, and fold the
committed log into the typed graph."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import git

from yoagent.core import SkillSet, load_skills

from .fold import Fold, fold_log
from .graph import Graph
from .identity import (
    IDENTITY_DIR,
    SPEC_VERSION,
    Manifest,
    ManifestError,
    identity_hash,
    read_manifest,
)

CONFIG_PATH = ".agent/config.toml"
_URL_CREDENTIALS = re.compile(r"(://)[^/@\s]+@")


def _redacted(text: str) -> str:
    """``text`` with any ``user:password@`` of a URL replaced (clone errors quote the URL)."""
    return _URL_CREDENTIALS.sub(r"\1***@", text)


class RestoreError(RuntimeError):
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
    identity: dict[str, str] = {}
    identity_dir = base / IDENTITY_DIR
    if identity_dir.is_dir():
        for path in sorted(p for p in identity_dir.rglob("*") if p.is_file()):
            identity[path.relative_to(base).as_posix()] = path.read_text("utf-8", "replace")
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
    config: dict[str, Any] | None = None
    config_path = base / CONFIG_PATH
    if config_path.is_file():
        try:
            config = tomllib.loads(config_path.read_text("utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            raise RestoreError(f"{CONFIG_PATH} does not parse: {error}") from None
    fold = fold_log(base / "state" / "events.jsonl", until=at)
    if at is not None and (not fold.events or fold.events[-1].id != at):
        raise RestoreError(f"no event {at} in the log")
    skills_dir = base / "skills"
    skills = load_skills(skills_dir) if skills_dir.is_dir() else SkillSet()
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


def restore(source: str | Path, destination: str | Path, *, at: str | None = None) -> RestoredAgent:
    """``git clone source destination``, then :func:`load` the clone."""
    try:
        git.Repo.clone_from(str(source), str(destination))
    except git.GitCommandError as error:
        detail = (error.stderr or "").strip() or str(error)
        raise RestoreError(f"git clone failed: {_redacted(detail)}") from None
    return load(destination, at=at)
