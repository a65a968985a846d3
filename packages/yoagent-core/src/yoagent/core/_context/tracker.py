"""How full the context is: the provider's last real figure plus an estimate of what is new."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

from yoagent.core._types.messages import AgentMessage, Usage

from .budget import ContextConfig
from .estimate import estimate_messages

_MIN_CALIBRATION_SAMPLE = 1_000  # estimated tokens; smaller prefixes are too noisy to learn from


class ContextTracker:
    """How full the context is: the provider's real figure plus an estimate of what is new.

    After each reply, :meth:`record_usage` stores the request's real input size. Then
    :meth:`estimate` is that figure plus the (calibrated) estimate of the messages appended
    since. With no figure yet, or after :meth:`reset` (history replaced or compacted), it
    is a pure estimate. The first estimate after a figure also learns :attr:`calibration`
    (real / estimated for the same messages, bounded to ``[min_calibration, max_calibration]``).
    """

    __slots__ = (
        "_anchor_count",
        "_anchor_last",
        "_anchor_tokens",
        "_calibrated",
        "_calibration",
        "_learned",
        "_prefix",
        "config",
        "max_calibration",
        "min_calibration",
    )

    def __init__(
        self,
        config: ContextConfig | None = None,
        *,
        min_calibration: float = 0.5,
        max_calibration: float = 4.0,
    ) -> None:
        if not 0.0 < min_calibration <= 1.0 <= max_calibration:
            raise ValueError("ContextTracker needs 0 < min_calibration <= 1 <= max_calibration")
        self.config = config or ContextConfig()
        self.min_calibration = min_calibration
        self.max_calibration = max_calibration
        self._calibration = 1.0
        self._calibrated: tuple[ContextConfig, float, ContextConfig] | None = None
        self._anchor_count: int | None = None
        self._anchor_tokens = 0
        self._anchor_last: AgentMessage | None = None
        self._learned = True
        # (count, last message, raw estimate) of the longest prefix estimated so far, so a
        # growing history is estimated in O(new messages) per request, not O(history).
        self._prefix: tuple[int, AgentMessage | None, int] = (0, None, 0)

    @property
    def calibration(self) -> float:
        """Real tokens per estimated token, as last learned (1.0 until then)."""
        return self._calibration

    @property
    def last_real_tokens(self) -> int | None:
        """The last recorded real input size (history + system prompt), if still valid."""
        return self._anchor_tokens if self._anchor_count is not None else None

    def record_usage(self, usage: Usage, message_count: int) -> None:
        """Record what the provider counted for a request built from ``message_count`` messages.

        ``message_count`` is the length of the history the request was built from. The
        figure is input + cache read + cache write; a reply reporting none is ignored.
        """
        real = usage.input + usage.cache_read + usage.cache_write
        if real <= 0 or message_count < 0:
            return
        self._anchor_count = message_count
        self._anchor_tokens = real
        self._anchor_last = None
        self._learned = False

    def reset(self) -> None:
        """Forget the real figure (the history was replaced or compacted); keep the calibration."""
        self._anchor_count = None
        self._anchor_last = None
        self._learned = True
        self._prefix = (0, None, 0)

    def _raw_estimate(self, messages: Sequence[AgentMessage], count: int) -> int:
        """Uncalibrated estimate of ``messages[:count]``, reusing the last prefix's figure."""
        known, last, tokens = self._prefix
        if not (0 < known <= count and messages[known - 1] is last):
            known, tokens = 0, 0
        tokens += estimate_messages(messages[known:count])
        if count:
            self._prefix = (count, messages[count - 1], tokens)
        return tokens

    def calibrated_config(self) -> ContextConfig:
        """:attr:`config` with :attr:`calibration` applied: what to compact with."""
        cached = self._calibrated
        if cached is not None and cached[0] is self.config and cached[1] == self._calibration:
            return cached[2]
        calibrated = replace(self.config, calibration=self._calibration)
        self._calibrated = (self.config, self._calibration, calibrated)
        return calibrated

    def _anchor_valid(self, messages: Sequence[AgentMessage]) -> bool:
        count = self._anchor_count
        if count is None or count > len(messages):
            return False
        if count == 0:
            return True
        last = messages[count - 1]
        if self._anchor_last is None:
            self._anchor_last = last
            return True
        return last is self._anchor_last

    def _learn(self, messages: Sequence[AgentMessage], count: int) -> None:
        self._learned = True
        estimated = self._raw_estimate(messages, count)
        if estimated < _MIN_CALIBRATION_SAMPLE:
            return
        real = self._anchor_tokens - self.config.system_prompt_tokens
        ratio = real / estimated
        self._calibration = min(self.max_calibration, max(self.min_calibration, ratio))

    def estimate(self, messages: Sequence[AgentMessage]) -> int:
        """Estimated tokens of ``messages`` in the next request (the history's share)."""
        if not self._anchor_valid(messages):
            self._anchor_count = None
            return math.ceil(self._raw_estimate(messages, len(messages)) * self._calibration)
        count = self._anchor_count
        assert count is not None
        if not self._learned:
            self._learn(messages, count)
        real = max(0, self._anchor_tokens - self.config.system_prompt_tokens)
        return real + math.ceil(estimate_messages(messages[count:]) * self._calibration)

    def needs_compaction(self, messages: Sequence[AgentMessage]) -> bool:
        """True when the next request would exceed the budget."""
        return self.estimate(messages) > self.config.budget()
