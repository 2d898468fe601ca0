"""OpenTelemetry's SDK for the telemetry tests: an in-memory exporter, a metric reader, no global state.

`recording` makes an SDK tracer provider and meter provider and has
``opentelemetry.trace.get_tracer_provider`` and
``opentelemetry.metrics.get_meter_provider`` return them for one test
(pytest's ``monkeypatch``): the global providers, which can be set only once
in a process, are never set, so the rest of the suite runs without
telemetry, as a program that never set up OpenTelemetry does.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter


class OpenSpans(SpanProcessor):
    """Counts the spans started and not yet ended: none may stay open."""

    def __init__(self) -> None:
        self.open: dict[int, str] = {}

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        self.open[span.context.span_id] = span.name

    def on_end(self, span: ReadableSpan) -> None:
        self.open.pop(span.context.span_id, None)


class Recording:
    """What one test recorded: its spans (finished), its metrics, the spans still open."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.open_spans = OpenSpans()
        self.tracer_provider = TracerProvider()
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.tracer_provider.add_span_processor(self.open_spans)
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.tracer = self.tracer_provider.get_tracer("tests")

    def spans(self, name: str | None = None) -> list[ReadableSpan]:
        return [span for span in self.exporter.get_finished_spans() if name is None or span.name == name]

    def span(self, name: str) -> ReadableSpan:
        found = self.spans(name)
        assert len(found) == 1, (name, [span.name for span in self.spans()])
        return found[0]

    def clear(self) -> None:
        self.exporter.clear()

    def points(self, metric: str) -> list[Any]:
        """The histogram data points of ``metric``."""
        data = self.reader.get_metrics_data()
        out = []
        if data is None:
            return out
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for found in scope.metrics:
                    if found.name == metric:
                        out.extend((found, point) for point in found.data.data_points)
        return out


def record(monkeypatch) -> Recording:
    """Record what this test's connections report (``monkeypatch`` undoes it)."""
    recording = Recording()
    monkeypatch.setattr(trace, "get_tracer_provider", lambda: recording.tracer_provider)
    monkeypatch.setattr(metrics, "get_meter_provider", lambda: recording.meter_provider)
    return recording


def finish(recording: Recording) -> None:
    """The end of a test: no span may be left open."""
    assert recording.open_spans.open == {}, f"spans left open: {recording.open_spans.open}"
    recording.tracer_provider.shutdown()
    recording.meter_provider.shutdown()


def traceparent(span: ReadableSpan) -> str:
    """The W3C ``traceparent`` of ``span``."""
    context = span.get_span_context()
    return f"00-{context.trace_id:032x}-{context.span_id:016x}-{int(context.trace_flags):02x}"
