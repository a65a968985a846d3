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
    assert tool_span.attributes["gen_ai.tool.name"] == "fail"  # issue 27: was yoagent.tool.name
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


# --- the OpenTelemetry GenAI semantic conventions (issue 27) -----------------------------------


async def test_spans_carry_the_genai_semantic_convention_attributes(
    spans: InMemorySpanExporter,
) -> None:
    config = ModelConfig.mock("claude-x")
    config.provider = "anthropic"
    provider = MockProvider(
        [
            tool_reply(
                call("fail", "call_9"), usage=Usage(input=10, output=5, cache_read=7, cache_write=3)
            ),
            text_reply("ok", usage=Usage(input=20, output=1)),
        ]
    )
    agent = Agent.from_provider(provider, config, tools=[fail], run_label="fixer")
    await agent.prompt("go")

    finished = spans.get_finished_spans()
    (root,) = by_name(finished, "agent_loop")
    first, _ = by_name(finished, "llm_stream")
    (tool_span,) = by_name(finished, "tool")
    assert (
        dict(root.attributes or {}).items()
        >= {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.provider.name": "anthropic",
            "gen_ai.request.model": "claude-x",
            "gen_ai.agent.name": "fixer",
            "gen_ai.usage.input_tokens": 30,
            "gen_ai.usage.output_tokens": 6,
            "gen_ai.usage.cache_read.input_tokens": 7,
            "gen_ai.usage.cache_creation.input_tokens": 3,
        }.items()
    )
    assert first.kind is trace.SpanKind.CLIENT
    assert (
        dict(first.attributes or {}).items()
        >= {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "anthropic",
            "gen_ai.request.model": "claude-x",
            "gen_ai.response.model": "claude-x",
            "gen_ai.response.finish_reasons": ("tool_use",),
            "gen_ai.usage.cache_read.input_tokens": 7,
            "gen_ai.usage.cache_creation.input_tokens": 3,
        }.items()
    )
    assert tool_span.kind is trace.SpanKind.INTERNAL
    assert (
        dict(tool_span.attributes or {}).items()
        >= {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "fail",
            "gen_ai.tool.call.id": "call_9",
            "gen_ai.tool.type": "function",
            "error.type": "tool_error",
        }.items()
    )
    names = {key for span in finished for key in (span.attributes or {})}
    assert not {"yoagent.provider", "yoagent.tool.name", "yoagent.tool.call_id"} & names
    assert not {
        k
        for k in names
        if k.startswith("gen_ai.usage.cache_")
        and k.endswith("_tokens")
        and ".input_tokens" not in k
    }


@pytest.mark.parametrize(
    ("provider", "name"),
    [
        ("anthropic", "anthropic"),
        ("openai", "openai"),
        ("google", "gcp.gemini"),
        ("vertex", "gcp.vertex_ai"),
        ("bedrock", "aws.bedrock"),
        ("azure", "azure.ai.openai"),
        ("mistral", "mistral_ai"),
        ("xai", "x_ai"),
        ("ollama", "ollama"),
    ],
)
async def test_the_provider_name_is_the_conventions_well_known_value(
    spans: InMemorySpanExporter, provider: str, name: str
) -> None:
    config = ModelConfig.mock()
    config.provider = provider
    await Agent.from_provider(MockProvider.text("hi"), config).prompt("go")
    (llm,) = by_name(spans.get_finished_spans(), "llm_stream")
    assert (llm.attributes or {})["gen_ai.provider.name"] == name
