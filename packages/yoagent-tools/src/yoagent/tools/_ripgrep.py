"""Running ripgrep for ``search``: where it starts, what it may read, how its end is read.

* It starts *inside* a held descriptor of the searched folder (``cwd`` is
  ``/proc/self/fd/N``, the descriptor passed down), searching ``.``, so the folder
  cannot be redirected between the sandbox check and the search.
* It cannot be stopped from following a folder swapped for a symlink *below* that one
  mid-walk, so no line it prints is trusted: each reported file is reopened from the
  held descriptor one component at a time with ``O_NOFOLLOW`` and the line re-read;
  only lines that read the same there are returned (:func:`verify`). What reaches the
  model was read inside the sandbox, whatever ripgrep did. The re-read counts lines
  with ``bytes.count`` over 1 MiB blocks (a match on line 40,000,001 of a 76 MB file
  takes 0.3 s; one Python ``readline`` per line took 22 s) and checks a stop callback
  after every block, so the search's timeout and cancellation hold during it too.
* Its output is read as records of ``path NUL number:text LF``: a path ends at its NUL
  (``--null``), so a file name holding a newline is read whole, never split.
* No user configuration applies (``--no-config``, ``RIPGREP_CONFIG_PATH`` and
  ``GREP_OPTIONS`` cleared); only ``.gitignore`` files count as ignore rules, as in the
  Python engine (no ``.ignore``, ``.rgignore``, ``.git/info/exclude`` or global
  excludes).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final, TypeVar

from yoagent.core.support import PipeCapture, Wakeup, utf8_decode

from ._found import MAX_LINE_BYTES, Found, show_line
from ._text import visible_name
from ._walk import open_file_in

SCRUBBED_ENV: Final = ("RIPGREP_CONFIG_PATH", "GREP_OPTIONS")
MAX_PATH_BYTES: Final = 4096
"""Bytes kept of a record's path (PATH_MAX); a longer one is cut, and fails its re-read."""
MAX_TEXT_BYTES: Final = 64 + MAX_LINE_BYTES
"""Bytes kept of a record's ``number:text`` part."""
VERIFY_BLOCK_BYTES: Final = 1 << 20
"""The re-read's block: newlines are counted a block at a time, ``stop()`` checked after each."""
_DIR_OPEN: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_T = TypeVar("_T")


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
        "--null",  # the path ends at a NUL byte: a name may hold ":" or a newline
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


class RecordCapture(PipeCapture):
    """A stdout capture that keeps whole records, up to ``max_records``, then flags the rest.

    A record is ``path NUL number:text LF``: the path is read up to its NUL (it may hold
    a newline), the rest up to the newline. Each part is cut to :data:`MAX_PATH_BYTES`
    and :data:`MAX_TEXT_BYTES`. ``limit_hit`` is set (and the waiting task woken at
    once) when output continues past ``max_records`` records.
    """

    def __init__(self, fd: int, wakeup: Wakeup, name: str, *, max_records: int) -> None:
        super().__init__(fd, wakeup, limit=0, name=name)
        self.max_records = max_records
        self.records: list[bytes] = []
        self.limit_hit = False
        self._path = bytearray()
        self._text = bytearray()
        self._in_path = True

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
            if self._in_path:
                part, cap, end = self._path, MAX_PATH_BYTES, data.find(b"\0", start)
            else:
                part, cap, end = self._text, MAX_TEXT_BYTES, data.find(b"\n", start)
            piece = data[start:] if end < 0 else data[start:end]
            if len(part) < cap:
                part += piece[: cap - len(part)]
            if end < 0:
                break
            if not self._in_path:
                self.records.append(self._record())
            self._in_path = not self._in_path
            start = end + 1
        return True

    def _record(self) -> bytes:
        record = bytes(self._path) + b"\0" + bytes(self._text)
        self._path.clear()
        self._text.clear()
        return record

    def finish(self) -> list[bytes]:
        """The kept records, plus an unterminated last one (when output ended cleanly)."""
        records = list(self.records)
        if not self._in_path and not self.limit_hit and len(records) < self.max_records:
            records.append(self._record())
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


@dataclass(slots=True, frozen=True)
class Verified:
    """What :func:`verify` found: the lines that read the same, and what became of the rest."""

    kept: list[Match]
    dropped: int  # re-read and found changed, gone or out of reach
    stopped: bool  # the stop callback fired: the lines of the files not re-read are left out


class _Stopped(Exception):
    pass


def verify(folder_fd: int, matches: list[Match], *, stop: Callable[[], bool]) -> Verified:
    """The matches whose line reads the same when reopened from ``folder_fd`` without symlinks.

    Kept in order; a match is dropped when its file is now out of reach (a folder on the
    way is a symlink), gone, or its line changed. ``stop()`` is checked after every
    block read; once it says so, the files not yet re-read are left out (``stopped``).
    """
    wanted: dict[bytes, set[int]] = {}
    for match in matches:
        wanted.setdefault(match.path, set()).add(match.number)
    seen: dict[tuple[bytes, int], bytes] = {}
    checked: set[bytes] = set()
    stopped = False
    for path, numbers in wanted.items():
        try:
            for number, text in _read_lines(folder_fd, path, sorted(numbers), stop):
                seen[(path, number)] = text
        except _Stopped:
            stopped = True
            break
        checked.add(path)
    kept: list[Match] = []
    dropped = 0
    for match in matches:
        if match.path not in checked:
            continue
        ours = seen.get((match.path, match.number))
        if _same(ours, match.text):
            assert ours is not None
            kept.append(Match(match.path, match.number, ours))
        else:
            dropped += 1
    return Verified(kept, dropped, stopped)


def filter_warnings(folder_fd: int, stderr: bytes) -> tuple[str, int]:
    """ripgrep's warnings, less those naming a path no longer below ``folder_fd`` (symlink-free).

    A warning such as ``rg: ./box/x.txt: No such file or directory`` may name a file
    ripgrep met through a folder swapped for a symlink: outside the sandbox. Only
    warnings whose ``./`` path still resolves below the held folder without a symlink
    are kept, each on one line (a newline in the name shown as ``\\n``, so a hostile
    name cannot add a line). Every message starts with ``rg: ``; a line that does not
    continues the message before it. Returns the kept text and how many were left out.
    """
    messages: list[bytes] = []
    for line in stderr.strip().split(b"\n"):
        if line.startswith(b"rg: ") or not messages:
            messages.append(line)
        else:
            messages[-1] += b"\n" + line
    kept: list[str] = []
    dropped = 0
    for message in messages:
        body = message.removeprefix(b"rg: ")
        if not body.startswith(b"./"):
            kept.append(utf8_decode(message))  # e.g. a regex error, several lines by design
        elif _reachable(folder_fd, body[2:].partition(b": ")[0]):
            kept.append(visible_name(utf8_decode(message)))
        else:
            dropped += 1
    return "\n".join(kept), dropped


def _reachable(folder_fd: int, path: bytes) -> bool:
    try:
        _at_below(folder_fd, path, lambda fd, name: os.stat(name, dir_fd=fd, follow_symlinks=False))
    except OSError:
        return False
    return True


def _same(ours: bytes | None, reported: bytes) -> bool:
    if ours is None:
        return False
    return ours[:MAX_LINE_BYTES].rstrip(b"\r") == reported[:MAX_LINE_BYTES].rstrip(b"\r")


def _read_lines(
    folder_fd: int, path: bytes, numbers: list[int], stop: Callable[[], bool]
) -> Iterator[tuple[int, bytes]]:
    """The lines ``numbers`` (ascending) of ``path``, each cut to a little more than is shown."""
    try:
        fd = _open_below(folder_fd, path)
    except OSError:
        return
    try:
        yield from _lines_at(fd, numbers, stop)
    except OSError:
        return
    finally:
        os.close(fd)


def _lines_at(fd: int, numbers: list[int], stop: Callable[[], bool]) -> Iterator[tuple[int, bytes]]:
    """The lines ``numbers`` (ascending, without the newline) of the file open as ``fd``.

    Blocks are read in turn; the newlines before a wanted line are counted with
    ``bytes.count`` (never a Python step per line), and only the first
    ``MAX_LINE_BYTES + 2`` bytes of a wanted line are kept, however long it is (see
    :func:`show_line`).
    """
    keep = MAX_LINE_BYTES + 2
    index = 0
    line = 1  # the number of the line the read position is in
    collecting: bytearray | None = None  # the wanted line, once its start is reached
    while index < len(numbers):
        if stop():
            raise _Stopped
        block = os.read(fd, VERIFY_BLOCK_BYTES)
        if not block:
            if collecting:  # a last line without a newline
                yield numbers[index], bytes(collecting)
            return
        at = 0
        while index < len(numbers):
            if collecting is None:
                skip = numbers[index] - line
                if skip:
                    newline = _nth_newline(block, at, skip)
                    if newline < 0:
                        line += block.count(b"\n", at)
                        break
                    line, at = numbers[index], newline + 1
                collecting = bytearray()
            end = block.find(b"\n", at)
            if len(collecting) < keep:
                collecting += block[at : len(block) if end < 0 else end][: keep - len(collecting)]
            if end < 0:
                break
            yield numbers[index], bytes(collecting)
            collecting = None
            index += 1
            line += 1
            at = end + 1


def _nth_newline(block: bytes, start: int, count: int) -> int:
    """Where the ``count``-th newline at or after ``start`` is in ``block``, or -1."""
    if count <= 16:
        at = start - 1
        for _ in range(count):
            at = block.find(b"\n", at + 1)
            if at < 0:
                return -1
        return at
    if block.count(b"\n", start) < count:
        return -1
    low, high = start, len(block) - 1  # bisect: a count per step, not a find per line
    while low < high:
        middle = (low + high) // 2
        if block.count(b"\n", start, middle + 1) >= count:
            high = middle
        else:
            low = middle + 1
    return low


def _open_below(folder_fd: int, path: bytes) -> int:
    """Open ``path`` (relative, ``/``-separated) below ``folder_fd``, no symlink followed."""
    return _at_below(folder_fd, path, lambda fd, name: open_file_in(fd, os.fsdecode(name)))


def _at_below(folder_fd: int, path: bytes, act: Callable[[int, bytes], _T]) -> _T:
    """``act(folder, name)`` on the last part of ``path`` (relative, ``/``-separated),
    reached below ``folder_fd`` through folders opened without following a symlink;
    ``OSError`` for a path that leaves the folder or cannot be reached."""
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
        return act(current, parts[-1])
    finally:
        if current != folder_fd:
            os.close(current)


def render(matches: list[Match], prefix: str) -> list[str]:
    """The matches as ``path:line:text`` lines, the path shown below ``prefix``."""
    return [
        f"{visible_name(prefix + utf8_decode(match.path))}:{match.number}:{show_line(match.text)}"
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
