"""Helpers for yoagent-decision's tests: fast retries, a price table, spend capture, a
backend that never answers, a guard on scripted answers, described skills and tools."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import anyio

from yoagent.core import CostConfig, RetryConfig, Usage
from yoagent.decision import DecisionModel, Evaluation, InputGuard, MockBackend, Request

KEY_VARIABLES = (
    "TYPESAFE_API_KEY",
    "TYPESAFE_BASE_URL",
    "OPENCODE_API_KEY",
    "CLOUDFLARE_API_TOKEN",
    "CLOUDFLARE_AUTH_TOKEN",
    "OPENAI_API_KEY",
)
"""Every variable a decision preset reads."""
SECRET = "sk-test-SECRET-0123456789abcdef"
FAST_RETRY = RetryConfig(max_retries=3, initial_delay=0.0, max_delay=0.0, jitter=0.0)
NO_RETRY = RetryConfig.none()

PRICES: Mapping[tuple[str, str], CostConfig] = {
    ("typesafe", "jev-1.13.0"): CostConfig(input=0.042),
    ("cloudflare", "clef"): CostConfig(input=0.24),
    ("cloudflare", "clef-flash"): CostConfig(input=0.09),
    ("openai-decisions", "gpt-6-luna"): CostConfig(input=0.1),
}
"""The bundled snapshot's decision entries (yoagent-pricing's prices.json)."""


def price_table(key: str, model: str) -> CostConfig | None:
    """A resolver over :data:`PRICES` (core's slot takes ``(key, model_id)``)."""
    return PRICES.get((key, model))


@dataclass
class SpendLog:
    """A recorder that keeps every ``(usage, cost)`` it is given."""

    records: list[tuple[Usage, float | None]] = field(default_factory=list)

    def __call__(self, usage: Usage, cost_usd: float | None) -> None:
        self.records.append((usage, cost_usd))

    @property
    def usage(self) -> Usage:
        total = Usage()
        for usage, _ in self.records:
            total = total + usage
        return total


async def never_answers(request: Request) -> Evaluation:
    """A responder slower than any time limit a test sets."""
    await anyio.sleep(30)
    raise AssertionError("unreachable")


def guard_on(probabilities: dict[str, float], **options: object) -> tuple[InputGuard, MockBackend]:
    """An input guard whose model answers each check by id from ``probabilities``."""
    backend = MockBackend.nouls(probabilities, usage=Usage(input=40))
    model = DecisionModel.from_backend(backend, "judge")
    return InputGuard(model=model, **options), backend  # type: ignore[arg-type]


@dataclass(frozen=True)
class Item:
    """A skill or a tool as the advisor sees it: a name and a description."""

    name: str
    description: str


SKILLS = [Item("deploy", "Ship a release to production"), Item("review", "Review a pull request")]
