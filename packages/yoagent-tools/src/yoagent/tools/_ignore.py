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
  skipped (folders are still entered). ``{a,b}`` alternatives are expanded first, at
  most :data:`MAX_GLOB_ALTERNATIVES` of them (they multiply: a model's glob could ask
  for millions).

Checking a path costs one regex per pattern in force, so only the first
:data:`MAX_GITIGNORE_PATTERNS` patterns of a ``.gitignore`` are applied, and
:attr:`GitIgnores.notes` says which files were cut (a 40,000-pattern file made listing
500 files take 11 s).
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
MAX_GLOB_ALTERNATIVES: Final = 256
"""The most globs one ``glob`` argument may expand to (``{a,b}`` groups multiply)."""
MAX_GITIGNORE_PATTERNS: Final = 1000
"""Patterns applied from one ``.gitignore``; every check costs one regex per pattern."""


def expand_braces(glob: str) -> list[str]:
    """``{a,b}`` alternatives expanded, nested ones too: ``*.{py,t{s,sx}}`` → 3 globs.

    As in ripgrep's globs, a group needs a comma (``{x}`` is literal), ``\\{`` opens
    nothing, and an unclosed ``{`` is literal. Parsing is linear in ``glob``; a glob
    expanding to more than :data:`MAX_GLOB_ALTERNATIVES` globs is a :class:`ToolError`
    (``{a,b}`` fifteen times would be 32,768 patterns).
    """
    sequence = _parse_braces(glob)
    if _count(sequence) > MAX_GLOB_ALTERNATIVES:
        raise ToolError(
            f"search: the glob {glob[:80]!r} expands to more than {MAX_GLOB_ALTERNATIVES} "
            "alternatives ({a,b} groups multiply); use fewer or shorter {...} groups"
        )
    return ["".join(parts) for parts in _expand(sequence)]


# A parsed glob: a sequence of literal text and groups of alternative sequences.
_Sequence = list["str | _Group"]


@dataclass(slots=True)
class _Group:
    options: list[_Sequence]
    count: int = 0  # how many globs the group expands to (capped just past the limit)


def _delimiters(glob: str) -> set[int]:
    """Where the braces and commas of real groups (closed, with a comma) are.

    One pass with a stack of the open ``{``: a ``}`` closes the innermost one, a comma
    belongs to it. Every other brace and comma is literal text.
    """
    opened: list[int] = []
    commas: dict[int, list[int]] = {}
    delimiters: set[int] = set()
    index = 0
    while index < len(glob):
        char = glob[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            opened.append(index)
        elif char == "," and opened:
            commas.setdefault(opened[-1], []).append(index)
        elif char == "}" and opened:
            start = opened.pop()
            own = commas.pop(start, None)
            if own:
                delimiters.update((start, *own, index))
        index += 1
    return delimiters


def _parse_braces(glob: str) -> _Sequence:
    """``glob`` as a sequence of text runs and groups; linear, nothing copied twice."""
    delimiters = _delimiters(glob)
    top: _Sequence = []
    open_groups: list[_Group] = []
    current = top
    run: list[str] = []
    index = 0
    while index < len(glob):
        char = glob[index]
        step = 2 if char == "\\" else 1
        if index not in delimiters:
            run.append(glob[index : index + step])
            index += step
            continue
        if run:
            current.append("".join(run))
            run = []
        if char == "{":
            open_groups.append(_Group([[]]))
        elif char == ",":
            open_groups[-1].options.append([])
        else:
            group = open_groups.pop()
            # counted as it closes (the groups inside already are): no recursion
            group.count = min(sum(map(_count, group.options)), MAX_GLOB_ALTERNATIVES + 1)
            (open_groups[-1].options[-1] if open_groups else top).append(group)
        current = open_groups[-1].options[-1] if open_groups else top
        index += 1
    if run:
        current.append("".join(run))
    return top


def _count(sequence: _Sequence) -> int:
    """How many globs ``sequence`` expands to (capped just past the limit, so it stays small)."""
    total = 1
    for item in sequence:
        if isinstance(item, _Group):
            total = min(total * item.count, MAX_GLOB_ALTERNATIVES + 1)
    return total


def _expand(sequence: _Sequence) -> list[list[str]]:
    """Every glob of ``sequence``, as parts (only called within the limit: nesting is shallow)."""
    results: list[list[str]] = [[]]
    for item in sequence:
        if isinstance(item, str):
            for parts in results:
                parts.append(item)
        else:
            tails = [tail for option in item.options for tail in _expand(option)]
            results = [[*parts, *tail] for parts in results for tail in tails]
    return results


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

    def push(self, folder_rel: str, text: str, *, absolute_base: str | None = None) -> int:
        """Add the rules of the ``.gitignore`` found in ``folder_rel`` (``""`` for the root).

        Only its first :data:`MAX_GITIGNORE_PATTERNS` patterns are applied (each costs a
        regex per path checked); returns how many it has, so a caller can say so.
        """
        lines = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
        if not lines:
            return 0
        if absolute_base is not None:
            base = absolute_base
        else:
            base = self._prefix + (folder_rel + "/" if folder_rel else "")
        spec = GitIgnoreSpec.from_lines(lines[:MAX_GITIGNORE_PATTERNS], backend="simple")
        self._layers.append(_Layer(base, spec))
        return len(lines)

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

    __slots__ = ("_active", "_stack", "notes")

    def __init__(self, stack: GitIgnoreStack, *, active: bool) -> None:
        self._stack = stack
        self._active = active
        self.notes: list[str] = []
        """What the caller should say: ``.gitignore`` files only partly applied."""

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
        ignores = cls(stack, active=True)
        for folder in _ancestors_between(top, root):
            text = _read_by_path(os.path.join(folder, GITIGNORE), nofollow=nofollow)
            if text is not None:
                base = os.path.relpath(folder, top)
                count = stack.push("", text, absolute_base="" if base == "." else base + "/")
                ignores.note_cap(os.path.relpath(folder, root).replace(os.sep, "/") + "/", count)
        return ignores

    def note_cap(self, folder_rel: str, count: int) -> None:
        """Say so when the ``.gitignore`` of ``folder_rel`` has more patterns than are applied."""
        if count > MAX_GITIGNORE_PATTERNS:
            self.notes.append(
                f"{folder_rel}{GITIGNORE}: only its first {MAX_GITIGNORE_PATTERNS} of {count} "
                "patterns are applied (paths its later patterns ignore are not skipped)"
            )

    def enter(self, folder_fd: int, rel: str) -> object:
        """Read the ``.gitignore`` of the folder just entered; returns what :meth:`leave` needs."""
        was_active = self._active
        if not self._active and _has_git(folder_fd):
            self._active = True
        depth = self._stack.depth
        if self._active:
            text = _read_in(folder_fd)
            if text is not None:
                self.note_cap(rel, self._stack.push(rel.rstrip("/"), text))
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
