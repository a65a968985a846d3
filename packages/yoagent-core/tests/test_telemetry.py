"""OpenTelemetry spans: agent_loop → llm_stream per turn → tool per call."""

from __future__ import annotations

import pytest
from core_helpers import call, text_reply, tool_reply
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from yoagent.core import (
    Agent,
    CostConfig,
    ErrorKind,
    MockProvider,
    ModelConfig,
    ProviderError,
    RetryConfig,
    RunFailedError,
    Usage,
    tool,
)

_exporter = InMemorySpanExporter()
_attached_to: list[TracerProvider] = []


@pytest.fixture
def spans() -> InMemorySpanExporter:
    """The in-memory exporter behind the process-wide tracer provider.

    The library's tracer is an API proxy: it reports to whatever provider the
    application installs, which is what this test does (once per process). Another
    package's tests may have installed it first: the exporter is attached to it then.
    """
    current = trace.get_tracer_provider()
    if not isinstance(current, TracerProvider):
        current = TracerProvider()
        trace.set_tracer_provider(current)
    if current not in _attached_to:
        current.add_span_processor(SimpleSpanProcessor(_exporter))
        _attached_to.append(current)
    _exporter.clear()
    return _exporter


@tool
async def fail() -> str:
    """Always fails."""
    raise RuntimeError("nope")


def by_name(finished: tuple[ReadableSpan, ...], name: str) -> list[ReadableSpan]:
    return [span for span in finished if span.name == name]


async def test_spans_nest_and_carry_tokens_cost_and_errors(spans: InMemorySpanExporter) -> None:
    config = ModelConfig.mock()
    config.cost = CostConfig(input=1.0, output=1.0)
    provider = MockProvider(
        [
            tool_reply(call("fail"), usage=Usage(input=10, output=5)),
            text_reply("ok", usage=Usage(input=20, output=1)),
        ]
    )
    await Agent.from_provider(provider, config, tools=[fail]).prompt("go")

    finished = spans.get_finished_spans()
    (root,) = by_name(finished, "agent_loop")
    llm = by_name(finished, "llm_stream")
    (tool_span,) = by_name(finished, "tool")
    assert len(llm) == 2
    assert all(
        span.parent is not None and span.parent.span_id == root.context.span_id for span in llm
    )
    assert tool_span.parent is not None and tool_span.parent.span_id == root.context.span_id
    assert llm[0].attributes is not None
    assert llm[0].attributes["gen_ai.usage.input_tokens"] == 10
    assert llm[0].attributes["gen_ai.usage.output_tokens"] == 5
    assert llm[0].attributes["yoagent.cost_usd"] == pytest.approx(15 / 1e6)
    assert tool_span.attributes is not None
    assert tool_span.attributes["yoagent.tool.name"] == "fail"
    assert tool_span.attributes["yoagent.tool.is_error"] is True
    assert root.attributes is not None and root.attributes["gen_ai.usage.input_tokens"] == 30


async def test_a_failed_model_call_marks_its_span_as_an_error(spans: InMemorySpanExporter) -> None:
    provider = MockProvider([ProviderError(ErrorKind.AUTH, "bad key")])
    with pytest.raises(RunFailedError):
        await Agent.from_provider(provider, ModelConfig.mock(), retry=RetryConfig.none()).prompt(
            "go"
        )
    (llm,) = by_name(spans.get_finished_spans(), "llm_stream")
    assert llm.status.status_code is trace.StatusCode.ERROR
    assert llm.status.description == "AUTH: bad key"
    assert llm.attributes is not None and llm.attributes["error.type"] == "auth"
