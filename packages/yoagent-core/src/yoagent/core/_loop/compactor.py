"""One run's compaction: when the next request would not fit, cut the history in place."""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from dataclasses import replace

import anyio
from anyio.abc import TaskGroup

from yoagent.core._context.budget import ContextConfig
from yoagent.core._context.compaction import compact_after_overflow, compact_messages
from yoagent.core._context.estimate import estimate_text
from yoagent.core._context.tracker import ContextTracker
from yoagent.core._logging import logger
from yoagent.core._provider.protocol import ToolDefinition
from yoagent.core._types.markers import is_loop_injected
from yoagent.core._types.messages import Usage

from .state import RunState


class Compactor:
    """Compacts one run's history to its budget (``None`` settings: compaction is off).

    The real-usage figure of each reply calibrates the estimate (:meth:`record_usage`);
    a model-written summary (``LlmCompaction``) is requested in the background as the
    history nears its budget, and used by the next compaction when it is ready.
    """

    __slots__ = ("_background", "_definitions", "_fixed_changed", "_state", "tracker")

    def __init__(self, state: RunState) -> None:
        self._state = state
        settings = state.settings.context_for(state.config.model)
        tracker: ContextTracker | None = None
        if settings is not None:
            tracker = state.config.context_tracker or ContextTracker(settings)
            tracker.config = settings
        self.tracker = tracker
        self._definitions: Sequence[ToolDefinition] = ()
        self._fixed_changed = True
        self._background: TaskGroup | None = None

    def tools_changed(self, definitions: Sequence[ToolDefinition]) -> None:
        """The offered tools changed: what every request sends besides the history, too."""
        self._definitions = definitions
        self._fixed_changed = True

    def run_in(self, background: TaskGroup | None) -> None:
        """Where summaries are requested (the run's background group; ``None`` at its end)."""
        self._background = background

    def record_usage(self, usage: Usage, sent_count: int) -> None:
        """The real usage of the request built from the first ``sent_count`` messages."""
        if self.tracker is not None:
            self.tracker.record_usage(usage, sent_count)

    def _count_fixed_tokens(self, tracker: ContextTracker) -> None:
        """What every request sends besides the history (system prompt, tool schemas)
        counts against the budget; re-counted when the offered tools change."""
        if not self._fixed_changed:
            return
        self._fixed_changed = False
        fixed = self._state.context.system_prompt + "".join(
            json.dumps(d.parameters) + d.name + d.description for d in self._definitions
        )
        tracker.config = _with_fixed_tokens(tracker.config, estimate_text(fixed))

    def compact(self, *, overflowed: bool = False) -> bool:
        """Compact the history in place when the next request would not fit; True if it did.

        After the model reported an overflow (``overflowed``) the estimate was too low:
        compact to half of it, whatever the budget says.
        """
        tracker = self.tracker
        if tracker is None:
            return False
        state = self._state
        self._count_fixed_tokens(tracker)
        messages = state.context.messages
        strategy = state.settings.llm_compaction
        settings = tracker.calibrated_config()
        if not overflowed:
            estimate = tracker.estimate(messages)
            if strategy is not None and self._background is not None:
                span = strategy.wanted(messages, settings, estimate)
                if span is not None:
                    strategy.start(self._background, span, state.spend)
            if estimate <= settings.budget():
                return False
            counted = settings.tokens(messages)
            if estimate > counted > 0:
                # The provider's real figure says more than compaction's own estimate (a
                # dense script, images): cut to the same share of the budget it counts in.
                budget = int(settings.budget() * counted / estimate)
                settings = replace(settings, budget_tokens=budget)
        compact = compact_after_overflow if overflowed else compact_messages
        summarizer = strategy.summarizer if strategy is not None else None
        result = compact(messages, settings, injected=is_loop_injected, summarizer=summarizer)
        if not result.compacted:
            return False
        state.replace_history(result.messages)
        tracker.reset()
        state.stats.compactions += 1
        logger.info(
            "compacted the history (level %d): %d → %d estimated tokens, budget %d",
            result.level,
            result.tokens_before,
            result.tokens_after,
            result.budget,
        )
        return True

    async def settle(self) -> None:
        """At the run's end: let a summary still being written finish (bounded), so it is
        billed to this run and ready for the next."""
        strategy = self._state.settings.llm_compaction
        if strategy is None or not strategy.pending:
            return
        with anyio.move_on_after(strategy.settle_timeout) as bound:
            await strategy.wait()
        if bound.cancelled_caught:
            logger.warning(
                "a compaction summary was still running after %.0fs at the end of the run; "
                "it was cancelled and its spend is unknown",
                strategy.settle_timeout,
            )


@functools.lru_cache(maxsize=64)
def _with_fixed_tokens(config: ContextConfig, tokens: int) -> ContextConfig:
    """``config`` counting ``tokens`` for what every request sends besides the history
    (cached: the same agent asks the same each run)."""
    return replace(config, system_prompt_tokens=tokens)
