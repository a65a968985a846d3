"""The compaction budget: how much of the context window the history may use."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from yoagent.core._types.config import ModelConfig
from yoagent.core._types.messages import AgentMessage

from .estimate import estimate_tokens


@dataclass(slots=True, kw_only=True, frozen=True)
class ContextConfig:
    """How much of the context window the history may use, and how to compact it.

    Defaults suit a coding agent on a 200k-token model; :meth:`for_model` fills the window
    and output reserve from a :class:`~yoagent.core.ModelConfig`.
    """

    context_window: int = 200_000
    """The model's context window in tokens (input + output)."""
    reserve_output_tokens: int = 16_384
    """Room kept for the reply (and its reasoning); never given to the history."""
    system_prompt_tokens: int = 0
    """Tokens of what every request sends besides the history: system prompt and tool
    definitions. The loop sets it (e.g. with :func:`estimate_text` of both)."""
    min_free_fraction: float = 0.2
    """Headroom floor: the history never fills more than ``1 - min_free_fraction`` of the
    window, whatever the reserve. It absorbs the heuristic's error (code and non-English
    text run denser than 4 bytes/token) until the tracker has calibrated it."""
    target_fraction: float = 0.6
    """Level 3 cuts down to this fraction of the budget (hysteresis: the next turns do not
    compact again at once, which would rewrite the prompt cache every turn)."""
    keep_first: int = 2
    """Messages at the start always kept (the task, and usually the first reply); a head
    ending inside a tool call's results is shortened to the call's start."""
    keep_recent: int = 10
    """Messages at the end kept in full by level 2 and guaranteed by level 3; never less
    than the newest turn. 0 protects nothing at the end (not even the newest turn)."""
    tool_output_max_chars: int = 2_000
    """Level 1 cuts each old tool-output text block to this many characters (head + tail,
    where commands print what matters); old tool-output images become a placeholder."""
    summary_line_max_chars: int = 200
    """Level 2 clips each summary line to this many characters."""
    summary_max_lines: int = 200
    """Level 2 keeps at most this many summary lines (the newest), so repeated compaction
    cannot grow the summary without end."""
    budget_tokens: int | None = None
    """An explicit budget for the history, overriding the one derived from the window."""
    calibration: float = 1.0
    """Multiplies every estimate (real tokens / estimated tokens, from
    :attr:`ContextTracker.calibration`)."""

    def __post_init__(self) -> None:
        for name in (
            "context_window",
            "reserve_output_tokens",
            "system_prompt_tokens",
            "keep_first",
            "keep_recent",
            "tool_output_max_chars",
            "summary_line_max_chars",
            "summary_max_lines",
        ):
            value: int = getattr(self, name)
            if value < 0:
                raise ValueError(f"ContextConfig.{name} must be >= 0, got {value}")
        if not 0.0 <= self.min_free_fraction < 1.0:
            raise ValueError(
                f"ContextConfig.min_free_fraction must be in [0, 1), got {self.min_free_fraction}"
            )
        if not 0.0 < self.target_fraction <= 1.0:
            raise ValueError(
                f"ContextConfig.target_fraction must be in (0, 1], got {self.target_fraction}"
            )
        if not self.calibration > 0.0 or math.isinf(self.calibration):
            raise ValueError(f"ContextConfig.calibration must be > 0, got {self.calibration}")
        if self.budget_tokens is not None and self.budget_tokens < 0:
            raise ValueError(f"ContextConfig.budget_tokens must be >= 0, got {self.budget_tokens}")

    @classmethod
    def for_model(cls, model: ModelConfig, **overrides: Any) -> ContextConfig:
        """A config for ``model``: its context window, its ``max_tokens`` as the reserve."""
        fields: dict[str, Any] = {
            "context_window": model.context_window,
            "reserve_output_tokens": model.max_tokens,
            **overrides,
        }
        return cls(**fields)

    def budget(self) -> int:
        """Tokens the history may use: window − reserve − system prompt, capped by the floor."""
        if self.budget_tokens is not None:
            return self.budget_tokens
        usable = min(
            self.context_window - self.reserve_output_tokens,
            int(self.context_window * (1.0 - self.min_free_fraction)),
        )
        return max(0, usable - self.system_prompt_tokens)

    def target(self) -> int:
        """What level 3 cuts down to: ``target_fraction`` of the budget."""
        return int(self.budget() * self.target_fraction)

    def cost(self, message: AgentMessage) -> int:
        """The calibrated estimate of one message, as compaction counts it."""
        tokens = estimate_tokens(message)
        if self.calibration == 1.0:
            return tokens
        return math.ceil(tokens * self.calibration)

    def tokens(self, messages: Sequence[AgentMessage]) -> int:
        """The calibrated estimate of a history, as compaction counts it."""
        return sum(self.cost(message) for message in messages)
