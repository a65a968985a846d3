"""The recorded runs the viewer has open: GASP repositories and cassettes, each read again
when its file changes, with what could not be read said in words (file and line).

Only a regular file (or a repository's folder) of at most ``max_bytes`` is read: a FIFO,
a device or an oversized log is refused in words, never opened. Reading blocks: the app
calls this module from a worker thread, never on its event loop.
"""

from __future__ import annotations

import logging
import os
import stat
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._runs import RunRecord

logger = logging.getLogger("yoagent.ui")


@dataclass(slots=True, kw_only=True)
class RunSource:
    """One opened record: a GASP repository (``kind`` ``gasp``) or a cassette."""

    id: str
    path: Path
    kind: str
    runs: list[RunRecord] = field(default_factory=list[RunRecord])
    error: str | None = None
    """Why nothing could be read (the file and line when a record is malformed)."""
    problems: list[str] = field(default_factory=list[str])
    """Lines left out of a GASP log, each naming the file and line; the rest was read."""
    signature: tuple[int, int] | None = None
    """The file's modification time and size when it was last read."""
    reading: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)
    """Held while the source is read (one read at a time, from any thread)."""

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": str(self.path),
            "kind": self.kind,
            "runs": len(self.runs),
            "error": self.error,
            "problems": self.problems[:50],
            "moreProblems": max(0, len(self.problems) - 50),
        }


def kind_of(path: Path) -> str:
    """``gasp`` for a folder or a file named ``events.jsonl``; ``cassette`` otherwise."""
    return "gasp" if path.is_dir() or path.name == "events.jsonl" else "cassette"


MAX_RECORD_BYTES = 256 * 1024 * 1024
"""The largest record (a cassette, a GASP log) the viewer reads by default: 256 MiB."""


def _stat(path: Path) -> os.stat_result | None:
    try:
        return os.stat(path)
    except OSError:
        return None


def _refusal(path: Path, found: os.stat_result, max_bytes: int, *, folder: bool) -> str | None:
    """Why the record at ``path`` is not read (not a regular file, too large), or ``None``."""
    if folder and stat.S_ISDIR(found.st_mode):
        return None
    if not stat.S_ISREG(found.st_mode):
        return f"{path} is not a regular file: the viewer reads only files and folders"
    if found.st_size > max_bytes:
        return f"{path} is {found.st_size} bytes, over the viewer's limit of {max_bytes} bytes"
    return None


class RunLibrary:
    """The sources the viewer shows, by id (``s1``, ``s2``, ...); each record is read only
    when it is a regular file of at most ``max_bytes``. Its methods block while a record
    is read: call them from a worker thread in a server."""

    def __init__(self, *, max_bytes: int = MAX_RECORD_BYTES) -> None:
        self.max_bytes = max_bytes
        self._sources: dict[str, RunSource] = {}
        self._lock = threading.Lock()

    def open(self, path: str | os.PathLike[str]) -> RunSource:
        """Add the record at ``path`` (the same path twice is one source) and read it."""
        resolved = Path(path).expanduser().resolve()
        with self._lock:
            for source in self._sources.values():
                if source.path == resolved:
                    break
            else:
                source = RunSource(
                    id=f"s{len(self._sources) + 1}", path=resolved, kind=kind_of(resolved)
                )
                self._sources[source.id] = source
        self.refresh(source)
        return source

    def sources(self) -> list[RunSource]:
        """Every source, each read again if its file changed."""
        with self._lock:
            found = list(self._sources.values())
        for source in found:
            self.refresh(source)
        return found

    def get(self, source_id: str) -> RunSource | None:
        """The source with this id, read again if its file changed."""
        source = self._sources.get(source_id)
        if source is not None:
            self.refresh(source)
        return source

    def refresh(self, source: RunSource) -> None:
        """Read ``source`` again when its file changed since the last read."""
        with source.reading:
            self._refresh(source)

    def _refresh(self, source: RunSource) -> None:
        target = source.path
        if source.kind == "gasp":
            from ._gasp_runs import log_path

            target = log_path(source.path)
        found = _stat(target)
        signature = None if found is None else (found.st_mtime_ns, found.st_size)
        if signature is not None and signature == source.signature:
            return
        source.signature = signature
        source.runs, source.problems, source.error = [], [], None
        top = _stat(source.path)
        if top is None:
            source.error = f"{source.path} does not exist"
            return
        refused = _refusal(source.path, top, self.max_bytes, folder=source.kind == "gasp")
        if refused is None and found is not None and target != source.path:
            refused = _refusal(target, found, self.max_bytes, folder=False)
        if refused is not None:
            source.error = refused
            return
        try:
            if source.kind == "gasp":
                from ._gasp_runs import read_gasp

                source.runs, source.problems = read_gasp(source.path)
            else:
                from ._cassette_runs import read_cassette

                source.runs = [read_cassette(source.path)]
        except ImportError as error:
            source.error = f"reading {source.kind} records needs yoagent-ui[web] ({error.name})"
        except Exception as error:  # shown to the person: the message, never a traceback
            logger.info("could not read %s", source.path, exc_info=True)
            source.error = str(error) or type(error).__name__
