"""Reading ``state/events.jsonl`` and folding it into a :class:`Graph`, leniently.

A reader must never become unable to read an append-only log, so nothing here aborts:
an op on a missing node is skipped, and a line that is not an event (a torn final line
after a power cut, a hand edit) or an ops payload that does not parse is left out; each
is reported with its physical line number. The conformance checker is the strict side.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from ._json import loads
from .envelope import STATE_OPS_APPLIED, EnvelopeError, Event, event_from_json
from .graph import Graph
from .ops import OpsError, parse_ops

LOG_PATH = "state/events.jsonl"
"""Where the log lives, relative to the repository root."""


@dataclass(frozen=True, slots=True)
class LogProblem:
    """A line the fold had to leave out, and why."""

    line: int
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


@dataclass(frozen=True, slots=True)
class SkippedOp:
    """An op skipped because the node it names does not exist (the log is readable but
    says something the graph cannot hold)."""

    line: int
    event_id: str
    index: int
    op: str
    node: str
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.op} at batch index {self.index} skipped — {self.reason}"


@dataclass(slots=True)
class Fold:
    """A folded log: the graph, the events read, and everything that was left out."""

    graph: Graph = field(default_factory=Graph)
    events: list[Event] = field(default_factory=list[Event])
    lines: list[int] = field(default_factory=list[int])
    """The physical line number of each of :attr:`events`."""
    skipped: list[SkippedOp] = field(default_factory=list[SkippedOp])
    problems: list[LogProblem] = field(default_factory=list[LogProblem])
    torn_tail: bool = False
    """The file ends in a partial line (a crash mid-write); it was left out."""

    @property
    def clean(self) -> bool:
        """True when every line was an event and every op applied."""
        return not self.skipped and not self.problems

    def diagnostics(self) -> list[str]:
        """Everything left out or skipped, one line each."""
        return [str(p) for p in self.problems] + [str(s) for s in self.skipped]


def parse_line(raw: bytes) -> Event:
    """One log line as an event; raises :class:`EnvelopeError` saying why not."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise EnvelopeError(f"not UTF-8 ({error.reason} at byte {error.start})") from None
    try:
        value = loads(text)
    except ValueError as error:
        raise EnvelopeError(f"not JSON: {error}") from None
    return event_from_json(value)


def read_log(
    raw: bytes, into: Fold | None = None, *, until: str | None = None, first_line: int = 1
) -> Fold:
    """Parse and fold raw log bytes (stopping after the event ``until`` when given);
    ``first_line`` numbers the first line of ``raw`` when it continues a log."""
    fold = into if into is not None else Fold()
    pieces = raw.split(b"\n")
    last = len(pieces) - 1  # the piece after the final newline (empty for a whole file)
    for offset, piece in enumerate(pieces):
        number = first_line + offset
        line = piece.removesuffix(b"\r")
        if not line.strip():
            continue
        try:
            event = parse_line(line)
        except EnvelopeError as error:
            if offset == last:
                fold.torn_tail = True
                message = f"{error} (a torn final line — likely a crash mid-append)"
            else:
                message = str(error)
            fold.problems.append(LogProblem(number, message))
            continue
        apply_event(fold, event, number)
        if until is not None and event.id == until:
            break
    return fold


def apply_event(fold: Fold, event: Event, line: int) -> None:
    """Add one event to a fold (only ``state.ops_applied`` changes the graph)."""
    fold.events.append(event)
    fold.lines.append(line)
    if event.kind != STATE_OPS_APPLIED:
        return
    try:
        ops = parse_ops(event.payload)
    except OpsError as error:
        fold.problems.append(LogProblem(line, f"event {event.id}: {error}"))
        return
    for skip in fold.graph.apply(ops):
        fold.skipped.append(SkippedOp(line, event.id, skip.index, skip.op, skip.node, skip.reason))


def fold_events(events: Iterable[Event]) -> Fold:
    """Fold events already in memory (their position stands in for the line number)."""
    fold = Fold()
    for number, event in enumerate(events, start=1):
        apply_event(fold, event, number)
    return fold


def fold_log(path: str | Path, *, until: str | None = None) -> Fold:
    """Read and fold a log file; a missing file folds to an empty graph."""
    try:
        raw = Path(path).read_bytes()
    except FileNotFoundError:
        return Fold()
    return read_log(raw, until=until)
