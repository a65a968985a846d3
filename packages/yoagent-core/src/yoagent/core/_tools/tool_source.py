"""Tool sources: tools resolved at the start of every run, and again when their set moves."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol, runtime_checkable

from yoagent.core._cancel import CancelToken, unless_cancelled
from yoagent.core._logging import logger
from yoagent.core._support.warn_once import warn_once

from .contract import AgentTool


@runtime_checkable
class ToolSource(Protocol):
    """Supplies tools that may change while an agent lives (an MCP server, an API spec).

    ``tools()`` is asked at the start of every run, and again mid-run only when
    ``generation()`` returned a different number than at the last ask. A source whose
    set never changes returns a constant generation.
    """

    async def tools(self) -> Sequence[AgentTool]: ...

    def generation(self) -> int: ...


@dataclass(slots=True)
class _SourceState:
    source: ToolSource
    generation: int | None = None
    tools: list[AgentTool] = field(default_factory=list[AgentTool])


def _generation(source: ToolSource, run_id: int) -> int | None:
    try:
        return source.generation()
    except Exception:  # unknown generation: treat the set as unchanged
        warn_once(
            logger,
            f"generation:{id(source)}:{run_id}",
            "tool source %r: generation() failed",
            source,
        )
        return None


class SourcedTools:
    """One run's view of its tool sources: what each supplied, and the merged tool list.

    Collisions are resolved in a fixed order, each drop logged: static tools win, then an
    earlier source, then an earlier tool within a source. The sourced tools that survive
    are sorted by name, so an unchanged set never reorders the cached prompt prefix.
    """

    def __init__(self, sources: Sequence[ToolSource]) -> None:
        self._states = [_SourceState(source) for source in sources]
        self._run_id = id(self)

    async def _ask(self, state: _SourceState, cancel: CancelToken | None) -> None:
        generation = _generation(state.source, self._run_id)
        try:
            if cancel is None:
                supplied = list(await state.source.tools())
            else:
                answer = await unless_cancelled(cancel, state.source.tools)
                if answer is None:
                    return  # cancelled: keep the last answer
                supplied = list(answer)
        except Exception:  # a failing source contributes nothing; the run goes on
            logger.exception("tool source %r failed", state.source)
            supplied = []
        if generation is not None:
            state.generation = generation
        state.tools = supplied

    async def collect(self) -> None:
        """Ask every source (at the start of a run)."""
        for state in self._states:
            await self._ask(state, None)

    async def refresh(self, cancel: CancelToken) -> bool:
        """Re-ask the sources whose generation moved; True when any was re-asked."""
        changed = False
        for state in self._states:
            if cancel.cancelled:
                break
            generation = _generation(state.source, self._run_id)
            if generation is None or generation == state.generation:
                continue
            await self._ask(state, cancel)
            changed = True
        return changed

    def merge(self, static: Sequence[AgentTool]) -> list[AgentTool]:
        """The run's tools: ``static`` first, then the surviving sourced tools by name."""
        taken = {tool.name for tool in static}
        sourced: list[AgentTool] = []
        for index, state in enumerate(self._states):
            for tool in state.tools:
                if tool.name in taken:
                    logger.warning(
                        "tool %r from source %d is dropped: an earlier tool has that name",
                        tool.name,
                        index,
                    )
                    continue
                taken.add(tool.name)
                sourced.append(tool)
        sourced.sort(key=lambda tool: tool.name)
        return [*static, *sourced]
