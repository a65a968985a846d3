"""OpenTelemetry spans for runs, model calls and tool calls (API only; the app brings an SDK).

Spans are made only once an application has installed a tracer provider: until then the
API's proxy would hand out non-recording spans anyway, and skipping them keeps the loop's
per-turn cost down. The API itself is imported only then, or when a run finds it already
imported (≈ 10 ms of import, with its entry-point lookup, that ``import yoagent.core`` no
longer pays): a tracer provider is installed through ``opentelemetry.trace``, so an
application that has one has imported it, or names one in ``OTEL_PYTHON_TRACER_PROVIDER``.
"""

from __future__ import annotations

import os
import sys
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from yoagent.core._types.stats import SessionStats

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer
    from opentelemetry.util.types import AttributeValue

_tracer: Tracer | None = None

SPAN_AGENT_LOOP = "agent_loop"
SPAN_LLM_STREAM = "llm_stream"
SPAN_TOOL = "tool"


class _NoSpan(AbstractContextManager["_NoSpan"]):
    """Stands in for a span while no tracer provider is installed."""

    __slots__ = ()

    def __exit__(self, *exc_info: object) -> None:
        return None

    def set_attribute(self, key: str, value: AttributeValue) -> None:
        return None

    def set_status(self, status: Any) -> None:
        return None


_NO_SPAN = _NoSpan()


def tracing_enabled() -> bool:
    """True once the application has installed a tracer provider."""
    if "opentelemetry.trace" not in sys.modules and not os.environ.get(
        "OTEL_PYTHON_TRACER_PROVIDER"
    ):
        return False
    from opentelemetry import trace

    return not isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)


def start_span(name: str, enabled: bool = True) -> AbstractContextManager[Any]:
    """A current span named ``name``; a no-op one unless ``enabled`` (the run's
    :func:`tracing_enabled`, read once per run)."""
    if not enabled:
        return _NO_SPAN
    global _tracer
    if _tracer is None:
        from opentelemetry import trace

        _tracer = trace.get_tracer("yoagent.core")
    return _tracer.start_as_current_span(name)


def mark_error(span: Any, description: str) -> None:
    """Set an error status on ``span`` (nothing on the no-op span)."""
    if span is _NO_SPAN:
        return
    from opentelemetry.trace import Status, StatusCode

    span.set_status(Status(StatusCode.ERROR, description))


def describe_spend(span: Any, stats: SessionStats) -> None:
    """A run's tokens and cost as attributes of its ``agent_loop`` span.

    ``yoagent.cost_usd`` is the agent's own model calls; ``yoagent.total_cost_usd`` adds
    delegated runs and compaction summaries. Each is left out while it is unpriced.
    """
    usage = stats.usage
    span.set_attribute("gen_ai.usage.input_tokens", usage.input)
    span.set_attribute("gen_ai.usage.output_tokens", usage.output)
    span.set_attribute("gen_ai.usage.cache_read_tokens", usage.cache_read)
    span.set_attribute("gen_ai.usage.cache_write_tokens", usage.cache_write)
    if stats.cost_usd is not None:
        span.set_attribute("yoagent.cost_usd", stats.cost_usd)
    total = stats.total_cost_usd()
    if total is not None:
        span.set_attribute("yoagent.total_cost_usd", total)
