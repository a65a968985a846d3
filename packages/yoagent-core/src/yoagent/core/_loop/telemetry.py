"""OpenTelemetry spans for runs, model calls and tool calls (API only; the app brings an SDK).

The spans keep the original's names (``agent_loop`` → ``llm_stream`` per turn → ``tool``
per call); their attributes follow the OpenTelemetry GenAI semantic conventions, which
tracing backends read (``gen_ai.operation.name`` ``invoke_agent`` / ``chat`` /
``execute_tool``, ``gen_ai.provider.name``, ``gen_ai.request.model``, ``gen_ai.usage.*``,
``gen_ai.tool.*``, ``error.type``); what the conventions have no name for is
``yoagent.*`` (cost, turns, a tool result's error flag). Every name is written here.

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

from yoagent.core._types.config import ModelConfig
from yoagent.core._types.content import ToolCall
from yoagent.core._types.messages import AssistantMessage, Usage
from yoagent.core._types.stats import SessionStats

if TYPE_CHECKING:
    from opentelemetry.trace import Tracer
    from opentelemetry.util.types import AttributeValue

_tracer: Tracer | None = None

SPAN_AGENT_LOOP = "agent_loop"
SPAN_LLM_STREAM = "llm_stream"
SPAN_TOOL = "tool"

PROVIDER_NAMES = {
    "google": "gcp.gemini",
    "vertex": "gcp.vertex_ai",
    "bedrock": "aws.bedrock",
    "azure": "azure.ai.openai",
    "mistral": "mistral_ai",
    "xai": "x_ai",
}
"""Our provider names whose ``gen_ai.provider.name`` well-known value differs (the others
— ``anthropic``, ``openai``, ``groq``, ``deepseek``, ``perplexity``, a server's own — are
the same)."""


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


def start_span(
    name: str, enabled: bool = True, *, client: bool = False
) -> AbstractContextManager[Any]:
    """A current span named ``name`` (of kind ``CLIENT`` when ``client``: a call to a model
    server); a no-op one unless ``enabled`` (the run's :func:`tracing_enabled`, read once
    per run)."""
    if not enabled:
        return _NO_SPAN
    global _tracer
    from opentelemetry import trace

    if _tracer is None:
        _tracer = trace.get_tracer("yoagent.core")
    kind = trace.SpanKind.CLIENT if client else trace.SpanKind.INTERNAL
    return _tracer.start_as_current_span(name, kind=kind)


def provider_name(provider: str) -> str:
    """``gen_ai.provider.name`` for one of our provider names (see :data:`PROVIDER_NAMES`)."""
    return PROVIDER_NAMES.get(provider, provider)


def describe_run(span: Any, model: ModelConfig, label: str) -> None:
    """An ``agent_loop`` span's own attributes: the agent invoked, on which model."""
    span.set_attribute("gen_ai.operation.name", "invoke_agent")
    _describe_model(span, model)
    if label:
        span.set_attribute("gen_ai.agent.name", label)


def describe_request(span: Any, model: ModelConfig, turn: int) -> None:
    """An ``llm_stream`` span's attributes known before the request: a chat, its model."""
    span.set_attribute("gen_ai.operation.name", "chat")
    _describe_model(span, model)
    span.set_attribute("yoagent.turn", turn)


def describe_reply(span: Any, reply: AssistantMessage, cost_usd: float | None) -> None:
    """An ``llm_stream`` span's attributes from the reply: its model, why it stopped, its
    tokens and (when priced) its cost; an error status for a failed one."""
    if reply.model:
        span.set_attribute("gen_ai.response.model", reply.model)
    span.set_attribute("gen_ai.response.finish_reasons", (reply.stop_reason.value,))
    _describe_usage(span, reply.usage)
    if cost_usd is not None:
        span.set_attribute("yoagent.cost_usd", cost_usd)


def describe_tool_call(span: Any, call: ToolCall) -> None:
    """A ``tool`` span's attributes: which function tool, which call."""
    span.set_attribute("gen_ai.operation.name", "execute_tool")
    span.set_attribute("gen_ai.tool.name", call.name)
    span.set_attribute("gen_ai.tool.call.id", call.id)
    span.set_attribute("gen_ai.tool.type", "function")


def describe_tool_result(span: Any, is_error: bool) -> None:
    """A ``tool`` span's outcome: ``error.type`` ``tool_error`` for an error result."""
    span.set_attribute("yoagent.tool.is_error", is_error)
    if is_error:
        span.set_attribute("error.type", "tool_error")


def _describe_model(span: Any, model: ModelConfig) -> None:
    span.set_attribute("gen_ai.provider.name", provider_name(model.provider))
    span.set_attribute("gen_ai.request.model", model.id)


def _describe_usage(span: Any, usage: Usage) -> None:
    span.set_attribute("gen_ai.usage.input_tokens", usage.input)
    span.set_attribute("gen_ai.usage.output_tokens", usage.output)
    span.set_attribute("gen_ai.usage.cache_read.input_tokens", usage.cache_read)
    span.set_attribute("gen_ai.usage.cache_creation.input_tokens", usage.cache_write)


def mark_error(span: Any, description: str) -> None:
    """Set an error status on ``span`` (nothing on the no-op span)."""
    if span is _NO_SPAN:
        return
    from opentelemetry.trace import Status, StatusCode

    span.set_status(Status(StatusCode.ERROR, description))


def describe_spend(span: Any, stats: SessionStats) -> None:
    """A run's tokens and cost as attributes of its ``agent_loop`` span.

    The ``gen_ai.usage.*`` tokens and ``yoagent.cost_usd`` are the agent's own model calls;
    ``yoagent.total_cost_usd`` adds delegated runs, summaries, decisions and extension
    calls. Each cost is left out while it is unpriced.
    """
    _describe_usage(span, stats.usage)
    if stats.cost_usd is not None:
        span.set_attribute("yoagent.cost_usd", stats.cost_usd)
    total = stats.total_cost_usd()
    if total is not None:
        span.set_attribute("yoagent.total_cost_usd", total)
