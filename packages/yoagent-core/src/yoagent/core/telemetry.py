"""OpenTelemetry spans for runs, model calls and tool calls (API only; the app brings an SDK)."""

from __future__ import annotations

from opentelemetry import trace

tracer = trace.get_tracer("yoagent.core")

SPAN_AGENT_LOOP = "agent_loop"
SPAN_LLM_STREAM = "llm_stream"
SPAN_TOOL = "tool"
