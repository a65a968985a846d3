"""The agent's identity hash and its manifest, ``AGENT.md``.

The hash is the recipe every GASP manifest states: SHA-256 over each file under
``identity/``, in byte-order-sorted relative-path order, of its path (``identity/...``),
a newline, then its bytes — the same as
``find identity -type f | LC_ALL=C sort | while IFS= read -r f; do printf '%s\\n' "$f";
cat "$f"; done | shasum -a 256``.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from ._errors import GaspError

MANIFEST = "AGENT.md"
IDENTITY_DIR = "identity"
SPEC_VERSION = 1

_YAML_BLOCK = re.compile(r"^```ya?ml[ \t]*\r?\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)


def walk_identity(root: str | Path, folder: str = IDENTITY_DIR) -> tuple[list[str], list[str]]:
    """What the identity hash covers under ``folder``, and what it leaves out.

    Returns the regular files (relative paths as ``find`` prints them, in byte order) and
    everything else found there — symlinks to files or folders, anything not a regular
    file — which is neither hashed nor, by :func:`~yoagent.gasp.restore`, loaded. As with
    ``find identity -type f``, a ``folder`` that is itself a symlink holds nothing.
    """
    base = Path(root)
    top = base / folder
    if top.is_symlink():
        return [], [folder]
    files: list[bytes] = []
    others: list[bytes] = []
    for directory, dirs, names in os.walk(top):
        here = Path(directory)
        # os.walk lists a symlinked folder among ``dirs`` and does not descend into it.
        others += [_relative(base, here / name) for name in dirs if (here / name).is_symlink()]
        for name in names:
            path = here / name
            regular = path.is_file() and not path.is_symlink()  # find -type f: no symlinks
            (files if regular else others).append(_relative(base, path))
    return [os.fsdecode(p) for p in sorted(files)], [os.fsdecode(p) for p in sorted(others)]


def _relative(base: Path, path: Path) -> bytes:
    return os.fsencode(path.relative_to(base).as_posix())


def identity_hash(root: str | Path, folder: str = IDENTITY_DIR) -> str:
    """The identity hash of the repository at ``root`` (hex SHA-256)."""
    base = Path(root)
    digest = hashlib.sha256()
    for relative in walk_identity(base, folder)[0]:
        digest.update(os.fsencode(relative) + b"\n")
        digest.update((base / relative).read_bytes())
    return digest.hexdigest()


class ManifestError(GaspError, ValueError):
    """``AGENT.md`` is missing its yaml block, or the block is not a mapping."""


@dataclass(slots=True, kw_only=True)
class Manifest:
    """What ``AGENT.md``'s fenced yaml block declares."""

    agent_id: str
    spec_version: int = SPEC_VERSION
    identity_hash: str | None = None
    executor: str | None = None
    extra: dict[str, Any] = field(default_factory=dict[str, Any])
    """Any other keys of the block, kept as read."""

    def block(self) -> dict[str, Any]:
        """The yaml block as a mapping, in the order GASP repositories write it."""
        block: dict[str, Any] = {"spec_version": self.spec_version, "agent_id": self.agent_id}
        if self.identity_hash is not None:
            block["identity_hash"] = self.identity_hash
        if self.executor is not None:
            block["executor"] = self.executor
        block.update(self.extra)
        return block

    def render(self) -> str:
        """A complete ``AGENT.md`` for a new repository."""
        body = yaml.safe_dump(self.block(), sort_keys=False, allow_unicode=True)
        return (
            f"# AGENT — {self.agent_id}\n\n```yaml\n{body}```\n\n"
            "This repository is the agent's durable state per the GASP protocol: identity,\n"
            "skills and the append-only event log `state/events.jsonl`. Clone it and fold the\n"
            "log to restore the agent.\n"
        )


def parse_manifest(text: str) -> Manifest:
    """Read the first fenced ```` ```yaml ```` block of an ``AGENT.md``."""
    match = _YAML_BLOCK.search(text)
    if match is None:
        raise ManifestError(f"{MANIFEST} has no ```yaml block")
    try:
        loaded = yaml.safe_load(match.group(1))
    except yaml.YAMLError as error:
        raise ManifestError(f"{MANIFEST}'s yaml block does not parse: {error}") from None
    if not isinstance(loaded, dict):
        raise ManifestError(f"{MANIFEST}'s yaml block is not a mapping")
    mapping: dict[Any, Any] = loaded  # pyright: ignore[reportUnknownVariableType]
    block: dict[str, Any] = {str(key): value for key, value in mapping.items()}
    agent_id, spec_version = block.pop("agent_id", None), block.pop("spec_version", None)
    digest, executor = block.pop("identity_hash", None), block.pop("executor", None)
    if not isinstance(agent_id, str | int) or isinstance(agent_id, bool):
        raise ManifestError(f"{MANIFEST} declares no agent_id")
    if not isinstance(spec_version, int) or isinstance(spec_version, bool):
        raise ManifestError(f"{MANIFEST} declares no integer spec_version")
    return Manifest(
        agent_id=str(agent_id),
        spec_version=spec_version,
        identity_hash=None if digest is None else str(digest),
        executor=None if executor is None else str(executor),
        extra=block,
    )


def read_manifest(root: str | Path) -> Manifest:
    """The manifest of the repository at ``root``; :class:`ManifestError` when absent."""
    path = Path(root) / MANIFEST
    try:
        return parse_manifest(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ManifestError(f"{MANIFEST} is missing") from None
