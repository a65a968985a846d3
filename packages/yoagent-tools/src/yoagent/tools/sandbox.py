"""PathSandbox: the allowed folders every file tool's paths must resolve into.

A path is resolved against the file system *before* it is compared with the
allowed roots, so ``root/../etc/passwd``, a symlink from ``root/link`` to ``/etc``,
a dangling symlink that points outside, and ``root/missing/../../x`` are all seen
for what they are. Resolution is done by hand (like :func:`os.path.realpath`), one
component at a time:

* a relative path is anchored at the sandbox's working folder;
* ``.`` is dropped and ``..`` removes the last *resolved* component, so ``..``
  after a symlink climbs out of the link's target, as the OS does;
* a symlink is replaced by its target (absolute or relative to the link's folder),
  also when the target does not exist (a dangling link is followed, so a write
  through it is checked where it would land);
* a component that does not exist is kept as written and resolution goes on
  lexically, so ``root/new/../link/x`` still resolves ``link``;
* more than :data:`MAX_SYMLINK_HOPS` symlinks (a loop) refuses the path.

Tools do their I/O on the resolved path (:meth:`PathSandbox.io_path`), so the OS
never touches a spelling the check did not see. What remains between the check
and the use is described in the package README ("What the sandbox guarantees").
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from typing import Final

from yoagent.core import ToolError

from ._errors import ToolsError
from ._text import visible_name

MAX_SYMLINK_HOPS: Final = 40
"""Symlinks followed while resolving one path before it is refused as a loop."""

StrPath = str | os.PathLike[str]


class SandboxError(ToolsError, ToolError):
    """A path was refused by the sandbox (outside the roots, a NUL byte, a symlink loop)."""


def _fspath(path: StrPath) -> str:
    text = os.fspath(path)
    if "\0" in text:
        raise SandboxError("path contains a NUL byte")
    return text


def resolve_path(path: StrPath, cwd: StrPath | None = None) -> str | None:
    """Resolve ``path`` to an absolute path with no ``.``, ``..`` or symlink left.

    Relative paths are anchored at ``cwd`` (the process's working folder when
    ``None``). Missing components are kept lexically. Returns ``None`` when more
    than :data:`MAX_SYMLINK_HOPS` symlinks had to be followed (a loop).
    """
    text = _fspath(path)
    if not os.path.isabs(text):
        base = _fspath(cwd) if cwd is not None else os.getcwd()
        text = os.path.join(base, text)
    parts: list[str] = []  # resolved components below "/"
    pending = text.split("/")
    pending.reverse()  # a stack: the next component is pending[-1]
    hops = 0
    missing = False  # once a component is missing, the rest cannot be links
    while pending:
        name = pending.pop()
        if name in ("", "."):
            continue
        if name == "..":
            if parts:
                parts.pop()
            # climbing out of a missing folder lands somewhere that may exist again
            missing = False
            continue
        candidate = "/" + "/".join([*parts, name])
        if missing:
            parts.append(name)
            continue
        try:
            st = os.lstat(candidate)
        except OSError:
            # does not exist (or cannot be seen): keep it as written
            missing = True
            parts.append(name)
            continue
        if not stat.S_ISLNK(st.st_mode):
            parts.append(name)
            continue
        hops += 1
        if hops > MAX_SYMLINK_HOPS:
            return None
        try:
            target = os.readlink(candidate)
        except OSError:
            # vanished or unreadable between lstat and readlink: treat as missing
            missing = True
            parts.append(name)
            continue
        if target.startswith("/"):
            parts.clear()
        target_parts = target.split("/")
        target_parts.reverse()
        pending.extend(target_parts)
    return "/" + "/".join(parts)


def _inside(resolved: str, root: str) -> bool:
    if root == "/":
        return True
    return resolved == root or resolved.startswith(root + "/")


class PathSandbox:
    """The folders the file tools may touch; no folders means no restriction.

    ``allowed_paths`` are resolved once, when the sandbox is built (a root that
    does not exist yet is kept as it resolves lexically). ``cwd`` is the working
    folder relative paths are anchored at: by default the first allowed path, or
    the process's working folder when unrestricted.
    """

    __slots__ = ("_cwd", "_roots")

    def __init__(
        self, allowed_paths: Iterable[StrPath] | None = None, *, cwd: StrPath | None = None
    ) -> None:
        roots: list[str] = []
        for root in allowed_paths or ():
            resolved = resolve_path(os.path.abspath(_fspath(root)))
            if resolved is None:
                raise SandboxError(
                    f"allowed path {visible_name(os.fspath(root))}: too many symbolic links"
                )
            if resolved not in roots:
                roots.append(resolved)
        self._roots: tuple[str, ...] = tuple(roots)
        if cwd is not None:
            self._cwd: str | None = os.path.abspath(_fspath(cwd))
        elif roots:
            self._cwd = roots[0]
        else:
            self._cwd = None

    @property
    def roots(self) -> tuple[str, ...]:
        """The allowed folders, resolved."""
        return self._roots

    @property
    def restricted(self) -> bool:
        """Whether any restriction applies."""
        return bool(self._roots)

    @property
    def cwd(self) -> str:
        """The folder relative paths are anchored at."""
        return self._cwd if self._cwd is not None else os.getcwd()

    def paths_note(self) -> str:
        """What a file tool's description says about paths: where relative ones lead, and the roots.

        Relative paths are resolved against :attr:`cwd`, which is the first allowed
        folder unless ``cwd`` was given, never the process's working folder (that one
        is used only when the sandbox is unrestricted).
        """
        if self._cwd is None:
            return "Relative paths are resolved against the current working folder."
        first = " (the first allowed folder)" if self._roots and self._cwd == self._roots[0] else ""
        note = f"Relative paths are resolved against {self._cwd}{first}."
        if self._roots:
            note += f" Only paths inside {', '.join(self._roots)} can be used."
        return note

    def __repr__(self) -> str:
        return f"PathSandbox({list(self._roots)!r}, cwd={self._cwd!r})"

    def resolve(self, path: StrPath, *, tool: str = "sandbox") -> str:
        """``path`` resolved (see the module docs); refuses NUL bytes and symlink loops."""
        try:
            text = _fspath(path)
        except SandboxError as error:
            raise SandboxError(f"{tool}: {error}") from None
        if not text:
            raise SandboxError(f"{tool}: the path is empty")
        resolved = resolve_path(os.path.expanduser(text), self.cwd)
        if resolved is None:
            raise SandboxError(
                f"{tool}: {visible_name(text)}: too many levels of symbolic links "
                f"(more than {MAX_SYMLINK_HOPS}; a loop?)"
            )
        return resolved

    def contains(self, resolved: str) -> bool:
        """Whether an already resolved path lies inside an allowed root."""
        if not self._roots:
            return True
        return any(_inside(resolved, root) for root in self._roots)

    def check(self, path: StrPath, *, tool: str = "sandbox") -> str:
        """Resolve ``path`` and return it if it lies inside an allowed root, else refuse."""
        resolved = self.resolve(path, tool=tool)
        if not self.contains(resolved):
            given = os.fspath(path)
            via = "" if resolved == given else f" (it resolves to {visible_name(resolved)})"
            raise SandboxError(
                f"{tool}: {visible_name(given)} is outside the allowed paths "
                f"({', '.join(self._roots)}){via}"
            )
        return resolved

    def is_allowed(self, path: StrPath) -> bool:
        """Whether :meth:`check` would accept ``path``."""
        try:
            self.check(path)
        except SandboxError:
            return False
        return True

    def io_path(self, path: StrPath, *, tool: str = "sandbox") -> str:
        """The path a tool should do its I/O on after :meth:`check`.

        Restricted, it is the checked (resolved) path, so the OS reaches nothing the
        check did not see. Unrestricted, it is the caller's spelling (anchored at
        ``cwd`` when relative), so messages keep the name the caller used.
        """
        resolved = self.check(path, tool=tool)
        if self._roots:
            return resolved
        text = os.path.expanduser(_fspath(path))
        if self._cwd is not None and not os.path.isabs(text):
            return os.path.join(self._cwd, text)
        return text
