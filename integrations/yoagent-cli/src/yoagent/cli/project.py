"""How far up from the working folder yoagent looks for a project's own files: its
instructions (``AGENTS.md``, ``CLAUDE.md``) and its ``.yoagent/config.toml``.

Not up to the filesystem root: then anyone who can write to a shared parent such as
``/tmp`` could plant instructions for the model, or a config, for everyone working below
it. The search covers the working folder and its parents up to the **repository root**:
the nearest folder holding ``.git`` (a folder, or the file a worktree or submodule has).
Outside any repository it goes up to the user's **home folder** when the working folder
is inside it, else it covers the working folder alone. A ``.git`` owned by another user
(root excepted) makes no repository root, as Git itself distrusts one ("dubious
ownership"): a ``/tmp/.git`` planted by someone else widens nothing. The filesystem root
itself is never searched.
"""

from __future__ import annotations

import os
from pathlib import Path


def _owned_by_us(status: os.stat_result) -> bool:
    getuid = getattr(os, "getuid", None)
    return getuid is None or status.st_uid in (getuid(), 0)


def is_repository_root(folder: Path) -> bool:
    """Whether ``folder`` holds a ``.git`` owned by this user (or root)."""
    try:
        return _owned_by_us(os.lstat(folder / ".git"))
    except OSError:
        return False


def _home() -> Path | None:
    try:
        home = Path.home().resolve()
    except (RuntimeError, OSError):
        return None
    return None if home.parent == home else home  # a home of "/" bounds nothing


def project_folders(cwd: Path) -> list[Path]:
    """The folders searched for the project's files, nearest (``cwd``) first (see the
    module docstring). ``cwd`` is resolved."""
    folders: list[Path] = []
    for folder in (cwd, *cwd.parents):
        if folder.parent == folder:  # the filesystem root
            break
        folders.append(folder)
        if is_repository_root(folder):
            return folders
    home = _home()
    if home is not None and (cwd == home or home in cwd.parents):
        return [folder for folder in folders if folder == home or home in folder.parents]
    return folders[:1]
