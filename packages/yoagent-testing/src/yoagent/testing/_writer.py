"""CassetteWriter: appends a run's records to a cassette file as they happen, secrets kept out."""

from __future__ import annotations

import bisect
import threading
from collections.abc import Iterable
from functools import partial
from pathlib import Path

from yoagent.core import ModelConfig
from yoagent.core.support import atomic_write

from ._cassette import Cassette
from ._lines import HEADER, RequestEncoder, dump_line
from ._records import RecordedCall, RecordedTool, tool_from_json
from ._secrets import cassette_scrubber, environment_secrets, scrub_deltas, with_model_secrets


class CassetteWriter:
    """Writes one cassette file, a line per model call or tool result as each ends.

    A new cassette replaces whatever file was at ``path`` (its folders are created);
    ``append=True`` adds to an existing one instead (numbering its calls after the ones it
    holds). Each line is written whole and flushed, so a crash loses at most the calls in
    flight. Before a line is written, every secret known to the writer is replaced by
    ``[REDACTED]`` wherever it appears: the ``secrets`` given, the values of environment
    variables named like credentials (unless ``scrub_environment=False``), and the
    credentials of each model config a recording provider sees (:meth:`add_model`).
    Streamed deltas are scrubbed as the text they stream, so a key split across two
    deltas is replaced whole.
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
        found = [*secrets, *(environment_secrets() if scrub_environment else ())]
        self._scrubber = cassette_scrubber(found)
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
        with self._lock:
            self._scrubber = self._scrubber.extended(secrets)

    def add_model(self, model: ModelConfig) -> None:
        """Also keep the credentials ``model`` carries out of every later line: its key,
        its credential headers, and the secret pieces of its base URL."""
        with self._lock:
            self._scrubber = with_model_secrets(self._scrubber, model)

    def reserve(self) -> int:
        """The number of a call that begins now (calls are numbered as they begin)."""
        with self._lock:
            n = self._next
            self._next += 1
            return n

    def write_call(self, call: RecordedCall) -> None:
        """Write a finished call (secrets replaced) and keep it in :attr:`cassette`."""
        with self._lock:
            scrubber = self._scrubber
            record, clean = self._encoder.encode(
                call, scrubber.json, partial(scrub_deltas, scrubber)
            )
            self._append(dump_line(record))
            bisect.insort(self.cassette.calls, clean, key=lambda recorded: recorded.n)

    def write_tool(self, tool: RecordedTool) -> None:
        """Write a finished tool execution (secrets replaced) and keep it in :attr:`cassette`."""
        with self._lock:
            clean = tool_from_json(self._scrubber.json(tool.to_json()))
            self._append(dump_line(clean.to_json()))
            self.cassette.tools.append(clean)

    def _append(self, line: str) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(line)
            handle.flush()
