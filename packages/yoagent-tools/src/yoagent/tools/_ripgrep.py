"""Running ripgrep for ``search``: where it starts, what it may read, how its end is read.

* It starts *inside* a held descriptor of the searched folder (``cwd`` is
  ``/proc/self/fd/N``, the descriptor passed down), searching ``.``, so the folder
  cannot be redirected between the sandbox check and the search.
* It cannot be stopped from following a folder swapped for a symlink *below* that one
  mid-walk, so no line it prints is trusted: each reported file is reopened from the
  held descriptor one component at a time with ``O_NOFOLLOW`` and the line re-read;
  only lines that read the same there are returned (:func:`verify`). What reaches the
  model was read inside the sandbox, whatever ripgrep did.
* No user configuration applies (``--no-config``, ``RIPGREP_CONFIG_PATH`` and
  ``GREP_OPTIONS`` cleared); only ``.gitignore`` files count as ignore rules, as in the
  Python engine (no ``.ignore``, ``.rgignore``, ``.git/info/exclude`` or global
  excludes).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO, Final

from ._found import MAX_LINE_BYTES, Found, show_line
from ._process import Capture, Wakeup
from ._text import visible_bytes
from ._walk import open_file_in

SCRUBBED_ENV: Final = ("RIPGREP_CONFIG_PATH", "GREP_OPTIONS")
MAX_RECORD_BYTES: Final = 4096 + 64 + MAX_LINE_BYTES
"""Bytes kept of one output record: a path (up to PATH_MAX), the line number, the text."""
_DIR_OPEN: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def ripgrep_argv(
    rg: str,
    pattern: str,
    target: str,
    *,
    globs: list[str],
    ignore_case: bool,
    literal: bool,
) -> list[str]:
    """The command line: flags, the ``--glob``s in order, ``--regexp=``, ``--``, the target."""
    argv = [
        rg,
        "--no-config",
        "--line-number",
        "--with-filename",
        "--null",  # the path ends at a NUL byte: a name may hold ":" or a newline-free anything
        "--no-heading",
        "--color=never",
        "--no-ignore-dot",
        "--no-ignore-exclude",
        "--no-ignore-global",
    ]
    if ignore_case:
        argv.append("--ignore-case")
    if literal:
        argv.append("--fixed-strings")
    argv += [f"--glob={glob}" for glob in globs]
    argv += [f"--regexp={pattern}", "--", target]
    return argv


class RecordCapture(Capture):
    """A stdout capture that keeps whole records, up to ``max_records``, then flags the rest.

    Each kept record is cut to :data:`MAX_RECORD_BYTES`. ``limit_hit`` is set (and the
    waiting task woken at once) when output continues past ``max_records`` records.
    """

    def __init__(self, fd: int, wakeup: Wakeup, name: str, *, max_records: int) -> None:
        super().__init__(fd, wakeup, limit=0, name=name)
        self.max_records = max_records
        self.records: list[bytes] = []
        self.limit_hit = False
        self._partial = bytearray()

    def _consume(self, chunk: memoryview) -> bool:
        self.total += len(chunk)
        if self.limit_hit:
            return False
        data = chunk.tobytes()
        start = 0
        while start < len(data):
            if len(self.records) >= self.max_records:
                self.limit_hit = True
                self._notify_now = True
                return True
            end = data.find(b"\n", start)
            piece = data[start:] if end < 0 else data[start:end]
            room = MAX_RECORD_BYTES - len(self._partial)
            if room > 0:
                self._partial += piece[:room]
            if end < 0:
                break
            self.records.append(bytes(self._partial))
            self._partial.clear()
            start = end + 1
        return True

    def finish(self) -> list[bytes]:
        """The kept records, plus an unterminated last one (when output ended cleanly)."""
        records = list(self.records)
        if self._partial and not self.limit_hit and len(records) < self.max_records:
            records.append(bytes(self._partial))
        return records


@dataclass(slots=True, frozen=True)
class Match:
    """One line ripgrep reported: the file (relative to the held folder), its number, its text."""

    path: bytes
    number: int
    text: bytes


def parse_records(records: list[bytes]) -> list[Match]:
    """``path NUL number : text`` records as matches (malformed ones are dropped)."""
    matches: list[Match] = []
    for record in records:
        path, nul, rest = record.partition(b"\0")
        number, colon, text = rest.partition(b":")
        if not nul or not colon or not number.isdigit():
            continue
        matches.append(Match(path.removeprefix(b"./"), int(number), text))
    return matches


def verify(folder_fd: int, matches: list[Match]) -> tuple[list[Match], int]:
    """The matches whose line reads the same when reopened from ``folder_fd`` without symlinks.

    Returns them (same order) and how many were dropped: their file is now out of
    reach (a folder on the way is a symlink), gone, or its line changed.
    """
    wanted: dict[bytes, set[int]] = {}
    for match in matches:
        wanted.setdefault(match.path, set()).add(match.number)
    seen: dict[tuple[bytes, int], bytes] = {}
    for path, numbers in wanted.items():
        for number, text in _read_lines(folder_fd, path, numbers):
            seen[(path, number)] = text
    kept = [
        Match(match.path, match.number, seen[(match.path, match.number)])
        for match in matches
        if _same(seen.get((match.path, match.number)), match.text)
    ]
    return kept, len(matches) - len(kept)


def filter_warnings(folder_fd: int, stderr: str) -> tuple[str, int]:
    """ripgrep's warnings, less those naming a path no longer below ``folder_fd`` (symlink-free).

    A warning such as ``./box/x.txt: No such file or directory`` may name a file
    ripgrep met through a folder swapped for a symlink: outside the sandbox. Only
    warnings whose ``./`` path still resolves below the held folder without a symlink
    are kept; returns the kept text and how many were left out.
    """
    kept: list[str] = []
    dropped = 0
    for line in stderr.splitlines():
        body = line.removeprefix("rg: ")
        if body.startswith("./"):
            path = body[2:].partition(": ")[0]
            if not _reachable(folder_fd, os.fsencode(path)):
                dropped += 1
                continue
        kept.append(line)
    return "\n".join(kept), dropped


def _reachable(folder_fd: int, path: bytes) -> bool:
    parts = [part for part in path.split(b"/") if part and part != b"."]
    if not parts or b".." in parts:
        return False
    current = folder_fd
    try:
        for name in parts[:-1]:
            next_fd = os.open(name, _DIR_OPEN, dir_fd=current)
            if current != folder_fd:
                os.close(current)
            current = next_fd
        os.stat(parts[-1], dir_fd=current, follow_symlinks=False)
    except OSError:
        return False
    finally:
        if current != folder_fd:
            os.close(current)
    return True


def _same(ours: bytes | None, reported: bytes) -> bool:
    if ours is None:
        return False
    return ours[:MAX_LINE_BYTES].rstrip(b"\r") == reported[:MAX_LINE_BYTES].rstrip(b"\r")


def _read_lines(folder_fd: int, path: bytes, numbers: set[int]) -> Iterator[tuple[int, bytes]]:
    """The wanted lines of ``path`` (each cut to a little more than is shown)."""
    try:
        fd = _open_below(folder_fd, path)
    except OSError:
        return
    with os.fdopen(fd, "rb") as file:
        last = max(numbers)
        for number, line in enumerate(_line_prefixes(file), 1):
            if number in numbers:
                yield number, line
            if number >= last:
                return


def _open_below(folder_fd: int, path: bytes) -> int:
    """Open ``path`` (relative, ``/``-separated) below ``folder_fd``, no symlink followed."""
    parts = [part for part in path.split(b"/") if part and part != b"."]
    if not parts or b".." in parts:
        raise OSError("not a path below the folder")
    current = folder_fd
    try:
        for name in parts[:-1]:
            next_fd = os.open(name, _DIR_OPEN, dir_fd=current)
            if current != folder_fd:
                os.close(current)
            current = next_fd
        return open_file_in(current, os.fsdecode(parts[-1]))
    finally:
        if current != folder_fd:
            os.close(current)


def _line_prefixes(file: IO[bytes]) -> Iterator[bytes]:
    """Each line's first bytes (without the newline); the rest of a long line is skipped."""
    keep = MAX_LINE_BYTES + 1
    while True:
        piece = file.readline(keep)
        if not piece:
            return
        if not piece.endswith(b"\n") and len(piece) == keep:
            while rest := file.readline(1 << 20):
                if rest.endswith(b"\n"):
                    break
        yield piece.removesuffix(b"\n")


def render(matches: list[Match], prefix: str) -> list[str]:
    """The matches as ``path:line:text`` lines, the path shown below ``prefix``."""
    return [
        f"{prefix}{visible_bytes(match.path)}:{match.number}:{show_line(match.text)}"
        for match in matches
    ]


def interpret(
    state: str,
    code: int | None,
    lines: list[str],
    stderr: str,
    stderr_cut: bool,
    read_error: str | None,
    timeout: float,
) -> Found:
    """Turn how ripgrep ended into matches, warnings or a failure; never a false "no match"."""
    found = Found(lines=lines)
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
