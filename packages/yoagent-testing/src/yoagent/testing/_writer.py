"""CassetteWriter: appends a run's records to a cassette file as they happen, secrets kept out."""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterable
from pathlib import Path

from yoagent.core.support import atomic_write

from ._cassette import Cassette
from ._lines import HEADER, RequestEncoder, dump_line
from ._records import RecordedCall, RecordedTool, tool_from_json
from ._secrets import Scrubber, environment_secrets


class CassetteWriter:
    """Writes one cassette file, a line per model call or tool result as each ends.

    A new cassette replaces whatever file was at ``path`` (its folders are created);
    ``append=True`` adds to an existing one instead (numbering its calls after the ones it
    holds). Each line is written whole and flushed, so a crash loses at most the calls in
    flight. Before a line is written, every secret known to the writer is replaced by
    ``[REDACTED]`` wherever it appears: the ``secrets`` given, the values of environment
    variables named like credentials (unless ``scrub_environment=False``), and the
    credentials of each model config a recording provider sees (:meth:`add_secrets`).
    """

    def __init__(
        self,
        path: str | Path,
        *,
        append: bool = False,
        secrets: Iterable[str] = (),
        scrub_environment: bool = True,
    ) -> None:
        self.path = Path(path)
        self._scrubber = Scrubber(secrets)
        if scrub_environment:
            self._scrubber.add(environment_secrets())
        self._encoder = RequestEncoder()
        self._lock = threading.Lock()
        self._next = 0
        if append and self.path.exists():
            existing = Cassette.load(self.path)
            for call in existing.calls:
                self._encoder.remember(call)
            self._next = max((call.n for call in existing.calls), default=-1) + 1
            if existing.load_warnings:  # drop the cut-off line before appending after it
                atomic_write(self.path, existing.to_jsonl())
                existing = Cassette.load(self.path)
            self.cassette = existing
        else:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path, dump_line(HEADER))
            self.cassette = Cassette(path=self.path)
        self.cassette.path = self.path

    def __repr__(self) -> str:
        return f"<CassetteWriter {str(self.path)!r}: {len(self.cassette.calls)} calls>"

    def add_secrets(self, secrets: Iterable[str]) -> None:
        """Also keep these values out of every later line."""
        self._scrubber.add(secrets)

    def reserve(self) -> int:
        """The number of a call that begins now (calls are numbered as they begin)."""
        with self._lock:
            n = self._next
            self._next += 1
            return n

    def write_call(self, call: RecordedCall) -> None:
        """Write a finished call (secrets replaced) and keep it in :attr:`cassette`."""
        with self._lock:
            record, clean = self._encoder.encode(call, self._scrubber.json)
            self._append(dump_line(record))
            bisect.insort(self.cassette.calls, clean, key=lambda recorded: recorded.n)

    def write_tool(self, tool: RecordedTool) -> None:
        """Write a finished tool execution (secrets replaced) and keep it in :attr:`cassette`."""
        clean = tool_from_json(self._scrubber.json(tool.to_json()))
        with self._lock:
            self._append(dump_line(clean.to_json()))
            self.cassette.tools.append(clean)

    def _append(self, line: str) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
