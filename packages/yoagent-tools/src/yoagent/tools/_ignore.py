"""What ``list_files`` and ``search`` skip: ``.gitignore`` rules and ``glob`` filters, on pathspec.

One dialect everywhere, git's (via :class:`pathspec.GitIgnoreSpec`), the one ripgrep
uses too, so the two search engines and ``list_files`` agree. pathspec's ``simple``
backend (Python's ``re``) is used: names from the OS may hold undecodable bytes
(``surrogateescape``), which its RE2 backend cannot encode.

* :class:`GitIgnoreStack` holds the ``.gitignore`` files in force during a walk: those
  of the walked folder's ancestors up to the repository root, then one per folder
  entered. A deeper file overrides a shallower one, a later line an earlier one, and
  ``!pattern`` re-includes (as in git, nothing below an ignored folder can be
  re-included: the walk never enters it). Rules apply only inside a git repository
  (a folder or an ancestor holding ``.git``), as in git and ripgrep.
* :class:`GlobFilter` is ripgrep's ``--glob`` (override) logic: the last matching glob
  wins, ``!glob`` excludes, and when any glob includes, a file no glob matches is
  skipped (folders are still entered). ``{a,b}`` alternatives are expanded first.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from pathspec import GitIgnoreSpec

from yoagent.core import ToolError

from ._fs import open_for_read, read_all
from ._walk import open_file_in

GITIGNORE: Final = ".gitignore"
MAX_GITIGNORE_BYTES: Final = 1024 * 1024
"""A larger ``.gitignore`` is read only this far (no real one comes close)."""


def expand_braces(glob: str) -> list[str]:
    """``{a,b}`` alternatives expanded, nested ones too: ``*.{py,t{s,sx}}`` → 3 globs."""
    start = glob.find("{")
    while start >= 0:
        depth = 0
        for end in range(start, len(glob)):
            if glob[end] == "{":
                depth += 1
            elif glob[end] == "}":
                depth -= 1
                if depth == 0:
                    options = _split_top_level(glob[start + 1 : end])
                    if len(options) < 2:
                        break  # `{x}` is literal, as in ripgrep's globs
                    head, tail = glob[:start], glob[end + 1 :]
                    return [
                        expanded
                        for option in options
                        for expanded in expand_braces(head + option + tail)
                    ]
        start = glob.find("{", start + 1)
    return [glob]


def _split_top_level(text: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        current.append(char)
    parts.append("".join(current))
    return parts


class GlobFilter:
    """ripgrep's ``--glob`` rules, for paths relative to the searched folder.

    :meth:`decide` says ``True`` (a glob includes it: searched even when ignored or
    hidden), ``False`` (excluded) or ``None`` (no glob has an opinion).
    """

    __slots__ = ("_has_include", "_spec")

    def __init__(self, globs: Sequence[str]) -> None:
        lines: list[str] = []
        self._has_include = False
        for glob in globs:
            negate = glob.startswith("!")
            body = glob[1:] if negate else glob
            self._has_include |= not negate
            # a GitIgnoreSpec "match" is an include here, a "!" match an exclude
            lines += [("!" if negate else "") + _escape_hash(one) for one in expand_braces(body)]
        self._spec = GitIgnoreSpec.from_lines(lines, backend="simple") if lines else None

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """Whether the globs include (``True``) or exclude (``False``) ``rel``, or ``None``."""
        if self._spec is None:
            return None
        verdict = self._spec.check_file(rel + "/" if is_dir else rel).include
        if verdict is None and self._has_include and not is_dir:
            return False
        return verdict


def _escape_hash(glob: str) -> str:
    """A glob starting with ``#`` is a comment to gitignore; as a ``--glob`` it is a name."""
    return "\\" + glob if glob.startswith("#") else glob


@dataclass(slots=True, frozen=True)
class _Layer:
    base: str  # the folder of the .gitignore, relative to the anchor, "" or ending in "/"
    spec: GitIgnoreSpec


class GitIgnoreStack:
    """The ``.gitignore`` files in force at the current point of a walk.

    Paths are given relative to the walked folder; ``prefix`` is the walked folder's
    path from the repository root (so the ancestors' rules see the full path).
    """

    __slots__ = ("_layers", "_prefix")

    def __init__(self, prefix: str = "") -> None:
        self._prefix = prefix
        self._layers: list[_Layer] = []

    @property
    def depth(self) -> int:
        """How many ``.gitignore`` files are in force."""
        return len(self._layers)

    def push(self, folder_rel: str, text: str, *, absolute_base: str | None = None) -> None:
        """Add the rules of the ``.gitignore`` found in ``folder_rel`` (``""`` for the root)."""
        lines = text.splitlines()
        if not any(line.strip() and not line.startswith("#") for line in lines):
            return
        if absolute_base is not None:
            base = absolute_base
        else:
            base = self._prefix + (folder_rel + "/" if folder_rel else "")
        self._layers.append(_Layer(base, GitIgnoreSpec.from_lines(lines, backend="simple")))

    def pop_to(self, depth: int) -> None:
        """Drop the files added after the stack had ``depth`` of them."""
        del self._layers[depth:]

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """``True`` if ignored, ``False`` if re-included by a ``!`` line, ``None`` if no rule."""
        if not self._layers:
            return None
        key = self._prefix + rel + ("/" if is_dir else "")
        for layer in reversed(self._layers):
            if not key.startswith(layer.base):
                continue
            verdict = layer.spec.check_file(key[len(layer.base) :]).include
            if verdict is not None:
                return verdict
        return None


class GitIgnores:
    """The ``.gitignore`` rules of one walk, read as the walk enters each folder.

    :meth:`for_walk` finds the repository the walked folder is in and reads the
    ancestors' files; :meth:`enter` and :meth:`leave` are the walk's hooks (files are
    read through the folder's descriptor, never by path). Outside a repository no rule
    applies until the walk enters a folder holding ``.git``.
    """

    __slots__ = ("_active", "_stack")

    def __init__(self, stack: GitIgnoreStack, *, active: bool) -> None:
        self._stack = stack
        self._active = active

    @classmethod
    def disabled(cls) -> GitIgnores:
        """No rules at all (``list_files(all=true)``, ``use_gitignore=False``)."""
        return cls(GitIgnoreStack(), active=False)

    @classmethod
    def for_walk(cls, root: str, *, nofollow: bool) -> GitIgnores:
        """The rules for a walk of ``root`` (absolute): its ancestors' up to the repository root."""
        root = os.path.abspath(root)
        top = repository_root(root)
        if top is None:
            return cls(GitIgnoreStack(), active=False)
        prefix = os.path.relpath(root, top)
        stack = GitIgnoreStack("" if prefix == "." else prefix.replace(os.sep, "/") + "/")
        for folder in _ancestors_between(top, root):
            text = _read_by_path(os.path.join(folder, GITIGNORE), nofollow=nofollow)
            if text is not None:
                base = os.path.relpath(folder, top)
                stack.push("", text, absolute_base="" if base == "." else base + "/")
        return cls(stack, active=True)

    def enter(self, folder_fd: int, rel: str) -> object:
        """Read the ``.gitignore`` of the folder just entered; returns what :meth:`leave` needs."""
        was_active = self._active
        if not self._active and _has_git(folder_fd):
            self._active = True
        depth = self._stack.depth
        if self._active:
            text = _read_in(folder_fd)
            if text is not None:
                self._stack.push(rel.rstrip("/"), text)
        return _Entered(depth, was_active)

    def leave(self, marker: object) -> None:
        """Drop the rules of the folder being left."""
        assert isinstance(marker, _Entered)
        self._stack.pop_to(marker.depth)
        self._active = marker.was_active

    def decide(self, rel: str, is_dir: bool) -> bool | None:
        """``True`` if ignored, ``False`` if re-included by a ``!`` line, ``None`` if no rule."""
        return self._stack.decide(rel, is_dir)


@dataclass(slots=True, frozen=True)
class _Entered:
    depth: int
    was_active: bool


def _has_git(folder_fd: int) -> bool:
    try:
        os.stat(".git", dir_fd=folder_fd, follow_symlinks=False)
    except OSError:
        return False
    return True


def _read_in(folder_fd: int) -> str | None:
    try:
        fd = open_file_in(folder_fd, GITIGNORE)
    except OSError:
        return None
    return _decode(read_all(fd, MAX_GITIGNORE_BYTES))


def _read_by_path(path: str, *, nofollow: bool) -> str | None:
    try:
        fd, _ = open_for_read("gitignore", GITIGNORE, path, nofollow=nofollow)
    except ToolError:
        return None
    return _decode(read_all(fd, MAX_GITIGNORE_BYTES))


def _decode(data: bytes) -> str:
    # names from the OS are surrogateescape strings: patterns must be decoded the same way
    return data.decode("utf-8", errors="surrogateescape")


def repository_root(folder: str) -> str | None:
    """The nearest folder at or above ``folder`` (absolute) holding ``.git``, or ``None``."""
    current = folder
    while True:
        if os.path.lexists(os.path.join(current, ".git")):
            return current
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _ancestors_between(top: str, folder: str) -> list[str]:
    """``top`` and each folder below it down to ``folder``'s parent (``folder`` itself excluded)."""
    rel = os.path.relpath(folder, top)
    if rel == ".":
        return []
    parts = rel.split(os.sep)
    return [os.path.join(top, *parts[:index]) for index in range(len(parts))]
