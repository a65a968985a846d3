"""Recorded runs as the viewer shows them: each run's turns (a model call and the tool
calls it asked for), their times, tokens and cost, the files it changed and its outcome;
the list of runs, filtered and paged.

Two kinds of record are read (:mod:`._gasp_runs`, :mod:`._cassette_runs`); both come out
as :class:`RunRecord`, so the page draws one thing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from yoagent.core.provider import add_usd

FILE_TOOLS = frozenset({"write_file", "edit_file"})
"""The built-in tools that change a file (their ``path`` is the file changed)."""

MAX_PAGE = 500
"""The most runs, or turns of one run, a page holds."""


@dataclass(slots=True, kw_only=True)
class Tokens:
    """A model call's tokens (or a run's, added up)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def add(self, other: Tokens) -> None:
        """Add ``other``'s counts to these."""
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_write += other.cache_write

    def to_json(self) -> dict[str, int]:
        return {
            "input": self.input,
            "output": self.output,
            "cacheRead": self.cache_read,
            "cacheWrite": self.cache_write,
        }

    @classmethod
    def from_json(cls, value: object) -> Tokens:
        """Counts from a recorded usage object (``input``, ``output``, ``cache_read``,
        ``cache_write``); what is missing or not a count is 0."""
        fields: dict[str, Any] = value if isinstance(value, dict) else {}  # pyright: ignore[reportUnknownVariableType]

        def count(key: str) -> int:
            found = fields.get(key)
            return found if isinstance(found, int) and not isinstance(found, bool) else 0

        return cls(
            input=count("input"),
            output=count("output"),
            cache_read=count("cache_read"),
            cache_write=count("cache_write"),
        )


@dataclass(slots=True, kw_only=True)
class ToolSpan:
    """One tool call: when it ran, whether it succeeded, what it was given and gave."""

    name: str
    start_ms: int | None = None
    end_ms: int | None = None
    ok: bool | None = None
    arguments: str = ""
    output: str = ""
    path: str | None = None
    """The file a write or an edit changed."""
    run_id: str | None = None
    """The run this call delegated, when it is a sub-agent's."""

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "start": self.start_ms,
            "end": self.end_ms,
            "ok": self.ok,
            "arguments": self.arguments,
            "output": self.output,
            "path": self.path,
            "runId": self.run_id,
        }


@dataclass(slots=True, kw_only=True)
class Turn:
    """One model call and the tool calls its reply asked for."""

    index: int
    model: str = ""
    start_ms: int | None = None
    end_ms: int | None = None
    tokens: Tokens = field(default_factory=Tokens)
    cost_usd: float | None = None
    ok: bool = True
    output: str = ""
    tools: list[ToolSpan] = field(default_factory=list[ToolSpan])

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "model": self.model,
            "start": self.start_ms,
            "end": self.end_ms,
            "tokens": self.tokens.to_json(),
            "costUsd": self.cost_usd,
            "ok": self.ok,
            "output": self.output,
            "tools": [tool.to_json() for tool in self.tools],
        }


@dataclass(slots=True, kw_only=True)
class RunRecord:
    """One recorded run."""

    id: str
    task: str = ""
    outcome: str = "open"
    """How it ended, in GASP's words (``completed``, ``error``, ``aborted``, ``stopped``,
    ...); ``open`` when the record holds no end."""
    start_ms: int | None = None
    end_ms: int | None = None
    tokens: Tokens = field(default_factory=Tokens)
    cost_usd: float | None = None
    turns: list[Turn] = field(default_factory=list[Turn])
    parent: str | None = None
    """The run that delegated this one."""
    children: list[str] = field(default_factory=list[str])

    @property
    def models(self) -> list[str]:
        """The models its turns called, in order of first use."""
        seen: dict[str, None] = {}
        for turn in self.turns:
            if turn.model:
                seen.setdefault(turn.model)
        return list(seen)

    @property
    def files(self) -> list[str]:
        """The files its writes and edits changed, in order of first change."""
        seen: dict[str, None] = {}
        for turn in self.turns:
            for tool in turn.tools:
                if tool.path is not None and tool.ok:
                    seen.setdefault(tool.path)
        return list(seen)

    def summary_json(self) -> dict[str, Any]:
        """What the list of runs shows of it."""
        duration = (
            self.end_ms - self.start_ms
            if self.end_ms is not None and self.start_ms is not None
            else None
        )
        return {
            "id": self.id,
            "task": self.task,
            "outcome": self.outcome,
            "start": self.start_ms,
            "durationMs": duration,
            "models": self.models,
            "turns": len(self.turns),
            "toolCalls": sum(len(turn.tools) for turn in self.turns),
            "tokens": self.tokens.to_json(),
            "costUsd": self.cost_usd,
            "files": len(self.files),
            "parent": self.parent,
            "children": list(self.children),
        }

    def detail_json(self, offset: int, limit: int) -> dict[str, Any]:
        """The run with one page of its turns, and every turn's figures for the plot."""
        start, end = page_bounds(offset, limit, len(self.turns))
        return {
            **self.summary_json(),
            "files": self.files,
            "offset": start,
            "page": [turn.to_json() for turn in self.turns[start:end]],
            "series": {
                "input": [turn.tokens.input for turn in self.turns],
                "output": [turn.tokens.output for turn in self.turns],
                "cacheRead": [turn.tokens.cache_read for turn in self.turns],
                "cacheWrite": [turn.tokens.cache_write for turn in self.turns],
                "costUsd": [turn.cost_usd for turn in self.turns],
                "durationMs": [
                    turn.end_ms - turn.start_ms
                    if turn.end_ms is not None and turn.start_ms is not None
                    else None
                    for turn in self.turns
                ],
            },
        }


def page_bounds(offset: int, limit: int, total: int) -> tuple[int, int]:
    """``[start, end)`` of the page at ``offset`` of at most ``limit`` (≤ :data:`MAX_PAGE`)
    items out of ``total``."""
    start = min(max(offset, 0), total)
    return start, min(start + max(1, min(limit, MAX_PAGE)), total)


@dataclass(slots=True, kw_only=True, frozen=True)
class RunFilter:
    """Which runs the list shows: an ``outcome``, a ``model`` one of its turns called, a
    cost range (a run of unknown cost is left out when a bound is set), words of its task;
    delegated runs only with ``delegated``."""

    outcome: str | None = None
    model: str | None = None
    min_cost: float | None = None
    max_cost: float | None = None
    text: str = ""
    delegated: bool = False

    def admits(self, run: RunRecord) -> bool:
        """Whether ``run`` passes every condition."""
        if run.parent is not None and not self.delegated:
            return False
        if self.outcome and run.outcome != self.outcome:
            return False
        if self.model and self.model not in run.models:
            return False
        if self.min_cost is not None or self.max_cost is not None:
            if run.cost_usd is None:
                return False
            if self.min_cost is not None and run.cost_usd < self.min_cost:
                return False
            if self.max_cost is not None and run.cost_usd > self.max_cost:
                return False
        return all(word in run.task.lower() for word in self.text.lower().split())


def listing(runs: Sequence[RunRecord], where: RunFilter, offset: int, limit: int) -> dict[str, Any]:
    """One page of the runs ``where`` admits, newest first, and the outcomes and models
    there are to filter by."""
    chosen = [run for run in runs if where.admits(run)]
    chosen.sort(key=lambda run: run.start_ms or 0, reverse=True)
    start, end = page_bounds(offset, limit, len(chosen))
    return {
        "total": len(chosen),
        "offset": start,
        "runs": [run.summary_json() for run in chosen[start:end]],
        "outcomes": sorted({run.outcome for run in runs}),
        "models": sorted({model for run in runs for model in run.models}),
    }


def total_tokens(turns: Iterable[Turn]) -> Tokens:
    """The tokens of ``turns`` added up."""
    tokens = Tokens()
    for turn in turns:
        tokens.add(turn.tokens)
    return tokens


def sum_costs(turns: Iterable[Turn]) -> float | None:
    """What ``turns`` cost in all; ``None`` when one of them spent tokens at an unknown
    price (or there are none)."""
    total: float | None = None
    for turn in turns:
        cost = turn.cost_usd
        if cost is None:
            if turn.tokens.input or turn.tokens.output or turn.tokens.cache_read:
                return None
            continue
        total = add_usd(total or 0.0, cost)
    return total
