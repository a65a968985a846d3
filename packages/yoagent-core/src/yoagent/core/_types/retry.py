"""Retry policy for model calls: exponential backoff with jitter, honouring retry-after."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass

from .errors import ProviderError


@dataclass(slots=True, kw_only=True, frozen=True)
class RetryConfig:
    """How the loop retries RATE_LIMITED and NETWORK failures (nothing else is retried).

    The n-th retry (from 0) waits ``initial_delay * multiplier**n`` seconds, capped at
    ``max_delay``, then scaled by a random factor in ``[1 - jitter, 1 + jitter]``. A
    server's retry-after wins over the computed delay (capped at ``max_retry_after``).
    """

    max_retries: int = 3
    initial_delay: float = 1.0
    multiplier: float = 2.0
    max_delay: float = 30.0
    jitter: float = 0.2
    max_retry_after: float = 120.0

    @classmethod
    def none(cls) -> RetryConfig:
        """Never retry."""
        return cls(max_retries=0)

    def should_retry(self, error: ProviderError, retries_done: int) -> bool:
        """True when ``error`` is retryable and retries remain."""
        return error.kind.retryable and retries_done < self.max_retries

    def delay(
        self, retries_done: int, retry_after: float | None = None, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait before retry number ``retries_done`` (counting from 0)."""
        if retry_after is not None and math.isfinite(retry_after):
            return min(max(retry_after, 0.0), self.max_retry_after)
        if retry_after is not None and retry_after > 0:  # +inf: as long as allowed
            return self.max_retry_after
        base = min(self.initial_delay * self.multiplier**retries_done, self.max_delay)
        spread = (rng or random).uniform(1.0 - self.jitter, 1.0 + self.jitter)
        return max(base * spread, 0.0)
