"""SearchTool: find lines matching a regular expression, with ripgrep or in pure Python."""

from __future__ import annotations

import os
import shutil
import stat
import sys
import threading
import time
from typing import Any, Final, Literal

import anyio
from pydantic import Field

from yoagent.core import ToolArguments, ToolContext, ToolError, ToolResult
from yoagent.core.support import PipeCapture, Wakeup, utf8_safe

from ._base import BuiltinTool
from ._found import Found
from ._fs import IGNORED_DIRS, open_dir_nofollow
from ._ignore import expand_braces
from ._process import READ_GRACE, spawn_group
from ._pysearch import PythonSearch
from ._regex import LineMatcher
from ._ripgrep import (
    SCRUBBED_ENV,
    Match,
    RecordCapture,
    Verified,
    filter_warnings,
    interpret,
    parse_records,
    render,
    ripgrep_argv,
    verify,
)
from ._text import visible_name
from ._walk import open_walk_root
from .sandbox import PathSandbox, StrPath

DEFAULT_MAX_RESULTS: Final = 50
MAX_RESULTS_CAP: Final = 1000
DEFAULT_TIMEOUT: Final = 60.0
MAX_WARNING_BYTES: Final = 4096
MAX_GLOB_CHARS: Final = 4096
_POLL: Final = 0.25
_PROC_FD: Final = os.path.isdir("/proc/self/fd")  # Linux: ripgrep starts inside the held folder

Engine = Literal["auto", "ripgrep", "python"]

_DESCRIPTION = """\
Search file contents for a regular expression (ripgrep syntax: no look-around or
back-references) under a folder, or in one file. Returns matching lines as
`path:line:text`.

Hidden files, binary files and ignored folders (.git, node_modules, build output,
and paths ignored by .gitignore files in a git repository) are skipped. `glob`
limits the search to matching paths, with .gitignore syntax (`*.py`,
`src/**/*.ts`, `*.{ts,tsx}`; `!*.min.js` excludes), relative to the searched folder.
Set `literal` to search for the text as is (no regex). At most `max_results` lines
(default 50) are returned: the answer says when there were more; narrow the pattern
or the path then. Bytes that are not UTF-8 are shown as \\xNN."""


def find_ripgrep(path_env: str | None = None) -> str | None:
    """``rg`` on ``PATH`` (``path_env``, else the environment's), else beside the interpreter."""
    found = shutil.which("rg", path=path_env if path_env is not None else os.environ.get("PATH"))
    if found is not None:
        return found
    beside = os.path.join(os.path.dirname(sys.executable), "rg")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    return None


class SearchArguments(ToolArguments):
    """The arguments of ``search``."""

    pattern: str = Field(
        min_length=1,
        description="The regular expression to find (or the text, with literal).",
    )
    path: str = Field(
        ".", description="The folder or file to search (default: the working folder)."
    )
    glob: str = Field(
        "",
        max_length=MAX_GLOB_CHARS,
        description="Only search paths matching this glob, e.g. `*.py` (`!` excludes).",
    )
    ignore_case: bool = Field(False, description="Match regardless of case (default false).")
    literal: bool = Field(
        False, description="Treat pattern as plain text, not a regex (default false)."
    )
    max_results: int = Field(
        DEFAULT_MAX_RESULTS,
        ge=1,
        le=MAX_RESULTS_CAP,
        description="The most matching lines to return.",
    )


def _arguments_for(default_max_results: int) -> type[SearchArguments]:
    """The argument model with this tool's own default for ``max_results``."""

    class Search(SearchArguments):
        max_results: int = Field(
            default_max_results,
            ge=1,
            le=MAX_RESULTS_CAP,
            description=f"The most matching lines to return (default {default_max_results}).",
        )

    return Search


class SearchTool(BuiltinTool[SearchArguments]):
    """The ``search`` tool. Paths are checked by ``sandbox`` (unrestricted by default).

    ``engine`` picks ripgrep or the pure-Python engine; ``"auto"`` (default) uses
    ripgrep when ``rg`` is found (``rg_path``, else :func:`find_ripgrep`). Both skip
    the same paths (``.gitignore`` files in a repository, hidden names, binary files,
    ``ignored_dirs``) and read the glob the same way. ripgrep runs with ``--no-config``
    and without ``RIPGREP_CONFIG_PATH``/``GREP_OPTIONS`` in its environment, inside a
    held descriptor of the searched folder, and every line it reports is re-read
    through that descriptor before it is returned.
    """

    def __init__(
        self,
        sandbox: PathSandbox | None = None,
        *,
        allowed_paths: list[StrPath] | None = None,
        engine: Engine = "auto",
        rg_path: str | None = None,
        max_results: int = DEFAULT_MAX_RESULTS,
        timeout: float = DEFAULT_TIMEOUT,
        ignored_dirs: frozenset[str] = IGNORED_DIRS,
    ) -> None:
        self.sandbox = sandbox if sandbox is not None else PathSandbox(allowed_paths)
        self.engine: Engine = engine
        self.rg_path = rg_path
        self.max_results = max_results
        self.timeout = timeout
        self.ignored_dirs = ignored_dirs
        super().__init__(
            name="search",
            description=f"{_DESCRIPTION}\n\n{self.sandbox.paths_note()}",
            arguments=_arguments_for(max(1, min(max_results, MAX_RESULTS_CAP))),
        )

    def _ripgrep(self) -> str | None:
        if self.engine == "python":
            return None
        rg = self.rg_path or find_ripgrep()
        if rg is None and self.engine == "ripgrep":
            raise ToolError("search: ripgrep (rg) was asked for but is not installed")
        return rg

    def _globs(self, glob: str | None) -> list[str]:
        """The skipped folders as exclusions, then the user's glob (which wins, coming last)."""
        globs = [f"!{name}/" for name in sorted(self.ignored_dirs)]
        if glob is not None:
            globs.append(glob)
        return globs

    async def run(self, arguments: SearchArguments, ctx: ToolContext) -> ToolResult:
        """Run the search."""
        pattern, glob = arguments.pattern, arguments.glob or None
        if "\0" in pattern:
            raise ToolError("search: the pattern contains a NUL byte")
        if glob is not None and "\0" in glob:
            raise ToolError("search: the glob contains a NUL byte")
        if glob is not None:
            expand_braces(glob)  # too many {a,b} alternatives: an error, for either engine
        io_path = self.sandbox.io_path(arguments.path, tool="search")
        shown = visible_name(arguments.path)
        _require_exists(shown, io_path)
        rg = self._ripgrep()
        if rg is not None:
            engine = "ripgrep"
            found = await self._run_ripgrep(rg, arguments, (io_path, shown), ctx)
        else:
            engine = "python"
            found = await self._run_python(arguments, (io_path, shown), ctx)
        return _answer(pattern, found, engine, arguments.max_results)

    # -- ripgrep --------------------------------------------------------------

    async def _run_ripgrep(
        self, rg: str, arguments: SearchArguments, where: tuple[str, str], ctx: ToolContext
    ) -> Found:
        io_path, shown = where
        nofollow = self.sandbox.restricted
        try:
            if stat.S_ISDIR(os.stat(io_path).st_mode):
                folder, target, prefix = io_path, ".", shown
                folder_fd = open_walk_root(io_path, nofollow=nofollow)
            else:
                folder = os.path.dirname(io_path) or "."
                folder_fd = (
                    open_dir_nofollow(folder)
                    if nofollow
                    else os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
                )
                target, prefix = os.path.basename(io_path), os.path.dirname(shown)
        except OSError as error:
            raise ToolError(f"search: cannot read {shown}: {error.strerror or error}") from None
        prefix = "" if prefix in ("", ".", "./") else prefix.rstrip("/") + "/"
        try:
            cwd = f"/proc/self/fd/{folder_fd}" if _PROC_FD else folder
            return await self._ripgrep_in(rg, arguments, (folder_fd, cwd), target, prefix, ctx)
        finally:
            os.close(folder_fd)

    async def _ripgrep_in(
        self,
        rg: str,
        arguments: SearchArguments,
        folder: tuple[int, str],
        target: str,
        prefix: str,
        ctx: ToolContext,
    ) -> Found:
        folder_fd, cwd = folder
        env = {key: value for key, value in os.environ.items() if key not in SCRUBBED_ENV}
        argv = ripgrep_argv(
            rg,
            arguments.pattern,
            target,
            globs=self._globs(arguments.glob or None),
            ignore_case=arguments.ignore_case,
            literal=arguments.literal,
        )
        max_results = arguments.max_results
        deadline = time.monotonic() + self.timeout
        wakeup = Wakeup()

        def make_capture(fd: int, wake: Wakeup, name: str) -> PipeCapture:
            return RecordCapture(fd, wake, name, max_records=max_results)

        try:
            group, out, err = spawn_group(
                argv,
                cwd=cwd,
                pass_fds=(folder_fd,),
                env=env,
                wakeup=wakeup,
                stdout_limit=0,
                stderr_limit=MAX_WARNING_BYTES,
                stdout_capture=make_capture,
            )
        except OSError as error:
            wakeup.close()
            raise ToolError(f"search: could not start ripgrep ({rg}): {error}") from None
        assert isinstance(out, RecordCapture)
        state = "running"
        try:
            with ctx.cancel.scope(), anyio.move_on_after(self.timeout):
                while not (group.exited.is_set() and out.eof and err.eof):
                    if out.limit_hit:
                        break
                    await wakeup.wait(_POLL)
            if out.limit_hit:
                state = "stopped"
            elif group.exited.is_set() and out.eof and err.eof:
                state = "exited"
            elif ctx.cancelled:
                state = "cancelled"
            else:
                state = "timeout"
            if state != "exited":
                group.kill()
                with anyio.move_on_after(READ_GRACE):
                    while not (out.eof and err.eof):
                        await wakeup.wait(_POLL)
        finally:
            if state == "running":
                group.kill()
            group.release()
            if not (out.eof and err.eof):
                out.detach()
                err.detach()
            wakeup.close()
        if state == "cancelled":
            raise ToolError("search: cancelled")
        reported = parse_records(out.finish()[:max_results])
        raw_stderr = err.snapshot()[0]
        verified, stderr, hidden = await _verify(folder_fd, reported, raw_stderr, deadline, ctx)
        notes: list[str] = []
        if verified.dropped:
            notes.append(
                f"{verified.dropped} reported line(s) left out: the file changed, or a folder "
                "on its path was replaced by a symbolic link, while the search ran"
            )
        if verified.stopped:
            state = "timeout"
            unchecked = len(reported) - len(verified.kept) - verified.dropped
            notes.append(f"{unchecked} reported line(s) left out: not re-read before the timeout")
        if hidden:
            notes.append(
                f"{hidden} warning(s) about paths that changed while the search ran left out"
            )
        stderr = "\n".join([stderr, *notes] if stderr else notes)
        return interpret(
            state,
            group.returncode,
            render(verified.kept, prefix),
            stderr,
            err.cut,
            out.error,
            self.timeout,
        )

    # -- pure Python ----------------------------------------------------------

    async def _run_python(
        self, arguments: SearchArguments, where: tuple[str, str], ctx: ToolContext
    ) -> Found:
        io_path, shown = where
        matcher = LineMatcher(
            arguments.pattern, ignore_case=arguments.ignore_case, literal=arguments.literal
        )
        stop = threading.Event()
        engine = PythonSearch(
            matcher,
            globs=self._globs(arguments.glob or None),
            max_results=arguments.max_results,
            use_gitignore=True,
            stop=stop,
            deadline=time.monotonic() + self.timeout,
        )
        found: Found | None = None
        nofollow = self.sandbox.restricted
        try:
            with ctx.cancel.scope():
                found = await anyio.to_thread.run_sync(
                    lambda: engine.run(shown, io_path, nofollow=nofollow),
                    abandon_on_cancel=True,
                )
        finally:
            stop.set()
        if found is None or ctx.cancelled:
            raise ToolError("search: cancelled")
        return found


async def _verify(
    folder_fd: int, reported: list[Match], stderr: bytes, deadline: float, ctx: ToolContext
) -> tuple[Verified, str, int]:
    """Re-read ripgrep's lines and filter its warnings (:mod:`._ripgrep`), in a worker thread.

    Bounded by the search's ``deadline`` and stopped by a cancel (the thread is then
    abandoned: it stops after its current block and closes its own copy of the folder
    descriptor, so the caller may close the original at once).
    """
    stop = threading.Event()
    own_fd = os.dup(folder_fd)

    def check() -> tuple[Verified, str, int]:
        try:
            verified = verify(
                own_fd, reported, stop=lambda: stop.is_set() or time.monotonic() > deadline
            )
            return (verified, *filter_warnings(own_fd, stderr))
        finally:
            os.close(own_fd)

    checked: tuple[Verified, str, int] | None = None
    try:
        with ctx.cancel.scope():
            checked = await anyio.to_thread.run_sync(check, abandon_on_cancel=True)
    finally:
        stop.set()
    if checked is None:
        raise ToolError("search: cancelled")
    return checked


def _require_exists(shown: str, io_path: str) -> None:
    if not os.path.exists(io_path):
        raise ToolError(f"search: {shown} does not exist")


def _answer(pattern: str, found: Found, engine: str, max_results: int) -> ToolResult:
    details: dict[str, Any] = {
        "engine": engine,
        "matches": len(found.lines),
        "truncated": found.truncated,
        "warnings": found.warnings,
    }
    notes = "".join(f"\n- {note}" for note in found.notes)
    if notes:
        notes = "\nNotes:" + notes
    if not found.lines:
        if found.failure is not None:
            why = f": {found.warnings}" if found.warnings else ""
            raise ToolError(utf8_safe(f"search: {found.failure}{why}"))
        if found.warnings is not None:
            raise ToolError(
                utf8_safe(
                    f"search: no matches were found, but some files could not be searched "
                    f"(results may be incomplete):\n{found.warnings}"
                )
            )
        return ToolResult.from_text(utf8_safe(f"No matches for {pattern!r}.{notes}"), details)
    parts = ["\n".join(found.lines)]
    if found.truncated:
        parts.append(
            f"[Stopped after {max_results} matching lines; there are more. "
            f"Narrow the pattern, the path or the glob.]"
        )
    if found.failure is not None:
        parts.append(f"[{found.failure}: results may be incomplete.]")
    if found.warnings is not None:
        parts.append("Warnings:\n" + found.warnings)
    return ToolResult.from_text(utf8_safe("\n".join(parts) + notes), details)
