"""Capture spans from the process-wide OpenTelemetry SDK tracer provider.

The library's tracer is an API proxy that reports to whatever provider the application
installs, and a process can install only one: this attaches an in-memory exporter to the
installed SDK provider (installing one if there is none), once per process, so it works
beside other test modules that do the same.
"""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

_exporter = InMemorySpanExporter()
_attached_to: list[TracerProvider] = []


def capture() -> InMemorySpanExporter:
    """The exporter, emptied, attached to the installed SDK provider."""
    current = trace.get_tracer_provider()
    if not isinstance(current, TracerProvider):
        current = TracerProvider()
        trace.set_tracer_provider(current)
    if current not in _attached_to:
        current.add_span_processor(SimpleSpanProcessor(_exporter))
        _attached_to.append(current)
    _exporter.clear()
    return _exporter
