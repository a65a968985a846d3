"""The recorded runs the viewer has open: GASP repositories and cassettes, each read again
when its file changes, with what could not be read said in words (file and line)."""

from __future__ import annotations

import logging
import os
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


def _signature(path: Path) -> tuple[int, int] | None:
    try:
        found = os.stat(path)
    except OSError:
        return None
    return found.st_mtime_ns, found.st_size


class RunLibrary:
    """The sources the viewer shows, by id (``s1``, ``s2``, ...)."""

    def __init__(self) -> None:
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
        target = source.path
        if source.kind == "gasp":
            from ._gasp_runs import log_path

            target = log_path(source.path)
        signature = _signature(target)
        if signature is not None and signature == source.signature:
            return
        source.signature = signature
        source.runs, source.problems, source.error = [], [], None
        if not source.path.exists():
            source.error = f"{source.path} does not exist"
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
