"""The official SDK's test server (``sdk_server.py``) with OpenTelemetry's SDK recording its spans.

Run it with the Python of the peers' virtualenv::

    .peers/venv/bin/python tests/interop/servers/sdk_otel_server.py SPANS.jsonl

The SDK's server makes a SERVER span for every request it serves, whose
parent is the trace context the request carries in ``params._meta``, and a
CLIENT span for every request it sends the client, whose context it injects.
Each span, as it ends, is appended to SPANS.jsonl as one JSON object: its
name, kind, trace id, span id and parent span id (hexadecimal), and
attributes.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult


class JsonLines(SpanExporter):
    def __init__(self, path: str) -> None:
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - open for the process's life

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        for span in spans:
            context = span.get_span_context()
            record = {
                "name": span.name,
                "kind": span.kind.name,
                "trace_id": f"{context.trace_id:032x}",
                "span_id": f"{context.span_id:016x}",
                "parent_span_id": None if span.parent is None else f"{span.parent.span_id:016x}",
                "attributes": {key: str(value) for key, value in (span.attributes or {}).items()},
            }
            self._file.write(json.dumps(record) + "\n")
        self._file.flush()
        return SpanExportResult.SUCCESS


provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(JsonLines(sys.argv[1])))
trace.set_tracer_provider(provider)

# Imported after the provider is set: the SDK's tracer is made as its modules load.
from sdk_server import server  # noqa: E402

server.run("stdio")
