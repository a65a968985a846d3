"""SearchTool: find lines matching a regular expression, with ripgrep or in pure Python."""

from __future__ import annotations

import os
import re
import shutil
import stat
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import anyio

from yoagent.core import ToolContext, ToolError, ToolResult

from ._args import get_bool, get_int, get_opt_str, get_str
from ._fs import IGNORED_DIRS, is_ignored_dir, looks_binary
from ._process import READ_GRACE, Capture, Wakeup, spawn_group
from .sandbox import PathSandbox, StrPath

DEFAULT_MAX_RESULTS: Final = 50
MAX_RESULTS_CAP: Final = 1000
DEFAULT_TIMEOUT: Final = 60.0
MAX_LINE_CHARS: Final = 500
MAX_WARNING_BYTES: Final = 4096
_SCRUBBED_ENV: Final = ("RIPGREP_CONFIG_PATH", "GREP_OPTIONS")
_POLL: Final = 0.25
_CHECK_EVERY: Final = 4096  # lines read between two deadline/cancel checks in the fallback

Engine = Literal["auto", "ripgrep", "python"]

_DESCRIPTION = """\
Search file contents for a regular expression (ripgrep syntax) under a folder, or
in one file. Returns matching lines as `path:line:text`.

Hidden files, binary files and ignored folders (.git, node_modules, build output,
and .gitignore'd paths in a git repository) are skipped. `glob` limits the search
to matching file names (e.g. `*.py`, `src/**/*.ts`). Set `literal` to search for
the text as is (no regex). At most `max_results` lines (default 50) are returned:
the answer says when there were more; narrow the pattern or the path then."""


def find_ripgrep(path_env: str | None = None) -> str | None:
    """``rg`` on ``PATH`` (``path_env``, else the environment's), else beside the interpreter."""
    found = shutil.which("rg", path=path_env if path_env is not None else os.environ.get("PATH"))
    if found is not None:
        return found
    beside = os.path.join(os.path.dirname(sys.executable), "rg")
    if os.path.isfile(beside) and os.access(beside, os.X_OK):
        return beside
    return None


class LineCapture(Capture):
    """A stdout capture that keeps whole lines, up to ``max_lines``, then flags the rest.

    Each kept line is cut to a few KiB. ``limit_hit`` is set (and the waiting task
    woken at once) when output continues past ``max_lines`` lines.
    """

    def __init__(self, fd: int, wakeup: Wakeup, name: str, *, max_lines: int) -> None:
        super().__init__(fd, wakeup, limit=0, name=name)
        self.max_lines = max_lines
        self.lines: list[bytes] = []
        self.limit_hit = False
        self._partial = bytearray()

    def _consume(self, chunk: memoryview) -> bool:
        self.total += len(chunk)
        if self.limit_hit:
            return False
        data = chunk.tobytes()
        start = 0
        while start < len(data):
            if len(self.lines) >= self.max_lines:
                self.limit_hit = True
                self._notify_now = True
                return True
            end = data.find(b"\n", start)
            piece = data[start:] if end < 0 else data[start:end]
            room = 4 * MAX_LINE_CHARS - len(self._partial)
            if room > 0:
                self._partial += piece[:room]
            if end < 0:
                break
            self.lines.append(bytes(self._partial))
            self._partial.clear()
            start = end + 1
        return True

    def finish_lines(self) -> list[bytes]:
        """The kept lines, plus an unterminated last line (when output ended cleanly)."""
        lines = list(self.lines)
        if self._partial and not self.limit_hit and len(lines) < self.max_lines:
            lines.append(bytes(self._partial))
        return lines


@dataclass(slots=True)
class _Found:
    lines: list[str] = field(default_factory=list[str])
    truncated: bool = False
    warnings: str | None = None
    failure: str | None = None  # an abnormal end: with no lines, the call fails


class SearchTool:
    """The ``search`` tool. Paths are checked by ``sandbox`` (unrestricted by default).

    ``engine`` picks ripgrep or the pure-Python fallback; ``"auto"`` (default) uses
    ripgrep when ``rg`` is found (``rg_path``, else :func:`find_ripgrep`). ripgrep
    runs with ``--no-config`` and without ``RIPGREP_CONFIG_PATH``/``GREP_OPTIONS``
    in its environment, so no user configuration can change what it reports or
    make it follow symlinks out of the allowed paths.
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

    @property
    def name(self) -> str:
        """The tool's wire name."""
        return "search"

    @property
    def description(self) -> str:
        """What the model reads about the tool."""
        return _DESCRIPTION

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON schema of the arguments."""
        return {
            "type": "object",
            "properties": {
                "pattern": {
                    "type": "string",
                    "description": "The regular expression to find (or the text, with literal).",
                },
                "path": {
                    "type": "string",
                    "description": "The folder or file to search (default: the working folder).",
                },
                "glob": {
                    "type": "string",
                    "description": "Only search files matching this glob, e.g. `*.py`.",
                },
                "ignore_case": {
                    "type": "boolean",
                    "description": "Match regardless of case (default false).",
                },
                "literal": {
                    "type": "boolean",
                    "description": "Treat pattern as plain text, not a regex (default false).",
                },
                "max_results": {
                    "type": "integer",
                    "minimum": 1,
                    "maximum": MAX_RESULTS_CAP,
                    "description": (
                        f"The most matching lines to return (default {self.max_results})."
                    ),
                },
            },
            "required": ["pattern"],
            "additionalProperties": False,
        }

    def _ripgrep(self) -> str | None:
        if self.engine == "python":
            return None
        rg = self.rg_path or find_ripgrep()
        if rg is None and self.engine == "ripgrep":
            raise ToolError("search: ripgrep (rg) was asked for but is not installed")
        return rg

    async def execute(self, arguments: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the search."""
        pattern = get_str("search", arguments, "pattern")
        if pattern == "":
            raise ToolError("search: the pattern is empty")
        if "\0" in pattern:
            raise ToolError("search: the pattern contains a NUL byte")
        path = get_str("search", arguments, "path", ".")
        glob = get_opt_str("search", arguments, "glob")
        if glob is not None and "\0" in glob:
            raise ToolError("search: the glob contains a NUL byte")
        ignore_case = get_bool("search", arguments, "ignore_case", False)
        literal = get_bool("search", arguments, "literal", False)
        max_results = get_int(
            "search",
            arguments,
            "max_results",
            self.max_results,
            minimum=1,
            maximum=MAX_RESULTS_CAP,
        )
        io_path = self.sandbox.io_path(path, tool="search")
        _require_exists(path, io_path)
        rg = self._ripgrep()
        if rg is not None:
            engine = "ripgrep"
            found = await self._run_ripgrep(
                rg, pattern, io_path, glob, ignore_case, literal, max_results, ctx
            )
        else:
            engine = "python"
            found = await self._run_python(
                pattern, path, io_path, glob, ignore_case, literal, max_results, ctx
            )
        return _answer(pattern, found, engine, max_results)

    # -- ripgrep --------------------------------------------------------------

    def _rg_argv(
        self, rg: str, pattern: str, target: str, glob: str | None, ignore_case: bool, literal: bool
    ) -> list[str]:
        argv = [
            rg,
            "--no-config",
            "--line-number",
            "--with-filename",
            "--no-heading",
            "--color=never",
        ]
        if ignore_case:
            argv.append("--ignore-case")
        if literal:
            argv.append("--fixed-strings")
        # skip what list_files skips, also outside git repositories (the user's glob wins)
        argv += [f"--glob=!{name}/" for name in sorted(self.ignored_dirs)]
        if glob is not None:
            argv.append(f"--glob={glob}")
        argv += [f"--regexp={pattern}", "--", target]
        return argv

    async def _run_ripgrep(
        self,
        rg: str,
        pattern: str,
        io_path: str,
        glob: str | None,
        ignore_case: bool,
        literal: bool,
        max_results: int,
        ctx: ToolContext,
    ) -> _Found:
        cwd, target = _rg_location(self.sandbox, io_path)
        env = {key: value for key, value in os.environ.items() if key not in _SCRUBBED_ENV}
        argv = self._rg_argv(rg, pattern, target, glob, ignore_case, literal)
        wakeup = Wakeup()

        def make_capture(fd: int, wake: Wakeup, name: str) -> Capture:
            return LineCapture(fd, wake, name, max_lines=max_results)

        try:
            group, out, err = spawn_group(
                argv,
                cwd=cwd,
                env=env,
                wakeup=wakeup,
                stdout_limit=0,
                stderr_limit=MAX_WARNING_BYTES,
                stdout_capture=make_capture,
            )
        except OSError as error:
            wakeup.close()
            raise ToolError(f"search: could not start ripgrep ({rg}): {error}") from None
        assert isinstance(out, LineCapture)
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
        lines = out.finish_lines()[:max_results]
        if target == ".":
            lines = [line.removeprefix(b"./") for line in lines]
        return _interpret(
            state,
            group.returncode,
            lines,
            err.snapshot()[0].decode("utf-8", "replace").strip(),
            err.cut,
            out.error,
            self.timeout,
        )

    # -- pure Python ----------------------------------------------------------

    async def _run_python(
        self,
        pattern: str,
        shown: str,
        io_path: str,
        glob: str | None,
        ignore_case: bool,
        literal: bool,
        max_results: int,
        ctx: ToolContext,
    ) -> _Found:
        flags = re.IGNORECASE if ignore_case else 0
        try:
            regex = re.compile(re.escape(pattern) if literal else pattern, flags)
        except re.error as error:
            raise ToolError(f"search: invalid regular expression {pattern!r}: {error}") from None
        stop = threading.Event()
        deadline = time.monotonic() + self.timeout
        walker = _PythonSearch(regex, glob, max_results, self.ignored_dirs, stop, deadline)
        found: _Found | None = None
        try:
            with ctx.cancel.scope():
                found = await anyio.to_thread.run_sync(
                    lambda: walker.run(shown, io_path), abandon_on_cancel=True
                )
        finally:
            stop.set()
        if found is None or ctx.cancelled:
            raise ToolError("search: cancelled")
        return found


class _PythonSearch:
    """The fallback engine: walk, skip what ripgrep skips, match line by line."""

    def __init__(
        self,
        regex: re.Pattern[str],
        glob: str | None,
        max_results: int,
        ignored_dirs: frozenset[str],
        stop: threading.Event,
        deadline: float,
    ) -> None:
        self.regex = regex
        self.glob = _glob_matcher(glob)
        self.max_results = max_results
        self.ignored_dirs = ignored_dirs
        self.stop = stop
        self.deadline = deadline
        self.found = _Found()
        self.problems: list[str] = []

    def run(self, shown: str, root: str) -> _Found:
        try:
            st = os.stat(root)
        except OSError as error:
            raise ToolError(f"search: {shown}: {error.strerror or error}") from None
        if stat.S_ISDIR(st.st_mode):
            self._walk(root, shown, "")
        elif stat.S_ISREG(st.st_mode):
            self._search_file(root, shown)
        else:
            raise ToolError(f"search: {shown} is not a regular file or folder")
        if self.problems:
            self.found.warnings = "\n".join(self.problems[:20])
        return self.found

    def _done(self) -> bool:
        if self.stop.is_set():
            return True
        if time.monotonic() > self.deadline:
            if self.found.failure is None:
                self.found.failure = "the search timed out"
            return True
        return self.found.truncated

    def _walk(self, folder: str, shown: str, rel: str) -> None:
        try:
            with os.scandir(folder) as iterator:
                entries = sorted(iterator, key=lambda entry: entry.name)
        except OSError as error:
            self.problems.append(f"{shown}: {error.strerror or error}")
            return
        for entry in entries:
            if self._done():
                return
            if entry.name.startswith("."):
                continue
            child_rel = f"{rel}{entry.name}"
            child_shown = entry.name if shown == "." else os.path.join(shown, entry.name)
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if not is_ignored_dir(entry.name, self.ignored_dirs):
                        self._walk(entry.path, child_shown, child_rel + "/")
                    continue
                if not entry.is_file(follow_symlinks=False):
                    continue
            except OSError:
                continue
            if self.glob is not None and not self.glob(child_rel, entry.name):
                continue
            self._search_file(entry.path, child_shown)

    def _search_file(self, path: str, shown: str) -> None:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError as error:
            self.problems.append(f"{shown}: {error.strerror or error}")
            return
        with os.fdopen(fd, "rb") as file:
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return
                os.set_blocking(fd, True)
                if looks_binary(file.read(8192)):
                    return
                file.seek(0)
                for number, raw in enumerate(file, 1):
                    if number % _CHECK_EVERY == 0 and self._done():
                        return  # timed out or cancelled inside a large file
                    line = raw.decode("utf-8", "replace").rstrip("\r\n")
                    if self.regex.search(line) is None:
                        continue
                    if len(self.found.lines) >= self.max_results:
                        self.found.truncated = True
                        return
                    self.found.lines.append(f"{shown}:{number}:{_cut(line)}")
                    if self.stop.is_set():
                        return
            except OSError as error:
                self.problems.append(f"{shown}: {error.strerror or error}")


def _require_exists(shown: str, io_path: str) -> None:
    if not os.path.exists(io_path):
        raise ToolError(f"search: {shown} does not exist")


def _rg_location(sandbox: PathSandbox, io_path: str) -> tuple[str | None, str]:
    """Where to run ripgrep, and the path to give it (relative when inside that folder)."""
    cwd = sandbox.cwd
    if not os.path.isdir(cwd):
        return None, io_path
    if sandbox.restricted and os.path.isabs(io_path):
        rel = os.path.relpath(io_path, cwd)
        if rel == "." or not rel.startswith(".."):
            return cwd, rel
    return cwd, io_path


def _glob_matcher(glob: str | None) -> Callable[[str, str], bool] | None:
    if glob is None:
        return None
    negate = glob.startswith("!")
    body = glob[1:] if negate else glob
    regex = _glob_to_regex(body)
    on_path = "/" in body

    def matches(rel: str, name: str) -> bool:
        hit = regex.fullmatch(rel if on_path else name) is not None
        return hit != negate

    return matches


def _glob_to_regex(glob: str) -> re.Pattern[str]:
    """A gitignore-style glob as a regex.

    ``*`` stays within a name, ``**`` crosses folders; ``?``, ``[...]`` and ``{a,b}`` too.
    """
    out: list[str] = []
    i = 0
    glob = glob.lstrip("/")
    while i < len(glob):
        char = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif char == "*":
            out.append("[^/]*")
            i += 1
        elif char == "?":
            out.append("[^/]")
            i += 1
        elif char == "[":
            end = glob.find("]", i + 1)
            if end < 0:
                out.append(re.escape(char))
                i += 1
            else:
                inner = glob[i + 1 : end].replace("\\", "\\\\")
                if inner.startswith("!"):
                    inner = "^" + inner[1:]
                out.append(f"[{inner}]")
                i = end + 1
        elif char == "{":
            end = glob.find("}", i + 1)
            if end < 0:
                out.append(re.escape(char))
                i += 1
            else:
                options = glob[i + 1 : end].split(",")
                out.append("(?:" + "|".join(_glob_to_regex(o).pattern for o in options) + ")")
                i = end + 1
        else:
            out.append(re.escape(char))
            i += 1
    return re.compile("".join(out))


def _cut(line: str) -> str:
    if len(line) <= MAX_LINE_CHARS:
        return line
    return line[:MAX_LINE_CHARS] + f" … [line cut at {MAX_LINE_CHARS} characters]"


def _interpret(
    state: str,
    code: int | None,
    raw_lines: list[bytes],
    stderr: str,
    stderr_cut: bool,
    read_error: str | None,
    timeout: float,
) -> _Found:
    """Turn how ripgrep ended into matches, warnings or a failure; never a false "no match"."""
    found = _Found(lines=[_cut(raw.decode("utf-8", "replace").rstrip("\r")) for raw in raw_lines])
    warnings = stderr + ("\n[... more warnings cut ...]" if stderr_cut else "")
    found.warnings = warnings or None
    if state == "stopped":
        found.truncated = True
        return found
    problem: str | None = None
    if state == "timeout":
        problem = f"the search timed out after {timeout:g} s"
    elif read_error is not None:
        problem = f"reading ripgrep's output failed: {read_error}"
    elif code is None or code < 0:
        signal_number = -code if code is not None else "?"
        problem = f"ripgrep was killed by signal {signal_number}"
    elif code == 2:
        problem = "ripgrep reported errors" if found.lines else "ripgrep failed (exit 2)"
    elif code not in (0, 1):
        problem = f"ripgrep ended with exit code {code}"
    if problem is not None:
        found.failure = problem
    return found


def _answer(pattern: str, found: _Found, engine: str, max_results: int) -> ToolResult:
    details: dict[str, Any] = {
        "engine": engine,
        "matches": len(found.lines),
        "truncated": found.truncated,
        "warnings": found.warnings,
    }
    if not found.lines:
        if found.failure is not None:
            why = f": {found.warnings}" if found.warnings else ""
            raise ToolError(f"search: {found.failure}{why}")
        if found.warnings is not None:
            raise ToolError(
                f"search: no matches were found, but some files could not be searched "
                f"(results may be incomplete):\n{found.warnings}"
            )
        return ToolResult.from_text(f"No matches for {pattern!r}.", details)
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
    return ToolResult.from_text("\n".join(parts), details)
